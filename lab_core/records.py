"""The input records (Workload, Parallelism) to and from JSON objects, checked
the same way: a mapping, with no field the record does not have."""
from dataclasses import fields

from .errors import LabInputError


def record_from_dict(cls, data, what, expected, sort_known=False):
    """cls(**data) after checking that `data` is a mapping of cls's fields;
    `what` and `expected` name the record in the error (LabInputError)."""
    if not isinstance(data, dict):
        raise LabInputError(what, data, expected, "not_an_object")
    known = [f.name for f in fields(cls)]
    for key in data:
        if key not in known:
            raise LabInputError(key, data[key], ", ".join(sorted(known) if sort_known else known), "unknown_field")
    return cls(**data)


def record_to_dict(record):
    return {f.name: getattr(record, f.name) for f in fields(record)}

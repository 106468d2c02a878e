"""The input records (Workload, Parallelism) to and from JSON objects, checked
the same way: a mapping, with no field the record does not have."""
from dataclasses import fields

from .errors import LabInputError

_NAMES = {}  # field names per record class (dataclasses.fields builds a tuple each call)


def field_names(cls):
    """The names of a record class's fields, in order (computed once per class)."""
    found = _NAMES.get(cls)
    if found is None:
        found = _NAMES[cls] = tuple(f.name for f in fields(cls))
    return found


def record_from_dict(cls, data, what, expected, sort_known=False):
    """cls(**data) after checking that `data` is a mapping of cls's fields;
    `what` and `expected` name the record in the error (LabInputError)."""
    if not isinstance(data, dict):
        raise LabInputError(what, data, expected, "not_an_object")
    known = field_names(cls)
    for key in data:
        if key not in known:
            raise LabInputError(key, data[key], ", ".join(sorted(known) if sort_known else known), "unknown_field")
    return cls(**data)


def record_to_dict(record):
    return {name: getattr(record, name) for name in field_names(type(record))}

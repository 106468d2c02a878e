"""The reader's workload: what is trained, on how many GPUs."""
import math
from dataclasses import dataclass, fields

from .errors import LabInputError
from .inputs import SPEC_BY_NAME


def _check_number(name, value):
    spec = SPEC_BY_NAME[name]
    allowed = f"{spec.minimum:g} … {spec.maximum:g} {spec.unit}"
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise LabInputError(name, value, allowed, "not_a_number")
    if not math.isfinite(value):
        raise LabInputError(name, value, allowed, "not_a_number")
    if spec.integer and value != int(value):
        raise LabInputError(name, value, allowed, "not_an_integer")
    if not spec.minimum <= value <= spec.maximum:
        raise LabInputError(name, value, allowed, "out_of_range")
    return int(value) if spec.integer else float(value)


@dataclass(frozen=True)
class Workload:
    params: float = SPEC_BY_NAME["params"].default
    gpus: int = int(SPEC_BY_NAME["gpus"].default)
    gpu_memory_bytes: float = 80e9
    state_bytes_per_param: int = 16

    def __post_init__(self):
        for name in ("params", "gpus"):
            object.__setattr__(self, name, _check_number(name, getattr(self, name)))

    @classmethod
    def from_dict(cls, data):
        known = {f.name for f in fields(cls)}
        for key in data:
            if key not in known:
                raise LabInputError(key, data[key], ", ".join(sorted(known)), "unknown_field")
        return cls(**data)

    def to_dict(self):
        return {f.name: getattr(self, f.name) for f in fields(self)}

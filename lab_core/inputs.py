"""Every input of the lab: unit, allowed range, default, slider scale.

One table, read by the model (validation), the build (slider markup, docs)
and the page (through the JSON the build exports). Ranges follow the slider
table of DESIGN.md; defaults are the teaching defaults named in the docs.
"""
from dataclasses import dataclass


@dataclass(frozen=True)
class InputSpec:
    name: str
    unit: str
    minimum: float
    maximum: float
    default: float
    log_scale: bool = True
    integer: bool = False
    slider: bool = True

    def to_dict(self):
        return {
            "name": self.name,
            "unit": self.unit,
            "min": self.minimum,
            "max": self.maximum,
            "default": self.default,
            "log": self.log_scale,
            "integer": self.integer,
            "slider": self.slider,
        }


INPUT_SPECS = (
    InputSpec("params", "parameters", 125e6, 2e12, 1.3e9),
    InputSpec("gpus", "GPUs", 1, 32768, 8, integer=True),
)

SPEC_BY_NAME = {spec.name: spec for spec in INPUT_SPECS}

"""LLM Pretraining System Design Lab — the model.

Pure standard-library Python, no I/O, deterministic: the same files run in
CPython (build, CLI, tests) and in Pyodide (the page's Web Worker).
"""
from .errors import LabInputError
from .inputs import INPUT_SPECS, InputSpec
from .workload import Workload
from .memory import model_state_bytes_per_gpu
from .api import compute

__all__ = ["LabInputError", "INPUT_SPECS", "InputSpec", "Workload", "model_state_bytes_per_gpu", "compute"]

"""LLM Pretraining System Design Lab — the model.

Pure standard-library Python, no I/O, deterministic: the same files run in
CPython (build, CLI, tests) and in Pyodide (the page's Web Worker).

    w = Workload(params=175e9, gpus=1024, seq_len=2048, global_batch_tokens=1536 * 2048)
    r = evaluate(w, Parallelism(tp=8, pp=8, dp=16, recompute="selective",
                                sequence_parallel=True, micro_batch=1))
    r.step_s, r.memory_bytes, r.to_dict()
"""
from .errors import LabInputError
from .inputs import INPUT_SPECS, SPEC_BY_NAME, InputSpec
from .hardware import GPU_PRESETS
from .workload import Workload
from .parallelism import Parallelism
from .memory import model_state_bytes_per_gpu
from .report import Report
from .evaluate import evaluate
from .json_compute import compute
from .planner import Plan, plan_json, recommend

__all__ = ["LabInputError", "INPUT_SPECS", "SPEC_BY_NAME", "InputSpec", "GPU_PRESETS", "Workload",
           "Parallelism", "Report", "evaluate", "model_state_bytes_per_gpu", "compute",
           "Plan", "plan_json", "recommend"]

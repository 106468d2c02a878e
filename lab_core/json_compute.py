"""JSON in, JSON out: the one entry point the page's worker and the build call."""
from .errors import LabInputError
from .evaluate import evaluate
from .memory import model_state_bytes_per_gpu
from .parallelism import plain_data_parallel
from .workload import Workload


def compute(inputs):
    """Evaluate a workload given as a plain dict; return a JSON-ready dict.

    Bad input does not raise: the result carries ``{"error": {...}}`` with the
    field, value and allowed range so the page can render it in either language.
    ``memory`` is the per-GPU training state of plain data parallelism;
    ``report`` is evaluate() for plain data parallelism (parallelism.
    plain_data_parallel) or None with ``report_error`` when that layout cannot
    run the workload (e.g. more GPUs than sequences per step).
    """
    try:
        if not isinstance(inputs, dict):
            raise LabInputError("workload", repr(inputs), "an object of named inputs", "not_an_object")
        workload = Workload.from_dict(dict(inputs))
    except LabInputError as err:
        return {"ok": False, "error": err.to_dict()}
    state = model_state_bytes_per_gpu(workload.params, workload.state_bytes_per_param)
    result = {
        "ok": True,
        "workload": workload.to_dict(),
        "shape": workload.shape.to_dict(),
        "memory": {
            "model_state_bytes": state,
            "device_bytes": workload.gpu_memory_bytes,
            "ratio": state / workload.gpu_memory_bytes,
        },
        "report": None,
        "report_error": None,
    }
    try:
        result["report"] = evaluate(workload, plain_data_parallel(workload)).to_dict()
    except LabInputError as err:
        result["report_error"] = err.to_dict()
    return result

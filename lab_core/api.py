"""JSON in, JSON out: the one entry point the page's worker and the build call."""
from .errors import LabInputError
from .memory import model_state_bytes_per_gpu
from .workload import Workload


def compute(inputs):
    """Evaluate a workload given as a plain dict; return a JSON-ready dict.

    Bad input does not raise: the result carries ``{"error": {...}}`` with the
    field, value and allowed range so the page can render it in either language.
    """
    try:
        workload = Workload.from_dict(dict(inputs))
    except LabInputError as err:
        return {"ok": False, "error": err.to_dict()}
    state = model_state_bytes_per_gpu(workload.params, workload.state_bytes_per_param)
    return {
        "ok": True,
        "workload": workload.to_dict(),
        "memory": {
            "model_state_bytes": state,
            "device_bytes": workload.gpu_memory_bytes,
            "ratio": state / workload.gpu_memory_bytes,
        },
    }

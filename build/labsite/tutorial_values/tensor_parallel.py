"""Chapter Tensor parallelism: its numbers, every one computed by lab_core."""
from lab_core.hardware import GPU_PRESETS
from lab_core.timing import layer_times

from ..reference import gpt3, gpt3_workload
from .common import Chapter, GPT3_GPUS, GPT3_LAYOUT, chapter, evaluate, rates


@chapter("tensor_parallel")
def tensor_parallel_chapter():
    example, model = gpt3_workload(gpus=GPT3_GPUS), gpt3()
    w, r = evaluate(example, **GPT3_LAYOUT)
    s, h, a, f = model["seq_len"], model["hidden"], model["heads"], 4 * model["hidden"]
    flops_rate, hbm, nvl, nic = rates()
    t = GPT3_LAYOUT["tp"]
    on_nvlink = layer_times(s, 1, h, a, f, t, False, "none", False, flops_rate, hbm, nvl)
    on_nic = layer_times(s, 1, h, a, f, t, False, "none", False, flops_rate, hbm, nic)

    def share(lt):
        return lt.tp_comm / (lt.forward + lt.backward + lt.tp_comm)

    message = 2.0 * s * h
    values = {
        "params": (w.shape.params, "params"),
        "hidden": (h, "count"),
        "heads": (a, "count"),
        "ffn": (f, "count"),
        "tp": (t, "count"),
        "layer_params": (w.shape.layer_params, "params"),
        "layer_weights": (2.0 * w.shape.layer_params, "bytes"),
        "layer_weights_tp": (2.0 * w.shape.layer_params / t, "bytes"),
        "heads_per_gpu": (a // t, "count"),
        "message": (message, "bytes"),
        "per_layer_volume": (4 * 2.0 * (t - 1) / t * message, "bytes"),
        "nvlink": (GPU_PRESETS["a100_80gb"].nvlink_bytes_per_s, "bytes"),
        "nic_gbps": (200.0, "gbps"),
        "nic_bytes": (nic, "bytes"),
        "share_nvlink": (share(on_nvlink), "percent"),
        "share_nic": (share(on_nic), "percent"),
        "ratio_links": (nvl / nic, "plain"),
        "step_share": (r.tp_comm_s / r.step_s, "percent"),
        "weights_total": (2.0 * w.shape.params, "bytes"),
        "device": (w.gpu_memory_bytes, "bytes"),
        "gpus_per_node": (w.gpus_per_node, "count"),
    }
    series = []
    for key, rate, dashed, gbps in (("nvlink", nvl, False, None), ("ib", rates(gbps=400.0)[3], True, 400.0),
                                    ("ib", nic, True, 200.0)):
        points = []
        for tp in (2, 4, 8):
            lt = layer_times(s, 1, h, a, f, tp, False, "none", False, flops_rate, hbm, rate)
            points.append((tp, 100.0 * share(lt)))
        series.append({"key": key, "points": points, "dashed": dashed,
                       "label_values": {"gbps": (gbps, "gbps")} if gbps else {}})
    chart = {"type": "line", "id": "tensor_parallel", "series": series, "x_log": True, "y_min": 0.0,
             "text_values": {"params": (w.shape.params, "params")}}
    return Chapter(values, dict(example), [chart])

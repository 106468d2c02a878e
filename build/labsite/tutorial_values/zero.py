"""Chapter ZeRO: its numbers, every one computed by lab_core."""
from lab_core import memory

from .common import Chapter, GB, ZERO_STATE_BYTES, chapter, evaluate


@chapter("zero")
def zero_chapter():
    params, dp = 7.5e9, 64
    example = dict(params=params, gpus=dp, seq_len=2048, global_batch_tokens=2048 * 128, inter_node_gbps=200,
                   state_bytes_per_param=ZERO_STATE_BYTES)
    values = {"params": (params, "params"), "dp": (dp, "count"),
              "state_per_param": (ZERO_STATE_BYTES, "count")}
    segments = {"weights": [], "gradients": [], "optimizer": []}
    categories = []
    for stage in range(4):
        wts, grads, opt = memory.model_state_parts(params, ZERO_STATE_BYTES, dp, stage)
        values[f"stage{stage}"] = (wts + grads + opt, "bytes")
        segments["weights"].append(wts / GB)
        segments["gradients"].append(grads / GB)
        segments["optimizer"].append(opt / GB)
        categories.append(("stage", {"stage": (stage, "count")}))
        w, r = evaluate(example, dp=dp, zero=stage, micro_batch=1)
        values[f"step{stage}"] = (r.step_s, "duration")
        values[f"mem{stage}"] = (r.memory_bytes, "bytes")
        values[f"comm{stage}"] = (r.dp_comm_total_s + r.zero_comm_total_s, "duration")
        values[f"exposed{stage}"] = (r.dp_comm_s + r.zero_comm_s, "duration")
        total = r.dp_comm_total_s + r.zero_comm_total_s
        values[f"hidden{stage}"] = (1.0 - (r.dp_comm_s + r.zero_comm_s) / total if total > 0 else 1.0, "percent")
    values["device"] = (w.gpu_memory_bytes, "bytes")
    values["psi_bytes"] = (2.0 * params, "bytes")
    values["dp_volume"] = (2.0 * 2.0 * params, "bytes")
    values["z3_volume"] = (3.0 * 2.0 * params, "bytes")
    values["micro_batches"] = (r.micro_batches, "count")
    values["z3_gathers"] = (2 * r.micro_batches, "count")
    values["trillion_gpus"] = (1024, "count")
    values["trillion_state"] = (memory.model_state_bytes_per_gpu(1e12, 16, 1024, 3), "bytes")
    values["trillion"] = (1e12, "params")
    chart = {"type": "stacked", "id": "zero", "categories": categories,
             "segments": [(key, segments[key]) for key in ("weights", "gradients", "optimizer")],
             "reference": (w.gpu_memory_bytes / GB, {"device": (w.gpu_memory_bytes, "bytes")}),
             "text_values": {"params": (params, "params"), "dp": (dp, "count")}}
    return Chapter(values, example, [chart])

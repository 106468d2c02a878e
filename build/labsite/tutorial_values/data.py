"""Chapter Data pipeline: its numbers, every one computed by lab_core."""
from lab_core import calibration as cal

from .common import Chapter, chapter, evaluate


@chapter("data")
def data_chapter():
    example = dict(params=1.3e9, gpus=1024, seq_len=2048, global_batch_tokens=4 * 1048576)
    w, r = evaluate(example, dp=1024)
    nodes = -(-w.gpus // w.gpus_per_node)
    values = {
        "params": (w.shape.params, "params"),
        "gpus": (w.gpus, "count"),
        "nodes": (nodes, "count"),
        "tokens_per_s": (r.tokens_per_s, "scaled"),
        "per_gpu": (r.tokens_per_s / w.gpus, "scaled"),
        "per_node": (r.tokens_per_s / nodes, "scaled"),
        "loader_per_node": (w.loader_tokens_per_s_per_node, "scaled"),
        "loader_ratio": (r.loader_ratio, "percent"),
        "bytes_per_token": (cal.DATA_BYTES_PER_TOKEN, "count"),
        "read": (r.required_read_bytes_per_s, "bytes"),
        "storage": (r.storage_read_bytes_per_s, "bytes"),
        "storage_ratio": (r.storage_ratio, "percent"),
        "step": (r.step_s, "duration"),
        "batch_tokens": (w.global_batch_tokens, "tokens"),
        "training_tokens": (w.training_tokens, "scaled"),
        "dataset_bytes": (w.training_tokens * cal.DATA_BYTES_PER_TOKEN, "bytes"),
        "train_days": (r.train_time_s / 86400.0, "days"),
    }
    slow = dict(example, loader_tokens_per_s_per_node=1e5)
    _, rs = evaluate(slow, dp=1024)
    values["slow_loader"] = (slow["loader_tokens_per_s_per_node"], "scaled")
    values["slow_ratio"] = (rs.loader_ratio, "plain")
    tiny = dict(example, params=350e6, gpus=2048)
    wt, rt = evaluate(tiny, dp=2048)
    values["tiny_params"] = (wt.shape.params, "params")
    values["tiny_gpus"] = (wt.gpus, "count")
    values["tiny_per_node"] = (rt.tokens_per_s / (wt.gpus // wt.gpus_per_node), "scaled")
    big = dict(params=70e9, gpus=1024, seq_len=2048, global_batch_tokens=4 * 1048576)
    _, rb = evaluate(big, tp=8, pp=4, dp=32, recompute="selective", sequence_parallel=True)
    values["big_params"] = (70e9, "params")
    values["big_tokens_per_s"] = (rb.tokens_per_s, "scaled")
    values["big_ratio"] = (rb.loader_ratio, "percent")
    gpus_sweep = (64, 128, 256, 512, 1024, 2048)
    series = []
    for params in (350e6, 1.3e9):
        points = []
        for gpus in gpus_sweep:
            _, rr = evaluate(dict(example, params=params, gpus=gpus), dp=gpus)
            points.append((gpus, rr.tokens_per_s))
        series.append({"key": "model", "points": points, "label_values": {"params": (params, "params")}})
    series.append({"key": "loader", "dashed": True,
                   "points": [(g, (-(-g // w.gpus_per_node)) * w.loader_tokens_per_s_per_node) for g in gpus_sweep],
                   "label_values": {"per_node": (w.loader_tokens_per_s_per_node, "scaled")}})
    chart = {"type": "line", "id": "data", "series": series, "x_log": True, "y_log": True,
             "text_values": {}}
    return Chapter(values, example, [chart])

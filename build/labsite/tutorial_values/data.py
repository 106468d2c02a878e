"""Feeding the GPUs: what the GPUs consume against what storage and
loaders deliver (a 1.3B model on 1,024 A100s, plain data parallelism), what
packing documents into sequences costs and saves (Llama 3 70B's shape at
8K, arXiv:2407.21783 §3.2), and the state a loader must save to resume."""
import lab_core
from lab_core import calibration as cal, flops

from .common import Chapter, chapter, evaluate, exercise
from .activations import LLAMA70_SHAPE
from .scenario_runs import branch, published_run, run_name

EXAMPLE = dict(params=1.3e9, gpus=1024, seq_len=2048, global_batch_tokens=4 * 1048576)
#: A loader that tokenizes on the fly on the host, tokens per second per node (a teaching input).
SLOW_LOADER = 1e5
#: Packing example: Llama 3 70B's shape at 8K tokens per sequence, documents of this mean length.
PACKED_SEQ = 8192
DOC_TOKENS = 1024
#: Above this share of the storage's read bandwidth, input competes with checkpoints for storage.
STORAGE_BUSY = 0.5


def _demand_values(w, r):
    nodes = -(-w.gpus // w.gpus_per_node)
    per_token = r.model_flops_per_step / r.tokens_per_step
    values = {
        "params": (w.shape.params, "params"),
        "gpus": (w.gpus, "count"),
        "nodes": (nodes, "count"),
        "tokens_per_s": (r.tokens_per_s, "scaled"),
        "per_gpu": (r.tokens_per_s / w.gpus, "scaled"),
        "per_node": (r.tokens_per_s / nodes, "scaled"),
        "step": (r.step_s, "duration"),
        "batch_tokens": (w.global_batch_tokens, "tokens"),
        "training_tokens": (w.training_tokens, "scaled"),
        "train_days": (r.train_time_s / 86400.0, "days"),
        "flops_per_token": (per_token, "sci"),
        "achieved": (r.model_flops_per_s_per_gpu, "flops"),
        "mfu": (r.mfu, "percent"),
    }
    tiny = dict(EXAMPLE, params=350e6, gpus=2048)
    wt, rt = evaluate(tiny, dp=2048)
    values["tiny_params"] = (wt.shape.params, "params")
    values["tiny_gpus"] = (wt.gpus, "count")
    values["tiny_per_node"] = (rt.tokens_per_s / (wt.gpus // wt.gpus_per_node), "scaled")
    big = dict(params=70e9, gpus=1024, seq_len=2048, global_batch_tokens=4 * 1048576)
    _, rb = evaluate(big, tp=8, pp=4, dp=32, recompute="selective", sequence_parallel=True)
    values["big_params"] = (big["params"], "params")
    values["big_tokens_per_s"] = (rb.tokens_per_s, "scaled")
    values["big_per_node"] = (rb.tokens_per_s / (big["gpus"] // wt.gpus_per_node), "scaled")
    return values


def _storage_values(w, r):
    workload, layout = published_run("llama3-405b")
    _, rl = evaluate(workload, **layout)
    return {
        "day_read": (r.required_read_bytes_per_s * 86400.0, "bytes"),
        "llama": (run_name("llama3-405b"), "text"),
        "llama_ckpt": (rl.checkpoint_bytes, "bytes"),
        "bytes_per_token": (cal.DATA_BYTES_PER_TOKEN, "count"),
        "read": (r.required_read_bytes_per_s, "bytes_per_s"),
        "storage": (r.storage_read_bytes_per_s, "bytes_per_s"),
        "storage_ratio": (r.storage_ratio, "percent"),
        "dataset_bytes": (w.training_tokens * cal.DATA_BYTES_PER_TOKEN, "bytes"),
        "storage_verdict": branch(r.storage_ratio < STORAGE_BUSY, "idle", "busy"),
    }


def _loader_values(w, r):
    slow = dict(EXAMPLE, loader_tokens_per_s_per_node=SLOW_LOADER)
    _, rs = evaluate(slow, dp=w.gpus)
    return {
        "loader_per_node": (w.loader_tokens_per_s_per_node, "scaled"),
        "loader_ratio": (r.loader_ratio, "percent"),
        "loader_verdict": branch(r.loader_ratio <= 1.0, "keeps_up", "starved"),
        "slow_loader": (SLOW_LOADER, "scaled"),
        "slow_ratio": (rs.loader_ratio, "plain"),
        "slow_share": (rs.loader_ratio, "percent"),
        "slow_verdict": branch(rs.loader_ratio <= 1.0, "keeps_up", "starved"),
        "slow_wait": (1.0 - 1.0 / rs.loader_ratio if rs.loader_ratio > 1.0 else 0.0, "percent"),
    }


def _packing_values():
    """Attention FLOPs of packed sequences with and without a per-document mask."""
    shape = lab_core.Workload(**dict(LLAMA70_SHAPE, seq_len=PACKED_SEQ)).shape
    s, h, f, r = PACKED_SEQ, shape.hidden, shape.ffn_hidden, shape.kv_ratio
    gemm, attention = flops.layer_forward_flops(1, s, h, f, r)
    docs = s // DOC_TOKENS
    _, one_doc = flops.layer_forward_flops(1, DOC_TOKENS, h, f, r)
    masked = docs * one_doc
    return {
        "pk_params": (LLAMA70_SHAPE["params"], "params"),
        "pk_seq": (s, "count"), "pk_doc": (DOC_TOKENS, "count"), "pk_docs": (docs, "count"),
        "pk_attention_share": (attention / (gemm + attention), "percent"),
        "pk_masked_share": (masked / attention, "percent"),
        "pk_saved": ((attention - masked) / (gemm + attention), "percent"),
        "pk_pad_waste": (1.0 - DOC_TOKENS / s, "percent"),
    }


def _resume_values(w):
    steps = w.training_tokens / w.global_batch_tokens
    return {
        "rs_steps": (steps, "count"),
        "rs_sequences": (w.batch_sequences, "count"),
        "rs_per_rank": (w.batch_sequences // w.gpus, "count"),
        "rs_dataset_tokens": (w.training_tokens, "scaled"),
    }


def _exercise_values(r):
    values = {}
    for key, name in (("many", "small-model-many-gpus"), ("slow", "host-tokenizer"), ("store", "shared-store"),
                      ("big", "big-model")):
        state = exercise("data", name)
        er, ew = state.report, state.workload
        nodes = -(-ew.gpus // ew.gpus_per_node)
        values.update({
            f"ex_{key}_params": (ew.shape.params, "params"), f"ex_{key}_gpus": (ew.gpus, "count"),
            f"ex_{key}_tokens_per_s": (er.tokens_per_s, "scaled"),
            f"ex_{key}_per_node": (er.tokens_per_s / nodes, "scaled"),
            f"ex_{key}_loader": (ew.loader_tokens_per_s_per_node, "scaled"),
            f"ex_{key}_loader_ratio": (er.loader_ratio, "percent"),
            f"ex_{key}_storage": (ew.storage_read_gbps * 1e9, "bytes_per_s"),
            f"ex_{key}_read": (er.required_read_bytes_per_s, "bytes_per_s"),
            f"ex_{key}_storage_ratio": (er.storage_ratio, "percent"),
            f"ex_{key}_loader_verdict": branch(er.loader_ratio <= 1.0, "keeps_up", "starved"),
        })
    values["ex_store_verdict"] = branch(exercise("data", "shared-store").report.storage_ratio < STORAGE_BUSY,
                                        "idle", "busy")
    return values


@chapter("data")
def data_chapter():
    w, r = evaluate(EXAMPLE, dp=EXAMPLE["gpus"])
    values = {}
    for part in (_demand_values(w, r), _storage_values(w, r), _loader_values(w, r), _packing_values(),
                 _resume_values(w), _exercise_values(r)):
        values.update(part)
    gpus_sweep = (64, 128, 256, 512, 1024, 2048)
    series = []
    for params in (350e6, 1.3e9):
        points = []
        for gpus in gpus_sweep:
            _, rr = evaluate(dict(EXAMPLE, params=params, gpus=gpus), dp=gpus)
            points.append((gpus, rr.tokens_per_s))
        series.append({"key": "model", "points": points, "label_values": {"params": (params, "params")}})
    series.append({"key": "loader", "dashed": True,
                   "points": [(g, (-(-g // w.gpus_per_node)) * w.loader_tokens_per_s_per_node) for g in gpus_sweep],
                   "label_values": {"per_node": (w.loader_tokens_per_s_per_node, "scaled")}})
    chart = {"type": "line", "id": "data", "series": series, "x_log": True, "y_log": True, "text_values": {}}
    figures = {"packing": {"seq": PACKED_SEQ, "docs": PACKED_SEQ // DOC_TOKENS}}
    return Chapter(values, dict(EXAMPLE), [chart], figures)

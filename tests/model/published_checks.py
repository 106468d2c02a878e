"""Predicted vs published figures, shared by the tests and validation_report.py.

Reads shared/validation/published.yaml (../shared/validation/ from the repo
root) when it exists, else the vendored content/validation/published.yaml. Each check
is (fact id, quantity, predicted, published, tolerance, kind) where kind is
"abs" (absolute tolerance in the published unit) or "rel" (relative).
End-to-end runs that are NOT in the published file come from
content/validation/end_to_end.yaml (end_to_end_rows), as on the site.
"""
import math

from lab_core import activations as act
from lab_core import calibration as cal
from lab_core import comms, failures, flops, pipeline
from lab_core.hardware import GPU_PRESETS
from lab_core.memory import model_state_bytes_per_gpu
from lab_core.shape import param_count
# One definition of where the published figures live and of the Table 4
# setting, shared with the site's "model vs published runs" page.
from labsite.validation import (SHARED, VENDORED, end_to_end_predicted, end_to_end_runs,  # noqa: F401
                                load_facts, published_path, table4_prediction)

GB = 1e9
MIB = 1048576.0
GIB = 1073741824.0


# Narayanan et al. arXiv:2104.04473 Table 1 (layers, hidden) -> billions of
# parameters, as printed in the paper (the YAML cites the pairs but does not list them).
NARAYANAN_TABLE1 = (
    (24, 2304, 1.7), (30, 3072, 3.6), (36, 4096, 7.5), (40, 6144, 18.4), (48, 8192, 39.1),
    (60, 10240, 76.1), (80, 12288, 145.6), (96, 16384, 310.1), (105, 20480, 529.6), (128, 25600, 1008.0),
)


def checks(facts=None):
    facts = facts or load_facts()
    rows = []

    def add(fid, quantity, predicted, published, tol, kind="rel"):
        rows.append((fid, quantity, float(predicted), float(published), tol, kind))

    # ZeRO Fig 1 (decimal GB).
    zero_ids = ("zero.fig1.baseline", "zero.fig1.pos", "zero.fig1.pos_g", "zero.fig1.pos_g_p")
    tolerances = (1e-9, 0.1, 0.1, 0.05)
    for stage, (fid, tol) in enumerate(zip(zero_ids, tolerances)):
        f = facts[fid]
        pred = model_state_bytes_per_gpu(f["inputs"]["params"], 16, f["inputs"]["dp_degree"], stage) / GB
        add(fid, "per-device model states (GB)", pred, f["published"]["per_device_model_state_memory_GB"], tol, "abs")
    add("zero.bytes_per_param", "bytes/param", model_state_bytes_per_gpu(1.0, 16), 16, 0.0, "abs")

    # Korthikanti Table 2 per-layer formulas, on the Table 3 models and t in {1,2,4,8}.
    for row in facts["act.table3.configs"]["published"]["rows"]:
        a, h = row["heads"], row["hidden"]
        s, b = 2048, row["micro_batch"]
        sbh = s * b * h
        for t in (1, 2, 4, 8):
            cases = (
                ("act.per_layer.tp", False, "none", sbh * (10 + 24 / t + 5 * a * s / (h * t))),
                ("act.per_layer.tp_sp", True, "none", sbh / t * (34 + 5 * a * s / h)),
                ("act.per_layer.tp_selective", False, "selective", sbh * (10 + 24 / t)),
                ("act.per_layer.tp_sp_selective", True, "selective", 34 * sbh / t),
                ("act.per_layer.full_recompute", False, "full", 2 * sbh),
            )
            for fid, sp, rc, expected in cases:
                pred = act.per_layer_bytes(s, b, h, a, t, sp, rc, False)
                add(fid, f"{row['model']} t={t} bytes/layer", pred, expected, 1e-12)
        add("act.per_layer.no_parallel", f"{row['model']} t=1 bytes/layer",
            act.per_layer_bytes(s, b, h, a), sbh * (34 + 5 * a * s / h), 1e-12)
        # First stage holds L layers' worth under 1F1B whatever p (Eq 5).
        L, p, t = row["layers"], row["pp"], row["tp"]
        per = act.per_layer_bytes(s, b, h, a, t, True, "none", False)
        add("act.pipeline.first_stage", f"{row['model']} first-stage bytes",
            act.first_stage_bytes(per, L, p, micro_batches=10 ** 6), s * b * h * L / t * (34 + 5 * a * s / h), 1e-12)
    for p, v in ((8, 3), (35, 3), (64, 2)):
        add("act.pipeline.first_stage", f"interleave multiplier p={p} v={v}",
            act.interleave_multiplier(p, v), 1 + (p - 1) / (p * v), 1e-12)

    sav = facts["act.selective.savings"]
    for name, key in (("GPT-3", "gpt3"), ("MT-NLG", "mtnlg")):
        i = sav["inputs"][key]
        ratio = 5 * i["a"] * i["s"] / i["h"]
        add("act.selective.savings", f"{name} 5as/h", ratio, sav["published"]["five_as_over_h"][name], 0.0, "abs")
        full = act.per_layer_bytes(i["s"], 1, i["h"], i["a"], 8, True, "none")
        sel = act.per_layer_bytes(i["s"], 1, i["h"], i["a"], 8, True, "selective")
        add("act.selective.savings", f"{name} activation memory saved (%)", 100 * (1 - sel / full),
            float(sav["published"]["activation_memory_saved"][name].rstrip("%")), 0.5, "abs")
        L = 96 if key == "gpt3" else 105
        over = flops.hardware_flops_selective_eq8(1, i["s"], L, i["h"], 51200) / flops.model_flops_eq7(1, i["s"], L, i["h"], 51200) - 1
        add("act.selective.savings", f"{name} recompute FLOPs overhead (%)", 100 * over,
            float(sav["published"]["recompute_flops_overhead"][name].rstrip("%")), 0.05, "abs")

    # Table 4 per-layer times (measured): calibrated, within 10%.
    t4 = facts["act.table4.per_layer_time_22B"]["published"]["rows"]
    for key, rc, sp in (("baseline_no_recompute", "none", False), ("sequence_parallel", "none", True),
                        ("full_recompute", "full", False), ("selective", "selective", False),
                        ("selective+sequence", "selective", True)):
        fwd, bwd = table4_prediction(rc, sp)
        add("act.table4.per_layer_time_22B", f"{key} fwd (ms)", fwd, t4[key]["fwd"], 0.10)
        add("act.table4.per_layer_time_22B", f"{key} bwd (ms)", bwd, t4[key]["bwd"], 0.10)
        add("act.table4.per_layer_time_22B", f"{key} total (ms)", fwd + bwd, t4[key]["total"], 0.10)

    # FLOPs: the general count equals Eq 7 at f = 4h; Eq 3 = Eq 7 + one forward.
    for (l, h, _) in NARAYANAN_TABLE1:
        add("act.flops_formulas", f"model FLOPs l={l} h={h}", flops.model_flops(8, 2048, l, h, 51200, 4 * h),
            flops.model_flops_eq7(8, 2048, l, h, 51200), 1e-12)
        gemm, attn = flops.layer_forward_flops(8, 2048, h, 4 * h)
        add("ptdp.flops", f"Eq 3 = Eq 7 + forward l={l} h={h}",
            flops.model_flops(8, 2048, l, h, 51200, 4 * h) + l * (gemm + attn),
            flops.hardware_flops_full_eq3(8, 2048, l, h, 51200), 1e-9)
        add("ptdp.param_count", f"Eq 2 params (B) l={l} h={h}", param_count(l, h, 51200, 2048) / 1e9,
            _, 0.05 + 0.0005 * _, "abs")

    # Bubbles.
    add("ptdp.bubble.gpipe_1f1b", "(p-1)/m, p=8 m=64", pipeline.bubble_fraction(8, 64), 7 / 64, 1e-12)
    add("ptdp.bubble.interleaved", "(p-1)/(v m), p=8 m=64 v=3", pipeline.bubble_fraction(8, 64, 3), 7 / 192, 1e-12)
    add("gpipe.bubble", "(K-1)/(M+K-1), K=4 M=16", pipeline.gpipe_bubble_share(4, 16), 3 / 19, 1e-12)
    add("ptdp.bubble.gpipe_1f1b", "in-flight micro-batches p=8 m=64", pipeline.in_flight_micro_batches(8, 64), 8, 0, "abs")

    # Training time Eq 4.
    tt = facts["ptdp.training_time"]["published"]
    for key, params in (("gpt3_175B", 175e9), ("one_T", 1e12)):
        d = tt[key]
        days = flops.training_time_eq4(d["T"], params, d["n"], d["X_TFLOPs"] * 1e12) / 86400
        add("ptdp.training_time", f"{key} days", days, d["days"], 1.0, "abs")

    # Failures.
    llama = facts["run.llama3_405b.interruptions"]["published"]
    mtbf = 1.0 / failures.interruptions_per_hour(16384, cal.GPU_FAILURES_PER_HOUR)
    add("run.llama3_405b.interruptions", "MTBF at 16,384 GPUs (h)", mtbf, 54 * 24 / llama["unexpected"], 1e-9)
    add("run.llama3_405b.interruptions", "MTBF at 16,384 GPUs (h, note)", mtbf, 3.09, 0.01, "abs")
    for fid, fn in (("ckpt.young", failures.young_interval), ("ckpt.daly", failures.daly_interval)):
        for label, value in facts[fid]["published"]["examples_computed_here"].items():
            parts = dict(part.split("=") for part in label.split(","))
            delta = float(parts["delta"])
            mtti = float(parts["M"].rstrip("h")) * 3600
            add(fid, label, fn(delta, mtti), value, 0.05, "abs")

    # Checkpoint sizes.
    sizes = facts["ckpt.sizes_and_times"]["published"]
    add("ckpt.sizes_and_times", "BLOOM-176B bytes/param", cal.CHECKPOINT_BYTES_PER_PARAM,
        sizes["bloom_176B"]["bytes_per_param"], 0.0, "abs")
    add("ckpt.sizes_and_times", "Megatron 1T checkpoint (TB)", 1e12 * cal.CHECKPOINT_BYTES_PER_PARAM / 1e12,
        sizes["megatron_1T"]["size_TB"], 0.05)

    # NCCL bus bandwidth by message size (measured): within 10%.
    nccl = facts["hw.nccl_busbw_measured"]["published"]
    h200 = GPU_PRESETS["h200_141gb"]
    asym = h200.nvlink_bytes_per_s * cal.NVLINK_BUSBW_FRACTION["h200_141gb"]
    for label, value in nccl["h200_8gpu_busbw_by_size_GBps"].items():
        size = float(label[:-3]) * (MIB if label.endswith("MiB") else GIB)
        add("hw.nccl_busbw_measured", f"H200 8-GPU all-reduce busbw {label} (GB/s)",
            comms.bus_bandwidth(size, asym) / GB, value, 0.10)
    add("hw.nccl_busbw_measured", "H200 8-GPU all-reduce busbw 16GiB (GB/s)",
        comms.bus_bandwidth(16 * GIB, asym) / GB, nccl["h200_8gpu_allreduce_busbw_16GiB_GBps"]["nccl_tests"], 0.10)
    b200 = GPU_PRESETS["b200_192gb"]
    b_asym = b200.nvlink_bytes_per_s * cal.NVLINK_BUSBW_FRACTION["b200_192gb"]
    add("hw.nccl_busbw_measured", "B200 1 node busbw 16GiB (GB/s)", comms.bus_bandwidth(16 * GIB, b_asym) / GB,
        nccl["b200_1node_16GiB_GBps"], 0.10)
    nic = 400e9 / 8 * cal.INTER_NODE_EFFICIENCY
    size = 16 * GIB
    t = comms.group_time(size, 32, 8, b_asym, nic)
    add("hw.nccl_busbw_measured", "B200 4 nodes x 8 busbw 16GiB (GB/s)", 2 * 31 / 32 * size / t / GB,
        nccl["b200_4nodes_32ranks_16GiB_GBps"], 0.10)
    return rows


def within(row):
    _, _, predicted, published, tol, kind = row
    if kind == "abs":
        return abs(predicted - published) <= tol + 1e-9 * max(1.0, abs(published))
    return abs(predicted - published) <= tol * abs(published) + 1e-9 * max(1.0, abs(published))


def end_to_end_rows(group=None):
    """(source, quantity, predicted, published) of content/validation/end_to_end.yaml,
    one group or all: runs NOT in published.yaml, none used to fit a constant."""
    rows = []
    for run in end_to_end_runs():
        if group is not None and run.group["id"] != group:
            continue
        spec = run.spec
        layout = f"t{spec['tp']} p{spec['pp']} d{spec['gpus'] // (spec['tp'] * spec['pp'])}"
        quantity = f"{run.group['id']} {spec['model']} {layout} {spec.get('recompute', '')} {run.group['metric']}"
        rows.append((spec.get("source", run.group["source"]), quantity, end_to_end_predicted(run), run.published))
    return rows


def zero3_rows():
    return end_to_end_rows("table2_zero3")


def error_percent(predicted, published):
    if published == 0:
        return 0.0 if predicted == 0 else math.inf
    return 100.0 * (predicted - published) / published

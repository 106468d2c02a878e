"""Rows that check the model's formulas against the papers that state them
(content/validation/published.yaml): ZeRO's model-state memory, Korthikanti's
per-layer activations, FLOP counts and parameter counts, pipeline bubbles,
the training-time equation, optimal checkpoint intervals.

Each function takes the facts and returns its rows in the order they print.
"""
from lab_core import activations as act
from lab_core import failures, flops, pipeline
from lab_core.memory import model_state_bytes_per_gpu
from lab_core.shape import derive_shape, param_count

from ..reference import gpt3
from .facts import GB, arxiv
from .table import PageEntry, Row, absolute, rel

#: ZeRO's own accounting (arXiv:1910.02054 Sec 3.1): 16 bytes of state per parameter.
ZERO_STATE_BYTES = 16

# Narayanan et al. arXiv:2104.04473 Table 1 (layers, hidden) -> billions of
# parameters, as printed in the paper (the facts cite the pairs but do not list them).
NARAYANAN_TABLE1 = (
    (24, 2304, 1.7), (30, 3072, 3.6), (36, 4096, 7.5), (40, 6144, 18.4), (48, 8192, 39.1),
    (60, 10240, 76.1), (80, 12288, 145.6), (96, 16384, 310.1), (105, 20480, 529.6), (128, 25600, 1008.0),
)


def zero_rows(facts):
    """ZeRO Fig. 1 (decimal GB) and the 16 bytes per parameter it rests on."""
    rows = []
    ids = ("zero.fig1.baseline", "zero.fig1.pos", "zero.fig1.pos_g", "zero.fig1.pos_g_p")
    for stage, (fid, tol) in enumerate(zip(ids, (1e-9, 0.1, 0.1, 0.05))):
        f = facts[fid]
        pred = model_state_bytes_per_gpu(f["inputs"]["params"], ZERO_STATE_BYTES, f["inputs"]["dp_degree"], stage) / GB
        rows.append(Row(fid, "per-device model states (GB)", pred, f["published"]["per_device_model_state_memory_GB"],
                        absolute(tol), "formula",
                        PageEntry("zero", "arXiv:1910.02054 Fig. 1", arxiv("1910.02054"), "zero_stage", "gb",
                                  "zero_fig1", {"stage": stage})))
    rows.append(Row("zero.bytes_per_param", "bytes/param", model_state_bytes_per_gpu(1.0, ZERO_STATE_BYTES), 16,
                    absolute(0.0), "formula"))
    return rows


def activation_rows(facts):
    """Korthikanti et al. arXiv:2205.05198 Table 2 on the Table 3 models, Eq. 5's
    first stage, the interleaving multiplier and §5's savings."""
    rows = []

    def add(fid, what, predicted, published, tolerance, page=None):
        rows.append(Row(fid, what, float(predicted), float(published), tolerance, "formula", page))

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
                add(fid, f"{row['model']} t={t} bytes/layer", act.per_layer_bytes(s, b, h, a, t, sp, rc, False),
                    expected, rel(1e-12))
        add("act.per_layer.no_parallel", f"{row['model']} t=1 bytes/layer", act.per_layer_bytes(s, b, h, a),
            sbh * (34 + 5 * a * s / h), rel(1e-12))
        # First stage holds L layers' worth under 1F1B whatever p (Eq 5).
        L, p, t = row["layers"], row["pp"], row["tp"]
        per = act.per_layer_bytes(s, b, h, a, t, True, "none", False)
        add("act.pipeline.first_stage", f"{row['model']} first-stage bytes",
            act.first_stage_bytes(per, L, p, micro_batches=10 ** 6), s * b * h * L / t * (34 + 5 * a * s / h),
            rel(1e-12))
    for p, v in ((8, 3), (35, 3), (64, 2)):
        add("act.pipeline.first_stage", f"interleave multiplier p={p} v={v}", act.interleave_multiplier(p, v),
            1 + (p - 1) / (p * v), rel(1e-12))

    sav = facts["act.selective.savings"]
    for name, key, layers in (("GPT-3", "gpt3", 96), ("MT-NLG", "mtnlg", 105)):
        i = sav["inputs"][key]
        add("act.selective.savings", f"{name} 5as/h", 5 * i["a"] * i["s"] / i["h"],
            sav["published"]["five_as_over_h"][name], absolute(0.0))
        full = act.per_layer_bytes(i["s"], 1, i["h"], i["a"], 8, True, "none")
        sel = act.per_layer_bytes(i["s"], 1, i["h"], i["a"], 8, True, "selective")
        add("act.selective.savings", f"{name} activation memory saved (%)", 100 * (1 - sel / full),
            float(sav["published"]["activation_memory_saved"][name].rstrip("%")), absolute(0.5),
            PageEntry("activations", "arXiv:2205.05198 §5", arxiv("2205.05198"), "act_saved", "percent",
                      "act_saved", {"model": name}))
        over = (flops.hardware_flops_selective_eq8(1, i["s"], layers, i["h"], 51200)
                / flops.model_flops_eq7(1, i["s"], layers, i["h"], 51200) - 1)
        add("act.selective.savings", f"{name} recompute FLOPs overhead (%)", 100 * over,
            float(sav["published"]["recompute_flops_overhead"][name].rstrip("%")), absolute(0.05),
            PageEntry("activations", "arXiv:2205.05198 §5", arxiv("2205.05198"), "recompute_overhead", "percent",
                      "recompute_overhead", {"model": name}))
    return rows


def shape_rows(facts):
    """Parameter counts (Llama 3 405B's shape; Narayanan Eq. 2 on Table 1) and
    the FLOP formulas (the general count equals Eq. 7 at f = 4h; Eq. 3 = Eq. 7 + one forward)."""
    # Llama 3 405B (arXiv:2407.21783 Table 3: 126 layers, model dimension
    # 16,384, FFN dimension 53,248 with SwiGLU, 128 attention heads, 8
    # key/value heads, vocabulary 128,000) against its name, 405B.
    llama = derive_shape(405e9, 8192, layers=126, hidden=16384, heads=128, ffn_hidden=int(1.5 * 53248),
                         vocab=128000, kv_heads=8)
    rows = [Row("arXiv:2407.21783 Table 3", "Llama 3 405B parameters (B)", llama.params / 1e9, 405.0, rel(0.005),
                "formula", PageEntry("params", "arXiv:2407.21783 Table 3", arxiv("2407.21783"), "param_count",
                                     "billions", "param_count", {"model": "Llama 3 405B"}))]
    for layers, h, billions in NARAYANAN_TABLE1:
        gemm, attn = flops.layer_forward_flops(8, 2048, h, 4 * h)
        general = flops.model_flops(8, 2048, layers, h, 51200, 4 * h)
        rows += [
            Row("act.flops_formulas", f"model FLOPs l={layers} h={h}", float(general),
                float(flops.model_flops_eq7(8, 2048, layers, h, 51200)), rel(1e-12), "formula"),
            Row("ptdp.flops", f"Eq 3 = Eq 7 + forward l={layers} h={h}", float(general + layers * (gemm + attn)),
                float(flops.hardware_flops_full_eq3(8, 2048, layers, h, 51200)), rel(1e-9), "formula"),
            Row("ptdp.param_count", f"Eq 2 params (B) l={layers} h={h}", param_count(layers, h, 51200, 2048) / 1e9,
                billions, absolute(0.05 + 0.0005 * billions), "formula"),
        ]
    return rows


def bubble_rows(facts):
    """Pipeline bubbles: 1F1B (p-1)/m, interleaved (p-1)/(v m), GPipe (K-1)/(M+K-1)."""
    return [
        Row("ptdp.bubble.gpipe_1f1b", "(p-1)/m, p=8 m=64", pipeline.bubble_fraction(8, 64), 7 / 64, rel(1e-12),
            "formula"),
        Row("ptdp.bubble.interleaved", "(p-1)/(v m), p=8 m=64 v=3", pipeline.bubble_fraction(8, 64, 3), 7 / 192,
            rel(1e-12), "formula"),
        Row("gpipe.bubble", "(K-1)/(M+K-1), K=4 M=16", pipeline.gpipe_bubble_share(4, 16), 3 / 19, rel(1e-12),
            "formula"),
        Row("ptdp.bubble.gpipe_1f1b", "in-flight micro-batches p=8 m=64", float(pipeline.in_flight_micro_batches(8, 64)),
            8.0, absolute(0), "formula"),
    ]


def training_time_rows(facts):
    """Narayanan et al. Eq. 4 with the paper's own achieved FLOP/s."""
    rows = []
    tt = facts["ptdp.training_time"]["published"]
    for key, params, label in (("gpt3_175B", gpt3()["params"], "GPT-3 175B"), ("one_T", 1e12, "1T")):
        d = tt[key]
        days = flops.training_time_eq4(d["T"], params, d["n"], d["X_TFLOPs"] * 1e12) / 86400.0
        rows.append(Row("ptdp.training_time", f"{key} days", days, float(d["days"]), absolute(1.0), "formula",
                        PageEntry("eq4", "arXiv:2104.04473 Eq. 4", arxiv("2104.04473"), "train_days", "days", "eq4",
                                  {"model": label, "gpus": d["n"]})))
    return rows


def checkpoint_interval_rows(facts):
    """Young's and Daly's optimal checkpoint intervals on the examples computed in the facts."""
    rows = []
    for fid, interval in (("ckpt.young", failures.young_interval), ("ckpt.daly", failures.daly_interval)):
        for label, value in facts[fid]["published"]["examples_computed_here"].items():
            parts = dict(part.split("=") for part in label.split(","))
            delta = float(parts["delta"])
            mtti = float(parts["M"].rstrip("h")) * 3600
            rows.append(Row(fid, label, interval(delta, mtti), float(value), absolute(0.05), "formula"))
    return rows

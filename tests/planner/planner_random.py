"""Random workloads and plans over the whole planner space (tests only): dense
and mixture-of-experts shapes, long sequences (context parallelism), uneven
pipeline splits, the three software stacks and both number formats."""
import random

from lab_core import Workload
from lab_core.parallelism import schedule_allows, zero_stages
from lab_core.planner.search import make_parallelism
from lab_core.planner.space import divisors, space_for

STACKS = ("modern", "torch_native", "megatron_lm_2021")


def random_workload_fields(rng, gpus_choices, moe_share=0.3, long_share=0.3, max_log_params=12.3, schedule_share=0.0,
                           modules_share=0.0, mtp_share=0.0):
    """Keyword arguments of a random Workload (may still be refused by Workload); with
    schedule_share, that share of them runs DualPipe or DualPipeV, with modules_share, that
    share recomputes Megatron-Core's modules on the modern stack, with mtp_share, that share
    has one to three multi-token-prediction modules (no draw without them, so the other
    draws stay what they were)."""
    kw = dict(params=float("%.3g" % 10 ** rng.uniform(8.2, max_log_params)),
              gpus=rng.choice(gpus_choices),
              inter_node_gbps=float("%.3g" % 10 ** rng.uniform(1.4, 3.5)),
              flash_attention=rng.random() < 0.7,
              gpu=rng.choice(["a100_80gb", "h100_80gb", "b200_192gb", "h800_80gb"]),
              stack=rng.choice(STACKS),
              dropout=rng.random() < 0.5)
    if rng.random() < long_share:
        kw["seq_len"] = rng.choice([8192, 16384, 32768, 131072])
        kw["global_batch_tokens"] = kw["seq_len"] * rng.choice([4, 8, 16, 64, 256])
    else:
        kw["seq_len"] = rng.choice([512, 2048, 8192])
        kw["global_batch_tokens"] = int(2 ** rng.uniform(16, 22))
    if kw["gpu"] in ("h100_80gb", "h800_80gb", "b200_192gb") and rng.random() < 0.4:
        kw["precision"] = "fp8"
    if rng.random() < 0.25:
        # A layer count with uneven Megatron splits (layers + 2 with many divisors).
        kw["layers"] = rng.choice([14, 30, 62, 126])
    if rng.random() < moe_share:
        kw["experts"] = rng.choice([8, 16, 64])
        kw["experts_per_token"] = rng.choice([1, 2, 4])
        kw["shared_experts"] = rng.choice([0, 1])
        kw["dense_layers"] = rng.choice([0, 1])
    if schedule_share and rng.random() < schedule_share:
        kw["pipeline_schedule"] = rng.choice(["dualpipe", "dualpipev"])
    if modules_share and rng.random() < modules_share:
        kw["stack"] = "modern"
        names = ["core_attn", "layernorm"]
        if "experts" in kw:
            names += ["moe_act", "moe"] + (["shared_experts"] if kw["shared_experts"] else [])
        if "experts" not in kw or kw["dense_layers"]:
            names.append("mlp")
        kw["recompute_modules"] = tuple(rng.sample(names, rng.randint(1, len(names))))
    if mtp_share and rng.random() < mtp_share:
        kw["mtp_layers"] = rng.choice([1, 1, 2, 3])
    return kw


def random_workload(rng, gpus_choices, **options):
    """A random valid Workload with at least one grid on its GPUs, and its fields."""
    while True:
        kw = random_workload_fields(rng, gpus_choices, **options)
        try:
            w = Workload(**kw)
        except Exception:  # noqa: BLE001 - an inconsistent draw (e.g. fp8 on A100): draw again
            continue
        if space_for(w).layouts(w.gpus):
            return w, kw


def interleavings(w, grid, m):
    """The interleavings a plan of the grid with m micro-batches can run: the divisors of a
    stage's layers when pp divides m under 1F1B, 1 under the bidirectional schedules when
    they can run m (none when they cannot)."""
    if w.pipeline_schedule != "1f1b" and grid.pp > 1:
        return [1] if schedule_allows(w.pipeline_schedule, grid.pp, m) else []
    return divisors(grid.interleave_layers(w.shape.layers)) if grid.pp > 1 and m % grid.pp == 0 else [1]


def random_plan(rng, w):
    """A random plan of the planner's space for workload w (None if its schedule runs none)."""
    for _ in range(100):
        grid = rng.choice(space_for(w).layouts(w.gpus))
        R = w.batch_sequences // grid.dp
        b = rng.choice(divisors(R))
        vs = interleavings(w, grid, R // b)
        if vs:
            return make_parallelism(grid, rng.choice(zero_stages(w.stack, grid.pp, grid.shards)),
                                    rng.choice(("none", "selective", "full")), grid.tp > 1 and rng.random() < 0.8,
                                    b, rng.choice(vs))
    return None

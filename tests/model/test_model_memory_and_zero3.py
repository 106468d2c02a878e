"""Per-GPU memory of evaluate() against verified published figures, and the
ZeRO-3 time model against arXiv:2104.04473 Table 2 (loosely)."""
import os

import pytest
import yaml

from lab_core import Parallelism, Workload, evaluate
from lab_core import calibration as cal
from lab_core.memory import model_state_bytes_per_gpu
from published_checks import ROOT, load_facts, zero3_rows

GIB = 1073741824.0


def _table3():
    return load_facts()["act.table3.configs"]["published"]["rows"]


@pytest.mark.parametrize("row", _table3(), ids=lambda r: r["model"])
def test_evaluate_activation_memory_is_korthikanti_eq5(row):
    """evaluate()'s first-stage activations for the Table 3 runs (selective + SP,
    interleaving of Table 3) equal arXiv:2205.05198 Eq 5 with its extra terms."""
    s, h, a, L, t, p, b = 2048, row["hidden"], row["heads"], row["layers"], row["tp"], row["pp"], row["micro_batch"]
    v = 3 if row["model"].startswith(("175B", "530B")) else 1
    w = Workload(params=1e9, layers=L, hidden=h, heads=a, vocab=51200, gpus=row["gpus"], seq_len=s,
                 global_batch_tokens=row["global_batch"] * s, flash_attention=False)
    r = evaluate(w, Parallelism(tp=t, pp=p, dp=1, recompute="selective", sequence_parallel=True,
                                micro_batch=b, interleave=v))
    sbh = s * b * h
    m = row["global_batch"] // b
    expected = 34.0 * sbh / t * L * min(p, m) / p * (1 + (p - 1) / (p * v) if v > 1 and p > 1 else 1)
    expected += sbh * min(p, m) / t + (4.0 * sbh / t * (1 + 51200 / h) if p == 1 else 0.0)
    # Stored activations are Eq 5; on top, selective recompute rebuilds one
    # layer's attention scores for its backward (arXiv:1604.06174 Sec 4).
    working = 5.0 * a * s * s * b / t
    assert r.activations_working_bytes == pytest.approx(working, rel=1e-12)
    assert r.activations_bytes - r.activations_working_bytes == pytest.approx(expected, rel=1e-12)


def test_zero_one_trillion_on_1024_gpus():
    """arXiv:1910.02054 Sec 1/5.4: 1T parameters with P_os+g+p on 1,024 GPUs -> 16 GB per GPU."""
    assert model_state_bytes_per_gpu(1e12, 16, 1024, 3) / 1e9 == pytest.approx(16.0, abs=0.5)


@pytest.mark.parametrize("stage,params_b", [(1, 7.5), (2, 14), (3, 128)])
def test_zero_largest_model_at_nd64_fits_32gb(stage, params_b):
    """arXiv:1910.02054 Sec 5.4: the largest models whose states fit a 32 GB V100 at Nd = 64."""
    assert model_state_bytes_per_gpu(params_b * 1e9, 16, 64, stage) / 1e9 <= 32.0 + 1e-9


def _published_runs():
    out = []
    for name in sorted(os.listdir(os.path.join(ROOT, "scenarios"))):
        if not name.endswith(".yaml"):
            continue
        with open(os.path.join(ROOT, "scenarios", name), encoding="utf-8") as handle:
            data = yaml.safe_load(handle)
        if data.get("published") and data.get("parallelism"):
            out.append(data["id"])
    return out


@pytest.mark.parametrize("scenario_id", _published_runs())
def test_published_runs_fit_in_memory(scenario_id):
    """A published run ran: the model must not say its layout overflows the GPU."""
    from build.labsite.scenarios import load_scenarios
    sc = next(x for x in load_scenarios() if x.id == scenario_id)
    r = evaluate(sc.workload_object(), sc.parallelism_object())
    if scenario_id == "llama3-405b":
        pytest.xfail("the model puts Llama 3 405B's assumed layout (v=8, no recompute, 8K) at ~90 GB: its activation formulas assume dropout and full K/V heads; see the scenario notes")
    assert r.fits, f"{scenario_id}: {r.memory_bytes / GIB:.1f} GiB"


def test_zero3_table2_matches_its_calibration():
    """DP_OVERLAP_FRACTION is the fit to the six ZeRO-3 rows, which it then meets
    (each within 20%, mean under 10%; before the fit: +11..+40%)."""
    from fit_calibration import fit_overlap

    assert fit_overlap() == cal.DP_OVERLAP_FRACTION
    errors = [abs(predicted - published) / published for _, _, predicted, published in zero3_rows()]
    assert max(errors) < 0.20
    assert sum(errors) / len(errors) < 0.10


def test_more_compute_never_shortens_a_step():
    """One shared overlap window: full recompute or SP off never beats the same plan
    with less compute, ZeRO-3 with few micro-batches included (the old double count)."""
    import random
    rng = random.Random(11)
    for _ in range(300):
        w = Workload(params=float("%.3g" % 10 ** rng.uniform(8.5, 12)), gpus=rng.choice([16, 64, 256, 1024]),
                     global_batch_tokens=int(2 ** rng.uniform(16, 22)), seq_len=rng.choice([1024, 2048, 8192]),
                     inter_node_gbps=float("%.3g" % 10 ** rng.uniform(1.4, 3.3)), flash_attention=rng.random() < 0.5)
        t = rng.choice([1, 2, 4, 8])
        d = w.gpus // t
        if w.batch_sequences % d:
            continue
        b = 1 if rng.random() < 0.5 else w.batch_sequences // d
        base = dict(tp=t, pp=1, dp=d, zero=rng.choice((1, 3)), micro_batch=b)
        try:
            less = evaluate(w, Parallelism(recompute="none", sequence_parallel=t > 1, **base)).step_s
            more = evaluate(w, Parallelism(recompute="full", sequence_parallel=t > 1, **base)).step_s
            no_sp = evaluate(w, Parallelism(recompute="none", sequence_parallel=False, **base)).step_s
        except Exception:
            continue
        assert more >= less * (1 - 1e-12)
        assert no_sp >= less * (1 - 1e-12)


@pytest.mark.parametrize("flash", [False, True])
def test_recompute_working_set_is_one_rebuilt_layer(flash):
    """arXiv:1604.06174 Sec 4: peak = kept checkpoints + one segment. Full
    recompute rebuilds a whole layer, selective only the scores (nothing with
    flash attention), no recompute rebuilds nothing."""
    from lab_core.activations import per_layer_bytes

    w = Workload(params=1e9, layers=48, hidden=6144, heads=64, vocab=51200, gpus=8, seq_len=2048,
                 global_batch_tokens=4 * 2048, flash_attention=flash)
    args = (2048, 4, 6144, 64, 8, True)
    whole = per_layer_bytes(*args, "none", flash)
    expected = {"none": 0.0, "full": whole, "selective": whole - per_layer_bytes(*args, "selective", flash)}
    for recompute, working in expected.items():
        r = evaluate(w, Parallelism(tp=8, pp=1, dp=1, recompute=recompute, sequence_parallel=True, micro_batch=4))
        assert r.activations_working_bytes == pytest.approx(working, rel=1e-12)
    assert expected["selective"] == (0.0 if flash else pytest.approx(5.0 * 64 * 2048 * 2048 * 4 / 8, rel=1e-12))

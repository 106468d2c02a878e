"""python -m lab_core evaluate: same numbers as the API, exit 2 on bad input."""
import json
import os
import subprocess
import sys

import pytest

from lab_core import Parallelism, Workload, evaluate

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
ARGS = ["evaluate", "--params", "175e9", "--gpus", "1024", "--seq-len", "2048",
        "--global-batch-tokens", "3145728", "--tp", "8", "--pp", "8", "--recompute", "selective",
        "--sequence-parallel"]


def run(*args):
    return subprocess.run([sys.executable, "-m", "lab_core", *args], cwd=ROOT, capture_output=True, text=True)


def test_json_matches_api():
    out = run(*ARGS, "--json")
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)
    want = evaluate(Workload(params=175e9, gpus=1024, seq_len=2048, global_batch_tokens=3145728),
                    Parallelism(tp=8, pp=8, dp=16, recompute="selective", sequence_parallel=True)).to_dict()
    assert got == json.loads(json.dumps(want))


def test_table_output():
    out = run(*ARGS)
    assert out.returncode == 0
    assert "step_s" in out.stdout


def test_bad_flag_exits_2_without_traceback():
    for args in (["evaluate", "--bogus", "1"], ["evaluate", "--params", "abc"], ["evaluate", "--params", "1e20"],
                 ["evaluate", "--gpus", "8", "--tp", "3"]):
        out = run(*args)
        assert out.returncode == 2, args
        assert "error:" in out.stderr and "Traceback" not in out.stderr


@pytest.mark.parametrize("flag", ["--tp", "--pp", "--cp", "--ep", "--micro-batch", "--interleave"])
def test_a_layout_flag_given_as_zero_is_an_error_not_the_default(flag):
    """`--tp 0` was read as "not given" (tp 1) and evaluated a plan nobody asked for."""
    out = run("evaluate", "--params", "7e9", "--gpus", "8", flag, "0")
    name = flag[2:].replace("-", "_")
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert out.stderr.startswith(f"error: {name}: 0 is not allowed")


def test_flags_are_never_abbreviated():
    out = run("evaluate", "--params", "7e9", "--gpus", "8", "--seq", "4096")
    assert out.returncode == 2 and "unrecognized arguments: --seq 4096" in out.stderr


@pytest.mark.parametrize("word, value", [("on", True), ("Off", False), ("yes", True), ("0", False)])
def test_on_off_inputs_take_the_words_the_help_names(word, value):
    out = run("evaluate", "--params", "7e9", "--gpus", "8", "--dropout", word, "--json")
    assert out.returncode == 0, out.stderr
    want = evaluate(Workload(params=7e9, gpus=8, dropout=value), Parallelism(dp=8)).to_dict()
    assert json.loads(out.stdout) == json.loads(json.dumps(want))


def test_recompute_modules_are_a_comma_separated_flag():
    out = run(*ARGS, "--recompute-modules", "layernorm,core_attn", "--json")
    assert out.returncode == 0, out.stderr
    want = evaluate(Workload(params=175e9, gpus=1024, seq_len=2048, global_batch_tokens=3145728,
                             recompute_modules=("core_attn", "layernorm")),
                    Parallelism(tp=8, pp=8, dp=16, recompute="selective", sequence_parallel=True)).to_dict()
    assert json.loads(out.stdout) == json.loads(json.dumps(want))
    plain = json.loads(run(*ARGS, "--json").stdout)
    assert want["memory"]["activations_bytes"] < plain["memory"]["activations_bytes"]
    for modules in ("moe_act", "layernorm,attention"):
        bad = run(*ARGS, "--recompute-modules", modules)
        assert bad.returncode == 2 and "recompute_modules" in bad.stderr and "Traceback" not in bad.stderr


def test_mtp_layers_is_a_flag():
    out = run(*ARGS, "--mtp-layers", "1", "--json")
    assert out.returncode == 0, out.stderr
    want = evaluate(Workload(params=175e9, gpus=1024, seq_len=2048, global_batch_tokens=3145728, mtp_layers=1),
                    Parallelism(tp=8, pp=8, dp=16, recompute="selective", sequence_parallel=True)).to_dict()
    got = json.loads(out.stdout)
    assert got == json.loads(json.dumps(want)) and got["shape"]["mtp_layers"] == 1
    assert got["time"]["step_s"] > json.loads(run(*ARGS, "--json").stdout)["time"]["step_s"]
    bad = run(*ARGS, "--mtp-layers", "9")
    assert bad.returncode == 2 and "mtp_layers" in bad.stderr and "Traceback" not in bad.stderr


def test_recompute_layers_is_a_flag():
    """Full recompute of the first N layers of each chunk (Megatron's block method), checked like the API."""
    out = run(*ARGS, "--recompute", "full", "--recompute-layers", "4", "--json")
    assert out.returncode == 0, out.stderr
    want = evaluate(Workload(params=175e9, gpus=1024, seq_len=2048, global_batch_tokens=3145728),
                    Parallelism(tp=8, pp=8, dp=16, recompute="full", recompute_layers=4,
                                sequence_parallel=True)).to_dict()
    assert json.loads(out.stdout) == json.loads(json.dumps(want))
    for extra in (["--recompute-layers", "4"], ["--recompute", "full", "--recompute-layers", "13"]):
        bad = run(*[a for a in ARGS if a != "selective" and a != "--recompute"] + extra)
        assert bad.returncode == 2 and "recompute_layers" in bad.stderr and "Traceback" not in bad.stderr


def test_context_expert_and_uneven_pipeline_flags():
    """--cp, --ep, --dp-shard and the first/last stage layers, as Parallelism takes them (DP defaults to
    the GPUs over TP x PP x CP); a bad one is an input error naming it."""
    moe = ["evaluate", "--params", "47e9", "--layers", "30", "--experts", "8", "--experts-per-token", "2",
           "--gpus", "64", "--seq-len", "8192", "--global-batch-tokens", "1048576", "--tp", "2", "--pp", "4",
           "--cp", "2", "--ep", "8", "--first-stage-layers", "6", "--last-stage-layers", "8",
           "--recompute", "selective", "--sequence-parallel", "--json"]
    out = run(*moe)
    assert out.returncode == 0, out.stderr
    want = evaluate(Workload(params=47e9, layers=30, experts=8, experts_per_token=2, gpus=64, seq_len=8192,
                             global_batch_tokens=1048576),
                    Parallelism(tp=2, pp=4, cp=2, dp=4, ep=8, first_stage_layers=6, last_stage_layers=8,
                                recompute="selective", sequence_parallel=True)).to_dict()
    assert json.loads(out.stdout) == json.loads(json.dumps(want))
    shard = run(*ARGS[:-3], "--zero", "3", "--dp-shard", "8", "--json")
    assert shard.returncode == 0, shard.stderr
    assert json.loads(shard.stdout)["parallelism"]["dp_shard"] == 8
    for extra, field in ((["--ep", "3"], "ep"), (["--cp", "3"], "cp"), (["--first-stage-layers", "100"], "first_stage_layers")):
        bad = run(*moe[:-1], *extra)
        assert bad.returncode == 2 and field in bad.stderr and "Traceback" not in bad.stderr, (extra, bad.stderr)

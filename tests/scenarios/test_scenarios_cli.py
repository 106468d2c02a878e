"""python -m labsite.check_scenarios: output format and exit codes, never a traceback."""
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BAD = Path(__file__).parent / "fixtures" / "bad"


def run(*args):
    result = subprocess.run([sys.executable, "-m", "labsite.check_scenarios", *map(str, args)], cwd=ROOT,
                            capture_output=True, text=True, check=False)
    assert "Traceback" not in result.stdout + result.stderr
    return result


def test_all_shipped_files_pass_with_a_one_line_summary():
    result = run()
    assert result.returncode == 0, result.stderr
    assert result.stdout.count("\n") == 1 and result.stdout.startswith("ok: ")
    assert "demo path of 6 steps" in result.stdout


def test_problems_are_listed_one_per_line_and_exit_1():
    result = run(BAD / "out-of-range.yaml", BAD / "wrong-type.yaml")
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert lines[:-1] == [
        "tests/scenarios/fixtures/bad/out-of-range.yaml:12: workload.params: '3T' is out of range "
        "(allowed: 1.25e+08 … 2e+12 parameters)",
        "tests/scenarios/fixtures/bad/out-of-range.yaml:14: workload.seq_len: 100 is out of range "
        "(allowed: 512 … 131072 tokens)",
        "tests/scenarios/fixtures/bad/wrong-type.yaml:13: workload.gpus: a list is not a number "
        "(allowed: 1 … 32768 GPUs; default 8; written like 175B, 1.3e9, 1_000, 1,024, 4M or 8K)",
        "tests/scenarios/fixtures/bad/wrong-type.yaml:14: workload.flash_attention: must be true or false, "
        "got 'sometimes' (allowed: true or false; default true)",
        "tests/scenarios/fixtures/bad/wrong-type.yaml:15: tags: must be a list, got 'demo' "
        "(allowed: up to 8 kebab-case tags)",
    ]
    assert lines[-1] == "5 problems in 2 files (2 checked)"
    assert result.stdout == ""


def test_a_good_file_given_alone_passes():
    result = run("scenarios/examples/minimal-example.yaml")
    assert result.returncode == 0 and result.stdout == "ok: 1 file valid\n"


def test_usage_errors_exit_2():
    assert run("no/such/file.yaml").returncode == 2
    assert run("--frobnicate").returncode == 2
    assert run("README.md").returncode == 2
    result = run("--help")
    assert result.returncode == 0 and "usage" in result.stdout.lower() or "check_scenarios" in result.stdout


def test_a_syntax_error_is_a_message_not_a_traceback():
    result = run(BAD / "yaml-syntax.yaml")
    assert result.returncode == 1
    assert result.stderr.startswith("tests/scenarios/fixtures/bad/yaml-syntax.yaml:13: yaml: YAML syntax error")

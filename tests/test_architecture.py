"""ARCHITECTURE.md stays true where it quotes the code: the slider table is
lab_core's, and the names it calls public exist."""
import re
from pathlib import Path

import lab_core
from lab_core.inputs import INPUT_SPECS
from lab_view import parse_quantity

DOC = (Path(__file__).resolve().parents[1] / "ARCHITECTURE.md").read_text(encoding="utf-8")
ROW = re.compile(r"^\| `(\w+)` \| [^|]+ \| ([^|]+) … ([^|]+) \| ([^|]+) \|$", re.M)


def test_the_slider_table_is_lab_cores():
    rows = {name: tuple(parse_quantity(cell.strip()) for cell in cells) for name, *cells in ROW.findall(DOC)}
    sliders = {s.name: (s.minimum, s.maximum, s.default) for s in INPUT_SPECS if s.slider}
    assert rows == sliders


def test_the_public_names_exist():
    for name in ("Workload", "Parallelism", "evaluate", "recommend", "Report", "Plan", "LabInputError", "compute",
                 "plan_json", "INPUT_SPECS", "GPU_PRESETS"):
        assert hasattr(lab_core, name), name
    assert {"STAGES", "THRESHOLDS", "vocabulary"} <= set(dir(lab_core.planner))

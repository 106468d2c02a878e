"""The suite itself: test modules are imported by basename (pytest's default
"prepend" mode, which lets tests import their folder's helpers), so two test
files with one name in different folders would break collection."""
from collections import Counter
from pathlib import Path


def test_test_module_names_are_unique():
    names = Counter(p.name for p in Path(__file__).parent.rglob("test_*.py"))
    assert [name for name, count in names.items() if count > 1] == []

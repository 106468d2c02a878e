"""How a number the planner quotes is written, decided by its name.

The planner names numbers in SI with a unit suffix (``_bytes``, ``_s``,
``_tokens_per_s``, ``ratio`` …); this maps each name to a format kind so the
catalog's sentences can quote any of them as ``{name}``.
"""
from .quantities import format_quantity

_EXACT = {
    "params": "params", "params_per_gpu": "params", "tp": "count", "pp": "count", "dp": "count", "cp": "count", "ep": "count",
    "experts_per_gpu": "count", "ep_nodes": "count", "seq_len": "tokens", "cp_tokens": "tokens",
    "zero": "count", "gpus": "count", "gpus_used": "count", "gpus_per_node": "count", "nodes": "count",
    "micro_batch": "count", "micro_batches": "count", "interleave": "count", "min_gpus": "count",
    "min_tp": "count", "min_pp": "count", "min_dp": "count", "gpus_searched": "count", "sync_ranks": "count",
    "goodput_gain": "percent", "material_gain": "percent", "time_lost_share": "percent", "tie_tolerance": "percent",
    "interruptions_per_day": "plain", "near_optimum_factor": "plain", "goodput": "percent",
    "mfu": "percent", "level": "text", "relative_score": "percent",
    "goodput_at_optimal": "percent", "mode_gain": "percent", "mode": "term", "best_mode": "term",
    "interval_bound": "term", "recovery_source": "term", "modules": "text",
    "recompute_layers": "count", "chunk_layers": "count", "fewest_recompute_layers": "count",
}
_SUFFIXES = (
    ("_tokens_per_s", "tokens_per_s"), ("_bytes_per_s", "bytes_per_s"), ("_bytes", "bytes"),
    ("_bytes_total", "bytes"), ("bytes_total", "bytes"), ("_s", "duration"), ("_ratio", "percent"),
    ("ratio", "percent"), ("_fraction", "percent"), ("_share", "percent"), ("_goodput", "percent"),
    ("_gpus", "count"), ("_link", "term"),
)


def kind_of(name):
    if name in _EXACT:
        return _EXACT[name]
    if "_bytes_per_s" in name:
        return "bytes_per_s"
    if "bytes" in name:
        return "bytes"
    for suffix, kind in _SUFFIXES:
        if name.endswith(suffix):
            return kind
    return "plain"


def format_number(name, value, catalog):
    """``value`` of the quoted number ``name`` in the reader's words."""
    kind = kind_of(name)
    if value is None:
        return catalog["lab"]["not_applicable"]
    if kind == "term" or isinstance(value, str):
        return catalog["lab"]["terms"].get(str(value), str(value))
    if isinstance(value, bool):
        return catalog["lab"]["terms"]["yes" if value else "no"]
    if kind == "text":
        return str(value)
    return format_quantity(value, kind, catalog["units"])


class FormattedNumbers(dict):
    """The scalars of ``numbers``, each formatted the first time a sentence
    quotes it (``str.format_map``): a decision carries dozens of numbers and
    its sentences quote a few, and the worker words every decision on each
    slider move. Entries set directly are text already; a name that is not a
    scalar of ``numbers`` raises KeyError, as ``str.format`` would."""

    __slots__ = ("_numbers", "_catalog")

    def __init__(self, numbers, catalog, **texts):
        super().__init__(texts)
        self._numbers = numbers
        self._catalog = catalog

    def __missing__(self, name):
        value = self._numbers[name]
        if isinstance(value, (dict, list)):
            raise KeyError(name)
        text = self[name] = format_number(name, value, self._catalog)
        return text


def format_numbers(numbers, catalog, **texts):
    """``numbers`` formatted on demand for ``str.format_map`` (FormattedNumbers), plus ``texts`` as they are."""
    return FormattedNumbers(numbers, catalog, **texts)

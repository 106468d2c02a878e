"""Pins: parts of the plan the reader fixes; the planner searches the rest.

recommend(workload, pins) and plan_json(inputs, pins) take a dict of any of
PIN_FIELDS (lab_core.Parallelism's names):

    tp, pp, dp, cp, ep            the grid (tp x cp x pp x dp = GPUs)
    first_stage_layers,           an uneven pipeline split (0 = even)
    last_stage_layers
    zero, recompute, micro_batch, the rest of a plan
    interleave, sequence_parallel
    recompute_layers              layers of each chunk a plan that recomputes
                                  fully recomputes (0 = all; trim.py); more
                                  than 0 pins recompute "full" too

The search keeps only plans that match every pin. A pinned value need not be
one the planner tries on its own (any cp with 2 cp dividing the sequence, any
ep dividing the experts, any split the model accepts), but it must be valid
for the workload: otherwise parse_pins raises one LabInputError naming the
field, the value and the nearest valid values ("tp: 3 … allowed: 1, 2, 4, 8"),
reason "inconsistent" (bad types: "not_a_number", "not_an_integer",
"not_a_bool", "unknown_choice"; unknown names: "unknown_field"). When the pins
are valid but no plan with them fits in memory, the Plan says nothing fits
and its closest plan has the pins.
"""
from dataclasses import dataclass

from ..errors import LabInputError
from ..parallelism import (RECOMPUTE_MODES, ZERO_STAGES, Parallelism, _optional_int, _positive_int, schedule_allows,
                           stage_split, zero_stages)
from .space import Grid, divisors, expert_parallel_sizes

GRID_PINS = ("tp", "cp", "pp", "dp", "ep", "first_stage_layers", "last_stage_layers")
PLAN_PINS = ("zero", "recompute", "micro_batch", "interleave", "sequence_parallel", "recompute_layers")
PIN_FIELDS = GRID_PINS + PLAN_PINS
_COUNTS = ("tp", "cp", "pp", "dp", "ep", "micro_batch", "interleave")
# Shown when a valid set is long: this many values nearest the one given.
_NEAREST = 8


def _nearest(value, valid):
    """The valid values nearest `value`, ascending, as text."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and len(valid) > _NEAREST:
        valid = sorted(sorted(valid, key=lambda v: (abs(v - value), v))[:_NEAREST])
    return ", ".join(("true" if v else "false") if isinstance(v, bool) else f"{v:,}" if isinstance(v, int) else str(v)
                     for v in valid)


def _invalid(field, value, valid, detail=""):
    if not valid:
        return LabInputError(field, value, "no value: " + detail if detail else "no value", "inconsistent", detail)
    return LabInputError(field, value, _nearest(value, valid), "inconsistent", detail)


def _typed(name, value):
    """The pin's value with its type checked (Parallelism's own checks)."""
    if name in _COUNTS:
        return _positive_int(name, value)
    if name in ("first_stage_layers", "last_stage_layers", "recompute_layers"):
        return _optional_int(name, value)
    if name == "zero":
        if isinstance(value, bool) or value not in ZERO_STAGES:
            raise LabInputError(name, value, "0, 1, 2 or 3", "unknown_choice")
        return int(value)
    if name == "recompute":
        if not isinstance(value, str) or value not in RECOMPUTE_MODES:
            raise LabInputError(name, value, ", ".join(RECOMPUTE_MODES), "unknown_choice")
        return value
    if not isinstance(value, bool):
        raise LabInputError(name, value, "true or false", "not_a_bool")
    return value


@dataclass(frozen=True)
class Pins:
    """Validated pins of one workload (parse_pins); get(name) is the pinned value or None.
    splits: the (pp, first, last) the pins allow, or None for any split of the space."""

    values: dict
    splits: list
    gpus_per_node: int
    experts: int

    def get(self, name):
        return self.values.get(name)

    def to_dict(self):
        return dict(self.values)

    def without(self, name):
        """The same pins less one field (for error messages)."""
        values = {k: v for k, v in self.values.items() if k != name}
        splits = None if name in ("pp", "first_stage_layers", "last_stage_layers") else self.splits
        return Pins(values, splits, self.gpus_per_node, self.experts)

    def allows_grid(self, grid, dp=True):
        """Whether the grid's tp, cp, split (and dp, ep unless dp=False) match the pins."""
        v = self.values
        if v.get("tp", grid.tp) != grid.tp or v.get("cp", grid.cp) != grid.cp:
            return False
        if self.splits is not None and (grid.pp, grid.first, grid.last) not in self.splits:
            return False
        if v.get("sequence_parallel") and grid.tp == 1:
            return False
        if not dp:
            return True
        return v.get("dp", grid.dp) == grid.dp and v.get("ep", grid.ep) == grid.ep

    def match(self, par):
        """Whether a Parallelism matches every pin."""
        return all(getattr(par, name) == value for name, value in self.values.items())

    def grids(self, space, gpus):
        """The grids of `gpus` GPUs the pins allow (pinned values beyond the
        space's own candidates included), sorted like Space.layouts."""
        v = self.values
        tps = [v["tp"]] if "tp" in v else space.tps
        cps = [v["cp"]] if "cp" in v else space.cps
        splits = self.splits if self.splits is not None else space.splits
        out = []
        for t in tps:
            for c in cps:
                for p, first, last in splits:
                    mp = t * c * p
                    if gpus % mp:
                        continue
                    d = gpus // mp
                    if space.batch % d or v.get("dp", d) != d or (v.get("sequence_parallel") and t == 1):
                        continue
                    if not space.schedule_runs(p, d):
                        continue
                    if "ep" in v:
                        eps = (v["ep"],) if (t * c * d) % v["ep"] == 0 else ()
                    else:
                        eps = expert_parallel_sizes(self.experts, t * c * d, self.gpus_per_node)
                    out.extend(Grid(t, c, p, d, e, first, last) for e in eps)
        out.sort()
        return out

    def gpu_counts(self, space, gpus):
        """GPU counts <= gpus a grid with these pins could use, largest first."""
        v = self.values
        tps = [v["tp"]] if "tp" in v else space.tps
        cps = [v["cp"]] if "cp" in v else space.cps
        pps = sorted({p for p, _, _ in (self.splits or space.splits)})
        dps = [v["dp"]] if "dp" in v else space.dps
        counts = {t * c * p * d for t in tps for c in cps for p in pps for d in dps if t * c * p * d <= gpus}
        return sorted(counts, reverse=True)

    def grids_up_to(self, space, gpus):
        """The grids on `gpus` GPUs, else on the largest count below it that has
        one (the planner leaves the rest idle, as without pins)."""
        for n in self.gpu_counts(space, gpus):
            found = self.grids(space, n)
            if found:
                return found
        return []


def _valid_splits(workload, values, space):
    """(pp, first, last) allowed by the pp / first / last pins, or None when none is pinned."""
    layers = workload.shape.layers
    first, last = values.get("first_stage_layers"), values.get("last_stage_layers")
    pp = values.get("pp")
    if first is None and last is None:
        if pp is None:
            return None
        found = [s for s in space.splits if s[0] == pp]
        if not found:
            raise _invalid("pp", pp, space.pps, f"{layers} layers cannot split over {pp} stages")
        return found
    if not first and not last:
        # Pinned to 0: an even split.
        found = [(p, 0, 0) for p in divisors(layers) if pp is None or p == pp]
        if not found:
            raise _invalid("pp", pp, divisors(layers), f"an even split of {layers} layers")
        return found
    found = []
    for p in ([pp] if pp is not None else range(2, layers + 1)):
        try:
            f, _, l = stage_split(layers, Parallelism(pp=p, first_stage_layers=first or 0,
                                                      last_stage_layers=last or 0))
        except LabInputError:
            continue
        found.append((p, f, l))
    # One end pinned leaves the other free: the searched uneven splits with that end count too
    # (space.pipeline_splits: Llama 3's one layer fewer on both ends, the ceiling rule, the
    # prediction modules' variants), so a value a recommended plan shows can be pinned alone.
    found += [split for split in _searched_splits(space, pp, first, last) if split not in found]
    if not found:
        field, value = ("first_stage_layers", first) if first else ("last_stage_layers", last)
        detail = f"first + last leave the other stages equal shares of the {layers} layers"
        if pp is None:
            raise LabInputError(field, value, detail, "inconsistent")
        other = last if field == "first_stage_layers" else first
        valid = set()
        for n in range(1, layers):
            split = {"first_stage_layers": n, "last_stage_layers": other or 0} if field == "first_stage_layers" \
                else {"first_stage_layers": other or 0, "last_stage_layers": n}
            try:
                stage_split(layers, Parallelism(pp=pp, **split))
            except LabInputError:
                continue
            valid.add(n)
        if field == "first_stage_layers":
            valid.update(split[1] for split in _searched_splits(space, pp, None, other))
        else:
            valid.update(split[2] for split in _searched_splits(space, pp, other, None))
        raise _invalid(field, value, sorted(valid), detail + f" on pp={pp}")
    return found


def _searched_splits(space, pp, first, last):
    """The space's uneven splits (pp, first, last) that match the pinned pp, first and last (None: free)."""
    return [split for split in space.splits if split[1] and (pp is None or split[0] == pp)
            and (first is None or split[1] == first) and (last is None or split[2] == last)]


def parse_pins(workload, pins, space):
    """Pins of `workload` from a dict (None or {} -> None); LabInputError on a bad pin.
    space: the workload's space.Space."""
    if pins is None:
        return None
    if not isinstance(pins, dict):
        raise LabInputError("pins", repr(pins), "an object of pinned plan fields", "not_an_object")
    values = {}
    for name, value in pins.items():
        if name not in PIN_FIELDS:
            raise LabInputError(name, value, ", ".join(PIN_FIELDS), "unknown_field")
        if value is not None:
            values[name] = _typed(name, value)
    # The search knows recompute modes only; the count of layers is set on its plan (trim.py).
    layers = values.pop("recompute_layers", None)
    if layers:
        if values.get("recompute", "full") != "full":
            raise _invalid("recompute_layers", layers, [0], 'recompute layers need recompute "full"')
        if layers > workload.shape.layers:
            raise _invalid("recompute_layers", layers, list(range(workload.shape.layers + 1)),
                           f"at most the model's {workload.shape.layers} layers")
        values["recompute"] = "full"
    if not values:
        return None
    gpus = workload.gpus
    _check_single_fields(workload, values, space)
    pinned = Pins(values, _valid_splits(workload, values, space), workload.gpus_per_node, space.experts)
    if all(name in values for name in ("tp", "cp", "pp", "dp")):
        rest = values["tp"] * values["cp"] * values["pp"]
        if rest * values["dp"] != gpus:
            valid = [gpus // rest] if gpus % rest == 0 and space.batch % (gpus // rest) == 0 else []
            raise _invalid("dp", values["dp"], valid, f"tp x cp x pp x dp = gpus = {gpus:,}")
    _check_together(pinned, space, gpus, workload.shape.layers, workload.stack, workload.pipeline_schedule)
    return pinned


def pinned_recompute_layers(pins):
    """The recompute_layers pin of a pins dict parse_pins accepted (an int), or None."""
    value = pins.get("recompute_layers") if isinstance(pins, dict) else None
    return None if value is None else _typed("recompute_layers", value)


def _check_single_fields(workload, values, space):
    """Each pin on its own: is it a value the workload can take at all?"""
    shape = workload.shape
    gpn = workload.gpus_per_node
    if "tp" in values and values["tp"] not in space.tps:
        raise _invalid("tp", values["tp"], space.tps,
                       f"a divisor of gpus_per_node={gpn} and of heads={shape.heads}, kv_heads={shape.kv_heads}, "
                       f"hidden={shape.hidden}, ffn_hidden={shape.ffn_hidden}")
    if values.get("cp", 1) > 1:
        if not workload.flash_attention:
            raise _invalid("cp", values["cp"], [1], "context parallelism needs flash attention")
        valid = divisors(workload.seq_len // 2) if workload.seq_len % 2 == 0 else [1]
        if values["cp"] not in valid:
            raise _invalid("cp", values["cp"], valid, f"2 cp must divide seq_len={workload.seq_len:,}")
    if "dp" in values and values["dp"] not in space.dps:
        raise _invalid("dp", values["dp"], space.dps, f"a divisor of the global batch of {space.batch:,} sequences")
    if "ep" in values:
        if not space.experts:
            if values["ep"] != 1:
                raise _invalid("ep", values["ep"], [1], "expert parallelism needs a mixture-of-experts model")
        elif space.experts % values["ep"]:
            raise _invalid("ep", values["ep"], divisors(space.experts), f"a divisor of experts={space.experts}")
    if "micro_batch" in values and space.batch % values["micro_batch"]:
        raise _invalid("micro_batch", values["micro_batch"], space.dps,
                       f"a divisor of the global batch of {space.batch:,} sequences")
    if values.get("interleave", 1) > 1 and values.get("pp") == 1:
        raise _invalid("interleave", values["interleave"], [1], "interleaving needs pp > 1")
    if values.get("sequence_parallel") and values.get("tp") == 1:
        raise _invalid("sequence_parallel", True, [False], "sequence parallelism needs tp > 1")


def _check_together(pinned, space, gpus, layers, stack, schedule):
    """The pins together: some grid of the GPUs (or of fewer, as without pins)
    must carry them, and some plan of such a grid the plan pins."""
    grids = pinned.grids_up_to(space, gpus)
    if not grids:
        # Name the first pinned grid field whose other values would leave a grid.
        for name in ("dp", "ep", "pp", "first_stage_layers", "last_stage_layers", "cp", "tp"):
            if name in pinned.values:
                valid = sorted({getattr(g, _GRID_ATTR.get(name, name))
                                for g in pinned.without(name).grids_up_to(space, gpus)})
                if valid:
                    raise _invalid(name, pinned.values[name], valid, f"with the other pins on up to {gpus:,} GPUs")
        name = next(n for n in PIN_FIELDS if n in pinned.values)
        raise _invalid(name, pinned.values[name], [], f"no layout of up to {gpus:,} GPUs has these pins")
    values = pinned.values
    names = [name for name in ("zero", "micro_batch", "interleave") if name in values]

    def runs(grid, name):
        return values[name] in _plan_values(name, grid, space.batch, layers, values, stack, schedule)

    # Each against the grids that run the other plan pins: then some grid runs them all.
    for name in names:
        others = [other for other in names if other != name]
        valid = sorted({x for g in grids if all(runs(g, other) for other in others)
                        for x in _plan_values(name, g, space.batch, layers, values, stack, schedule)})
        if values[name] not in valid:
            raise _invalid(name, values[name], valid, "with the other pins")


_GRID_ATTR = {"first_stage_layers": "first", "last_stage_layers": "last"}


def _plan_values(name, grid, batch, layers, values, stack, schedule):
    """The values a plan field can take on a grid (given the micro-batch pin, for interleave;
    only 1 under the bidirectional schedules, which place their own two chunks)."""
    replica = batch // grid.dp
    if name == "zero":
        return zero_stages(stack, grid.pp, grid.shards)
    if name == "micro_batch":
        # The sizes whose micro-batch count the pipeline schedule runs (DualPipe: an even count, 2 pp or more).
        return [b for b in divisors(replica) if schedule_allows(schedule, grid.pp, replica // b)]
    b = values.get("micro_batch", 1)
    if schedule == "1f1b" and replica % b == 0 and grid.pp > 1 and (replica // b) % grid.pp == 0:
        return divisors(grid.interleave_layers(layers))
    return (1,)

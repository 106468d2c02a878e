"""The pin controls: each plan choice left to the planner ("auto") or pinned.

For every pinnable field the view gives the <option> list of its select: auto
(with the value the planner chose), then candidate values for this workload
(divisors and powers of two near the shape, so most are valid and the rest
get the planner's one-line reason), always with the pinned value. Values
cross to the page as strings; ``read_pins`` turns them back into the pins
dict the planner takes.
"""
from html import escape

from lab_core.partial_recompute import largest_chunk
from lab_core.planner.pins import PIN_FIELDS
from lab_core.planner.space import divisors

# The choices the pins panel offers, in its order; links and the command line
# may pin every field of lab_core's PIN_FIELDS (also the uneven split's layers).
PANEL_FIELDS = ("tp", "cp", "pp", "dp", "ep", "zero", "recompute", "recompute_layers", "sequence_parallel",
                "micro_batch", "interleave")
CHOICE_FIELDS = {"zero": (0, 1, 2, 3), "recompute": ("none", "selective", "full"),
                 "sequence_parallel": (True, False)}
MAX_OPTIONS = 24


def _powers_of_two(limit):
    out, k = [], 1
    while k <= limit:
        out.append(k)
        k *= 2
    return out


def _spread(values, keep):
    """At most MAX_OPTIONS of ``values`` (ascending), always keeping ``keep``."""
    values = sorted(set(values))
    if len(values) > MAX_OPTIONS:
        last = len(values) - 1
        values = sorted({values[round(i * last / (MAX_OPTIONS - 1))] for i in range(MAX_OPTIONS)})
    return sorted(set(values) | {k for k in keep if k is not None})


def candidates(field, workload, shape, par):
    """Candidate values of a numeric pin for this workload (``par``: the plan's layout)."""
    gpus = workload["gpus"]
    if field == "tp":
        return divisors(workload["gpus_per_node"])
    if field == "cp":
        return [c for c in _powers_of_two(min(gpus, 64)) if workload["seq_len"] % (2 * c) == 0]
    if field == "pp":
        layers = shape["layers"]
        return [p for p in set(divisors(layers)) | set(_powers_of_two(layers)) if p <= min(layers, gpus)]
    if field == "dp":
        batch = max(1, round(workload["global_batch_tokens"] / workload["seq_len"]))
        return [d for d in set(divisors(batch)) | set(_powers_of_two(gpus)) if d <= gpus]
    if field == "ep":
        experts = (shape.get("moe") or {}).get("experts") or 0
        return [e for e in divisors(experts) if e <= gpus] if experts else [1]
    if field == "micro_batch":
        per_replica = max(1, round(workload["global_batch_tokens"] / workload["seq_len"]) // par["dp"])
        return [b for b in set(divisors(per_replica)) | set(_powers_of_two(min(per_replica, 64)))]
    if field == "interleave":
        per_stage = max(1, shape["layers"] // par["pp"])
        return [v for v in set(divisors(per_stage)) | set(_powers_of_two(min(per_stage, 16))) if v <= per_stage]
    if field == "recompute_layers":
        # 0 (every layer) to the layers of the plan's largest model chunk.
        middle = shape["layers"] // par["pp"]
        first, last = par.get("first_stage_layers") or middle, par.get("last_stage_layers") or middle
        return list(range(0, largest_chunk(first, middle, last, par["interleave"]) + 1))
    raise KeyError(field)


def _text(field, value, catalog):
    terms = catalog["lab"]["terms"]
    if field == "recompute":
        return terms[value]
    if field == "sequence_parallel":
        return terms["yes" if value else "no"]
    if field == "recompute_layers" and value in (0, None):
        # 0: every layer of a plan that recomputes fully; None: a plan that does not.
        return catalog["pins"]["all_layers" if value == 0 else "no_full_recompute"]
    return f"{value:,}" if isinstance(value, int) else str(value)


def encode(value):
    """A pin value as the page and the URL write it (lab.js reads it back with decode)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _options(field, chosen, pinned, workload, shape, par, catalog):
    values = CHOICE_FIELDS.get(field)
    if values is None:
        values = _spread(candidates(field, workload, shape, par), (chosen, pinned))
    auto = catalog["pins"]["auto"].format(value=_text(field, chosen, catalog))
    html = [f'<option value=""{"" if pinned is not None else " selected"}>{escape(auto)}</option>']
    for value in values:
        selected = " selected" if pinned is not None and value == pinned else ""
        html.append(f'<option value="{escape(encode(value))}"{selected}>{escape(_text(field, value, catalog))}</option>')
    return "".join(html)


def pins_view(pins, result, catalog):
    """{field: {"options": html, "pinned": bool}} for the plan in ``result`` (plan_json output)."""
    par = result["plan"]["parallelism"]
    workload, shape = result["workload"], result["shape"]
    return {field: {"options": _options(field, _chosen(field, par), pins.get(field), workload, shape, par, catalog),
                    "pinned": field in pins}
            for field in PANEL_FIELDS}


def _chosen(field, par):
    """The plan's value of a pin field (recompute_layers: None unless it recomputes fully)."""
    if field == "recompute_layers" and par["recompute"] != "full":
        return None
    return par.get(field, 1)


def read_pins(raw):
    """The pins dict the planner takes from what the page sends ({field: text}); unknown
    fields and "" (auto) are left out, the rest converted by kind (the planner checks values)."""
    pins = {}
    for field, text in (raw or {}).items():
        if field not in PIN_FIELDS or text in ("", None):
            continue
        if field == "sequence_parallel":
            pins[field] = {"true": True, "false": False}.get(str(text), text)
        elif field == "recompute":
            pins[field] = str(text)
        else:
            try:
                pins[field] = int(str(text))
            except ValueError:
                pins[field] = text
    return pins

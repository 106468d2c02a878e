"""The lab page: its configuration (inputs, slider stops, catalog, cards) and
the precomputed first paint, produced by the same lab_view Session the
browser's worker runs."""
import yaml

from lab_core.inputs import SPEC_BY_NAME
from lab_view import Session
from lab_core.planner import STAGES
from lab_core.planner.meters import METERS
from lab_view.diagram import VIEWBOX as MESH_VIEWBOX
from lab_view.view import FIGURE_KEYS, PLAN_KEYS
from lab_core.export import FORMATS
from lab_core.presets import PRESET_IDS, SHAPE_INPUTS, preset_inputs
from lab_view.pins import PANEL_FIELDS, PIN_FIELDS
from lab_view.quantities import BYTE_UNITS

from . import offline, scripts
from .boot import boot_config
from .paths import CONTENT
from .sliders import nearest_stop, slider_config

#: Catalog sections the page's script and the worker need at run time.
RUNTIME_CATALOG_KEYS = ("units", "range", "unit_words", "examples", "errors", "input_labels", "meter_text", "meter_labels", "meter_levels",
                        "lab", "stages", "decisions", "diagram", "choices", "presets", "export", "pins",
                        "compare", "curves", "tools", "export_panel", "field_labels", "pin_errors")


def load_lab_layout():
    with open(CONTENT / "lab.yaml", encoding="utf-8") as handle:
        return yaml.safe_load(handle)


def default_inputs():
    """Every lab_core input at its documented default (derived shape = None)."""
    return {name: (None if spec.derive_if_zero else spec.default) for name, spec in SPEC_BY_NAME.items()}


def value_kinds(layout):
    kinds = {slider["name"]: slider["kind"] for slider in layout["sliders"]}
    kinds.update({a["name"]: a["kind"] for a in layout["advanced"] if "kind" in a})
    return kinds


def session_config(layout, catalog, extras=None):
    """The lab_view.Session configuration: the runtime part of the catalog
    (plus build-made entries such as the rules list) and the value kinds."""
    runtime = {key: catalog[key] for key in RUNTIME_CATALOG_KEYS}
    runtime.update(extras or {})
    return {"catalog": runtime, "kinds": value_kinds(layout)}


def spec_table():
    return {name: spec.to_dict() for name, spec in SPEC_BY_NAME.items()}


def _advanced_controls(layout, catalog, view, inputs):
    controls = []
    for item in layout["advanced"]:
        name, spec = item["name"], SPEC_BY_NAME[item["name"]]
        control = {"name": name, "control": item["control"], "label": catalog["input_labels"][name]}
        if item["control"] == "select":
            control["choices"] = [
                {"value": choice, "label": catalog["choices"][name][str(choice)], "selected": choice == inputs[name]}
                for choice in spec.choices
            ]
        elif item["control"] == "switch":
            control["checked"] = bool(inputs[name])
        else:
            control["value"] = view["values"].get(name, "") if inputs[name] is not None else ""
            control["placeholder"] = view["derived"].get(name, "")
            # Module names are words; every other box takes a number.
            control["inputmode"] = "text" if spec.kind == "modules" else "decimal"
        controls.append(control)
    return controls


def lab_page_data(layout, catalog, lang, root, pyzip_url, catalog_extras=None, card_builder=None, rules_href="",
                  dev_server=False, pyzip_bytes=0):
    """Everything the lab partial renders and embeds for one language.

    ``card_builder(config)`` returns ``[{"id", "title", "summary", "inputs",
    "view"}]``: scenario cards with the URL of their precomputed result.
    """
    config = session_config(layout, catalog, catalog_extras)
    inputs = default_inputs()
    cards = card_builder({"session": config, "defaults": inputs}) if card_builder else []
    session = Session(config)
    initial = session.evaluate(inputs)
    # The panels the page opens later, precomputed too: curves and the first export format.
    extras = session.extras({"inputs": inputs, "pins": {}}, want_curves=True, export_format=FORMATS[0], want_pins=True)
    sliders = []
    for slider in layout["sliders"]:
        entry = slider_config(slider, catalog)
        entry["index"] = nearest_stop(entry["stops"], inputs[slider["name"]])
        entry["label"] = catalog["input_labels"][slider["name"]]
        sliders.append(entry)
    advanced = _advanced_controls(layout, catalog, initial["view"], inputs)
    stages = [{"id": stage, "short": catalog["stages"][stage]["short"]} for stage in STAGES]
    return {
        "lang": lang,
        "sliders": sliders,
        "advanced": advanced,
        "stages": stages,
        "meter_names": METERS,
        "plan_keys": PLAN_KEYS,
        "figure_keys": FIGURE_KEYS,
        "mesh_viewbox": MESH_VIEWBOX,
        "cards": cards,
        "rules_href": rules_href,
        "validation_href": (catalog_extras or {}).get("validation_href", ""),
        "initial": initial,
        "extras": extras,
        "presets": [{"id": preset_id, "name": catalog["presets"]["names"][preset_id]} for preset_id in PRESET_IDS],
        "pin_fields": PANEL_FIELDS,
        "export_formats": FORMATS,
        "byte_units": BYTE_UNITS,
        # The page's module script, under its content-hashed name (labsite.scripts).
        "lab_script": scripts.url(root, "lab"),
        "lab_preloads": scripts.preloads(root, "lab"),
        "lab_static_script": scripts.url(root, "lab-static"),
        "search_after_lab_script": scripts.url(root, "search-after-lab"),
        "runtime": {
            "lang": lang,
            "root": root,
            "pyzip": pyzip_url,
            # The files the worker boots from, with their sizes (labsite.boot).
            "boot": boot_config(root, pyzip_url, pyzip_bytes),
            # Service worker to register once the lab is live; None under mkdocs serve.
            "serviceWorker": offline.page_config(root, dev_server),
            "session": config,
            "sliders": [{k: s[k] for k in ("name", "kind", "stops", "labels")} for s in sliders],
            "advanced": [{"name": a["name"], "control": a["control"]} for a in advanced],
            "specs": spec_table(),
            "defaults": inputs,
            "cards": [{"id": c["id"], "inputs": c["inputs"], "view": c["view"]} for c in cards],
            "initial": initial,
            # The lab's tools (docs/assets/lab/lab-tools.js): each preset's inputs, the
            # shape inputs "custom" puts back to derived, the pinnable fields, the export
            # formats and memory units, in the order the page offers them.
            "presets": {preset_id: preset_inputs(preset_id) for preset_id in PRESET_IDS},
            "shapeInputs": list(SHAPE_INPUTS),
            "pinFields": list(PIN_FIELDS),
            "exportFormats": list(FORMATS),
            "byteUnits": list(BYTE_UNITS),
        },
    }

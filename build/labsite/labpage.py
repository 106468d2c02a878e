"""The lab page: its configuration (inputs, slider stops, catalog) and the
precomputed first paint, produced by the same lab_view Session the browser's
worker runs."""
import yaml

from lab_core.inputs import SPEC_BY_NAME
from lab_view import Session

from .paths import CONTENT
from .sliders import nearest_stop, slider_config

#: Catalog sections the page's script and worker need at run time.
RUNTIME_CATALOG_KEYS = ("units", "range", "errors", "input_labels", "meter_text", "levels", "lab")


def load_lab_layout():
    with open(CONTENT / "lab.yaml", encoding="utf-8") as handle:
        return yaml.safe_load(handle)


def default_inputs(layout):
    return {slider["name"]: SPEC_BY_NAME[slider["name"]].default for slider in layout["sliders"]}


def lab_page_data(layout, catalog, lang, root, pyzip_url):
    """Everything the lab partial renders and embeds for one language."""
    runtime_catalog = {key: catalog[key] for key in RUNTIME_CATALOG_KEYS}
    kinds = {slider["name"]: slider["kind"] for slider in layout["sliders"]}
    session_config = {"catalog": runtime_catalog, "kinds": kinds}
    inputs = default_inputs(layout)
    initial = Session(session_config).evaluate(inputs)
    sliders = []
    for slider in layout["sliders"]:
        config = slider_config(slider, catalog)
        config["index"] = nearest_stop(config["stops"], inputs[slider["name"]])
        config["label"] = catalog["input_labels"][slider["name"]]
        sliders.append(config)
    return {
        "lang": lang,
        "sliders": sliders,
        "initial": initial,
        "runtime": {
            "lang": lang,
            "root": root,
            "pyzip": pyzip_url,
            "session": session_config,
            "sliders": sliders,
            "initial": initial,
        },
    }

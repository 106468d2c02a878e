"""The model preset picker's state: which preset the inputs are, and its source."""
from lab_core.presets import PRESETS, matching_preset

from .quantities import format_quantity


def preset_view(inputs, shape, catalog):
    """``{"id", "source", "note"}``: the preset the inputs match ("custom" for
    none), where its shape comes from, and what the lab does not count of it."""
    texts = catalog["presets"]
    preset_id = matching_preset(inputs)
    if preset_id is None:
        return {"id": "custom", "source": "", "note": ""}
    preset = PRESETS[preset_id]
    source = texts["source"].format(id=preset["source"]["id"], where=preset["source"]["where"])
    note = ""
    if preset["untied_output"]:
        extra = format_quantity(shape["vocab"] * shape["hidden"], "params", catalog["units"])
        note = texts["note_untied"].format(extra=extra)
    return {"id": preset_id, "source": source, "note": note}

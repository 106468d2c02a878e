"""DeepSeek-V3 as the lab holds it (the page's default inputs with the preset and its published run's
settings) and one lab_view Session per language: what the view tests of its features start from."""
from lab_core.presets import preset_inputs
from lab_view import Session
from labsite.catalog import load_catalogs
from labsite.labpage import default_inputs, load_lab_layout, session_config

EXTRAS = {"rules_short": [], "rules_href": "../rules/"}
DEEPSEEK_V3 = dict(default_inputs(), **dict(preset_inputs("deepseek-v3"), gpus=2048, gpu="h800_80gb",
                                              global_batch_tokens=62914560, seq_len=4096, precision="fp8",
                                              dropout=False, moe_dispatcher="per_node"))


def language_sessions():
    """{language: Session} of the lab's page configuration in each language."""
    layout = load_lab_layout()
    return {lang: Session(session_config(layout, catalog, EXTRAS)) for lang, catalog in load_catalogs().items()}

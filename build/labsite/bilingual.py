"""Data files that carry both languages side by side (``{en: ..., zh: ...}``)."""
import yaml

from .catalog import LANGUAGES
from .errors import BuildError
from .folding import unfold_zh


def load_yaml(path):
    """A bilingual data file (its Chinese texts unfolded, unfold_zh)."""
    try:
        with open(path, encoding="utf-8") as handle:
            return unfold_zh(yaml.safe_load(handle))
    except FileNotFoundError:
        raise BuildError(path, "file is missing") from None
    except yaml.YAMLError as err:
        raise BuildError(path, f"YAML error: {err}") from None


def require_languages(node, where, field):
    """``node`` must map every language to non-empty text; return it."""
    if not isinstance(node, dict):
        raise BuildError(where, f"{field}: expected one text per language ({', '.join(LANGUAGES)})")
    for lang in LANGUAGES:
        if not isinstance(node.get(lang), str) or not node[lang].strip():
            raise BuildError(where, f"{field}: missing {lang} text")
    extra = sorted(set(node) - set(LANGUAGES))
    if extra:
        raise BuildError(where, f"{field}: unknown language(s) {', '.join(extra)} (allowed: {', '.join(LANGUAGES)})")
    return node

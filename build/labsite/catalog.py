"""Per-language text catalogs (content/i18n/<lang>.yaml).

Every language must have exactly the same keys: a key missing in one language
fails the build naming the key and the file, so a page can never silently show
English on the Chinese site.
"""
import yaml

from .errors import BuildError
from .paths import CATALOGS

LANGUAGES = ("en", "zh")


def _flatten(tree, prefix=""):
    keys = {}
    for key, value in tree.items():
        path = f"{prefix}{key}"
        if isinstance(value, dict):
            keys.update(_flatten(value, path + "."))
        else:
            keys[path] = value
    return keys


def load_catalogs(directory=CATALOGS, languages=LANGUAGES):
    """Load and cross-check the catalogs; return ``{lang: nested dict}``."""
    catalogs = {}
    for lang in languages:
        path = directory / f"{lang}.yaml"
        try:
            with open(path, encoding="utf-8") as handle:
                catalogs[lang] = yaml.safe_load(handle) or {}
        except FileNotFoundError:
            raise BuildError(path, "catalog file is missing") from None
        except yaml.YAMLError as err:
            raise BuildError(path, f"YAML error: {err}") from None
    flat = {lang: _flatten(tree) for lang, tree in catalogs.items()}
    reference = languages[0]
    for lang in languages:
        for other in languages:
            missing = sorted(set(flat[other]) - set(flat[lang]))
            if missing:
                raise BuildError(directory / f"{lang}.yaml", f"missing translation key(s) present in {other}.yaml: {', '.join(missing)}")
        empty = sorted(key for key, value in flat[lang].items() if value in (None, ""))
        if empty:
            raise BuildError(directory / f"{lang}.yaml", f"empty translation for key(s): {', '.join(empty)}")
    del reference
    return catalogs

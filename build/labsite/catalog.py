"""Per-language text catalogs: ``content/i18n/<lang>/<part>.yaml``.

Each language has the same files with the same keys; the files of one
language are merged into one tree (a top-level key may live in one file
only). A key or file missing in one language fails the build naming the key
and the file, so a page can never silently show English on the Chinese site.
"""
import yaml

from lab_view.chinese import tighten

from .errors import BuildError
from .paths import CATALOGS

LANGUAGES = ("en", "zh")


# CLDR plural categories: a mapping of only these keys (with "other") is one
# counted label, a leaf like a string: English writes {one, other}, Chinese
# (no grammatical number) one string; see lab_view.plural.
PLURAL_CATEGORIES = {"zero", "one", "two", "few", "many", "other"}


def is_plural(value):
    return isinstance(value, dict) and "other" in value and set(value) <= PLURAL_CATEGORIES


def _flatten(tree, prefix=""):
    keys = {}
    for key, value in tree.items():
        path = f"{prefix}{key}"
        if isinstance(value, dict) and not is_plural(value):
            keys.update(_flatten(value, path + "."))
        else:
            keys[path] = value
    return keys


def _load_file(path):
    try:
        with open(path, encoding="utf-8") as handle:
            data = yaml.safe_load(handle) or {}
    except yaml.YAMLError as err:
        raise BuildError(path, f"YAML error: {err}") from None
    if not isinstance(data, dict):
        raise BuildError(path, "a catalog file must be a mapping of keys to texts")
    return data


def _load_language(directory, lang):
    folder = directory / lang
    if not folder.is_dir():
        raise BuildError(folder, "catalog folder is missing")
    tree, owner = {}, {}
    for path in sorted(folder.glob("*.yaml")):
        data = _load_file(path)
        for key, value in (tighten(data) if lang == "zh" else data).items():
            if key in tree:
                raise BuildError(path, f"top-level key {key!r} is already defined in {owner[key].name}")
            tree[key], owner[key] = value, path
    return tree, owner


def load_catalogs(directory=CATALOGS, languages=LANGUAGES):
    """Load and cross-check the catalogs; return ``{lang: nested dict}``."""
    catalogs, owners = {}, {}
    for lang in languages:
        catalogs[lang], owners[lang] = _load_language(directory, lang)
    flat = {lang: _flatten(tree) for lang, tree in catalogs.items()}
    for lang in languages:
        files = {p.name for p in (directory / lang).glob("*.yaml")}
        for other in languages:
            for name in sorted({p.name for p in (directory / other).glob("*.yaml")} - files):
                raise BuildError(directory / lang / name, f"file is missing (it exists for {other})")
            missing = sorted(set(flat[other]) - set(flat[lang]))
            if missing:
                where = owners[other][missing[0].split(".")[0]].name
                raise BuildError(directory / lang / where, f"missing translation key(s) present in {other}/{where}: {', '.join(missing)}")
        empty = sorted(key for key, value in flat[lang].items() if value in (None, ""))
        if empty:
            raise BuildError(directory / lang, f"empty translation for key(s): {', '.join(empty)}")
    return catalogs

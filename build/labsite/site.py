"""The build, event by event: configure once, render each page's Markdown as a
Jinja2 template in its language, fill HTML slots after Markdown, then write
the runtime assets."""
from pathlib import Path

import jinja2

from . import assets, pages
from .catalog import load_catalogs
from .jsonutil import script_json
from .labpage import lab_page_data, load_lab_layout
from .paths import TEMPLATES
from .slots import SlotContext, renderer, slot_renderer

_state = {}
_SLOT = "<!-- lab:slot:{name} -->"


def configure(config):
    pages.load_all()
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES)),
        autoescape=jinja2.select_autoescape(["html"], default_for_string=False),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
    )
    env.filters["script_json"] = script_json
    pyzip = assets.python_zip_bytes()
    _state.update(
        env=env,
        catalogs=load_catalogs(),
        layout=load_lab_layout(),
        pyzip=pyzip,
        pyzip_name=assets.python_zip_name(pyzip),
        default_lang=config["plugins"]["i18n"].config.languages[0].locale if "i18n" in config["plugins"] else "en",
    )


def page_language(page):
    return getattr(page.file, "locale", None) or "en"


def root_of(page):
    """Relative URL from the page to the site root (``../`` for ``lab/``)."""
    depth = page.url.count("/")
    return "../" * depth if depth else "./"


def _page_context(page):
    lang = page_language(page)
    root = root_of(page)
    prefix = "" if lang == _state["default_lang"] else f"{lang}/"
    catalog = _state["catalogs"][lang]
    slots = {}

    def slot(name):
        slots[name] = True
        return _SLOT.format(name=name)

    def link(path):
        return f"{root}{prefix}{path}"

    page.lab_slots = slots
    return {"t": catalog, "lang": lang, "root": root, "link": link, "slot": slot}


def render_markdown(markdown, page, config):
    template = _state["env"].from_string(markdown)
    try:
        return template.render(**_page_context(page))
    except jinja2.UndefinedError as err:
        raise jinja2.UndefinedError(f"{page.file.src_uri}: {err}") from None


@slot_renderer("lab")
def _render_lab(ctx):
    pyzip_url = f"{ctx.root}{assets.PYZIP_DIR}/{ctx.state['pyzip_name']}"
    data = lab_page_data(ctx.state["layout"], ctx.catalog, ctx.lang, ctx.root, pyzip_url)
    return ctx.env.get_template("lab.html").render(t=ctx.catalog, root=ctx.root, **data)


def _render_slot(name, page):
    render = renderer(name)
    if render is None:
        raise KeyError(f"{page.file.src_uri}: unknown slot {name!r}")
    lang = page_language(page)
    ctx = SlotContext(page=page, lang=lang, root=root_of(page), catalog=_state["catalogs"][lang],
                      catalogs=_state["catalogs"], env=_state["env"], state=_state)
    return render(ctx)


def fill_slots(html, page):
    for name in getattr(page, "lab_slots", {}):
        html = html.replace(_SLOT.format(name=name), _render_slot(name, page))
    return html


def write_assets(config):
    site_dir = Path(config["site_dir"])
    assets.copy_pyodide(site_dir)
    assets.write_python_zip(site_dir, _state["pyzip"])

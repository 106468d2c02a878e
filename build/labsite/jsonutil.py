"""JSON the build writes: sorted keys, compact, safe inside a <script> tag."""
import json

from markupsafe import Markup


def dumps(data):
    return json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def script_json(data):
    """JSON for ``<script type="application/json">``: no ``<``, ``>``, ``&`` can end the tag."""
    text = dumps(data).replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return Markup(text)

"""Fill the page template with the style, the script and the data.

The data goes into a `<script type="application/json">` element. Policy text (agent names,
entries, file paths) is written by an operator or imported from someone else's config, so the
JSON is escaped to never contain `<`, `>` or `&`: no string can close the element or open
another. The script reads the data with `JSON.parse` and writes every string with
`textContent`, never as markup.
"""

from __future__ import annotations

import json
from importlib.resources import files
from typing import Any

_ESCAPES = {
    "<": "\\u003c",
    ">": "\\u003e",
    "&": "\\u0026",
    # JSON allows these raw, JavaScript source did not until ES2019: escape for old readers
    "\u2028": "\\u2028",
    "\u2029": "\\u2029",
}


def embed_json(data: Any) -> str:
    """JSON text safe inside a script element of an HTML page."""
    text = json.dumps(data, separators=(",", ":"), ensure_ascii=False)
    for raw, escaped in _ESCAPES.items():
        text = text.replace(raw, escaped)
    return text


def _asset(name: str) -> str:
    return (files(__package__) / "assets" / name).read_text(encoding="utf-8")


def render_html(data: dict[str, Any], title: str) -> str:
    """The whole page. `title` is escaped like the data (it names the policy files)."""
    from html import escape

    page = _asset("report.html")
    # one pass over the template's markers, so a marker inside the inserted text stays text
    parts = {
        "@@TITLE@@": escape(title),
        "@@STYLE@@": _asset("report.css"),
        "@@SCRIPT@@": _asset("report.js"),
        "@@DATA@@": embed_json(data),
    }
    out = []
    rest = page
    while True:
        at = [(rest.find(m), m) for m in parts if rest.find(m) >= 0]
        if not at:
            out.append(rest)
            break
        pos, marker = min(at)
        out.append(rest[:pos])
        out.append(parts[marker])
        rest = rest[pos + len(marker) :]
    return "".join(out)

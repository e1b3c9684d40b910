"""The HTML report: one self-contained page (inline CSS, JS and data) from `reportdata`.

The page's markup, style and script are package data (`assets/`), read with importlib
resources so an installed wheel carries them.
"""

from .render import embed_json, render_html

__all__ = ["embed_json", "render_html"]

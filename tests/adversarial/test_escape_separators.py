"""Unicode line separators and invisible characters in ids are shown, never printed raw: a
group id holding U+2028 could otherwise start a forged line in a log viewer that breaks there."""

from __future__ import annotations

import pytest

from policyctl.escape import printable, printable_line


@pytest.mark.parametrize("ch", ["\u2028", "\u2029", "\u200b", "\u2060", "\ufeff", "\x85"])
def test_separators_and_invisible_characters_are_visible(ch: str) -> None:
    text = f"C1{ch}1 file checked: 0 errors"
    for escape in (printable, printable_line):
        out = escape(text)
        assert ch not in out
        assert f"\\u{ord(ch):04x}" in out


def test_ordinary_text_is_unchanged() -> None:
    text = "tools.deny: exec, write (agent coder, group C0ENG) — ok\n\tnext"
    assert printable(text) == text

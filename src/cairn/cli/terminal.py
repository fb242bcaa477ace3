"""Text bound for a terminal: what cannot be seen is shown as an escape.

A stored body may hold a bidi override, a zero-width space, an escape sequence or a line
separator; printed raw, they reorder, hide or forge what the user reads (``cairn list``,
``show``, an error naming the value given). Recall and the context director strip them
already (their output is for an agent); the human views keep the value but make every
such character visible as ``\\u202e``, so what the terminal shows is what is stored.
"""

from __future__ import annotations

import re
import unicodedata

_ASCII_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
_HIDDEN = frozenset(("Cc", "Cf", "Co", "Cs", "Cn", "Zl", "Zp"))


def _escape(ch: str) -> str:
    code = ord(ch)
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def visible(text: str) -> str:
    """``text`` with every control, format, private-use, unassigned and line/paragraph
    separator character (newlines and tabs excepted) written as its escape."""
    if text.isascii():
        return _ASCII_CONTROL.sub(lambda m: _escape(m.group()), text)
    return "".join(
        _escape(ch)
        if ch not in "\n\t" and (ch < " " or (ch > "~" and unicodedata.category(ch) in _HIDDEN))
        else ch
        for ch in text
    )

"""Whether a text shows anything: the one emptiness rule of every text field (bodies,
titles, tags, queries, statements, notes), kept in a module of its own so that the hooks'
fast path can apply it without loading the rest of the checks."""

from __future__ import annotations

import unicodedata

# Characters that show nothing: format characters (zero-width space and joiners, word
# joiner, soft hyphen, bidi marks, BOM), combining and enclosing marks with nothing to
# sit on, controls, and the letters that render as a blank (Hangul fillers, the braille
# blank).
_INVISIBLE_CATEGORIES = frozenset(("Cf", "Mn", "Me", "Cc", "Zs", "Zl", "Zp"))
_BLANK_LETTERS = frozenset("\u115f\u1160\u3164\uffa0\u2800")


def has_visible(value: str) -> bool:
    """Whether ``value`` holds a character that shows: not only whitespace and invisible
    characters (the loop stops at the first visible one, so text is not scanned)."""
    for char in value:
        if not (
            char.isspace()
            or char in _BLANK_LETTERS
            or unicodedata.category(char) in _INVISIBLE_CATEGORIES
        ):
            return True
    return False

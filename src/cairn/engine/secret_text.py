"""The text the secret detectors read, and the way back to the text as written.

People paste secrets in forms a pattern over the raw text misses: full-width letters
(``ｐａｓｓｗｏｒｄ＝…``, what a Chinese input method types), zero-width or other format
characters inside a word (``password\\u200b=…``), a key wrapped across two lines by a
terminal or a chat window. The detectors read a *folded* text (each character NFKC
folded, format characters dropped) and, for prefixed tokens, a *joined* one (a line break
inside a run of token characters removed); every match is mapped back to a span of the
original, so what is redacted is exactly the secret as written.
"""

from __future__ import annotations

import bisect
import unicodedata
from dataclasses import dataclass

from cairn.patterns import lazy_compile


@dataclass(frozen=True, slots=True)
class Folded:
    """``text`` as the detectors read it, and where each of its characters came from.

    ``starts``: the folded offsets where a segment begins; ``origins``: the original
    offset of each segment; ``lengths``: its original length (``None``: an identity run,
    one character for one)."""

    text: str
    starts: tuple[int, ...] = ()
    origins: tuple[int, ...] = ()
    lengths: tuple[int | None, ...] = ()

    @property
    def identity(self) -> bool:
        return not self.starts

    def start(self, at: int) -> int:
        """The original offset of folded offset ``at`` (the start of a span)."""
        if self.identity:
            return at
        k = bisect.bisect_right(self.starts, at) - 1
        if k < 0:
            return at
        length = self.lengths[k]
        return self.origins[k] + (at - self.starts[k] if length is None else 0)

    def end(self, at: int) -> int:
        """The original offset just past folded offset ``at - 1`` (the end of a span)."""
        if self.identity or at <= 0:
            return at
        k = bisect.bisect_right(self.starts, at - 1) - 1
        if k < 0:
            return at
        length = self.lengths[k]
        if length is None:
            return self.origins[k] + (at - self.starts[k])
        return self.origins[k] + length


class _Builder:
    """Folded text built piece by piece: identity runs and replaced characters."""

    def __init__(self) -> None:
        self.pieces: list[str] = []
        self.starts: list[int] = []
        self.origins: list[int] = []
        self.lengths: list[int | None] = []
        self.size = 0

    def keep(self, text: str, origin: int) -> None:
        if text:
            self._add(text, origin, None)

    def replace(self, text: str, origin: int, length: int) -> None:
        if text:
            self._add(text, origin, length)

    def _add(self, text: str, origin: int, length: int | None) -> None:
        self.pieces.append(text)
        self.starts.append(self.size)
        self.origins.append(origin)
        self.lengths.append(length)
        self.size += len(text)

    def done(self) -> Folded:
        return Folded(
            "".join(self.pieces), tuple(self.starts), tuple(self.origins), tuple(self.lengths)
        )


# The characters folding changes that matter to detection: full-width forms (U+FF01-FF5E,
# what a Chinese input method types), spaces of every width, format characters (zero-width
# spaces and joiners, bidirectional marks, the byte-order mark, soft hyphens, tags,
# variation selectors), and the letter-like look-alikes (mathematical alphanumerics,
# circled, super- and subscript letters and digits). Other text is read as it is, so a
# Chinese note with no such character costs one search. The full-width punctuation of
# every Chinese sentence (，：；！？（）) is left as it is: the detectors read it as such.
_FOLDABLE = lazy_compile(
    "[\u00a0\u00ad\u034f\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2"
    "\u115f\u1160\u17b4\u17b5\u180b-\u180f\u1d2c-\u1d6a\u2000-\u200f\u2028-\u202f"
    "\u205f-\u206f\u2070-\u209f\u2100-\u214f\u2460-\u24ff\u3000\u3164\ufe00-\ufe0f"
    "\ufeff\uff02-\uff07\uff0a\uff0b\uff0d-\uff19\uff1c-\uff1e\uff20-\uff5e\uffa0\ufff9-\ufffb\U000110bd\U000110cd\U00013430-\U0001343f"
    "\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U0001d400-\U0001d7ff\U000e0000-\U000e0fff]"
)
_FOLDS: dict[str, str] = {}


def _fold_char(ch: str) -> str:
    found = _FOLDS.get(ch)
    if found is None:
        found = "" if unicodedata.category(ch) == "Cf" else unicodedata.normalize("NFKC", ch)
        if len(_FOLDS) < 50_000:
            _FOLDS[ch] = found
    return found


def fold(text: str) -> Folded:
    """Each character NFKC-folded (full-width forms to ASCII) and format characters
    (zero-width spaces and joiners, the byte-order mark, soft hyphens) dropped."""
    if text.isascii() or _FOLDABLE.search(text) is None:
        return Folded(text)
    out = _Builder()
    done = 0
    changed = False
    for m in _FOLDABLE.finditer(text):
        ch = m.group()
        folded = _fold_char(ch)
        if folded == ch:
            continue
        changed = True
        at = m.start()
        out.keep(text[done:at], done)
        out.replace(folded, at, 1)
        done = at + 1
    if not changed:
        return Folded(text)
    out.keep(text[done:], done)
    return out.done()


# A line break inside a key: token characters run to the end of a line (at least eight)
# and go on at the start of the next (after its indentation) with a digit or a capital
# inside among them, as the rest of a random key has and a word of prose does not.
_RUN = r"[A-Za-z0-9_\-+/=]"
_BREAK = lazy_compile(
    r"(?<=" + _RUN + r"{8})[ \t]*\r?\n[ \t>]*"
    r"(?=(?:" + _RUN + r"*[0-9]|" + _RUN + r"*[a-z]" + _RUN + r"*[A-Z])" + _RUN + r"*"
    r"(?:[\s\"'`,;)\]}]|$))"
)


def join_breaks(text: str) -> tuple[Folded, tuple[int, ...]] | None:
    """``text`` with each line break inside a run of token characters removed, its map
    back to ``text``, and the joined offsets where a break was; None when there is none."""
    if "\n" not in text:
        return None
    out = _Builder()
    joints: list[int] = []
    done = 0
    for m in _BREAK.finditer(text):
        out.keep(text[done : m.start()], done)
        joints.append(out.size)
        done = m.end()
    if not joints:
        return None
    out.keep(text[done:], done)
    return out.done(), tuple(joints)

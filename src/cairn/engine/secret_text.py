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


_NOT_ASCII = lazy_compile(r"[^\x00-\x7f]")
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
    if text.isascii():
        return Folded(text)
    out = _Builder()
    done = 0
    changed = False
    for m in _NOT_ASCII.finditer(text):
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

"""Regular expressions compiled when first used, not when their module is imported.

The signal, selector and secret cues are a few hundred patterns; compiling them all at
import cost every ``cairn`` process tens of milliseconds, though most commands match
none of them (a recall, ``--version``, a hook through the daemon). A lazy pattern
behaves as the compiled one for every method and attribute (``search``, ``finditer``,
``sub``, ``pattern``, ``flags``...); the first use compiles it, once.

A pattern's attributes never change once compiled, so each one asked for is kept in the
stand-in's own ``__dict__``: later uses find it there without calling ``__getattr__``
(the statement reader asks its cues for ``finditer`` hundreds of times a line).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import Any, cast


class LazyPattern:
    """A stand-in for ``re.compile(pattern, flags)``; two threads that race on the first
    use may both compile it, which is harmless: the patterns are equal."""

    __slots__ = ("__dict__", "_compiled", "_flags", "_source")

    def __init__(self, source: str, flags: int) -> None:
        self._source = source
        self._flags = flags
        self._compiled: re.Pattern[str] | None = None

    def compiled(self) -> re.Pattern[str]:
        found = self._compiled
        if found is None:
            found = self._compiled = re.compile(self._source, self._flags)
        return found

    @property
    def pattern(self) -> str:
        return self._source

    def __getattr__(self, name: str) -> Any:
        # Called only for a name not yet kept (slots, the property and __dict__ come first).
        value = getattr(self.compiled(), name)
        self.__dict__[name] = value
        return value

    def __repr__(self) -> str:
        return f"lazy {self.compiled()!r}"


def lazy_compile(source: str, flags: int | re.RegexFlag = 0) -> re.Pattern[str]:
    """``re.compile(source, flags)``, compiled at its first use."""
    return cast("re.Pattern[str]", LazyPattern(source, int(flags)))


def any_of(words: Iterable[str]) -> str:
    """A pattern that matches wherever one of ``words`` does, written as a trie (``sk\\-(?:
    ant\\-)?``): Python's engine tries the branches of a plain alternation one by one at
    every place in the text, and a trie's shared beginnings once."""
    root: dict[str, Any] = {}
    for word in words:
        if not word:
            raise ValueError("any_of() needs non-empty words")
        node = root
        for ch in word:
            node = node.setdefault(ch, {})
        node[""] = {}

    def written(node: dict[str, Any]) -> str:
        branches = [re.escape(ch) + written(rest) for ch, rest in sorted(node.items()) if ch]
        if not branches:
            return ""
        inner = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
        if "" not in node:
            return inner
        return ("(?:" + inner + ")" if len(branches) == 1 and len(inner) > 1 else inner) + "?"

    return written(root)


def finditer_at(
    pattern: re.Pattern[str], text: str, low: str, words: Iterable[str]
) -> Iterator[re.Match[str]]:
    """``pattern.finditer(text)`` for a pattern every match of which starts where one of
    ``words`` starts in ``low`` (``text`` lower-cased): the pattern is tried only there,
    matches taken left to right without overlap as ``finditer`` takes them. ``text`` not
    ASCII (where lower-casing may move offsets): ``finditer`` itself."""
    if not text.isascii():
        yield from pattern.finditer(text)
        return
    starts: set[int] = set()
    for word in words:
        at = low.find(word)
        while at >= 0:
            starts.add(at)
            at = low.find(word, at + 1)
    done = 0
    for at in sorted(starts):
        if at < done:
            continue
        found = pattern.match(text, at)
        if found is not None:
            yield found
            done = max(found.end(), at + 1)


# The letters a case-insensitive pattern takes for an ASCII one that lower() does not make
# ASCII (the long s, the dotless and the dotted i, the Kelvin sign), so that a word a
# case-insensitive pattern needs is in the lowered text wherever the pattern can match.
_ASCII_CASES = str.maketrans({"ſ": "s", "ı": "i", "İ": "i", "K": "k"})


def lowered(text: str) -> str:
    """``text`` lower-cased, with the letters of :data:`_ASCII_CASES` as their ASCII ones."""
    return text.lower() if text.isascii() else text.translate(_ASCII_CASES).lower()


def folded_case(text: str) -> str:
    """:func:`lowered`, case-folded as well (``ß`` as ``ss``): holds every ASCII string
    :func:`lowered` holds."""
    return text.lower() if text.isascii() else text.translate(_ASCII_CASES).casefold()

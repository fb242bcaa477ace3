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

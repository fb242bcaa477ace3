"""Regular expressions compiled when first used, not when their module is imported.

The signal, selector and secret cues are a few hundred patterns; compiling them all at
import cost every ``cairn`` process tens of milliseconds, though most commands match
none of them (a recall, ``--version``, a hook through the daemon). A lazy pattern
behaves as the compiled one for every method and attribute (``search``, ``finditer``,
``sub``, ``pattern``, ``flags``...); the first use compiles it, once.
"""

from __future__ import annotations

import re
from typing import Any, cast


class LazyPattern:
    """A stand-in for ``re.compile(pattern, flags)``; two threads that race on the first
    use may both compile it, which is harmless: the patterns are equal."""

    __slots__ = ("_compiled", "_flags", "_source")

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
        return getattr(self.compiled(), name)

    def __repr__(self) -> str:
        return f"lazy {self.compiled()!r}"


def lazy_compile(source: str, flags: int | re.RegexFlag = 0) -> re.Pattern[str]:
    """``re.compile(source, flags)``, compiled at its first use."""
    return cast("re.Pattern[str]", LazyPattern(source, int(flags)))

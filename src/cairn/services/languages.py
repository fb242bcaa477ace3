"""Which language the store's memories are in, against what its embedder reads.

The default embedder (MiniLM) reads English only: a store of Chinese memories on it finds
them by keywords alone. ``cairn status`` says so, with the fix, when most live memories
are mostly CJK text (Chinese, Japanese, Korean).
"""

from __future__ import annotations

from cairn.adapters import embedding
from cairn.patterns import lazy_compile
from cairn.storage.ports import RecordQuery, Records

# Embedders that read English only, by model id.
ENGLISH_ONLY = frozenset({embedding.MODEL_ID})
SAMPLE = 500  # the newest live memories looked at: enough for a share, cheap at any size
SHARE = 0.5  # from this share of mostly-CJK memories on, status warns
FIX = "cairn reembed --embedder use-multilingual"

# compiled on first use (~2 ms): only status reads the languages of a store
_CJK = lazy_compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")
_LATIN_WORD = lazy_compile(r"[A-Za-z\u00c0-\u024f]+")


def mostly_cjk(text: str) -> bool:
    """More CJK characters than Latin words: "这个项目里装依赖一律用 pnpm" is Chinese,
    "use pnpm, not npm (见文档)" is not. A CJK character is about a word's worth."""
    cjk = len(_CJK.findall(text))
    return cjk > 0 and cjk >= len(_LATIN_WORD.findall(text))


def cjk_share(records: Records, tenant: str, agent: str) -> tuple[int, int]:
    """(mostly-CJK memories, memories looked at) among the newest live ones."""
    found = records.list_records(
        RecordQuery(tenant=tenant, agent=agent, order="newest", limit=SAMPLE)
    )
    texts = [f"{r.title or ''} {r.body}" for r in found if r.body]
    return sum(mostly_cjk(t) for t in texts), len(texts)


def language_warning(records: Records, tenant: str, agent: str, model: str | None) -> str | None:
    """One line when most memories are in a language the embedder does not read."""
    if model not in ENGLISH_ONLY:
        return None
    cjk, total = cjk_share(records, tenant, agent)
    if total == 0 or cjk / total < SHARE:
        return None
    counted = f"{cjk} of the {total} newest" if total == SAMPLE else f"{cjk} of {total}"
    return (
        f"{counted} memories are Chinese, Japanese or Korean, and the embedder reads"
        f" English only (recall falls back to keywords): {FIX}"
    )

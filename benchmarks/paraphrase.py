"""The paraphrase set (``data/paraphrase.jsonl``): its records, its check, and its run.

Written by hand for the abstention floor (issue 24): memory/query pairs that share no
content word, in English and Chinese, in a coding store and a chat store; English questions
about Chinese memories (``cross``); and questions no memory of their store answers. Every
line carries its split: ``fit`` (the calibration may see it) or ``report`` (it may not).

"No content word in common" is checked mechanically, by :func:`shared_content_words`: the
memory's and the query's index terms (stemmed as the keyword index stems them), less
function words, must not meet. A Chinese bigram is a function word when both of its
characters are function characters (的, 了, 是...).

``abstention.py`` asks it in two stores of its own (``abstention_stores.run_paraphrase``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from cairn.text import index_terms, normal_term

PATH = Path(__file__).parent / "data" / "paraphrase.jsonl"
FIT, REPORT = "fit", "report"

_ENGLISH = """a about above after again against all am an and any anybody anyone are as at be
because been before being below between both but by can can't could did do does doing don't
down during each else every few for from further had has have having he her here hers herself
him himself his how i if in into is it its itself just me more most my myself no nor not now
of off on once only or other our ours out over own same she should so some somebody someone
such than that the their theirs them then there these they this those through to too under
until up very was we were what when where which while who whom why will with would you your
yours s t ll re ve d m also get got still"""
STOP_TERMS = frozenset(normal_term(t) for w in _ENGLISH.split() for t in index_terms(w))
FUNCTION_CHARS = frozenset(
    "的了是在有我你他她它们这那个吗呢吧么什怎哪谁要会能不都也就还和与把被给对从到上下里过着一很太又再啊呀"
)


def _content(text: str) -> set[str]:
    out = set()
    for term in index_terms(text):
        if all(c in FUNCTION_CHARS for c in term):
            continue
        key = normal_term(term)
        if key not in STOP_TERMS:
            out.add(key)
    return out


def shared_content_words(memory: str, query: str) -> set[str]:
    """The content terms a memory and a query have in common (empty for a true paraphrase)."""
    return _content(memory) & _content(query)


@dataclass(frozen=True, slots=True)
class Item:
    id: str
    kind: str  # "pair" | "cross" | "negative"
    domain: str  # "coding" | "chat": the store it is asked in
    lang: str  # "en" | "zh" | "en>zh" (an English question about a Chinese memory)
    query: str
    split: str
    memory: str | None  # the text that answers it (None for a negative)


def load(path: Path = PATH) -> list[Item]:
    """The items, each cross question given the text of the memory it asks about; a pair
    whose memory and query share a content word is refused, as data that is not what it
    claims to be."""
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    texts = {r["id"]: r["memory"] for r in rows if r["kind"] == "pair"}
    items = []
    for r in rows:
        memory = texts[r["answer"]] if r["kind"] == "cross" else r.get("memory")
        if r["kind"] == "pair" and (shared := shared_content_words(r["memory"], r["query"])):
            raise ValueError(f"{r['id']}: memory and query share {sorted(shared)}")
        items.append(
            Item(r["id"], r["kind"], r["domain"], r["lang"], r["query"], r["split"], memory)
        )
    return items

"""Extractive answers for ``cairn ask`` (offline): quote the memories that answer.

Only memories that *answer* are quoted: recall's calibrated floor found them relevant,
and the memory names the question's subject — every content word and value of the
question that is not a generic question word ("use", "need", "how many") is in the
memory (a stem or a prefix of one: "owns" answers "owner"). A memory about the staging
database does not answer a question about the production one, "Dana owns the billing
service" does not answer who owns the search service. Each answering memory contributes
its sentence that shares the most with the question. When none answers, memory has no
answer, and says so.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

from cairn.engine.learning.clustering import signature
from cairn.model import Record
from cairn.text import index_terms, normal_term

NO_ANSWER = "Memory has no answer to that."
MAX_QUOTES = 5
QUOTE_NEAR = 0.8
_SENTENCE = re.compile(r"(?<=[.!?。！？])\s+|\n+")


@dataclass(frozen=True, slots=True)
class Citation:
    record_id: str
    quote: str
    score: float


@dataclass(frozen=True, slots=True)
class Answer:
    answered: bool
    text: str
    citations: tuple[Citation, ...]


def best_sentence(question: frozenset[str], body: str) -> tuple[str, int]:
    best, shared = "", 0
    for sentence in (s.strip() for s in _SENTENCE.split(body)):
        overlap = len(question & signature(sentence))
        if sentence and overlap > shared:
            best, shared = sentence, overlap
    return best, shared


# Words a question uses for how it asks, not for what it is about (stemmed like the rest),
# and words for the kind of answer it wants: "which provider" is answered by "Stripe".
# Stemmed at first use, not at import: importing the engine compiles no text pattern.
_GENERIC_WORDS = (
    "use used uses using need needs needed have has get gets got do does did make makes "
    "made work works know tell find happen happens set take call want like should "
    "provider providers language languages tool tools version versions day days date "
    "dates time times host hosts style styles type types framework engine currency "
    "could would can may might must please remind again currently current now today ever "
    "usually normally exactly actually kind sort thing things stuff way ways which whose "
    "many much long often old new one ones there value name named called"
)


@cache
def generic() -> frozenset[str]:
    return frozenset(signature(_GENERIC_WORDS))


# Short forms a note and a question may use for the same thing.
SAME_AS = {"db": "databas", "repo": "repositori", "config": "configur", "env": "environ"}
_VALUE = re.compile(r"\d[\w:./-]*")


def terms(text: str) -> frozenset[str]:
    """Content words (stemmed, short forms spelled out) and values (numbers, times)."""
    found = {SAME_AS.get(t, t) for t in signature(text)}
    found |= {m.group(0).casefold().rstrip(".:") for m in _VALUE.finditer(text)}
    return frozenset(found)


def subject(question: str) -> frozenset[str]:
    return terms(question) - generic()


def _has(term: str, words: frozenset[str]) -> bool:
    if term in words:
        return True
    return len(term) >= 3 and any(
        len(w) >= 3 and (w.startswith(term) or term.startswith(w)) for w in words
    )


def names_subject(question_subject: frozenset[str], record: Record) -> bool:
    """Whether the memory is about what the question asks about (see the module doc)."""
    if not question_subject:
        return False
    words = terms(f"{record.title or ''} {record.body}")
    return all(_has(t, words) for t in question_subject)


def answering(question: str, hits: Sequence[tuple[Record, float]]) -> list[tuple[Record, float]]:
    """The hits that answer the question (the LLM path is given only these too)."""
    wanted = subject(question)
    return [(r, s) for r, s in hits if names_subject(wanted, r)]


def aboutness(about: frozenset[str], body: str) -> float:
    """How much a memory is about the subject: the share of its content words that are
    the subject's, and how early it names it (a memory about standup starts with it; one
    that mentions it in passing, "after the standup", names it last)."""
    ordered = [SAME_AS.get(t, t) for t in (normal_term(w) for w in index_terms(body))]
    ordered = [t for t in ordered if t in terms(body)]
    if not ordered:
        return 0.0
    first = next((i for i, t in enumerate(ordered) if _has(t, about)), len(ordered))
    share = len(about & frozenset(ordered)) / len(set(ordered))
    return share + 0.5 * (1 - first / len(ordered))


def answer(question: str, hits: Sequence[tuple[Record, float]]) -> Answer:
    wanted = signature(question)
    about = subject(question)
    found: list[tuple[int, float, Citation]] = []
    for record, score in answering(question, hits):
        quote, shared = best_sentence(wanted, record.body)
        if shared:
            found.append((len(wanted & terms(record.body)), aboutness(about, record.body),
                          Citation(record.id, quote, score)))  # fmt: skip
    # Quote what answers best: the memories that share the most with the question (the
    # kind of answer it asks for included), the most about its subject (a memory that
    # merely mentions it in passing is not quoted beside one about it), and of those the
    # ones recall ranks near the first.
    most = max((n for n, _, _ in found), default=0)
    tier = [(f, c) for n, f, c in found if n == most]
    focused = max((f for f, _ in tier), default=0.0)
    best = [c for f, c in tier if f >= focused - 1e-9]
    top = max((c.score for c in best), default=0.0)
    citations = [c for c in best if c.score >= QUOTE_NEAR * top][:MAX_QUOTES]
    if not citations:
        return Answer(False, NO_ANSWER, ())
    lines = [f"- “{c.quote}” [{c.record_id}]" for c in citations]
    return Answer(True, "From memory:\n" + "\n".join(lines), tuple(citations))

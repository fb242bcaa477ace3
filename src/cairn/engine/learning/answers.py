"""Extractive answers for ``cairn ask`` (offline): quote the memories that answer.

From the memories recall found relevant, each contributes its sentence that shares the
most content words with the question (at least one); the answer quotes them with their
ids. When none shares a word, or recall found nothing, memory has no answer, and says so.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from cairn.engine.learning.clustering import signature
from cairn.model import Record

NO_ANSWER = "Memory has no answer to that."
MAX_QUOTES = 5
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


def answer(question: str, hits: Sequence[tuple[Record, float]]) -> Answer:
    wanted = signature(question)
    citations: list[Citation] = []
    for record, score in hits:
        quote, shared = best_sentence(wanted, record.body)
        if shared:
            citations.append(Citation(record.id, quote, score))
        if len(citations) == MAX_QUOTES:
            break
    if not citations:
        return Answer(False, NO_ANSWER, ())
    lines = [f"- “{c.quote}” [{c.record_id}]" for c in citations]
    return Answer(True, "From memory:\n" + "\n".join(lines), tuple(citations))

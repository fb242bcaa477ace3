"""Rule-based extraction for ``cairn review`` (offline): the user's own statements.

Only user turns are read — never the assistant's or a tool's text. Each sentence is read
by the statement reader: a lasting rule becomes a ``policy`` or ``preference`` with the
selector its words state; a one-off, a forget or a correction is reported and skipped
(review never acts on them); otherwise a first-person statement of fact ("I maintain the
billing service", "our staging cluster is in eu-west-1", "我用 pnpm") is kept, as a
``profile`` when it is about the user, else a ``fact``. Questions, requests to the
assistant and hedges ("I think…", "can you…") are not statements of fact.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from cairn.engine.learning.transcripts import Turn
from cairn.engine.selectors import Selector
from cairn.engine.statements.reader import read_statement
from cairn.patterns import lazy_compile
from cairn.text import words

MIN_WORDS = 3
MAX_STATEMENT_CHARS = 1000
_FENCE = lazy_compile(r"```.*?(?:```|$)", re.DOTALL)
_SENTENCE = lazy_compile(r"(?<=[.!?。！？])\s+|\n+|(?<=[。！？])")
_FIRST_PERSON = lazy_compile(
    r"^(?:i|i'm|im|i am|i've|i'd|my|mine|we|we're|we are|we've|our|ours|me)\b|^(?:我|我们)",
    re.IGNORECASE,
)
_ABOUT_ME = lazy_compile(
    r"^(?:i'm|im|i am|my (?:name|role|job|title|team|timezone|time zone)|i work|i live|"
    r"i prefer|i like|i use|i usually|i always|i never|i maintain|i own|i lead)\b|^我",
    re.IGNORECASE,
)
_NOT_A_STATEMENT = lazy_compile(
    r"^(?:i think|i guess|i wonder|i was wondering|i'm not sure|im not sure|i am not sure|"
    r"i don't know|i do not know|i want you|i need you|i'd like you|i would like you|"
    r"i'll|i will|let me|let's|i just|i see|i agree|i hope|i mean|i meant|"
    r"can|could|would|will|please|do|does|did|is|are|what|why|how|when|where|which|who)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class Extracted:
    text: str
    kind: str  # policy | preference (a rule) | profile | fact
    signal: str  # "rule" | "statement"
    selector: Selector
    turn: int


@dataclass(frozen=True, slots=True)
class Skipped:
    text: str
    reason: str
    turn: int


def sentences(text: str) -> list[str]:
    """The sentences of a turn, without code blocks and quoted lines."""
    text = _FENCE.sub("\n", text)
    text = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith(">"))
    found = (" ".join(part.split()) for part in _SENTENCE.split(text))
    return [s.strip(" -*•") for s in found if s.strip(" -*•")]


def extract(turns: Sequence[Turn]) -> tuple[list[Extracted], list[Skipped]]:
    kept: list[Extracted] = []
    skipped: list[Skipped] = []
    seen: set[str] = set()
    for turn in turns:
        if turn.role != "user":
            continue
        for sentence in sentences(turn.text):
            key = " ".join(sentence.casefold().split())
            if key in seen or len(words(sentence)) < MIN_WORDS:
                continue
            seen.add(key)
            if len(sentence) > MAX_STATEMENT_CHARS:
                skipped.append(Skipped(sentence[:80], "too long for one statement", turn.index))
                continue
            reading = read_statement(sentence)
            if reading.signal == "rule" and reading.memory_kind is not None:
                kept.append(
                    Extracted(sentence, reading.memory_kind, "rule", reading.selector, turn.index)
                )
            elif reading.signal in ("one-off", "forget", "correct"):
                skipped.append(Skipped(sentence, f"a {reading.signal}: not stored", turn.index))
            elif (
                _FIRST_PERSON.match(sentence)
                and not _NOT_A_STATEMENT.match(sentence)
                and not sentence.rstrip().endswith(("?", "？"))
            ):
                kind = "profile" if _ABOUT_ME.match(sentence) else "fact"
                kept.append(Extracted(sentence, kind, "statement", Selector(), turn.index))
    return kept, skipped

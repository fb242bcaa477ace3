"""Extractive distillation: a doc's text from its observations' own notes, no model.

A topic's observations may say several distinct things (the staging database's port,
the VPN it needs, its user): each distinct statement is a *fact* of the doc, listed once,
with the ids of the observations behind it; a near-duplicate note adds its id to the fact
it repeats, a different one adds a line, and nothing distinct is dropped. The lead note
is the one that shares most with the others (ties: the oldest); a profile's is the
newest (the latest word about the user, one statement). A procedure doc (``skill``) adds
its tool footprint — the tool names its runs used. "Verified by" names only commands a
deterministic source ran for that very fact. The result is a pure function of the
observations, so a rerun writes it byte for byte again.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from cairn.engine.learning.clustering import jaccard, signature
from cairn.engine.learning.observations import Observation
from cairn.text import index_terms, normal_term

MAX_NOTE_CHARS = 2000
MAX_FACTS = 50
# Two notes state the same fact when their content words overlap at least this much and
# they name the same values (numbers, times, identifiers: port 5433 is not port 5434);
# naming the same values, a looser overlap is enough (a paraphrase of the same setting).
SAME_FACT = 0.5
SAME_VALUES_FACT = 0.25
_VALUE = re.compile(r"\d[\w:./-]*|\w+[_/][\w/]+|\w+-\w[\w-]*")


@dataclass(frozen=True, slots=True)
class Fact:
    statement: str
    evidence: tuple[str, ...]  # the observations that say it
    commands: tuple[str, ...] = ()  # what verified it, deterministically

    def as_dict(self) -> dict[str, Any]:
        return {
            "statement": self.statement,
            "evidence": list(self.evidence),
            "commands": list(self.commands),
        }


def fact_of(data: Any) -> Fact | None:
    if not isinstance(data, dict) or not isinstance(data.get("statement"), str):
        return None
    return Fact(
        data["statement"],
        tuple(str(e) for e in data.get("evidence") or ()),
        tuple(str(c) for c in data.get("commands") or ()),
    )


@dataclass(frozen=True, slots=True)
class Draft:
    note: str  # the lead note, as written
    tools: tuple[str, ...]
    commands: tuple[str, ...]
    facts: tuple[Fact, ...] = ()

    def body(self, kind: str) -> str:
        return compose_body(kind, self.note, self.tools, self.commands, self.facts)


def compose_body(
    kind: str,
    note: str,
    tools: Sequence[str],
    commands: Sequence[str],
    facts: Sequence[Fact] = (),
) -> str:
    if len(facts) > 1:
        lines = [
            f"- {f.statement}" + (f" (verified by {'; '.join(f.commands)})" if f.commands else "")
            for f in facts
        ]
        if kind == "skill" and tools:
            lines.append("Tools: " + ", ".join(tools))
        return "\n".join(lines)
    lines = [note.strip()]
    if kind == "skill" and tools:
        lines.append("Tools: " + ", ".join(tools))
    if commands:
        lines.append("Verified by: " + "; ".join(commands))
    return "\n".join(lines)


def values(text: str) -> frozenset[str]:
    return frozenset(m.group(0).casefold().rstrip(".:") for m in _VALUE.finditer(text))


# Short forms a note may use for the same thing.
_SAME_AS = {"db": "databas", "repo": "repositori", "env": "environ"}


def _words(text: str) -> list[str]:
    """Content words in the order written (stemmed, short forms spelled out)."""
    kept = signature(text)
    return [_SAME_AS.get(t, t) for t in (normal_term(w) for w in index_terms(text)) if t in kept]


def same_fact(a: str, b: str) -> bool:
    """Whether two notes state one fact. When in doubt they are two: a duplicate line is
    harmless, a merged-away fact is lost. So besides the overlap and the values, they must
    not each begin with a word the other lacks — "the staging replica" and "the
    production replica" on the same port are two facts, whatever else they share."""
    va, vb = values(a), values(b)
    if va != vb:
        return False
    wa, wb = _words(a), _words(b)
    sa, sb = frozenset(wa), frozenset(wb)
    overlap = jaccard(sa | va, sb | vb)
    if overlap < (SAME_VALUES_FACT if va else SAME_FACT):
        return False
    # Each names first something the other does not: two subjects.
    return not ((sa - sb) & set(wa[:2]) and (sb - sa) & set(wb[:2]))


def merge_facts(facts: Sequence[Fact], more: Sequence[Fact]) -> tuple[Fact, ...]:
    """``facts`` and ``more`` as one list: a fact of ``more`` that repeats one of
    ``facts`` adds its evidence to it, any other is a new line."""
    out = list(facts)
    for fact in more:
        same = next((i for i, f in enumerate(out) if same_fact(fact.statement, f.statement)),
                    None)  # fmt: skip
        if same is None:
            out.append(fact)
            continue
        f = out[same]
        evidence = tuple(dict.fromkeys((*f.evidence, *fact.evidence)))
        out[same] = Fact(f.statement, evidence, tuple(sorted({*f.commands, *fact.commands})))
    return tuple(out)


def clean(note: str) -> str:
    return " ".join(note.split())[:MAX_NOTE_CHARS]


def add_facts(facts: Sequence[Fact], members: Sequence[Observation]) -> tuple[Fact, ...]:
    """``facts`` with each observation's note added: to the fact it repeats (its id as
    evidence), else as a new fact, in the order first said."""
    out = list(facts)
    for obs in sorted(members, key=lambda o: o.seq):
        note = clean(obs.note)
        if not note:
            continue
        verified = (obs.command.strip(),) if obs.deterministic and obs.command else ()
        same = next((i for i, f in enumerate(out) if same_fact(note, f.statement)), None)
        if same is not None:
            f = out[same]
            if obs.event_id not in f.evidence:
                commands = tuple(sorted(set(f.commands) | set(verified)))
                out[same] = Fact(f.statement, (*f.evidence, obs.event_id), commands)
        elif len(out) < MAX_FACTS:
            out.append(Fact(note, (obs.event_id,), verified))
    return tuple(out)


def representative(kind: str, members: Sequence[Observation]) -> Observation:
    ordered = sorted(members, key=lambda o: o.seq)
    if kind == "profile":
        return ordered[-1]
    sigs = [signature(o.note) for o in ordered]
    best, best_score = ordered[0], -1.0
    for obs, sig in zip(ordered, sigs, strict=True):
        score = sum(jaccard(sig, other) for other in sigs)
        if score > best_score + 1e-12:
            best, best_score = obs, score
    return best


def footprint(first: Observation, members: Sequence[Observation]) -> tuple[str, ...]:
    """Tool names in the order the representative run used them, then any others."""
    out = list(dict.fromkeys(first.tools))
    for obs in sorted(members, key=lambda o: o.seq):
        out += [t for t in obs.tools if t not in out]
    return tuple(out)


def commands(members: Sequence[Observation]) -> tuple[str, ...]:
    found = {o.command.strip() for o in members if o.deterministic and o.command}
    return tuple(sorted(c for c in found if c))


def distill(kind: str, members: Sequence[Observation]) -> Draft:
    rep = representative(kind, members)
    note = clean(rep.note)
    tools = footprint(rep, members) if kind == "skill" else ()
    if kind == "profile":
        return Draft(note, tools, commands(members))
    facts = add_facts((), members)
    verified = tuple(sorted({c for f in facts for c in f.commands}))
    return Draft(note, tools, verified, facts)

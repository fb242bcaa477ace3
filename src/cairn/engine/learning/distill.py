"""Extractive distillation: a doc's text from its observations' own notes, no model.

The representative note is the one that shares most with the others (ties: the oldest);
a profile's is the newest (the latest word about the user). A procedure doc (``skill``)
adds its tool footprint — the tool names its runs used — and the commands that verified
them. The result is a pure function of the observations, so a rerun writes it byte for
byte again.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from cairn.engine.learning.clustering import jaccard, signature
from cairn.engine.learning.observations import Observation

MAX_NOTE_CHARS = 2000


@dataclass(frozen=True, slots=True)
class Draft:
    note: str  # the representative note, as written
    tools: tuple[str, ...]
    commands: tuple[str, ...]

    def body(self, kind: str) -> str:
        return compose_body(kind, self.note, self.tools, self.commands)


def compose_body(kind: str, note: str, tools: Sequence[str], commands: Sequence[str]) -> str:
    lines = [note.strip()]
    if kind == "skill" and tools:
        lines.append("Tools: " + ", ".join(tools))
    if commands:
        lines.append("Verified by: " + "; ".join(commands))
    return "\n".join(lines)


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
    note = " ".join(rep.note.split())[:MAX_NOTE_CHARS]
    tools = footprint(rep, members) if kind == "skill" else ()
    return Draft(note, tools, commands(members))

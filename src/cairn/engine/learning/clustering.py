"""Topic clustering of successful observations, deterministic and without a model.

Observations that name a topic group by it. The rest group by what their notes say: a
note's *signature* is its set of stemmed content words, and a note joins the cluster whose
anchor (the signature of its first, oldest member) it overlaps most, when that overlap
(Jaccard) reaches the threshold. Clusters never mix doc kinds or projects. The order of
the input does not matter: observations are taken oldest first.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass

from cairn.engine.learning.observations import Observation
from cairn.text import STOP_WORDS, index_terms, normal_term, words

LABEL_WORDS = 5
_SLUG = re.compile(r"[^\w]+", re.UNICODE)


def signature(text: str) -> frozenset[str]:
    """Stemmed content words: what two notes must share to be about one topic."""
    return frozenset(
        normal_term(t)
        for t in index_terms(text)
        if t not in STOP_WORDS and len(t) > 1 and not t.isdigit()
    )


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    if not a and not b:
        return 0.0
    return len(a & b) / len(a | b)


def slug(topic: str) -> str:
    return _SLUG.sub("-", topic.casefold()).strip("-")[:80]


def label(text: str) -> str:
    """A few content words of a note, in its own order, as a topic's name."""
    seen: list[str] = []
    for word in words(text):
        if word not in STOP_WORDS and len(word) > 1 and not word.isdigit() and word not in seen:
            seen.append(word)
        if len(seen) == LABEL_WORDS:
            break
    return " ".join(seen)


@dataclass(frozen=True, slots=True)
class Topic:
    key: str  # stable for a named topic ("skill:deploy-billing@project"); lexical: "~hash"
    kind: str
    project_id: str | None
    named: str | None  # the topic the observations named
    label: str
    anchor: frozenset[str]  # the first member's signature
    members: tuple[Observation, ...]  # oldest first

    @property
    def terms(self) -> frozenset[str]:
        """Every content word of the members (what a doc of this topic is about)."""
        out: set[str] = set()
        for member in self.members:
            out |= signature(member.note)
        return frozenset(out)


def _place(obs: Observation) -> str:
    return obs.project_id or ""


@dataclass(slots=True)
class _Group:
    kind: str
    place: str
    name: str | None
    anchor: frozenset[str]
    members: list[Observation]

    def topic(self) -> Topic:
        if self.name is not None:
            key = f"{self.kind}:{self.name}@{self.place}"
            shown = self.name.replace("-", " ")
        else:
            digest = hashlib.sha256(" ".join(sorted(self.anchor)).encode()).hexdigest()[:16]
            key = f"{self.kind}:~{digest}@{self.place}"
            shown = label(self.members[0].note)
        return Topic(
            key=key,
            kind=self.kind,
            project_id=self.members[0].project_id,
            named=self.name,
            label=shown,
            anchor=self.anchor,
            members=tuple(self.members),
        )


def cluster(observations: Iterable[Observation], threshold: float) -> list[Topic]:
    """Topics of these observations, in order of their oldest member."""
    groups: list[_Group] = []
    named: dict[tuple[str, str, str], _Group] = {}
    for obs in sorted(observations, key=lambda o: o.seq):
        kind, place = obs.doc_kind, _place(obs)
        name = slug(obs.topic) if obs.topic else ""
        if name:
            group = named.get((kind, place, name))
            if group is None:
                group = named[(kind, place, name)] = _Group(
                    kind, place, name, signature(obs.note), []
                )
                groups.append(group)
            group.members.append(obs)
            continue
        sig = signature(obs.note)
        best: _Group | None = None
        best_score = 0.0
        for candidate in groups:
            if candidate.name is not None or (candidate.kind, candidate.place) != (kind, place):
                continue
            score = jaccard(sig, candidate.anchor)
            if score >= threshold and score > best_score:
                best, best_score = candidate, score
        if best is None:
            groups.append(_Group(kind, place, None, sig, [obs]))
        else:
            best.members.append(obs)
    return [g.topic() for g in groups]

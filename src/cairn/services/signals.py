"""Free-text user signals (SPEC §6): a rule is remembered in the scope its words say, a
one-off comes back as a constraint, a forget or correction acts only on a clear match.

A forget stated in words is searched in the current scope first (the project's own
records, then global ones), and acts only when exactly one memory clearly matches: it
shares most of the statement's content words *and* is close in meaning. With no clear
match nothing changes and the nearest candidates are returned; with several, the caller
is asked to pick by id.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from cairn.adapters.embedding import Embedder
from cairn.config import Config
from cairn.engine.recall.query import formulate
from cairn.engine.signals import classify_statement
from cairn.errors import InvalidInput
from cairn.model import MemoryInput, Record, Tombstone
from cairn.services.journal import Namespace
from cairn.services.recall import Recall
from cairn.services.writes import Corrected, Writes, Written
from cairn.storage.ports import LaneFilter, SearchIndex
from cairn.text import index_terms, normal_term

# A clear match shares at least this share of the statement's content terms ...
MIN_TERM_COVERAGE = 0.6
# ... and is at least this close in meaning (cosine of the statement to the memory).
MIN_COSINE = 0.25
CANDIDATES = 5


@dataclass(frozen=True, slots=True)
class MatchCandidate:
    record: Record
    coverage: float
    cosine: float

    @property
    def clear(self) -> bool:
        return self.coverage >= MIN_TERM_COVERAGE and self.cosine >= MIN_COSINE


@dataclass(frozen=True, slots=True)
class SignalResult:
    kind: str  # rule | one-off | forget | correct | neutral
    cue: str | None
    confidence: float
    language: str
    statement: str
    written: Written | None = None  # a rule remembered (or the live record it repeats)
    constraint: str | None = None  # a one-off, for this task only
    forgotten: Tombstone | None = None
    target: Record | None = None  # the record a forget or correction acted on
    corrected: Corrected | None = None
    candidates: tuple[MatchCandidate, ...] = ()  # no clear match, or several
    outcome: str = "nothing"  # stored | duplicate | constraint | forgotten | corrected |
    #                           no-match | ambiguous | nothing


def _content_terms(text: str) -> set[str]:
    return {normal_term(t) for t in formulate(text).terms}


class Signals:
    def __init__(
        self,
        writes: Writes,
        recall: Recall,
        index: SearchIndex,
        embedder: Embedder,
        config: Config,
    ) -> None:
        self._writes = writes
        self._recall = recall
        self._index = index
        self._embedder = embedder
        self._config = config

    def signal(
        self, text: str, ns: Namespace, *, project_id: str | None, event_id: str | None
    ) -> SignalResult:
        limit = self._config.memory.store.maxBodyChars
        if not isinstance(text, str) or not text.strip():
            raise InvalidInput("the statement is empty")
        if len(text) > limit:
            raise InvalidInput(f"the statement is {len(text):,} characters; the limit is {limit:,}")
        found = classify_statement(text)
        base = SignalResult(found.kind, found.cue, found.confidence, found.language, found.statement)
        if found.kind == "rule":
            scope = "project" if project_id else "global"
            item = MemoryInput(
                body=text.strip(), kind="policy", scope=scope, project_id=project_id
            )
            written = self._writes.remember(item, ns, event_id=event_id)
            outcome = "stored" if written.created else "duplicate"
            return _with(base, written=written, outcome=outcome)
        if found.kind == "one-off":
            return _with(base, constraint=found.statement, outcome="constraint")
        if found.kind == "forget":
            candidates = self.match(found.statement, ns, project_id)
            clear = [c for c in candidates if c.clear]
            if len(clear) != 1:
                outcome = "no-match" if not clear else "ambiguous"
                return _with(base, candidates=tuple(clear or candidates), outcome=outcome)
            target = clear[0].record
            stone = self._writes.forget(target.id, ns, event_id=event_id)
            return _with(base, forgotten=stone, target=target, outcome="forgotten")
        return base

    def match(
        self, statement: str, ns: Namespace, project_id: str | None
    ) -> list[MatchCandidate]:
        """The memories nearest to a statement, best first, each with its evidence;
        the current project's records come before global ones."""
        wanted = _content_terms(statement)
        if not wanted:
            return []
        hits = self._recall.recall(statement, ns, project_id=project_id, max_results=CANDIDATES)
        ranked = [c for c in hits.ranked if c.record.is_live][: CANDIDATES * 2]
        if not ranked:
            return []
        where = LaneFilter(ns.tenant, ns.agent, project_id)
        vector = self._embedder.embed([statement])[0]
        cosines = self._index.vector_scores(where, vector, [c.row for c in ranked])
        out = []
        for c in ranked:
            have = {normal_term(t) for t in index_terms(f"{c.record.title or ''} {c.record.body}")}
            coverage = len(wanted & have) / len(wanted)
            out.append(MatchCandidate(c.record, coverage, cosines.get(c.row, 0.0)))
        # Current scope first: the project's own records, then global ones.
        out.sort(
            key=lambda m: (
                m.record.scope != "project",
                -(m.coverage >= MIN_TERM_COVERAGE and m.cosine >= MIN_COSINE),
                -m.coverage,
                -m.cosine,
            )
        )
        project_clear = [m for m in out if m.clear and m.record.scope == "project"]
        if project_clear:  # a clear match in the current project settles it
            return project_clear + [m for m in out if m not in project_clear]
        return sorted(out, key=lambda m: (not m.clear, -m.coverage, -m.cosine))[:CANDIDATES]


def _with(base: SignalResult, **changes: object) -> SignalResult:
    return replace(base, **changes)  # type: ignore[arg-type]

"""Free-text user signals (SPEC §6): a rule is remembered in the scope its words say, a
one-off comes back as a constraint, a forget or correction acts only on a clear match.

The statement's own words set the selector (:func:`cairn.engine.statement.read_statement`):
"in this repo" binds the rule to the current repository, a named folder becomes a path
pattern, "when committing" an operation. A forget or correction stated in words is searched
in the current scope first (the project's own records, then global ones) and acts only when
exactly one memory clearly matches: it contains most of the statement's content words and
is close in meaning. With no clear match nothing changes and the nearest candidates are
returned; with several, the caller is asked to pick by id.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from cairn.adapters.embedding import Embedder
from cairn.config import Config
from cairn.engine.correction import revise
from cairn.engine.statement import StatementReading, read_statement, stored_body
from cairn.errors import InvalidInput
from cairn.model import MemoryInput, Record, Tombstone
from cairn.services.journal import Namespace
from cairn.services.recall import Recall
from cairn.services.writes import Corrected, Writes, Written
from cairn.storage.ports import LaneFilter, SearchIndex
from cairn.text import index_terms, normal_term
from cairn.validation import check_line, check_text

# A clear match contains at least this share of the statement's content words (a
# correction: of its words other than numbers, which are usually the new value; and half
# of them, since the new wording brings words of its own) ...
MIN_TERM_COVERAGE = 0.6
MIN_CORRECTION_COVERAGE = 0.5
# ... and is at least this close in meaning (cosine of the statement to the memory).
MIN_COSINE = 0.25
CANDIDATES = 5


@dataclass(frozen=True, slots=True)
class MatchCandidate:
    record: Record
    coverage: float  # share of the statement's content words the memory contains
    cosine: float
    needed: float = MIN_TERM_COVERAGE

    @property
    def clear(self) -> bool:
        return self.coverage >= self.needed and self.cosine >= MIN_COSINE


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
    # stored | duplicate | constraint | forgotten | corrected | no-match | ambiguous | nothing
    outcome: str = "nothing"


def coverage(terms: tuple[str, ...], record: Record) -> float:
    """Share of ``terms`` the record contains: Latin words by stem, Chinese runs by substring
    or by nearly all of their character pairs."""
    if not terms:
        return 0.0
    text = f"{record.title or ''} {record.body}"
    have = {normal_term(t) for t in index_terms(text)}
    folded = text.casefold()
    found = 0
    for term in terms:
        if term.isascii():
            found += all(normal_term(t) in have for t in index_terms(term)) and bool(
                index_terms(term)
            )
        else:
            found += _chinese_run_found(term.casefold(), folded)
    return found / len(terms)


# A Chinese run of at least four characters is found when nearly all of its character pairs
# are: a statement names a rule in its own word order ("用英文写提交信息那条" names
# "提交信息一律用英文写"), which only breaks the pairs at the joins.
MIN_PAIR_SHARE = 0.8


def _chinese_run_found(term: str, text: str) -> bool:
    if term in text:
        return True
    pairs = [term[i : i + 2] for i in range(len(term) - 1)]
    return len(pairs) >= 3 and sum(p in text for p in pairs) / len(pairs) >= MIN_PAIR_SHARE


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
        check_text("the statement", text, limit)
        if project_id is not None:
            check_line("project id", project_id, 4096)
        reading = read_statement(text)
        base = SignalResult(
            reading.signal, reading.cue, reading.confidence, reading.language, reading.statement
        )
        if reading.signal == "rule":
            written = self._writes.remember(
                self._rule(text.strip(), reading, project_id), ns, event_id=event_id
            )
            outcome = "stored" if written.created else "duplicate"
            return replace(base, written=written, outcome=outcome)
        if reading.signal == "one-off":
            return replace(base, constraint=reading.statement, outcome="constraint")
        if reading.signal in ("forget", "correct"):
            candidates = self.match(reading, ns, project_id)
            clear = [c for c in candidates if c.clear]
            if len(clear) != 1:
                outcome = "no-match" if not clear else "ambiguous"
                return replace(base, candidates=tuple(clear or candidates), outcome=outcome)
            target = clear[0].record
            if reading.signal == "forget":
                stone = self._writes.forget(target.id, ns, event_id=event_id)
                return replace(base, forgotten=stone, target=target, outcome="forgotten")
            body = revise(target.body, reading.statement)
            corrected = self._writes.correct(target.id, body, ns, event_id=event_id)
            return replace(base, corrected=corrected, target=corrected.record, outcome="corrected")
        return base

    def _rule(self, text: str, reading: StatementReading, project_id: str | None) -> MemoryInput:
        selector = reading.selector
        if selector.scope == "project" and project_id is None:
            raise InvalidInput(
                "the statement is about the current repository, but no repository is known:"
                " run it inside one or pass --project PATH|ID"
            )
        return MemoryInput(
            body=stored_body(text),  # without a leading "remember that" / "记住"
            kind=reading.memory_kind or "policy",
            scope=selector.scope,
            project_id=project_id if selector.scope == "project" else None,
            path_patterns=selector.path_patterns,
            operations=selector.operations,
            phases=selector.phases,
            task_types=selector.task_types,
        )

    def match(
        self, reading: StatementReading, ns: Namespace, project_id: str | None
    ) -> list[MatchCandidate]:
        """The memories nearest to a forget or correction, best first, each with its
        evidence; the current project's records come before global ones."""
        terms = reading.target_terms
        needed = MIN_TERM_COVERAGE
        if reading.signal == "correct":
            terms = tuple(t for t in terms if not any(ch.isdigit() for ch in t)) or terms
            needed = MIN_CORRECTION_COVERAGE
        if not terms:
            return []
        wanted = reading.target
        # The candidates are the nearest memories whatever their relevance score: a clear
        # match has evidence of its own (below), and with none the user is shown the closest
        # to pick from. Without a current project only global memories are in scope: a
        # repository's rules are never forgotten or corrected from outside it by words.
        rag = self._config.agent(ns.agent).rag.model_copy(update={"minScore": 0.0})
        hits = self._recall.recall(
            wanted, ns, project_id=project_id, max_results=CANDIDATES, rag=rag
        )
        ranked = [
            c
            for c in hits.ranked
            if c.record.is_live and (project_id is not None or c.record.scope == "global")
        ][: CANDIDATES * 2]
        if not ranked:
            return []
        where = LaneFilter(ns.tenant, ns.agent, project_id)
        vector = self._embedder.embed([wanted])[0]
        cosines = self._index.vector_scores(where, vector, [c.row for c in ranked])
        found = [
            MatchCandidate(c.record, coverage(terms, c.record), cosines.get(c.row, 0.0), needed)
            for c in ranked
        ]
        # Current scope first: a clear match in the current project settles it.
        in_project = [m for m in found if m.clear and m.record.scope == "project"]
        if in_project:
            return in_project + [m for m in found if m not in in_project]
        found.sort(key=lambda m: (not m.clear, -m.coverage, -m.cosine))
        return found[:CANDIDATES]

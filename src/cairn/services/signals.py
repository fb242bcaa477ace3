"""Free-text user signals (SPEC §6): a rule is remembered in the scope its words say, a
one-off comes back as a constraint, a forget or correction acts only on a clear match.

The statement's own words set the selector (:func:`cairn.engine.statements.reader.read_statement`):
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
from cairn.engine.statements.correction import Revision, family_of, read_edit, revise
from cairn.engine.statements.reader import (
    MemoryKind,
    StatementReading,
    read_statement,
    stored_body,
    stored_scope,
)
from cairn.engine.statements.signal_forms import UNMARKED_EDIT
from cairn.errors import InvalidInput
from cairn.model import MemoryInput, Namespace, Record, Tombstone
from cairn.services.recall import Recall
from cairn.services.writes import Corrected, Writes, Written
from cairn.text import index_terms, normal_term

# What `--as` stores a statement as.
STORE_AS: dict[str, MemoryKind] = {"rule": "policy", "preference": "preference", "fact": "fact"}

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
    # A correction: how it is placed in this memory's text ("named": the statement names a
    # term the memory contains; "family": the new term takes the place of its one kin).
    placing: str | None = None
    revised: str | None = None  # the memory's text with the correction placed

    @property
    def clear(self) -> bool:
        if self.placing in ("named", "family"):
            return True
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
    previous: str | None = None  # a correction: the text before it
    scope_source: str | None = None  # a rule: said | personal | unstated (see the reader)
    # stored | duplicate | constraint | forgotten | corrected | no-match | ambiguous
    # | unplaced (a correction whose one match cannot take it) | nothing
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
        embedder: Embedder,
        config: Config,
    ) -> None:
        self._writes = writes
        self._recall = recall
        self._embedder = embedder
        self._config = config

    def signal(
        self,
        text: str,
        ns: Namespace,
        *,
        project_id: str | None,
        event_id: str | None,
        store_as: str | None = None,
        scope: str | None = None,
    ) -> SignalResult:
        """Read ``text`` and act on it. ``store_as`` (rule | preference | fact) stores it as
        that whatever the reading; ``scope`` (project | global) overrides where a rule goes."""
        # The request was checked at the contract; the store's own limit is checked here.
        limit = self._config.memory.store.maxBodyChars
        if len(text) > limit:
            raise InvalidInput(f"the statement is {len(text):,} characters; the limit is {limit:,}")
        reading = read_statement(text)
        if reading.signal == "correct" and store_as is None:
            corrected = self._correct(reading, ns, project_id, event_id)
            if corrected is not None:
                return corrected
            reading = read_statement(text, edits=False)
        if store_as is not None and reading.signal != "rule":
            reading = read_statement(text, edits=False)  # its selector, read as a rule
            reading = replace(reading, signal="rule", memory_kind=STORE_AS[store_as])
        elif store_as is not None:
            reading = replace(reading, memory_kind=STORE_AS[store_as])
        base = SignalResult(
            reading.signal, reading.cue, reading.confidence, reading.language, reading.statement
        )
        if reading.signal == "rule":
            rule = self._rule(text.strip(), reading, project_id, scope)
            written = self._writes.remember(rule, ns, event_id=event_id)
            outcome = "stored" if written.created else "duplicate"
            return replace(
                base, written=written, outcome=outcome, scope_source=reading.scope_source
            )
        if reading.signal == "neutral" and reading.unsure:
            return replace(base, outcome="unsure")
        if reading.signal == "one-off":
            return replace(base, constraint=reading.statement, outcome="constraint")
        if reading.signal == "forget":
            candidates = self.match(reading, ns, project_id)
            clear = [c for c in candidates if c.clear]
            if len(clear) != 1:
                outcome = "no-match" if not clear else "ambiguous"
                return replace(base, candidates=tuple(clear or candidates), outcome=outcome)
            target = clear[0].record
            stone = self._writes.forget(target.id, ns, event_id=event_id)
            return replace(base, forgotten=stone, target=target, outcome="forgotten")
        return base

    def _correct(
        self,
        reading: StatementReading,
        ns: Namespace,
        project_id: str | None,
        event_id: str | None,
    ) -> SignalResult | None:
        """Act on the one memory the correction clearly fits (see :func:`choose`); None for
        an unmarked edit no memory takes."""
        base = SignalResult(
            reading.signal, reading.cue, reading.confidence, reading.language, reading.statement
        )
        candidates = self.match(reading, ns, project_id)
        chosen = choose(candidates)
        if reading.confidence <= UNMARKED_EDIT and (len(chosen) != 1 or chosen[0].revised is None):
            return None  # "把 axios 换成 fetch" that no memory takes: not a correction
        if len(chosen) != 1:
            outcome = "no-match" if not chosen else "ambiguous"
            shown = chosen or [c for c in candidates if c.clear] or candidates
            return replace(base, candidates=tuple(shown), outcome=outcome)
        (match,) = chosen
        if match.revised is None:
            return replace(base, candidates=(match,), outcome="unplaced")
        target = match.record
        corrected = self._writes.correct(target.id, match.revised, ns, event_id=event_id)
        return replace(
            base,
            corrected=corrected,
            target=corrected.record,
            previous=target.body,
            outcome="corrected",
        )

    def _rule(
        self, text: str, reading: StatementReading, project_id: str | None, scope: str | None
    ) -> MemoryInput:
        selector = reading.selector
        # A convention said inside a repository without a scope word is that repository's;
        # the speaker's own habit and "every project" are global.
        where = scope or stored_scope(reading, in_repository=project_id is not None)
        if where == "project" and project_id is None:
            raise InvalidInput(
                "the statement is about the current repository, but no repository is known:"
                " run it inside one or pass --project PATH|ID"
            )
        return MemoryInput(
            body=stored_body(text),  # without a leading "remember that" / "记住"
            kind=reading.memory_kind or "policy",
            scope="project" if where == "project" else "global",
            project_id=project_id if where == "project" else None,
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
        wanted = reading.target
        if reading.signal == "correct":
            terms = tuple(t for t in terms if not any(ch.isdigit() for ch in t)) or terms
            needed = MIN_CORRECTION_COVERAGE
            wanted = _correction_query(reading)
        if not terms:
            return []
        # The candidates are the nearest memories whatever their relevance score: a clear
        # match has evidence of its own (below), and with none the user is shown the closest
        # to pick from. Without a current project only global memories are in scope: a
        # repository's rules are never forgotten or corrected from outside it by words.
        rag = self._config.agent(ns.agent).rag.model_copy(update={"minScore": 0.0})
        vector = self._embedder.embed([wanted])[0]
        hits, cosines = self._recall.recall_near(
            wanted, ns, vector, project_id=project_id, max_results=CANDIDATES, rag=rag
        )
        ranked = [
            c
            for c in hits.ranked
            if c.record.is_live and (project_id is not None or c.record.scope == "global")
        ][: CANDIDATES * 2]
        found = [
            _candidate(
                reading,
                c.record,
                coverage(terms, c.record),
                cosines.get(c.record.id, 0.0),
                needed,
            )
            for c in ranked
        ]
        # Current scope first: a clear match in the current project settles it.
        in_project = [m for m in found if m.clear and m.record.scope == "project"]
        if in_project:
            return in_project + [m for m in found if m not in in_project]
        found.sort(key=lambda m: (not m.clear, -m.coverage, -m.cosine))
        return found[:CANDIDATES]


def _candidate(
    reading: StatementReading, record: Record, covered: float, cosine: float, needed: float
) -> MatchCandidate:
    if reading.signal != "correct":
        return MatchCandidate(record, covered, cosine, needed)
    revision: Revision | None = revise(record.body, reading.statement)
    if revision is None:
        return MatchCandidate(record, covered, cosine, needed)
    return MatchCandidate(record, covered, cosine, needed, revision.placing, revision.text)


_PLACING_RANK = {"named": 2, "family": 1}


def choose(candidates: list[MatchCandidate]) -> list[MatchCandidate]:
    """The memories a correction acts on: one means act, several mean ask.

    A memory the correction can be placed in comes first, the current repository's before
    global ones; among them the best placed (a term the statement names beats a kin term).
    A global memory placed better than every one of the repository's is shown beside them:
    the words point at it, the scope at the others, and the user picks. Without any placed
    memory, a memory that clearly matches by words and meaning takes a whole-rule correction.
    """
    placed = [c for c in candidates if c.placing in _PLACING_RANK]
    if placed:
        local = [c for c in placed if c.record.scope == "project"]
        wide = [c for c in placed if c.record.scope != "project"]
        best_local = max((_PLACING_RANK[c.placing or ""] for c in local), default=0)
        best_wide = max((_PLACING_RANK[c.placing or ""] for c in wide), default=0)
        chosen = [c for c in local if _PLACING_RANK[c.placing or ""] == best_local]
        if best_wide > best_local:
            chosen += [c for c in wide if _PLACING_RANK[c.placing or ""] == best_wide]
        return chosen
    return [c for c in candidates if c.clear]


def _correction_query(reading: StatementReading) -> str:
    """What to look for: the statement's words, its new term's kin ("npm" finds the rule
    that says "pnpm") and the old term it names."""
    edit = read_edit(reading.statement)
    words = list(reading.target_terms)
    if edit is not None:
        head = edit.new.split()[0] if edit.new.split() else ""
        words += sorted(family_of(head))[:8]
        if edit.old:
            words.append(edit.old)
    return " ".join(dict.fromkeys(w for w in words if w))

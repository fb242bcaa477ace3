"""Context director (SPEC §5): which memories a task gets, in which tier, and why.

Pure functions over records and their selector matches; the caller gathers candidates
(selector matches ∪ recall hits) and writes the application records.

Ranking follows the reference engine's tiers: a state bonus (proven 300, trial 100),
+160 when the user set it explicitly, +25 per matched selector dimension, +20 per
successful use, −2 per ignore, −80 per correction or failure, plus up to +60 for
relevance to the task text. Tiers dominate; relevance orders within a tier.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from cairn.engine.selectors import SelectorMatch
from cairn.model import Record
from cairn.text import STOP_WORDS, index_terms, normal_term
from cairn.timeutil import age_days

STATE_BONUS = {"proven": 300, "active": 250, "trial": 100, "candidate": 50, "stale": 10}
EXPLICIT_BONUS = 160
SPECIFICITY_BONUS = 25
SUCCESS_BONUS = 20
IGNORE_PENALTY = 2
FAILURE_PENALTY = 80
RELEVANCE_BONUS = 60
RECENT_SUCCESS_DAYS = 30
RECENT_SUCCESS_BONUS = 15
RESIDENT_POLICY_LIMIT = 5  # "a few directly relevant stable policies" enter in full
POLICY_KINDS = ("policy", "preference")
# How many rules the store pre-selects, best ``stored_rank`` first, before the exact
# ranking here. The exact rank differs from the stored one by the recent-success bonus
# (+15), relevance to the task text (up to +60) and selector dimensions that are set but
# not matched, so the cut keeps a wide margin over the 25 items a task shows.
PRERANK_LIMIT = 200
# A rule is resident ("Apply these") only when it directly applies to this task: a selector
# dimension of its own matched the task (a path, an operation, a phase, a task type), or
# the task text is relevant to it at least this much (recall's calibrated score, whose
# floor is minScore 0.1). Being proven or explicit ranks a rule higher; it never makes an
# unrelated rule resident (SPEC §5.3). The rest that matches goes to the manifest.
RESIDENT_RELEVANCE = 0.35
# Rules bound by their own selector to what the task does enter up to this many (within the
# task budget); rules resident for the task's words alone, up to RESIDENT_POLICY_LIMIT.
SELECTOR_RESIDENT_LIMIT = 10
SHOWN_WORDS = 4


@dataclass(frozen=True, slots=True)
class DirectorCandidate:
    record: Record
    match: SelectorMatch
    relevance: float | None = None  # recall score in [0, 1] when the task text found it


@dataclass(frozen=True, slots=True)
class DirectedItem:
    record: Record
    delivery: str  # "resident" | "manifest"
    rank_score: float
    why_applied: tuple[str, ...]
    summary: str  # one line for the manifest

    @property
    def title(self) -> str:
        return self.record.title or self.summary


@dataclass(frozen=True, slots=True)
class Direction:
    resident: tuple[DirectedItem, ...]
    manifest: tuple[DirectedItem, ...]
    profile_chars: int
    task_chars: int


def one_line(text: str, width: int = 100) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def shared_words(task: str, body: str) -> list[str]:
    """The task's words (as written there) that the memory's text also holds, compared as
    the keyword index compares them (case folded, English stemmed, CJK by bigram)."""
    held = {normal_term(t) for t in index_terms(body)}
    found: list[str] = []
    for term in index_terms(task):
        if len(term) > 1 and normal_term(term) in held and term not in found:
            found.append(term)
    return found


def _relevance_reason(candidate: DirectorCandidate, task: str) -> str:
    words = [w for w in shared_words(task, candidate.record.body) if w not in STOP_WORDS]
    if words:
        return "words in common with the task: " + ", ".join(words[:SHOWN_WORDS])
    return f"close in meaning to the task (relevance {candidate.relevance or 0:.2f})"


def by_own_selector(candidate: DirectorCandidate) -> bool:
    """A dimension of the rule's own selector beyond its project (a path, an operation, a
    phase, a task type) matched the task: the user bound the rule to exactly this."""
    return candidate.match.specificity - (candidate.record.scope == "project") > 0


def directly_applies(candidate: DirectorCandidate, task: str = "") -> bool:
    """Its own selector matched the task, or the task text is relevant to it: above
    recall's floor for a rule bound to this repository (its project is a selector the user
    set, and it matched); for a global one, at RESIDENT_RELEVANCE, or above the floor with
    a content word of the task in its text."""
    if by_own_selector(candidate) or candidate.relevance is None:
        return by_own_selector(candidate)
    bound_here = candidate.record.scope == "project" and candidate.match.specificity > 0
    if bound_here or candidate.relevance >= RESIDENT_RELEVANCE:
        return True
    return any(w not in STOP_WORDS for w in shared_words(task, candidate.record.body))


def has_a_reason(candidate: DirectorCandidate) -> bool:
    """Whether the item may be offered at all: something about this task. A global rule
    with no selector and nothing in the task text is about every task, so about none in
    particular; a rule for an operation or a path the task does not state ("operation not
    stated") is offered only when the task's text is about it too. Both stay out."""
    if candidate.record.kind == "profile":
        return True
    if candidate.relevance is not None or by_own_selector(candidate):  # text or selector
        return True
    return candidate.match.specificity > 0 and not candidate.match.unstated  # its project


def why_applied(candidate: DirectorCandidate, now: datetime, task: str = "") -> tuple[str, ...]:
    """Human reasons built only from the conditions that really held."""
    record = candidate.record
    reasons = list(candidate.match.reasons) + list(candidate.match.unstated)
    if record.authority == "explicit":
        reasons.append("set explicitly by the user")
    if record.used_count and record.trust != "external":
        times = "once" if record.used_count == 1 else f"{record.used_count} times"
        reasons.append(f"applied successfully {times}")
    since = age_days(record.last_success_at, now)
    if since is not None and since <= RECENT_SUCCESS_DAYS:
        reasons.append("recently applied successfully")
    if candidate.relevance is not None:
        reasons.append(_relevance_reason(candidate, task))
    if record.failure_count:
        reasons.append(f"note: corrected or failed {record.failure_count} times")
    return tuple(reasons)


def _tier(record: Record, specificity: int) -> float:
    score = float(STATE_BONUS.get(record.state, 0))
    if record.authority == "explicit":
        score += EXPLICIT_BONUS
    score += SPECIFICITY_BONUS * specificity
    score += SUCCESS_BONUS * record.used_count
    score -= IGNORE_PENALTY * record.ignored_count
    if record.authority != "explicit":
        # The user's word is not demoted by outcomes: failures flag it for their review.
        score -= FAILURE_PENALTY * record.failure_count
    return score


def stored_rank(record: Record) -> float:
    """The part of :func:`rank_score` that stored columns decide, taking every selector
    dimension the record sets as matched. The record store keeps it per row (``rank_hint``)
    to pre-select the plausible top rules; the exact ranking is :func:`rank_score`."""
    dimensions = (record.scope == "project") + sum(
        bool(getattr(record, name))
        for name in ("path_patterns", "operations", "phases", "task_types")
    )
    return _tier(record, int(dimensions))


def rank_score(candidate: DirectorCandidate, now: datetime) -> float:
    record = candidate.record
    score = _tier(record, candidate.match.specificity)
    since = age_days(record.last_success_at, now)
    if since is not None and since <= RECENT_SUCCESS_DAYS:
        score += RECENT_SUCCESS_BONUS
    if candidate.relevance is not None:
        score += RELEVANCE_BONUS * max(0.0, min(1.0, candidate.relevance))
    return score


def direct(
    candidates: Sequence[DirectorCandidate],
    now: datetime,
    *,
    profile_budget: int = 2000,
    task_budget: int = 6000,
    manifest_limit: int = 20,
    task: str = "",
    broad: bool = False,
) -> Direction:
    """Core profile in full, the policies that directly apply in full, the rest that has
    a reason about the task as a manifest (``broad``: every match).

    Budgets count resident body characters only; a resident candidate that does not fit
    goes to the manifest instead, never truncated.
    """
    # ``broad`` (the start of a session, no task yet): every matching rule may be offered;
    # a task offers only what has a reason about it.
    scores = {
        id(c): rank_score(c, now)
        for c in candidates
        if c.match.matches and (broad or has_a_reason(c))
    }
    scored = sorted(
        (c for c in candidates if id(c) in scores),
        key=lambda c: (-scores[id(c)], c.record.id),
    )
    resident: list[DirectedItem] = []
    manifest: list[DirectedItem] = []
    profile_used = task_used = policies = bound = 0
    for candidate in scored:
        record = candidate.record
        item_score = scores[id(candidate)]
        size = len(record.body)
        delivery = "manifest"
        if candidate.match.unstated or record.trust == "external":
            # applies only if the task turns out to match, or is content from outside
            # (data, never a rule to apply): offered, never resident
            pass
        elif record.kind == "profile" and profile_used + size <= profile_budget:
            profile_used += size
            delivery = "resident"
        elif (
            record.kind in POLICY_KINDS
            and record.state in ("proven", "active")
            and task_used + size <= task_budget
            and (
                (by_own_selector(candidate) and bound < SELECTOR_RESIDENT_LIMIT)
                or (directly_applies(candidate, task) and policies < RESIDENT_POLICY_LIMIT)
            )
        ):
            if by_own_selector(candidate) and bound < SELECTOR_RESIDENT_LIMIT:
                bound += 1
            else:
                policies += 1
            task_used += size
            delivery = "resident"
        if delivery == "manifest" and len(manifest) >= manifest_limit:
            continue
        item = DirectedItem(
            record, delivery, item_score, why_applied(candidate, now, task), one_line(record.body)
        )
        (resident if delivery == "resident" else manifest).append(item)
    return Direction(tuple(resident), tuple(manifest), profile_used, task_used)

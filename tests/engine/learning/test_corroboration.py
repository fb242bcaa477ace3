"""Both corroboration gates, and the failure gate."""

from __future__ import annotations

from cairn.engine.learning.corroboration import (
    Gate,
    corroborate,
    counted_failures,
    outcome_source,
    owner_of,
)
from cairn.model import Application

from .support import obs

SINGLE = Gate("single_owner", 2, owner="user")
DISTINCT = Gate("distinct_sessions", 2, owner="user")


def test_the_owner_is_the_one_explicitly_trusted_sender() -> None:
    assert owner_of({"user": "system"}) == "user"
    assert owner_of({"user": "system", "mallory": "external"}) == "user"
    assert owner_of({"alice": "learned", "bob": "learned"}) is None  # a multi-user box
    assert owner_of({}) is None


def test_single_owner_learns_from_the_owners_repetition_in_one_session() -> None:
    twice = [obs(1, "run make check"), obs(2, "run make check")]
    verdict = corroborate(twice, SINGLE)
    assert (verdict.corroborated, verdict.via, verdict.cardinality) == (True, "single_owner", 1)
    assert not corroborate(twice[:1], SINGLE).corroborated  # never one-shot
    # The stricter posture refuses the same repetition: one session is one observation.
    assert not corroborate(twice, DISTINCT).corroborated


def test_repetition_counts_episodes_not_events() -> None:
    one_episode = [
        obs(1, "x", episode="EP"),
        obs(2, "x", episode="EP", type="verification.completed"),
    ]
    assert not corroborate(one_episode, SINGLE).corroborated
    assert corroborate(one_episode, SINGLE).episodes == 1


def test_only_a_named_owner_self_corroborates() -> None:
    unnamed = [obs(1, "x", sender_named=False), obs(2, "x", sender_named=False)]
    assert not corroborate(unnamed, SINGLE).corroborated  # trusted by default only
    other = [obs(1, "x", sender="bob"), obs(2, "x", sender="bob")]
    assert not corroborate(other, SINGLE).corroborated  # not the owner
    no_owner = Gate("single_owner", 2, owner=None)  # two named senders: multi-user box
    assert not corroborate([obs(1, "x"), obs(2, "x")], no_owner).corroborated


def test_distinct_sessions_need_two_session_sender_pairs() -> None:
    two_sessions = [obs(1, "x", session="s1"), obs(2, "x", session="s2")]
    for gate in (SINGLE, DISTINCT):
        verdict = corroborate(two_sessions, gate)
        assert (verdict.corroborated, verdict.via) == (True, "distinct_sessions")
    two_senders = [obs(1, "x", sender="alice"), obs(2, "x", sender="bob")]
    assert corroborate(two_senders, DISTINCT).cardinality == 2
    many_same = [obs(i, "x") for i in range(1, 9)]  # N near-identical in one session: once
    assert corroborate(many_same, DISTINCT).cardinality == 1
    assert not corroborate(many_same, DISTINCT).corroborated


def test_an_episode_continued_in_another_session_counts_once() -> None:
    resumed = [obs(1, "x", episode="EP", session="s1"), obs(2, "x", episode="EP", session="s2")]
    assert not corroborate(resumed, DISTINCT).corroborated


def _failure(app: str, source: str | None, session: str | None) -> Application:
    return Application(
        app,
        "t",
        "a",
        "R",
        1,
        None,
        "resident",
        (),
        "2026",
        "contributed-to-failure",
        "2026",
        None,
        source,
        session,
    )


def test_failures_count_only_when_corroborated() -> None:
    one_session = [_failure(f"A{i}", "observed", "s1") for i in range(5)]
    assert counted_failures(one_session) == 0  # an attacker in one session
    two_sessions = [_failure("A1", "observed", "s1"), _failure("A2", "observed", "s2")]
    assert counted_failures(two_sessions) == 2
    unknown = [_failure("A1", "observed", None), _failure("A2", "observed", None)]
    assert counted_failures(unknown) == 0  # unknown sessions are never independent
    assert counted_failures([_failure("A1", "deterministic", "s1")]) == 1
    assert counted_failures([_failure("A1", "owner", "s1"), _failure("A2", None, None)]) == 2
    untrusted = [_failure(f"U{i}", "untrusted", f"s{i}") for i in range(4)]
    assert counted_failures(untrusted) == 0
    success = _failure("OK", "deterministic", "s1")
    ok = Application(**{**success.to_dict(), "why_applied": (), "outcome": "used-successfully"})
    assert counted_failures([ok]) == 0


def test_outcome_source() -> None:
    assert outcome_source("external", True) == "untrusted"
    assert outcome_source("learned", True) == "deterministic"
    assert outcome_source("system", False) == "observed"

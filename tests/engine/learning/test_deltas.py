"""Learning deltas: create, update, supersede, forget and noop, byte-stable."""

from __future__ import annotations

from cairn.engine.learning.corroboration import Gate
from cairn.engine.learning.deltas import canonical, doc_id, plan, topic_selector
from cairn.engine.learning.reflect import judge

from .support import doc, obs

GATE = Gate("single_owner", 2, owner="user")


def _plan(observations: list, docs: list | None = None, forgotten: frozenset[str] = frozenset()):
    candidates, funnel = judge(observations, GATE, 0.5)
    return plan(candidates, docs or [], forgotten, tenant="t", agent="a", threshold=0.5), funnel


def test_a_corroborated_topic_creates_a_candidate_doc_with_its_evidence() -> None:
    runs = [
        obs(
            1,
            "Run make check before pushing",
            tools=("bash", "make"),
            command="make check",
            deterministic=True,
            operations=("push",),
            project_id="shop",
        ),
        obs(
            2,
            "Run make check before pushing",
            tools=("make", "git"),
            operations=("push", "x"),
            project_id="shop",
        ),
    ]
    (delta,), funnel = _plan(runs)
    assert funnel.as_dict() == {
        "trajectories": 2,
        "candidates": 1,
        "corroborated": 1,
        "singleOwnerCorroborated": 1,
        "maxClusterCardinality": 1,
        "abstained": False,
    }
    record = delta.record
    assert delta.op == "create" and record is not None
    assert (record.kind, record.trust, record.origin, record.state) == (
        "skill",
        "learned",
        "reflection",
        "candidate",
    )
    assert record.body == (
        "Run make check before pushing\nTools: bash, make, git\nVerified by: make check"
    )
    assert (record.scope, record.project_id, record.operations) == ("project", "shop", ("push",))
    assert record.evidence == ("E001", "E002")
    assert record.recorded_at == runs[1].recorded_at  # from the evidence, not the clock
    assert record.id == doc_id("t", "a", delta.topic, runs[0].recorded_at)
    again, _ = _plan(list(reversed(runs)))
    assert canonical(again[0].event_payload()) == canonical(delta.event_payload())
    assert again[0].key == delta.key  # the idempotency key is the content hash


def test_nothing_corroborated_abstains() -> None:
    deltas, funnel = _plan([obs(1, "one lucky success")])
    assert deltas == [] and funnel.abstained and funnel.candidates == 1


def test_new_evidence_updates_and_known_evidence_is_a_noop() -> None:
    runs = [obs(1, "Answer in short bullet points"), obs(2, "Answer in short bullet points")]
    (created,), _ = _plan(runs)
    assert created.record is not None
    existing = created.record
    (noop,), _ = _plan(runs, [existing])
    assert (noop.op, noop.reason) == ("noop", "nothing new")
    (update,), _ = _plan([*runs, obs(3, "Answer in short bullet points")], [existing])
    assert update.op == "update" and update.target == existing.id and update.in_place
    assert update.changes["evidence"] == ["E001", "E002", "E003"]


def test_a_profile_correction_supersedes_and_keeps_the_old_body() -> None:
    old = [obs(i, "The user uses npm", topic="package manager", kind="profile") for i in (1, 2)]
    (created,), _ = _plan(old)
    assert created.record is not None
    new = [
        obs(i, "The user uses pnpm now", topic="package manager", kind="profile") for i in (3, 4)
    ]
    (delta,), _ = _plan([*old, *new], [created.record])
    assert delta.op == "supersede" and not delta.in_place
    assert delta.changes["body"] == "The user uses pnpm now"
    assert delta.changes["source"]["history"][0]["body"] == "The user uses npm"
    assert delta.changes["state"] == "candidate"
    # One uncorroborated newer statement changes nothing.
    (same,), _ = _plan([*old, new[0]], [created.record])
    assert same.op == "noop"


def test_evicted_forgotten_and_archived_docs() -> None:
    runs = [obs(1, "Answer in short bullet points"), obs(2, "Answer in short bullet points")]
    (created,), _ = _plan(runs)
    assert created.record is not None
    evicted = created.record.__class__(
        **{**created.record.to_dict(), "evidence": (), "evicted_at": "2026-07-01"}
    )
    (delta,), _ = _plan(runs, [evicted])
    assert (delta.op, delta.reason) == ("noop", "evicted")  # not learned again behind a sweep
    (delta,), _ = _plan(runs, [], frozenset([created.record.text_hash]))
    assert (delta.op, delta.reason) == ("noop", "forgotten by the user")
    archived = doc("D1", "a failing doc", state="archived")
    pinned = doc("D2", "a pinned failing doc", state="archived", pinned=True)
    deltas, _ = _plan([], [archived, pinned])
    assert [(d.op, d.target) for d in deltas] == [("forget", "D1")]


def test_selector_keeps_what_every_observation_states() -> None:
    members = [obs(1, "x", operations=("push", "commit")), obs(2, "x", operations=("push",))]
    assert topic_selector(members)["operations"] == ["push"]
    assert topic_selector([obs(1, "x"), *members])["operations"] == []

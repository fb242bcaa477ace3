"""Consolidation: near-duplicates merge; explicit records are never merged or changed."""

from __future__ import annotations

from cairn.engine.learning.clustering import jaccard, signature
from cairn.engine.learning.consolidation import merge_participants, merges
from cairn.model import Record

from .support import doc


def words_alike(a: Record, b: Record) -> float:
    return jaccard(signature(a.body), signature(b.body))


def test_near_duplicates_merge_keeping_the_more_specific_selector_and_all_evidence() -> None:
    broad = doc("D1", "Run make check before pushing", evidence=("E1",), proof_count=2)
    narrow = doc(
        "D2",
        "Before pushing, run make check",
        evidence=("E2",),
        scope="project",
        project_id="shop",
        operations=("push",),
    )
    other = doc("D3", "Answer in short bullet points", evidence=("E3",))
    survivor, retired = merges([broad, narrow, other], words_alike, 0.9)
    assert (survivor.op, survivor.target, survivor.in_place) == ("update", "D1", False)
    assert survivor.changes["evidence"] == ["E1", "E2"]
    assert (survivor.changes["scope"], survivor.changes["operations"]) == ("project", ["push"])
    assert (retired.op, retired.target, retired.into) == ("supersede", "D2", "D1")
    assert retired.changes["state"] == "superseded"


def test_explicit_records_are_never_merged_into_inferred_ones() -> None:
    rule = doc("R1", "Run make check before pushing", authority="explicit", origin="user")
    learned = doc("D1", "Before pushing run make check", proof_count=9)
    (retired,) = merges([rule, learned], words_alike, 0.9)
    assert (retired.target, retired.into) == ("D1", "R1")  # the rule itself is untouched
    two_rules = [rule, doc("R2", rule.body, authority="explicit", origin="user")]
    assert merges(two_rules, words_alike, 0.9) == []


def test_different_projects_and_kinds_never_merge() -> None:
    a = doc("D1", "Run make check", scope="project", project_id="shop")
    b = doc("D2", "Run make check", scope="project", project_id="blog")
    c = doc("D3", "Run make check", kind="skill")
    assert merges([a, b, c], words_alike, 0.9) == []


def test_participants_are_exactly_the_records_a_merge_can_compare() -> None:
    learned = doc("D1", "Before pushing run make check", proof_count=2)
    learned_twin = doc("D2", "Run make check before pushing")
    rule_same_kind = doc("R1", "Run make check before pushing", authority="explicit", origin="user")
    rule_other_kind = doc(
        "R2", "Run make check before pushing", kind="policy", authority="explicit", origin="user"
    )
    stated_fact = doc("F1", "The API lives in src/api", authority="inferred", origin="user")
    records = [learned, learned_twin, rule_same_kind, rule_other_kind, stated_fact]
    asked: list[tuple[str, str]] = []

    def recording(a: Record, b: Record) -> float:
        asked.append((a.id, b.id))
        return words_alike(a, b)

    everything = merges(records, recording, 0.5)
    participants = merge_participants(records)
    assert {r.id for r in participants} == {"D1", "D2", "R1"}
    assert {i for pair in asked for i in pair} <= {r.id for r in participants}
    assert merges(participants, words_alike, 0.5) == everything


def test_no_learned_records_means_no_participants() -> None:
    rules = [
        doc(f"R{i}", f"rule number {i}", authority="explicit", origin="user") for i in range(50)
    ]
    assert merge_participants(rules) == []


def test_a_merge_keeps_every_distinct_fact_of_both() -> None:
    port = doc("D1", "The staging database runs on port 5433", evidence=("E1",), proof_count=2)
    again = doc("D2", "The staging database runs on port 5433 (via the VPN)", evidence=("E2",))
    other_port = doc("D3", "The staging database runs on port 5434", evidence=("E3",))
    survivor, _ = merges([port, again], words_alike, 0.5)
    # A repeat adds evidence, not a line.
    assert survivor.in_place and survivor.changes["evidence"] == ["E1", "E2"]
    survivor, retired = merges([port, other_port], words_alike, 0.5)
    assert retired.target == "D3" and not survivor.in_place
    assert survivor.changes["body"].splitlines() == [
        "- The staging database runs on port 5433",
        "- The staging database runs on port 5434",
    ]
    facts = survivor.changes["source"]["reflection"]["facts"]
    assert [f["evidence"] for f in facts] == [["E1"], ["E3"]]

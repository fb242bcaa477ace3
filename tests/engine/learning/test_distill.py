"""Extractive distillation keeps every distinct fact once; "Verified by" only for what a
deterministic source verified."""

from __future__ import annotations

from cairn.engine.learning.distill import distill, same_fact

from .support import obs


def test_same_fact_needs_the_same_values() -> None:
    assert same_fact("The staging database runs on port 5433", "Staging's db listens on port 5433")
    assert not same_fact("The staging database runs on port 5433", "The staging db runs on 5434")
    assert same_fact("The staging db is backed up at 02:00", "Staging db backups run at 02:00")
    assert not same_fact("Backups run at 02:00", "Backups run at 03:00")
    assert not same_fact("Use pnpm to install", "Answer in short bullet points")
    assert same_fact("Use pnpm to install dependencies", "Install dependencies with pnpm")


def test_two_subjects_are_two_facts_whatever_else_they_share() -> None:
    """When in doubt, two facts: a duplicate line is harmless, a merged-away one lost."""
    assert not same_fact("The staging replica is on port 5434",
                         "The production replica is on port 5434")  # fmt: skip
    assert not same_fact("Dana owns the billing service", "Priya owns the billing service")
    assert not same_fact("Billing runs on port 8080", "Orders runs on port 8080")
    assert same_fact("The staging database user is deploy_ro",
                     "Log in to the staging database as deploy_ro")  # fmt: skip


def test_distinct_facts_are_lines_and_only_verified_ones_say_so() -> None:
    members = [
        obs(1, "The staging database runs on port 5433", deterministic=True,
            command="make db-check"),
        obs(2, "Staging's database listens on port 5433"),
        obs(3, "The staging database needs the corp VPN"),
    ]  # fmt: skip
    draft = distill("topic", members)
    assert [f.evidence for f in draft.facts] == [("E001", "E002"), ("E003",)]
    assert draft.body("topic").splitlines() == [
        "- The staging database runs on port 5433 (verified by make db-check)",
        "- The staging database needs the corp VPN",
    ]
    single = distill("topic", members[1:2])
    assert single.body("topic") == "Staging's database listens on port 5433"

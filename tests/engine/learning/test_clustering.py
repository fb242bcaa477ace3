"""Topic clustering: named topics group, notes group by their words, kinds and projects
never mix, and the result does not depend on the input order."""

from __future__ import annotations

from cairn.engine.learning.clustering import cluster, jaccard, label, signature, slug

from .support import obs


def test_signature_is_stemmed_content_words() -> None:
    assert signature("Deploying the billing service") == signature("deploy billing services")
    assert "the" not in signature("the deploy")
    assert jaccard(frozenset(), frozenset()) == 0.0


def test_notes_about_one_thing_cluster_and_others_do_not() -> None:
    notes = [
        obs(1, "Run make check before pushing the billing service"),
        obs(2, "Answer in short bullet points"),
        obs(3, "Run make check before pushing billing"),
        obs(4, "Before pushing billing, run make check"),
    ]
    topics = cluster(notes, 0.5)
    assert [[m.seq for m in t.members] for t in topics] == [[1, 3, 4], [2]]
    assert topics[0].label == "run make check pushing billing"
    assert cluster(list(reversed(notes)), 0.5) == topics  # order of arrival is irrelevant


def test_named_topics_group_and_kinds_and_projects_stay_apart() -> None:
    notes = [
        obs(1, "npm is what the user uses", topic="Package Manager", kind="profile"),
        obs(2, "the user moved to pnpm", topic="package manager", kind="profile"),
        obs(3, "run make check before pushing", project_id="shop"),
        obs(4, "run make check before pushing", project_id="blog"),
        obs(5, "run make check before pushing", tools=("bash", "pytest")),
    ]
    topics = cluster(notes, 0.5)
    assert [(t.kind, t.project_id, len(t.members)) for t in topics] == [
        ("profile", None, 2),
        ("topic", "shop", 1),
        ("topic", "blog", 1),
        ("skill", None, 1),  # a multi-step run is a procedure
    ]
    assert topics[0].key == "profile:package-manager@" and topics[0].named == "package-manager"
    assert slug("  Deploy / Billing!! ") == "deploy-billing"
    assert label("The the quick, quick brown fox") == "quick brown fox"

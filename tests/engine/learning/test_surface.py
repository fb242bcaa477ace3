"""At most maxProcedureDocsSurfaced procedure docs per prompt, highest proof first."""

from __future__ import annotations

from cairn.engine.learning.surface import is_procedure, surface

from .support import doc


def test_procedure_docs_are_capped_by_proof_and_archived_docs_never_surface() -> None:
    tools = {"reflection": {"tools": ["bash", "pytest"]}}
    procedures = [
        doc(f"P{i}", f"procedure {i}", kind="skill", proof_count=i % 4, source=tools)
        for i in range(8)
    ]
    plain_skill = doc("S", "a skill without tools", kind="skill")
    topic = doc("T", "a topic doc")
    archived = doc("A", "archived", state="archived")
    rule = doc("R", "the user's", origin="user", authority="explicit", state="archived")
    items = [*procedures, plain_skill, topic, archived, rule]
    kept = surface(items, lambda r: r, 3)
    assert [r.id for r in kept if is_procedure(r)] == ["P2", "P3", "P7"]  # proof 2, 3, 3
    assert {r.id for r in kept if not is_procedure(r)} == {"S", "T", "R"}
    assert surface(items, lambda r: r, 3) == kept  # stable
    assert [r.id for r in surface(items, lambda r: r, 0) if is_procedure(r)] == []

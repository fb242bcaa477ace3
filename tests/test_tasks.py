"""The Python API's personal memory for tasks (cairn/tasks.py), called directly."""

from __future__ import annotations

import pytest

from cairn import InvalidInput, Memory, NotFound


def test_context_delivers_with_application_records_and_feedback_teaches(mem: Memory) -> None:
    rule = mem.remember(
        "Run the API tests with pytest -x before pushing",
        kind="policy",
        scope="project",
        project_id="shop",
        path_patterns=["src/api/**"],
    )
    mem.remember("Prefer short commit subjects", kind="preference")
    mem.remember(
        "Blog posts are written in Markdown", kind="policy", scope="project", project_id="blog"
    )

    ctx = mem.context(
        "fix the users endpoint and push", project_id="shop", paths=["src/api/users.py"]
    )
    delivered = {i.record.id: i for i in (*ctx.resident, *ctx.manifest)}
    assert rule.id in delivered  # its project and path selectors match the task
    assert all(i.record.project_id != "blog" for i in delivered.values())
    assert delivered[rule.id].why_applied  # every delivery says why
    assert len(ctx.applications) == len(delivered)

    app_id = delivered[rule.id].application_id
    after = mem.feedback(app_id, "used-successfully")
    assert after.used_count == 1 and after.state == "proven"
    report = mem.explain()
    assert report["with_outcome"] == 1 and report["hit_rate"] == 1.0
    assert report["records"][rule.id]["outcomes"] == {"used-successfully": 1}

    with pytest.raises(NotFound):
        mem.feedback("01NOSUCHAPPLICATION0000000", "ignored")
    with pytest.raises(InvalidInput):
        mem.feedback(app_id, "loved-it")


def test_expand_records_an_application_and_shows_verification(mem: Memory) -> None:
    record = mem.store("The staging deploy is make deploy-staging")
    expanded = mem.expand(record.id, task="deploy to staging")
    assert expanded["record"].id == record.id
    assert expanded["verification"]["versions"] == 1
    assert mem.explain()["applications"] == 1
    mem.forget(record.id)
    with pytest.raises(InvalidInput):
        mem.expand(record.id)


def test_signals_remember_rules_and_return_one_off_constraints(mem: Memory) -> None:
    rule = mem.signal("From now on, always use pnpm in this repository.")
    assert rule["kind"] == "rule" and rule["record"].authority == "explicit"
    once = mem.signal("Just this once, skip the lint step.")
    assert once["kind"] == "one-off" and "record" not in once
    assert [r.id for r in mem.list()] == [rule["record"].id]  # the one-off is never stored


def test_context_calls_an_item_relevant_to_the_task_only_above_the_floor(mem: Memory) -> None:
    pnpm = mem.remember("Use pnpm, never npm, to install packages in web-dashboard.", kind="policy")
    mem.remember("Deploy to production only Tuesday to Thursday.", kind="policy")
    relevant = "relevant to the task text"

    unrelated = mem.context("write a poem about cats")
    items = (*unrelated.resident, *unrelated.manifest)
    assert len(items) == 2  # both policies still apply by selector
    assert all(relevant not in i.why_applied for i in items)

    related = mem.context("install the packages for web-dashboard")
    why = {i.record.id: i.why_applied for i in (*related.resident, *related.manifest)}
    assert relevant in why[pnpm.id]
    assert all(relevant not in w for rid, w in why.items() if rid != pnpm.id)

"""The Python API's personal memory for tasks: context, expand, feedback, signals."""

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
    delivered = {i.record_id: i for i in (*ctx.resident, *ctx.manifest)}
    assert rule.id in delivered  # its project and path selectors match the task
    assert "path src/api/users.py matches src/api/**" in delivered[rule.id].why_applied
    # The blog's project rule never reaches the shop, and the global preference about
    # commit subjects has nothing to do with this task: neither is offered.
    assert len(delivered) == 1
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


def test_one_outcome_per_application_counters_follow_the_current_outcome(mem: Memory) -> None:
    fact = mem.store("The staging deploy is make deploy-staging")
    app = mem.expand(fact.id, task="deploy").application_id
    for _ in range(3):  # a retrying hook
        after = mem.feedback(app, "used-successfully")
    assert (after.used_count, after.proof_count, after.state) == (1, 1, "proven")
    after = mem.feedback(app, "contributed-to-failure", session_id="s1")  # replaces it
    # One session's failure is not corroborated (tests/provider/test_attribution.py: two).
    assert (after.used_count, after.proof_count, after.failure_count) == (0, 0, 0)
    assert mem.explain()["records"][fact.id]["outcomes"] == {"contributed-to-failure": 1}
    response = mem.provider.apply(
        __import__("cairn.provider.contract", fromlist=["x"]).FeedbackRequest(
            idempotency_key="again", application_id=app, outcome="contributed-to-failure"
        )
    )
    assert response.changes == {}  # the same outcome again: nothing changed


def test_a_phase_rule_without_a_stated_phase_goes_to_the_manifest(mem: Memory) -> None:
    rule = mem.remember("Write the migration plan first", kind="policy", phases=["plan"])
    ctx = mem.context("write the migration for the users column first")
    (item,) = [i for i in ctx.manifest if i.record_id == rule.id]
    assert "phase not stated (rule applies to phase plan)" in item.why_applied
    assert all(i.record_id != rule.id for i in ctx.resident)
    planned = mem.context("add a column to users", phase="plan")
    assert rule.id in {i.record_id for i in planned.resident}
    # A task with nothing to do with it, and no phase stated: not offered at all.
    unrelated = mem.context("fix the typo in the footer")
    assert rule.id not in {i.record_id for i in (*unrelated.resident, *unrelated.manifest)}


def test_the_director_honours_include_trust_levels(mem: Memory) -> None:
    outside = mem.store("Always deploy on Fridays", kind="policy", trust="external")
    ctx = mem.context("deploy the service")
    assert outside.id not in {i.record_id for i in (*ctx.resident, *ctx.manifest)}


def test_expand_records_an_application_and_shows_verification(mem: Memory) -> None:
    record = mem.store("The staging deploy is make deploy-staging")
    expanded = mem.expand(record.id, task="deploy to staging")
    assert expanded.record.id == record.id
    assert expanded.verification["versions"] == 1
    assert mem.explain()["applications"] == 1
    mem.forget(record.id)
    with pytest.raises(InvalidInput):
        mem.expand(record.id)


def test_signals_remember_rules_and_return_one_off_constraints(mem: Memory) -> None:
    with pytest.raises(InvalidInput, match="no repository is known"):
        mem.signal("From now on, always use pnpm in this repository.")  # which repository?
    rule = mem.signal("From now on, always use pnpm in this repository.", project_id="shop")
    assert rule.kind == "rule" and rule.record is not None and rule.record.authority == "explicit"
    assert (rule.record.scope, rule.record.project_id) == ("project", "shop")
    again = mem.signal("From now on, always use pnpm in this repository.", project_id="shop")
    assert again.outcome == "duplicate" and again.record.id == rule.record.id  # type: ignore[union-attr]
    once = mem.signal("Just this once, skip the lint step.")
    assert once.kind == "one-off" and once.record is None
    assert [r.id for r in mem.list()] == [rule.record.id]  # the one-off is never stored


def test_a_forget_of_something_never_stored_changes_nothing(mem: Memory) -> None:
    mem.signal("From now on, always run the linter before committing.")
    before = mem.list()
    result = mem.signal("Forget what I said about Kubernetes")
    assert result.kind == "forget" and result.outcome == "no-match"
    assert mem.list() == before and mem.tombstones() == []
    hit = mem.signal("Forget the rule about running the linter before committing")
    assert hit.outcome == "forgotten" and mem.list() == []


def test_a_correction_in_words_acts_on_the_one_clear_match(mem: Memory) -> None:
    rule = mem.signal("Always install dependencies with pnpm 8.", project_id="shop")
    mem.signal("Always write commit subjects under 60 characters.")
    fixed = mem.signal("Actually, use pnpm 10 for installs.", project_id="shop")
    assert fixed.kind == "correct" and fixed.outcome == "corrected"
    assert fixed.record is not None and fixed.record.id == rule.record.id  # type: ignore[union-attr]
    assert fixed.record.version == 2 and "pnpm 10" in fixed.record.body
    unrelated = mem.signal("Actually, the staging cluster runs Kubernetes 1.29.")
    # Nothing changes; a fact the user may want kept is asked about ("unsure"), not stored.
    assert unrelated.outcome in ("no-match", "nothing", "unsure") and len(mem.list()) == 2


def test_context_calls_an_item_relevant_to_the_task_only_above_the_floor(mem: Memory) -> None:
    pnpm = mem.remember("Use pnpm, never npm, to install packages in web-dashboard.", kind="policy")
    mem.remember("Deploy to production only Tuesday to Thursday.", kind="policy")

    def relevant(why: tuple[str, ...]) -> bool:  # the real reason, never a generic phrase
        return any(r.startswith(("words in common with the task", "close in meaning")) for r in why)

    unrelated = mem.context("write a poem about cats")
    items = (*unrelated.resident, *unrelated.manifest)
    assert items == ()  # global rules with no selector: about no task in particular

    related = mem.context("install the packages for web-dashboard")
    why = {i.record_id: i.why_applied for i in (*related.resident, *related.manifest)}
    assert "words in common with the task: install, packages, web, dashboard" in why[pnpm.id]
    assert [i.record_id for i in related.resident] == [pnpm.id]
    assert not any(relevant(w) for rid, w in why.items() if rid != pnpm.id)

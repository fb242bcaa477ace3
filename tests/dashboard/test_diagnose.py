"""Recall diagnostics: lane ranks, fused score, factors, final order, drop reasons, and
the director's whyApplied — as a preview that records no application."""

from __future__ import annotations

from cairn.provider import contract as c

from .conftest import Browser


def test_a_diagnosis_shows_every_link_and_records_nothing(alice: Browser) -> None:
    use = alice.remember("Always use pnpm to install packages", kind="policy")
    alice.remember("Install packages with pnpm, never npm", kind="policy")
    alice.remember("Tea is better than coffee", trust="external")
    before = alice.provider.query(c.JournalQuery())
    assert isinstance(before, c.JournalResponse)
    page = alice.get(
        "/diagnose", query="install packages with pnpm", project="repo1", path="src/a.ts",
        operation="install",
    )  # fmt: skip
    assert page.status_code == 200
    trace = page.text.split('data-testid="trace"')[1].split("</table>")[0]
    for column in ("keyword rank", "vector rank", "fused", "recency", "proof", "final", "fate"):
        assert column in trace
    assert "delivered" in trace and use in trace
    director = page.text.split('data-testid="director"')[1].split("</table>")[0]
    assert use in director and "set explicitly by the user" in director
    after = alice.provider.query(c.JournalQuery())
    assert isinstance(after, c.JournalResponse) and len(after.events) == len(before.events)
    apps = alice.provider.query(c.ApplicationsQuery(record_id=use))
    assert isinstance(apps, c.ApplicationsResponse) and apps.total == 0


def test_drop_reasons_are_shown(alice: Browser) -> None:
    for i in range(8):
        alice.remember(f"pnpm rule number {i}: install with pnpm")
    alice.remember("pnpm from a web page", trust="external")
    trace = alice.get("/diagnose", query="install with pnpm").text
    assert "dropped: budget" in trace or "dropped: max results" in trace
    assert "dropped: trust" in trace


def test_the_form_alone_runs_nothing_and_bad_input_is_one_line(alice: Browser) -> None:
    empty = alice.get("/diagnose")
    assert empty.status_code == 200 and 'data-testid="trace"' not in empty.text
    long = alice.get("/diagnose", query="x" * 10_001)
    assert long.status_code == 400 and "query" in long.text

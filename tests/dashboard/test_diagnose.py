"""Recall diagnostics: lane ranks, fused score, factors, final order, drop reasons, and
the director's whyApplied — as a preview that records no application."""

from __future__ import annotations

import subprocess
from pathlib import Path

from cairn.adapters.repository import repository_identity
from cairn.provider import contract as c
from cairn.provider.contract import projects as pc

from .conftest import Browser, Served

REPO1 = "git:0123456789abcdef"


def name_project(browser: Browser, project_id: str, name: str, remote: str | None = None) -> None:
    told = browser.provider.apply(
        pc.NameProjectRequest(
            idempotency_key=f"name-{project_id}-{name}", project_id=project_id, name=name,
            remote=remote,
        )
    )  # fmt: skip
    assert isinstance(told, pc.NameProjectResponse) and told.project.name == name


def test_a_diagnosis_shows_every_link_and_records_nothing(alice: Browser) -> None:
    name_project(alice, REPO1, "repo1")
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


def test_the_project_field_takes_a_name_an_id_or_a_folder(
    alice: Browser, served: Served, tmp_path: Path
) -> None:
    repo = tmp_path / "shop"
    repo.mkdir()
    for args in (["init", "-q"], ["commit", "-q", "--allow-empty", "-m", "init"]):
        subprocess.run(
            ["git", "-c", "user.email=a@b", "-c", "user.name=a", *args], cwd=repo, check=True
        )
    pid = repository_identity(repo).project_id
    name_project(alice, pid, "shop", "github.com/acme/shop")
    rule = alice.remember(
        "Always run make check in this repository", kind="policy", scope="project", project_id=pid
    )
    for typed in ("shop", "acme/shop", "ACME/Shop", pid, str(repo)):
        page = alice.get("/diagnose", query="run the checks", project=typed)
        assert page.status_code == 200, typed
        assert rule in page.text.split('data-testid="director"')[1], typed
    # Unknown names, ids and folders are refused in one line, never answered globally.
    for typed in ("nosuch", "git:ffffffffffffffff", str(tmp_path / "missing")):
        page = alice.get("/diagnose", query="run the checks", project=typed)
        assert page.status_code == 400 and "unknown project" in page.text, typed
    # Another tenant knows neither the name nor the id.
    bob = served.browser("bob")
    for typed in ("shop", pid):
        page = bob.get("/diagnose", query="run the checks", project=typed)
        assert page.status_code == 400 and rule not in page.text


def test_every_dropped_row_says_which_memory_it_is(alice: Browser) -> None:
    for i in range(8):
        alice.remember(f"pnpm rule number {i}: install with pnpm")
    alice.remember("pnpm from a web page", trust="external")
    trace = alice.get("/diagnose", query="install with pnpm").text.split('data-testid="trace"')[1]
    rows = trace.split("</tbody>")[0].split("<tr")[1:]
    dropped = [r for r in rows if "dropped" in r]
    assert dropped
    for row in dropped:
        assert "pnpm" in row and "(no text)" not in row  # the text, not only an id

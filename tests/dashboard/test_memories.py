"""The memories list (filters, search, sort, pages) and a memory's detail."""

from __future__ import annotations

import re

from cairn.dashboard import filters
from cairn.provider import contract as c

from .conftest import Browser

HOSTILE = '<script>alert("x")</script><img src=x onerror=alert(1)> {{ 7*7 }}'


def ids_in(html: str) -> list[str]:
    return re.findall(r'class="id">([0-9A-Z]{26}) v', html)


def test_filters_search_and_sort(alice: Browser) -> None:
    a = alice.remember("Always use pnpm", kind="policy", tags=["tools"])
    b = alice.remember("Never push to main", kind="policy", scope="project", project_id="repo1")
    f = alice.remember("The user lives in Berlin", kind="fact", trust="system")
    assert ids_in(alice.get("/memories").text) == [f, b, a]  # newest first
    assert ids_in(alice.get("/memories", order="recorded").text) == [a, b, f]
    assert ids_in(alice.get("/memories", q="PNPM").text) == [a]
    assert ids_in(alice.get("/memories", kind="fact").text) == [f]
    assert ids_in(alice.get("/memories", scope="project").text) == [b]
    assert ids_in(alice.get("/memories", project="repo1").text) == [b]
    assert ids_in(alice.get("/memories", trust="system").text) == [f]
    assert ids_in(alice.get("/memories", tag="tools").text) == [a]
    assert ids_in(alice.get("/memories", state="trial").text) == []
    assert "No memories match" in alice.get("/memories", q="nothing like it").text


def test_pages_of_fifty(alice: Browser) -> None:
    items = [c.MemoryFields(body=f"note number {i}") for i in range(filters.PAGE_SIZE + 3)]
    alice.provider.apply(c.IngestRequest(idempotency_key="bulk", items=items))
    first = alice.get("/memories").text
    assert len(ids_in(first)) == filters.PAGE_SIZE and 'rel="next"' in first
    second = alice.get("/memories", page="2").text
    assert len(ids_in(second)) == 3 and 'rel="next"' not in second and 'rel="prev"' in second
    assert not set(ids_in(first)) & set(ids_in(second))


def test_a_bad_filter_is_one_clear_line(alice: Browser) -> None:
    for params, field in (({"state": "bogus"}, "states"), ({"order": "body"}, "order")):
        answer = alice.get("/memories", **params)
        assert answer.status_code == 400 and field in answer.text
    page = alice.get("/memories", page="0")
    assert page.status_code == 400 and "page must be" in page.text


def test_hostile_bodies_are_text_everywhere(alice: Browser) -> None:
    rid = alice.remember(HOSTILE, title="<b>bold</b>", tags=["<i>"])
    for html in (
        alice.get("/memories").text,
        alice.get(f"/memories/{rid}").text,
        alice.get("/journal").text,
        alice.get("/diagnose", query="script alert").text,
        alice.get(f"/memories/{rid}/confirm/forget").text,
    ):
        assert "<script>alert" not in html and "<img src=x" not in html and "<b>bold" not in html
        assert "&lt;script&gt;" in html or "&lt;b&gt;" in html
    detail = alice.get(f"/memories/{rid}").text
    assert "{{ 7*7 }}" in detail  # never evaluated as a template


def test_detail_shows_versions_applications_and_tombstone(alice: Browser) -> None:
    rid = alice.remember("Use pnpm for installs", kind="policy")
    alice.provider.apply(
        c.CorrectRequest(idempotency_key="fix", record_id=rid, text="Use pnpm 10 for installs")
    )
    task = alice.provider.query(c.TaskQuery(task="install with pnpm", project_id="repo1"))
    assert isinstance(task, c.TaskResponse)
    app_id = next(i.application_id for i in task.resident + task.manifest if i.id == rid)
    alice.provider.apply(
        c.FeedbackRequest(idempotency_key="fb", application_id=app_id, outcome="used-successfully")
    )
    page = alice.get(f"/memories/{rid}").text
    versions = page.split('data-testid="versions"')[1].split("</table>")[0]
    assert "Use pnpm 10 for installs" in versions and "Use pnpm for installs" in versions
    assert "superseded" in versions  # the old version, with its recorded and expiry times
    assert "install with pnpm" in page and "used-successfully" in page
    assert "Applications (1)" in page
    why = task.resident[0].why_applied if task.resident else task.manifest[0].why_applied
    assert all(w in page for w in why)
    alice.provider.apply(c.ForgetRequest(idempotency_key="fg", record_id=rid))
    gone = alice.get(f"/memories/{rid}").text
    assert 'data-testid="tombstone"' in gone and "user-remove" in gone
    assert ">Restore</button>" in gone


def test_an_unknown_memory_is_404(alice: Browser) -> None:
    answer = alice.get("/memories/01JZZZZZZZZZZZZZZZZZZZZZZZ")
    assert answer.status_code == 404 and "no memory" in answer.text


def test_search_is_ranked_by_recall_not_every_word_as_a_substring(alice: Browser) -> None:
    hook = alice.remember("Webhooks are retried with exponential backoff, five attempts at most")
    other = alice.remember("Payment webhooks must be verified with the signing secret")
    alice.remember("Use pnpm to install dependencies")
    found = ids_in(alice.get("/memories", q="webhooks retries").text)
    assert found and found[0] == hook and other in found  # not every word needed, best first
    zh = alice.remember("部署前一定要先跑集成测试")
    assert ids_in(alice.get("/memories", q="集成测试").text)[0] == zh
    assert "No memories match" in alice.get("/memories", q="the capital of France").text


def test_a_memory_without_a_source_shows_no_raw_braces(alice: Browser) -> None:
    rid = alice.remember("Keep the changelog in English")
    page = alice.get(f"/memories/{rid}").text
    section = page.split('id="ev-h"')[1]
    assert "{}" not in section and "No source recorded" in section


def test_repositories_show_their_names_and_the_filter_takes_one(alice: Browser) -> None:
    from cairn.provider.contract import projects as pc

    pid = "git:00000000000000aa"
    alice.provider.apply(
        pc.NameProjectRequest(idempotency_key="n1", project_id=pid, name="shop",
                              remote="github.com/acme/shop")
    )  # fmt: skip
    rid = alice.remember("Use pnpm here", scope="project", project_id=pid)
    alice.remember("A global rule")
    listed = alice.get("/memories").text
    assert f'<strong>shop</strong> <span class="id">{pid}</span>' in listed
    assert 'data-testid="project-name">shop<' in alice.get(f"/memories/{rid}").text
    for typed in ("shop", "acme/shop", pid):
        assert ids_in(alice.get("/memories", project=typed).text) == [rid], typed
    refused = alice.get("/memories", project="nosuch")
    assert refused.status_code == 400 and "unknown project" in refused.text


def test_a_rule_that_keeps_failing_is_flagged_for_review(alice: Browser) -> None:
    from cairn.provider.contract import learning as lc

    rule = alice.remember("Always use pnpm", kind="policy")
    for i in range(2):
        shown = alice.provider.query(c.ExpandQuery(record_id=rule, task="install"))
        alice.provider.apply(lc.ObserveRequest(
            idempotency_key=f"bad{i}", success=False, applications=[shown.application_id],
            deterministic=True, command="make test", session_id=f"s{i}",
        ))  # fmt: skip
    listed = alice.get("/memories").text
    assert 'data-testid="review"' in listed and "followed by 2 failures" in listed
    detail = alice.get(f"/memories/{rule}").text
    assert "keep, correct or forget?" in detail
    alice.provider.apply(c.PinRequest(idempotency_key="keep", mutation="pin", record_id=rule))
    assert 'data-testid="review"' not in alice.get("/memories").text  # kept: asked no more

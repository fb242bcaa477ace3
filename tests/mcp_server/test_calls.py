"""The tools' work, in process, over a real store: one request through the provider each."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from cairn.cli.app import App
from cairn.errors import InvalidInput, NotFound
from cairn.mcp_server.calls import Binding, MemoryTools
from cairn.mcp_server.resources import read_resource
from cli_runner import use_test_embedder

HERE = Binding("git:0123456789abcdef", "shop", None)


@pytest.fixture
def app(tmp_path: Path) -> Iterator[App]:
    use_test_embedder(tmp_path)
    app = App(tmp_path, True, "default", "default", None)
    yield app
    app.close()


@pytest.fixture
def tools(app: App) -> MemoryTools:
    return MemoryTools(app.client, HERE)


def test_store_is_the_agents_unless_the_user_said_it(tools: MemoryTools) -> None:
    learned = tools.call("memory_store", {"body": "The staging database is pg-staging-2."})
    record = learned.data["record"]
    assert (record["authority"], record["state"], record["origin"]) == ("inferred", "trial", "tool")
    said = tools.call(
        "memory_store",
        {
            "body": "Always use pnpm here.",
            "kind": "policy",
            "scope": "project",
            "stated_by_user": True,
        },
    )
    rule = said.data["record"]
    assert (rule["authority"], rule["scope"], rule["project_id"]) == (
        "explicit",
        "project",
        HERE.project_id,
    )
    again = tools.call(
        "memory_store",
        {
            "body": "Always use pnpm here.",
            "kind": "policy",
            "scope": "project",
            "stated_by_user": True,
        },
    )
    assert again.data["record"]["id"] == rule["id"] and "nothing added" in again.text


def test_bad_arguments_are_one_clear_error_and_change_nothing(tools: MemoryTools, app: App) -> None:
    with pytest.raises(InvalidInput, match="kind"):
        tools.call("memory_store", {"body": "x", "kind": "opinion"})
    with pytest.raises(InvalidInput, match="needs a repository"):
        MemoryTools(app.client, Binding(None, None, None)).call(
            "memory_store", {"body": "x", "scope": "project"}
        )
    with pytest.raises(NotFound):
        tools.call("memory_forget", {"record_id": "01ARZ3NDEKTSV4RRFFQ69G5FAV"})
    for unknown in ("no_such_tool", "memory_delete_all", ""):  # refused, not a KeyError
        with pytest.raises(InvalidInput, match="unknown tool"):
            tools.call(unknown, {"body": "x"})
    with pytest.raises(InvalidInput, match="no visible character"):
        tools.call("memory_store", {"body": " \u200b\u2060 ", "stated_by_user": True})
    assert tools.call("memory_recall", {"query": "x"}).data["memories"] == []


def test_recall_context_expand_feedback_correct_forget(tools: MemoryTools) -> None:
    rid = tools.call(
        "memory_store",
        {
            "body": "Run pnpm test -- --run before every commit.",
            "kind": "policy",
            "stated_by_user": True,
        },
    ).data["record"]["id"]
    found = tools.call("memory_recall", {"query": "what to run before a commit"})
    assert found.data["memories"][0]["id"] == rid and f"- {rid}  " in found.text
    ctx = tools.call("memory_context", {"task": "commit the fix", "operation": "commit"})
    (item,) = [i for i in ctx.data["resident"] + ctx.data["manifest"] if i["id"] == rid]
    assert f"[app {item['application_id']}]" in ctx.text
    expanded = tools.call("memory_expand", {"record_id": rid})
    assert "Run pnpm test" in expanded.text and expanded.data["application_id"] in expanded.text
    done = tools.call(
        "memory_feedback",
        {"application_id": item["application_id"], "outcome": "used-successfully"},
    )
    assert done.data["changes"]["used_count"] == [0, 1]
    repeat = tools.call(
        "memory_feedback",
        {"application_id": item["application_id"], "outcome": "used-successfully"},
    )
    assert repeat.data["changes"] == {} and "already recorded" in repeat.text
    correction = {"record_id": rid, "text": "Run pnpm test before commits."}
    fixed = tools.call("memory_correct", correction)
    assert fixed.data["record"]["version"] == 2
    same = tools.call("memory_correct", correction)
    assert "nothing changed" in same.text
    gone = tools.call("memory_forget", {"record_id": rid})
    assert gone.data["tombstone"]["record_id"] == rid and not gone.data["tombstone"]["permanent"]
    assert (
        tools.call("memory_recall", {"query": "run pnpm test before commits"}).data["memories"]
        == []
    )


def test_ask_quotes_the_supporting_memories_or_says_it_has_no_answer(
    tools: MemoryTools,
) -> None:
    nothing = tools.call("memory_ask", {"question": "which database is staging?"})
    assert nothing.data["answered"] is False and nothing.data["citations"] == []
    assert "no answer" in nothing.text
    rid = tools.call("memory_store", {"body": "The staging database is pg-staging-2."}).data[
        "record"
    ]["id"]
    got = tools.call("memory_ask", {"question": "which database does staging use?"})
    assert got.data["answered"] is True
    assert [c["record_id"] for c in got.data["citations"]] == [rid]
    assert "pg-staging-2" in got.text and rid in got.text
    with pytest.raises(InvalidInput, match="unknown argument 'max_memories'"):
        tools.call("memory_ask", {"question": "x?", "max_memories": 2})


def test_resources_show_the_profile_and_this_repositorys_rules(
    tools: MemoryTools, app: App
) -> None:
    tools.call(
        "memory_store", {"body": "Dana prefers tabs.", "kind": "preference", "stated_by_user": True}
    )
    tools.call(
        "memory_store",
        {
            "body": "Never push to main.",
            "kind": "policy",
            "scope": "project",
            "stated_by_user": True,
            "operations": ["push"],
        },
    )
    profile = read_resource(app.client, HERE, "cairn://profile")
    assert "Dana prefers tabs." in profile and "Never push" not in profile
    rules = read_resource(app.client, HERE, "cairn://project/rules")
    assert rules.startswith("# The rules of shop")
    assert "Never push to main. (only for operations push)" in rules and "tabs" not in rules
    assert "not run inside" in read_resource(
        app.client, Binding(None, None, None), "cairn://project/rules"
    )
    with pytest.raises(NotFound):
        read_resource(app.client, HERE, "cairn://secrets")


def test_status_says_which_embedder_reads_memory_and_why(tools: MemoryTools) -> None:
    tools.call("memory_store", {"body": "The staging database is pg-staging-2."})
    got = tools.call("memory_status", {})
    assert got.data["counts"]["records"] == 1
    assert (got.data["embedder"], got.data["embedder_chosen_by"]) == ("hashing-64", "config")
    assert "embedder hashing-64 (config: memory.embeddings.provider)" in got.text
    with pytest.raises(InvalidInput, match="memory_status: unknown argument 'verbose'"):
        tools.call("memory_status", {"verbose": True})

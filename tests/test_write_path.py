"""One write path (SPEC §7): whatever the route — the command line, the Python API, MCP over
the SDK's own client, HTTP to a real `cairn serve`, the daemon's socket, the hooks with
recorded Claude Code events — a write takes the same steps: validation (duplicate JSON
keys refused, a body with nothing visible refused), the statement reader where the body
is someone's words, and an idempotency key per item and per batch.

Each class is tried on every route it can take, in real git repositories."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from cairn import Memory, MemoryInput
from cairn.adapters.hashing import HashingEmbedder
from cairn.daemon.paths import daemon_paths
from cairn.daemon.wire import TENANT_HEADER, exchange
from cairn.errors import InvalidInput
from cli_runner import invoke_cairn, run_cairn
from daemon.support import cairn as daemon_cairn
from daemon.support import env_for, make_home, make_repo, running
from hook_events import event, transcript_lines
from server.serving import Server

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "coding-agent.jsonl"
RULE = "In this repo, always run make lint before committing."
CI_FACT = "Our CI runs on GitHub Actions; the workflow file is .github/workflows/ci.yml."
INVISIBLE = [" \u200b ", "\u200b\u2060\ufeff", "\u00ad\u200d", "\u3164", "\t\u200e\u202e"]


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return make_home(tmp_path)


def cli(home: Path, *args: str, cwd: Path | None = None, stdin: bytes | None = None) -> Any:
    return invoke_cairn(home, *args, cwd=cwd, stdin=stdin)


def listed(home: Path, cwd: Path | None = None) -> list[dict[str, Any]]:
    proc = cli(home, "--json", "list", "--all", "--everywhere", cwd=cwd)
    assert proc.returncode == 0, proc.stderr
    out: list[dict[str, Any]] = json.loads(proc.stdout)
    return out


def project_of(home: Path, repo: Path) -> str:
    """The repository's project id, as the command line resolves it."""
    proc = cli(home, "--json", "signal", RULE, cwd=repo)
    assert proc.returncode == 0, proc.stderr
    record = json.loads(proc.stdout)["record"]
    assert record["scope"] == "project" and record["operations"] == ["commit"]
    project_id: str = record["project_id"]
    return project_id


def one_line_refusal(proc: Any, *words: str) -> None:
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr, proc.stderr
    for word in words:
        assert word in proc.stderr, proc.stderr


# -- the statement's words set the selector, on every route ---------------------------


def mcp_calls(repo: Path, home: Path, calls: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    """Each tool call's result, through the MCP SDK's client and the real `cairn mcp`."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "cairn.cli.main", "mcp"],
        env=env_for(home),
        cwd=str(repo),
    )

    async def main() -> list[Any]:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            return [await session.call_tool(name, args) for name, args in calls]

    return asyncio.run(main())


@pytest.mark.slow
def test_mcp_store_reads_the_words_as_signal_does(home: Path, repo: Path) -> None:
    project_id = project_of(home, repo)
    by_signal = {r["body"]: r for r in listed(home)}[RULE]
    results = mcp_calls(
        repo,
        home,
        [
            ("memory_store", {"body": RULE.replace("make lint", "make check"),
                              "stated_by_user": True}),
            ("memory_store", {"body": CI_FACT}),
            ("memory_store", {"body": "The user's name is Dana and she lives in Lisbon."}),
            ("memory_store", {"body": "\u200b\u2060", "stated_by_user": True}),
            ("memory_store", {"body": "Tests live in tests/unit.", "scope": "global"}),
        ],
    )  # fmt: skip
    *stored, invisible, _ = results
    assert invisible.is_error and "visible" in invisible.content[0].text
    rule, ci, profile = (r.structured_content["record"] for r in stored)
    # the same words as `cairn signal`: the same selector and kind
    for field in ("scope", "project_id", "operations", "kind", "authority", "state"):
        assert rule[field] == by_signal[field], field
    assert (ci["scope"], ci["project_id"]) == ("project", project_id)
    assert (profile["scope"], profile["project_id"]) == ("global", None)
    bodies = {r["body"]: r for r in listed(home, repo)}
    assert bodies["Tests live in tests/unit."]["scope"] == "project"  # a fact about its files
    assert not any("\u200b" in b for b in bodies)


@pytest.mark.slow
def test_mcp_store_outside_a_repository_refuses_words_about_one(home: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    refused, fact = mcp_calls(
        outside,
        home,
        [("memory_store", {"body": RULE, "stated_by_user": True}),
         ("memory_store", {"body": CI_FACT})],
    )  # fmt: skip
    assert refused.is_error and "no repository is known" in refused.content[0].text
    # a path alone does not say which repository: with none known it stays global
    assert fact.structured_content["record"]["scope"] == "global"
    assert [r["body"] for r in listed(home)] == [CI_FACT]


def test_remember_reads_the_words_unless_the_selector_is_set_by_hand(
    home: Path, repo: Path, tmp_path: Path
) -> None:
    project_id = project_of(home, repo)
    said = "In this repository, always squash-merge pull requests before committing."
    done = json.loads(cli(home, "--json", "remember", said, cwd=repo).stdout)["record"]
    assert (done["scope"], done["project_id"], done["kind"]) == ("project", project_id, "policy")
    assert done["operations"] == ["commit"] and done["authority"] == "explicit"
    # a selector set by hand is the user's: the words add nothing to it
    typed = "In this repository, always rebase before pushing."
    by_hand = cli(home, "--json", "remember", typed, "--scope", "global", cwd=repo)
    record = json.loads(by_hand.stdout)["record"]
    assert (record["scope"], record["operations"], record["kind"]) == ("global", [], "preference")
    # outside a repository nothing is read: the text is kept as given
    outside = tmp_path / "outside"
    outside.mkdir()
    plain = cli(home, "--json", "remember", "Dana likes tea", cwd=outside)
    assert json.loads(plain.stdout)["record"]["kind"] == "preference"


def test_ingest_reads_each_line_as_a_statement(home: Path, repo: Path) -> None:
    project_id = project_of(home, repo)
    proc = cli(home, "--json", "ingest", str(EXAMPLES), cwd=repo)
    assert proc.returncode == 0, proc.stderr
    found = {r["body"]: r for r in listed(home)}
    pnpm = found["Always use pnpm to install dependencies in this repository; never npm or yarn."]
    assert (pnpm["scope"], pnpm["project_id"]) == ("project", project_id)
    migrations = next(b for b in found if b.startswith("Database migrations live in"))
    assert found[migrations]["scope"] == "project"  # a fact naming this repository's files
    dana = next(b for b in found if b.startswith("The user's name is Dana"))
    assert (found[dana]["scope"], found[dana]["kind"]) == ("global", "profile")
    # another repository does not see this one's rules
    other = repo.parent / "other"
    other.mkdir()
    git = ["git", "-c", "user.email=o@example.org", "-c", "user.name=o"]
    subprocess.run([*git, "init", "-q"], cwd=other, check=True)
    # a root commit of its own: a repository's identity is its root commit
    subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", "other"], cwd=other, check=True)
    elsewhere = cli(home, "--json", "recall", "install dependencies with pnpm", cwd=other)
    shown = [m["body"] for m in json.loads(elsewhere.stdout)["memories"]]
    assert pnpm["body"] not in shown
    # the same file again, in the same repository: nothing new
    again = cli(home, "--json", "ingest", str(EXAMPLES), cwd=repo)
    assert json.loads(again.stdout)["stored"] == 0


def test_ingest_outside_a_repository_refuses_a_line_about_one(
    home: Path, tmp_path: Path, repo: Path
) -> None:
    lines = tmp_path / "lines.jsonl"
    lines.write_text(
        json.dumps({"body": "Dana likes tea."}) + "\n" + json.dumps({"body": RULE}) + "\n",
        encoding="utf-8",
    )
    outside = tmp_path / "outside"
    outside.mkdir()
    one_line_refusal(cli(home, "ingest", str(lines), cwd=outside), "lines.jsonl:2:", "repository")
    assert listed(home) == []
    # naming the project binds it, as inside the repository
    done = cli(home, "--json", "ingest", str(lines), "--project", str(repo), cwd=outside)
    assert done.returncode == 0, done.stderr
    rule = {r["body"]: r for r in listed(home)}[RULE]
    assert (rule["scope"], rule["operations"], rule["kind"]) == ("project", ["commit"], "policy")


@pytest.mark.slow
def test_the_stop_hooks_review_binds_a_fact_about_this_repository(home: Path, repo: Path) -> None:
    said = f"{CI_FACT} Our staging cluster is in eu-west-1."
    lines = [
        line.replace("Install the dependencies and run the tests.", said)
        for line in transcript_lines()
    ]
    transcript = repo.parent / "session.jsonl"
    transcript.write_text("\n".join(lines) + "\n", encoding="utf-8")
    data = json.dumps(event("stop", cwd=str(repo), transcript_path=str(transcript)))
    proc = run_cairn(home, "hook", "stop", stdin=data.encode(), cwd=repo)
    assert proc.returncode == 0 and not (home / "logs" / "hooks.log").exists(), proc.stderr
    found = {r["body"]: r for r in listed(home)}
    ci = found[CI_FACT]
    assert (ci["scope"], ci["origin"]) == ("project", "review")
    assert ci["project_id"] == project_of(home, repo)
    # Said inside the repository with no scope word, the team's fact is that repository's,
    # as `cairn signal` reads the same words (issue 25: conventions belong to the repository).
    assert found["Our staging cluster is in eu-west-1."]["scope"] == "project"


# -- idempotency per item and per batch ---------------------------------------------------

BATCH = {"mutation": "ingest", "idempotency_key": "k", "items": [{"body": "a"}, {"body": "b"}]}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    running_server = Server.start(tmp_path_factory.mktemp("serve") / "home")
    yield running_server
    assert running_server.stop() == 0


def tenant_client(server: Server) -> tuple[str, httpx.Client]:
    tenant = f"t-{uuid.uuid4().hex[:10]}"
    return tenant, server.client(server.token(tenant))


def count_over_http(http: httpx.Client) -> int:
    reply = http.post("/v1/query", json={"view": "manage", "include_forgotten": True})
    assert reply.status_code == 200, reply.text
    return len(reply.json()["records"])


def test_an_ingest_batch_sent_twice_over_http_stores_it_once(server: Server) -> None:
    _, http = tenant_client(server)
    with http:
        first = http.post("/v1/apply", json=BATCH)
        second = http.post("/v1/apply", json=BATCH)
        assert first.status_code == second.status_code == 200, second.text
        assert (first.json()["stored"], second.json()["stored"]) == (2, 0)
        assert second.json()["skipped"] == 2
        assert count_over_http(http) == 2
        # the same key with another item: that one is stored (nothing silently dropped);
        # the item it shares with the first batch, at the same place, is that item's retry
        other = {**BATCH, "items": [{"body": "a"}, {"body": "c"}]}
        assert http.post("/v1/apply", json=other).json()["stored"] == 1
        assert count_over_http(http) == 3


def test_store_many_twice_stores_nothing_twice_in_process_and_over_http(
    tmp_path: Path, server: Server
) -> None:
    items = [MemoryInput("Dana likes tea"), MemoryInput("ok"), MemoryInput("ok")]
    local = Memory.open(tmp_path / "m.db", embedder=HashingEmbedder())
    tenant, _ = tenant_client(server)
    with local, server.memory(tenant) as remote:
        for mem in (local, remote):
            first = mem.store_many(items)
            assert len(first) == 3  # two equal items of one batch are two memories
            assert mem.store_many(items) == []
            assert mem.store_many(items, key="batch-1") != []  # a batch key of its own
            assert mem.store_many(items, key="batch-1") == []
            assert len(mem.list()) == 6


@pytest.mark.slow
def test_the_daemon_takes_the_same_batch_once(home: Path) -> None:
    with running(home):
        socket = daemon_paths(home).socket
        headers = {TENANT_HEADER: "default", "Content-Type": "application/json"}
        body = json.dumps(BATCH).encode()
        replies = [exchange(socket, "POST", "/v1/apply", body, headers) for _ in range(2)]
        assert [r.status for r in replies] == [200, 200]
        assert [json.loads(r.body)["stored"] for r in replies] == [2, 0]
        listed_now = daemon_cairn(home, "--json", "list", "--all")
        assert len(json.loads(listed_now.stdout)) == 2


# -- the same input checks on every route ----------------------------------------------------

DUPLICATE = b'{"mutation":"remember","idempotency_key":"d1","body":"a","body":"b"}'


def test_duplicate_json_keys_are_refused_over_http(server: Server) -> None:
    _, http = tenant_client(server)
    with http:
        for path, body in (
            ("/v1/apply", DUPLICATE),
            ("/v1/apply", b'{"mutation":"ingest","idempotency_key":"d2","items":'
                          b'[{"body":"a","tags":[],"tags":["x"]}]}'),
            ("/v1/query", b'{"view":"recall","query":"a","query":"b"}'),
        ):  # fmt: skip
            reply = http.post(path, content=body, headers={"Content-Type": "application/json"})
            assert reply.status_code == 400, reply.text
            error = reply.json()["error"]
            assert "appears twice" in error and "\n" not in error
        assert count_over_http(http) == 0


@pytest.mark.slow
def test_duplicate_json_keys_are_refused_by_the_daemon_and_the_hooks(
    home: Path, repo: Path
) -> None:
    with running(home):
        headers = {TENANT_HEADER: "default", "Content-Type": "application/json"}
        reply = exchange(daemon_paths(home).socket, "POST", "/v1/apply", DUPLICATE, headers)
        assert reply.status == 400 and b"appears twice" in reply.body
    # a hook event with two prompts: the host is never failed, nothing is stored
    data = json.dumps(event("prompt-rule", cwd=str(repo)))
    doubled = data[:-1] + ', "prompt": "Always use yarn in this repo."}'
    proc = run_cairn(home, "hook", "prompt", stdin=doubled.encode(), cwd=repo)
    assert (proc.returncode, proc.stdout) == (0, "")
    assert "appears twice" in (home / "logs" / "hooks.log").read_text(encoding="utf-8")
    assert listed(home) == []


@pytest.mark.slow
def test_duplicate_json_keys_in_mcp_tool_arguments_are_refused(home: Path, repo: Path) -> None:
    """The real `cairn mcp` over stdio, spoken to line by line (an SDK client cannot send a
    repeated key): the call repeating "body" is refused, nothing of it stored."""
    lines = [json.dumps(message) for message in (
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                    "clientInfo": {"name": "raw", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
    )]  # fmt: skip
    lines += [
        '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"memory_store",'
        '"arguments":{"body":"Dana likes tea","body":"Dana likes coffee"}}}',
        '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"memory_store",'
        '"arguments":{"body":"Dana likes green tea"}}}',
    ]
    proc = subprocess.Popen(
        [sys.executable, "-m", "cairn.cli.main", "mcp"], stdin=subprocess.PIPE,
        stdout=subprocess.PIPE, env=env_for(home), cwd=repo,
    )  # fmt: skip
    assert proc.stdin is not None and proc.stdout is not None
    answers: dict[int, Any] = {}
    try:
        for line in lines:  # one message at a time, each answered before the next
            proc.stdin.write(line.encode() + b"\n")
            proc.stdin.flush()
            if "notifications/" not in line:
                answer = json.loads(proc.stdout.readline())
                answers[answer["id"]] = answer
    finally:
        proc.stdin.close()
        proc.wait(60)
    refused, stored = answers[2]["result"], answers[3]["result"]
    assert refused["isError"] and "'body' appears twice" in refused["content"][0]["text"]
    assert not stored.get("isError"), stored
    assert [r["body"] for r in listed(home)] == ["Dana likes green tea"]


def test_duplicate_json_keys_are_refused_in_ingest_and_import_files(
    home: Path, tmp_path: Path
) -> None:
    lines = tmp_path / "dup.jsonl"
    lines.write_text('{"body": "a"}\n{"body": "a", "body": "b"}\n', encoding="utf-8")
    one_line_refusal(cli(home, "ingest", str(lines)), "dup.jsonl:2", "appears twice")
    assert cli(home, "remember", "Dana likes tea").returncode == 0
    exported = cli(home, "export", "-").stdout.splitlines()
    record = next(line for line in exported if "Dana likes tea" in line)
    doubled = record.replace('"Dana likes tea"', '"Dana likes tea", "body": "Dana likes coffee"', 1)
    assert doubled != record
    dump = tmp_path / "dump.jsonl"
    dump.write_text("\n".join([exported[0], doubled]) + "\n", encoding="utf-8")
    other = tmp_path / "other-home"
    one_line_refusal(cli(other, "import", str(dump)), "appears twice")
    assert listed(other) == []


@pytest.mark.parametrize("body", INVISIBLE)
def test_a_body_with_nothing_visible_is_refused_by_the_command_line(
    home: Path, repo: Path, body: str, tmp_path: Path
) -> None:
    for args in (["remember", body], ["signal", body], ["recall", body]):
        one_line_refusal(cli(home, *args, cwd=repo), "visible" if body.strip() else "empty")
    lines = tmp_path / "x.jsonl"
    lines.write_text(json.dumps({"body": "fine"}) + "\n" + json.dumps({"body": body}) + "\n")
    one_line_refusal(cli(home, "ingest", str(lines)), "x.jsonl:2", "body")
    one_line_refusal(cli(home, "remember", "ok", "--tag", body), "tags")
    one_line_refusal(cli(home, "observe", "--success", "--note", body), "note")
    assert [r for r in listed(home) if r["body"] != "ok"] == []


def test_a_body_with_nothing_visible_is_refused_by_the_python_api(tmp_path: Path) -> None:
    with Memory.open(tmp_path / "m.db", embedder=HashingEmbedder()) as mem:
        for body in INVISIBLE:
            for write in (mem.store, mem.remember):
                with pytest.raises(InvalidInput, match=r"visible|empty"):
                    write(body)
            with pytest.raises(InvalidInput, match="item 2"):
                mem.store_many([MemoryInput("fine"), MemoryInput(body)])
            with pytest.raises(InvalidInput, match="title"):
                mem.store("fine", title=body)
        # visible text with invisible characters in it is kept as it is
        kept = mem.store("\u200bnaïve café\u200d")
        assert kept.body == "\u200bnaïve café\u200d"
        assert [r.id for r in mem.list()] == [kept.id]


def test_a_body_with_nothing_visible_is_refused_over_http_and_the_daemon(
    server: Server, home: Path
) -> None:
    _, http = tenant_client(server)
    requests = [
        {"mutation": "remember", "idempotency_key": "z1", "body": "\u200b "},
        {"mutation": "store", "idempotency_key": "z2", "body": "\u2060\ufeff"},
        {"mutation": "signal", "idempotency_key": "z3", "text": "\u200b"},
        {"mutation": "ingest", "idempotency_key": "z4", "items": [{"body": "a"},
                                                                   {"body": "\u3164"}]},
    ]  # fmt: skip
    with http:
        for request in requests:
            reply = http.post("/v1/apply", json=request)
            assert reply.status_code == 400, (request, reply.text)
            assert "visible" in reply.json()["error"] or "empty" in reply.json()["error"]
        assert count_over_http(http) == 0


@pytest.mark.slow
def test_a_body_with_nothing_visible_is_refused_through_the_daemon(home: Path) -> None:
    with running(home):
        headers = {TENANT_HEADER: "default", "Content-Type": "application/json"}
        body = json.dumps({"mutation": "remember", "idempotency_key": "z", "body": "\u200b "})
        reply = exchange(daemon_paths(home).socket, "POST", "/v1/apply", body.encode(), headers)
        assert reply.status == 400 and b"visible" in reply.body
        proc = daemon_cairn(home, "remember", "\u200b\u2060")
        one_line_refusal(proc, "visible")
    assert listed(home) == []


def test_the_write_path_is_the_same_in_process_as_through_a_subprocess(
    home: Path, repo: Path
) -> None:
    """`python -m cairn.cli.main` (a real process) refuses as the in-process command does."""
    quick = invoke_cairn(home, "remember", "\u200b", cwd=repo)
    whole = run_cairn(home, "remember", "\u200b", cwd=repo)
    assert (quick.returncode, quick.stderr) == (whole.returncode, whole.stderr)


def test_the_words_are_read_before_the_secret_policy_and_both_hold(tmp_path: Path) -> None:
    """The steps in their order: the statement's selector survives the redaction of a
    secret in the same body (the redacted text is checked again, not re-read)."""
    from cairn.provider import contract as c
    from cairn.provider.client import build

    with Memory.open(tmp_path / "m.db", embedder=HashingEmbedder()) as mem:
        said = ("In this repo, always use the token ghp_abcdefghijklmnopqrstuvwxyz0123456789"
                " before committing.")  # fmt: skip
        data = {"idempotency_key": "k1", "body": said, "read_words": True,
                "current_project_id": "p1"}  # fmt: skip
        request = build(c.RememberRequest, data)
        written = mem.provider.apply(request)
        assert isinstance(written, c.WriteResponse)
        record = written.record
        assert (record.scope, record.project_id, record.operations) == ("project", "p1", ["commit"])
        assert "ghp_" not in record.body and written.redacted
        assert mem.provider.apply(request).record.id == record.id  # the same key: no-op

"""Route parity (SPEC §7): every command gives the same output and exit code in-process,
through the real daemon and through a real ``cairn serve`` with the remote provider.

One daemon and one server serve the whole module; each test works in a tenant of its own
on all three routes. A step runs the same command line on every route (an id argument is
each route's own id for the same memory) and records any difference; a test fails with
all of them listed, and only after asserting what the local route itself answered — so
three routes failing alike cannot pass.
"""

from __future__ import annotations

import json
import re
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from cairn.cli.main import COMMAND_MODULES
from cairn.errors import CairnError
from cairn.provider import contract as c
from cairn.provider import registry
from cairn.provider.contract import learning as lc
from cairn.provider.contract import projects as pc
from provider.parity import (
    ROUTE_NAMES,
    TOKEN_ENV,
    Masks,
    Result,
    Route,
    Routes,
    alike,
    differences,
    started,
)

pytestmark = pytest.mark.slow  # a daemon and a server for the module

ULID = re.compile(r"[0-9A-HJKMNP-TV-Z]{26}")

# The commands that work on this machine itself, never on the memory a route reaches:
# the config file, a server or daemon to start, tokens of this home, agent host settings.
LOCAL_ONLY = frozenset(("config", "serve", "token", "daemon", "install", "skill"))
COMPARED: set[str] = set()  # every command a test of this module compared on the routes


@pytest.fixture(scope="module")
def routes(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Routes]:
    with started(tmp_path_factory.mktemp("parity")) as found:
        yield found


@dataclass(frozen=True)
class Var:
    """An argument that is each route's own value (an id it answered earlier)."""

    name: str


Arg = str | Var


class Parity:
    """The same steps on the three routes of one tenant."""

    def __init__(self, routes: dict[str, Route]) -> None:
        self.routes = routes
        self.vars: dict[str, dict[str, str]] = {name: {} for name in routes}
        self.failures: list[str] = []

    def file(self, name: str, text: str) -> Var:
        """A file of the same content at each route's own path (in its home)."""
        for route, home in ((n, r.home) for n, r in self.routes.items()):
            path = home / f"{self.routes[route].tenant}-{name}"
            path.write_text(text, encoding="utf-8")
            self.vars[route][name] = str(path)
        return Var(name)

    def run(
        self,
        *args: Arg,
        code: int = 0,
        stdin: bytes | None = None,
        keep: dict[str, Callable[[Result], str]] | None = None,
        cwd: Callable[[Route], Path] | None = None,
    ) -> Result:
        """Run on every route; the local route's result (its exit code must be ``code``)."""
        results: dict[str, Result] = {}
        for name, route in self.routes.items():
            argv = [self.vars[name][a.name] if isinstance(a, Var) else a for a in args]
            results[name] = route.cli(*argv, stdin=stdin, cwd=cwd(route) if cwd else None)
        shown = " ".join(a if isinstance(a, str) else f"<{a.name}>" for a in args)
        COMPARED.update(a for a in args if isinstance(a, str) and a in COMMAND_MODULES)
        local = results["local"]
        assert local.code == code, f"cairn {shown}: {local}"
        found = differences(results, {n: r.masks for n, r in self.routes.items()})
        if found:
            self.failures.append(f"cairn {shown}:\n  " + "\n  ".join(found))
        for var, get in (keep or {}).items():
            for name, result in results.items():
                try:
                    self.vars[name][var] = get(result)
                except (ValueError, KeyError, IndexError, AttributeError):
                    self.failures.append(f"{name}: no {var} in {result}")
                    self.vars[name][var] = "missing"
        return local

    def check(self) -> None:
        assert not self.failures, "the routes differ:\n" + "\n".join(self.failures)


def first_id(result: Result) -> str:
    found = ULID.search(result.out)
    assert found is not None, result
    return found.group(0)


def record_id(result: Result) -> str:
    return str(result.json()["record"]["id"])


@pytest.fixture
def parity(routes: Routes) -> Parity:
    return Parity(routes.bind())


def test_the_three_routes_are_what_they_say(parity: Parity) -> None:
    """The daemon route really goes through the daemon, the remote one through the server."""
    said = {name: route.cli("--json", "status").json() for name, route in parity.routes.items()}
    assert said["local"]["provider"] == "local" and "through the daemon" not in str(said["local"])
    assert "through the daemon" in said["daemon"]["location"]
    assert said["remote"]["provider"] == "remote" and said["remote"]["token_configured"]
    assert {s["tenant"] for s in said.values()} == {parity.routes["local"].tenant}
    assert list(parity.routes) == list(ROUTE_NAMES)


def test_records_remember_list_show_correct_forget_restore(parity: Parity) -> None:
    p = parity
    made = p.run("remember", "Always use pnpm to install dependencies.", "--tag", "tooling",
                 keep={"rule": first_id})  # fmt: skip
    assert made.out.startswith("remembered ")
    p.run("--json", "remember", "Never push to main; open a pull request.", "--scope",
          "project", "--path", "src/**", "--operation", "commit",
          keep={"push": record_id})  # fmt: skip
    again = p.run("remember", "Always use pnpm to install dependencies.", "--tag", "tooling")
    assert "already remembered" in again.out
    p.run("remember", "The staging database is pg-staging-2.", "--kind", "fact", "--title",
          "staging db", "--source", "ops wiki", keep={"fact": first_id})  # fmt: skip
    listed = p.run("list")
    assert "pnpm" in listed.out and "pg-staging-2" in listed.out
    p.run("--json", "list")
    p.run("list", ".")
    p.run("list", "--kind", "fact", "--tag", "tooling")
    shown = p.run("show", Var("rule"))
    assert "pnpm" in shown.out
    p.run("--json", "show", Var("push"))
    fixed = p.run("correct", Var("rule"), "Always use pnpm 9 to install dependencies.")
    assert "now version 2" in fixed.out
    p.run("show", "--history", Var("rule"))
    p.run("--json", "show", "--history", Var("rule"))
    p.run("forget", Var("fact"))
    p.run("list", "--all")
    p.run("restore", Var("fact"))
    p.run("--json", "forget", "--permanent", Var("push"))
    p.run("show", Var("push"), code=2)
    p.run("journal")
    p.run("--json", "journal", "--limit", "3")
    p.check()


def test_bad_input_is_the_same_one_line_error_everywhere(parity: Parity) -> None:
    p = parity
    p.run("remember", "Use tabs in Makefiles.", keep={"rule": first_id})
    for args, code in (
        (("show", "01ARZ3NDEKTSV4RRFFQ69G5FAV"), 2),  # a well-formed id nobody has
        (("show", "not an id"), 2),
        (("forget", "01ARZ3NDEKTSV4RRFFQ69G5FAV"), 2),
        (("restore", Var("rule")), 2),  # nothing to restore
        (("correct", "01ARZ3NDEKTSV4RRFFQ69G5FAV", "x"), 2),
        (("remember", ""), 2),
        (("remember", "   "), 2),
        (("remember", "a rule", "--occurred-at", "yesterday-ish"), 2),
        (("recall", "x", "--as-of", "not a time"), 2),
        (("recall", "x", "--as-of", "9999-12-31T23:59:59-14:00"), 2),  # past year 9999 in UTC
        (("show", Var("rule"), "--as-of", "0999-12-31T23:00:00-02:00"), 2),
        (("list", "--as-of", "2026-13-45"), 2),
        (("expand", "01ARZ3NDEKTSV4RRFFQ69G5FAV"), 2),
        (("feedback", "01ARZ3NDEKTSV4RRFFQ69G5FAV", "used-successfully"), 2),
        (("feedback", "01ARZ3NDEKTSV4RRFFQ69G5FAV", "great"), 2),
        (("evict", "01ARZ3NDEKTSV4RRFFQ69G5FAV"), 2),
        (("observe", "--type", "context.outcome"), 2),
        (("signal", ""), 2),
        (("ask", ""), 2),
        (("--json", "show", "01ARZ3NDEKTSV4RRFFQ69G5FAV"), 2),
    ):
        result = p.run(*args, code=code)
        assert result.out == "" and result.err.count("\n") == 1, (args, result)
        assert "Traceback" not in result.err
    p.check()


HUGE = 10_000_000  # characters: the secret scan of a body this long took minutes
OVER = f"body is {HUGE:,} characters; the limit is 100,000"  # memory.store.maxBodyChars


def test_a_body_over_the_limit_fails_fast_alike_on_every_route(parity: Parity) -> None:
    """A body of 10M characters is refused in the one line of the store's limit before
    anything reads the whole of it (the secret scan, the statement reader), on every
    route and by every command and tool that writes one, and nothing changes."""
    import asyncio
    import time

    p = parity
    p.run("remember", "Use tabs in Makefiles.", keep={"rule": first_id})
    before = {n: r.cli("--json", "journal").out for n, r in p.routes.items()}
    huge = b"x" * HUGE
    for args, stdin, message in (
        (("remember", "-"), huge, OVER),
        (("--json", "remember", "-", "--kind", "fact"), huge, OVER),
        (("correct", Var("rule"), "-"), huge, OVER),
        (("signal", "-"), huge, f"the statement is {HUGE:,} characters; the limit is 100,000"),
        (("ingest", "-"), json.dumps({"body": "x" * HUGE}).encode(), f"-:1: {OVER}"),
    ):
        started_at = time.monotonic()
        result = p.run(*args, stdin=stdin, code=2)
        took = time.monotonic() - started_at
        said = (
            json.dumps({"error": message, "code": 2})
            if args[0] == "--json"
            else f"cairn: error: {message}"
        )
        assert (result.out, result.err) == ("", said + "\n"), args
        assert took < 60, f"{args}: {took:.1f} s on the three routes"  # minutes each before

    async def mcp(route: Route) -> list[tuple[bool, str]]:
        from mcp import ClientSession, StdioServerParameters
        from mcp.client.stdio import stdio_client

        params = StdioServerParameters(
            command=sys.executable, args=["-m", "cairn.cli.main", "--tenant", route.tenant, "mcp"],
            env=route.subprocess_env(), cwd=str(route.repo),
        )  # fmt: skip
        seen = []
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            rid = p.vars[route.name]["rule"]
            for name, args in (
                ("memory_store", {"body": "x" * HUGE}),
                ("memory_store", {"body": "x" * HUGE, "stated_by_user": True}),
                ("memory_correct", {"record_id": rid, "text": "x" * HUGE}),
            ):
                result = await session.call_tool(name, args)
                text = "\n".join(getattr(c, "text", "") for c in result.content)
                seen.append((result.is_error, text))
        return seen

    async def all_routes() -> list[list[tuple[bool, str]]]:
        return list(await asyncio.gather(*(mcp(r) for r in p.routes.values())))

    COMPARED.add("mcp")
    for route, seen in zip(p.routes, asyncio.run(all_routes()), strict=True):
        assert all(error for error, _ in seen), (route, seen)
        assert [text for _, text in seen] == [f"error: {OVER}"] * 3, (route, seen)
    after = {n: r.cli("--json", "journal").out for n, r in p.routes.items()}
    for n in after:
        a, b = json.loads(before[n]), json.loads(after[n])
        assert a == b, (n, [e for e in b if e not in a], [e for e in a if e not in b])
    p.check()


def test_recall_context_expand_feedback_signal_explain_ask(parity: Parity) -> None:
    p = parity
    p.run("remember", "Always use pnpm to install dependencies.", keep={"rule": first_id})
    p.run("remember", "Run the linter with make lint before committing.", "--scope", "project")
    found = p.run("recall", "how do I install dependencies?")  # the daemon's fast path
    assert "pnpm" in found.out
    p.run("--json", "recall", "how do I install dependencies?")
    p.run("recall", "install dependencies", "--trace", "--limit", "2")
    p.run("recall", "quantum chromodynamics lattice", code=0)
    ctx = p.run("--json", "context", "--task", "install the dependencies and commit",
                "--operation", "commit", keep={"app": lambda r: r.json()["resident"][0]
                                                ["application_id"]})  # fmt: skip
    assert ctx.json()["resident"], ctx
    p.run("context", "--task", "install the dependencies", "--path", "src/app.py")
    p.run("expand", Var("rule"))
    p.run("--json", "expand", Var("rule"), "--task", "install")
    p.run("feedback", Var("app"), "used-successfully")
    p.run("feedback", Var("app"), "used-successfully")  # the same again: a no-op
    p.run("--json", "feedback", Var("app"), "ignored")
    p.run("signal", "In this repo, always run make test before pushing.")
    p.run("--json", "signal", "Don't commit this time, just for now.")
    p.run("signal", "Forget the rule about Fridays.", code=2)  # no clear match: candidates
    p.run("signal", "Actually, use pnpm 10 to install dependencies.")
    asked = p.run("ask", "how do I install dependencies?")
    assert "pnpm" in asked.out
    p.run("--json", "ask", "how do I install dependencies?")
    p.run("ask", "what is the capital of Mongolia?", code=1)
    p.run("explain")
    p.run("--json", "explain")
    p.check()


def test_learning_observe_reflect_sweep_review_evict(parity: Parity) -> None:
    p = parity
    for session in ("s1", "s2", "s3"):
        said = p.run("observe", "--success", "--task", "fix the flaky login test",
                     "--note", "rerun the login test with --count 20 to see the flake",
                     "--topic", "flaky tests", "--session", session, "--tool", "pytest",
                     "--steps", "4")  # fmt: skip
        assert said.out.startswith("observed "), said
    p.run("observe", "--success", "--task", "fix the flaky login test", "--note",
          "rerun the login test with --count 20 to see the flake", "--topic", "flaky tests",
          "--session", "s1", "--tool", "pytest", "--steps", "4")  # fmt: skip
    p.run("--json", "observe", "--failure", "--task", "deploy", "--deterministic",
          "--command", "make test", "--session", "s4")  # fmt: skip
    ran = p.run("reflect")
    assert ran.out.startswith("admitted "), ran
    p.run("--json", "reflect")
    p.run("sweep")
    p.run("--json", "sweep", "--if-due")
    p.run("remember", "Write commit messages in the imperative.", keep={"rule": first_id})
    p.run("evict", Var("rule"))
    p.run("list", "--json")
    p.run("unevict", Var("rule"))
    assert p.run("pin", Var("rule")).out.startswith("pinned ")
    assert p.run("--json", "show", Var("rule")).json()["pinned"] is True
    p.run("unpin", Var("rule"))
    assert p.run("--json", "show", Var("rule")).json()["pinned"] is False
    p.run("pin", "01ARZ3NDEKTSV4RRFFQ69G5FAV", code=2)
    transcript = p.file("talk.json", json.dumps([
        {"role": "user", "content": "Please always write tests with pytest, never unittest."},
        {"role": "assistant", "content": "Understood."},
        {"role": "user", "content": "Our CI runs on GitHub Actions."},
    ]))  # fmt: skip
    stored = p.run("review", transcript, "--format", "messages")
    assert "stored" in stored.out
    p.run("--json", "review", transcript, "--format", "messages")  # again: idempotent
    p.run("review", "-", "--format", "messages", stdin=b"[]")
    ctx = p.run("--json", "context", "--task", "write the tests", keep={
        "app": lambda r: (r.json()["resident"] + r.json()["manifest"])[0]["application_id"]
    })  # fmt: skip
    assert ctx.json()["resident"] + ctx.json()["manifest"]
    p.run("observe", "--type", "context.outcome", "--application", Var("app"), "--outcome",
          "used-successfully", "--session", "s5")  # fmt: skip
    p.run("explain")
    p.check()


def test_export_import_ingest_status(parity: Parity) -> None:
    p = parity
    lines = "\n".join(json.dumps(x) for x in (
        {"body": "The API lives in src/api.", "kind": "fact", "tags": ["layout"]},
        {"body": "Deploys happen on Tuesdays.", "kind": "fact"},
        {"body": "Prefer small pull requests.", "kind": "preference"},
    )) + "\n"  # fmt: skip
    source = p.file("items.jsonl", lines)
    done = p.run("ingest", source)
    assert "3" in done.out, done
    p.run("--json", "ingest", source)  # a re-run adds nothing
    p.run("ingest", p.file("bad.jsonl", '{"body": "ok"}\n{"body": 3}\n'), code=2)
    exported = p.run("export")
    assert exported.out.count("\n") >= 3
    dump = {name: route.cli("export").out for name, route in p.routes.items()}
    for name in p.routes:
        path = p.routes[name].home / f"{p.routes[name].tenant}-dump.jsonl"
        path.write_text(dump[name], encoding="utf-8")
        p.vars[name]["dump"] = str(path)
    p.run("import", Var("dump"))  # into the same tenant: nothing new
    for name, route in p.routes.items():
        p.vars[name]["out"] = str(route.home / f"{route.tenant}-out.jsonl")
    p.run("export", Var("out"))
    files = {n: r.masks.text(Path(p.vars[n]["out"]).read_text(encoding="utf-8"))
             for n, r in p.routes.items()}  # fmt: skip
    assert files["daemon"] == files["local"] == files["remote"], files
    p.run("import", p.file("broken.jsonl", "not json\n"), code=2)
    p.run("list")
    p.check()
    said = {name: route.cli("--json", "status") for name, route in p.routes.items()}
    assert {r.code for r in said.values()} == {0}
    shown = {name: _route_neutral(r.json()) for name, r in said.items()}
    assert shown["local"]["counts"]["records"] == 3
    assert shown["daemon"] == shown["local"] == shown["remote"], shown
    COMPARED.add("status")  # less what names the route itself


def _route_neutral(status: dict[str, Any]) -> dict[str, Any]:
    """A status less what names the route itself: its kind, where it is, whether a
    token is set, the store's file size (the server's is not the tenant's)."""
    out = {k: v for k, v in status.items() if k not in ("provider", "location", "token_configured")}
    out["counts"] = {k: v for k, v in status["counts"].items() if k != "bytes"}
    return out


# -- MCP: the real SDK client against a real `cairn mcp` on each route ------------------


async def _mcp_session(route: Route) -> list[Any]:
    """The same tool calls through one route's ``cairn mcp``: what each answered."""
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(
        command=sys.executable, args=["-m", "cairn.cli.main", "--tenant", route.tenant, "mcp"],
        env=route.subprocess_env(), cwd=str(route.repo),
    )  # fmt: skip
    seen: list[Any] = []

    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        tools = (await session.list_tools()).tools
        seen.append(sorted((t.name, json.dumps(t.input_schema, sort_keys=True)) for t in tools))

        async def call(name: str, args: dict[str, Any]) -> dict[str, Any]:
            result = await session.call_tool(name, args)
            text = "\n".join(getattr(c, "text", "") for c in result.content)
            seen.append([name, result.is_error, text, result.structured_content])
            return result.structured_content or {}

        rule = await call("memory_store", {
            "body": "Always use pnpm to install dependencies in this repository.",
            "kind": "policy", "scope": "project", "stated_by_user": True,
        })  # fmt: skip
        rid = rule["record"]["id"]
        await call("memory_store", {"body": "The staging database is pg-staging-2."})
        await call("memory_store", {"body": "The staging database is pg-staging-2."})
        await call("memory_store", {"body": "   "})
        await call("memory_store", {"body": "x", "kind": "nonsense"})
        await call("memory_store", {"body": "x", "surprise": 1})
        await call("memory_store", {"body": "x", "scope": "project", "pinned": "yes"})
        await call("memory_recall", {"query": "how do I install dependencies?"})
        await call("memory_recall", {"query": "quantum chromodynamics lattice"})
        await call("memory_recall", {"query": 7})
        ctx = await call("memory_context", {"task": "install the dependencies"})
        app_id = (ctx.get("resident", []) + ctx.get("manifest", []))[0]["application_id"]
        await call("memory_context", {"task": "edit it", "paths": ["/elsewhere/x.py"]})
        await call("memory_expand", {"record_id": rid})
        await call("memory_expand", {"record_id": "01ARZ3NDEKTSV4RRFFQ69G5FAV"})
        await call("memory_feedback", {"application_id": app_id, "outcome": "used-successfully"})
        await call("memory_feedback", {"application_id": app_id, "outcome": "used-successfully"})
        await call("memory_feedback", {"application_id": app_id, "outcome": "great"})
        await call("memory_ask", {"question": "how do I install dependencies?"})
        await call("memory_ask", {"question": "what is the capital of Mongolia?"})
        await call("memory_ask", {"question": ""})
        status = await session.call_tool("memory_status", {})
        data = status.structured_content or {}
        # less what names the route itself (its kind, where it is, its token)
        neutral = ("embedder", "embedder_chosen_by", "embedder_reason", "backend", "tenant")
        seen.append(["memory_status", status.is_error, "", {k: data.get(k) for k in neutral}])
        await call("memory_status", {"verbose": True})
        await call("memory_correct", {"record_id": rid, "text": "Always use pnpm 9 here."})
        await call("memory_correct", {"record_id": rid, "text": "Always use pnpm 9 here."})
        await call("memory_correct", {"record_id": "nope", "text": "x"})
        for uri in ("cairn://profile", "cairn://project/rules"):
            found = await session.read_resource(uri)  # type: ignore[arg-type]
            seen.append([uri, [getattr(c, "text", "") for c in found.contents]])
        await call("memory_forget", {"record_id": rid})
        await call("memory_forget", {"record_id": rid, "permanent": True})
        await call("memory_recall", {"query": "how do I install dependencies?"})
    return seen


def test_every_mcp_tool_answers_alike_on_every_route(parity: Parity) -> None:
    import asyncio

    async def all_routes() -> dict[str, list[Any]]:
        runs = [_mcp_session(r) for r in parity.routes.values()]
        return dict(zip(parity.routes, await asyncio.gather(*runs), strict=True))

    seen = asyncio.run(all_routes())
    COMPARED.add("mcp")
    local = seen["local"]
    names = [step[0] for step in local[1:] if isinstance(step, list)]
    assert {n for n in names if n.startswith("memory_")} == {t for t, _ in local[0]}, names
    errors = [step for step in local[1:] if step[0].startswith("memory_") and step[1]]
    assert len(errors) == 11, errors  # the bad calls above, each refused
    assert all(e[2].count("\n") == 0 and "Traceback" not in e[2] for e in errors), errors
    for name in ("daemon", "remote"):
        masks = parity.routes[name].masks
        mine = parity.routes["local"].masks
        for step, (a, b) in enumerate(zip(local, seen[name], strict=True)):
            a_, b_ = mine.value(a), masks.value(b)
            if not alike(a_, b_):
                parity.failures.append(f"mcp step {step} {a[0]}:\n  local {a_!r}\n  {name} {b_!r}")
    parity.check()


# -- every request of the registry, through each route's provider ---------------------

TRANSCRIPT = json.dumps([{"role": "user", "content": "Always write tests with pytest."}])

# request -> its data, given the ids the route answered before; one for every request of
# the registry (a request added without one fails below: add its sample here)
SAMPLES: dict[type[Any], Callable[[dict[str, Any]], dict[str, Any]]] = {
    c.RecallQuery: lambda v: {"query": "how do I install dependencies?"},
    c.TaskQuery: lambda v: {"task": "install the dependencies"},
    c.ExpandQuery: lambda v: {"record_id": v["rid"], "task": "install"},
    c.ListQuery: lambda v: {"order": "newest", "limit": 5},
    c.ShowQuery: lambda v: {"record_id": v["rid"]},
    c.HistoryQuery: lambda v: {"record_id": v["rid"]},
    c.JournalQuery: lambda v: {"newest_first": True, "limit": 3},
    c.TombstonesQuery: lambda v: {},
    c.ApplicationsQuery: lambda v: {"record_id": v["rid"]},
    c.ExplainQuery: lambda v: {},
    c.ExportQuery: lambda v: {},
    pc.ProjectsQuery: lambda v: {},
    pc.NameProjectRequest: lambda v: {"project_id": "git:00aa11bb22cc33dd", "name": "parity-app"},
    lc.AskQuery: lambda v: {"question": "how do I install dependencies?"},
    lc.TelemetryQuery: lambda v: {"runs": 2},
    c.RememberRequest: lambda v: {"body": "Prefer small pull requests.", "tags": ["review"]},
    c.StoreRequest: lambda v: {"body": "The API lives in src/api.", "kind": "fact"},
    c.IngestRequest: lambda v: {
        "items": [{"body": "Deploys are on Tuesdays."}, {"body": "CI runs on GitHub Actions."}],
        "item_keys": ["i1", "i2"],
    },
    c.CorrectRequest: lambda v: {"record_id": v["rid"], "text": "Always use pnpm 9."},
    c.ForgetRequest: lambda v: {"record_id": v["rid"]},
    c.RestoreRequest: lambda v: {"record_id": v["rid"]},
    c.EvictRequest: lambda v: {"record_id": v["rid"]},
    c.PinRequest: lambda v: {"record_id": v["rid"]},
    c.FeedbackRequest: lambda v: {"application_id": v["app"], "outcome": "used-successfully"},
    c.SignalRequest: lambda v: {"text": "From now on, always use tabs in Makefiles."},
    c.ImportRequest: lambda v: {"lines": v["export"], "source": "parity"},
    c.RebuildRequest: lambda v: {},
    lc.ObserveRequest: lambda v: {
        "success": True,
        "task": "fix the flaky test",
        "note": "rerun it twenty times",
        "session_id": "s1",
    },
    lc.ReflectRequest: lambda v: {},
    lc.SweepRequest: lambda v: {},
    lc.ReviewRequest: lambda v: {"transcript": TRANSCRIPT, "format": "messages"},
    lc.DeltaRequest: lambda v: {
        "op": "create",
        "statement": "Flaky tests: rerun them.",
        "title": "flaky tests",
        "evidence": v["evidence"],  # a delta cites corroborating observations
    },
}


def _providers(routes: Routes, tenant: str) -> Iterator[tuple[str, Any]]:
    from cairn.cli.app import open_memory
    from cairn.config import resolve_config
    from cairn.daemon.client import find_daemon

    for name, home in (("local", routes.local_home), ("daemon", routes.daemon_home),
                       ("remote", routes.remote_home)):  # fmt: skip
        daemon = find_daemon(home, None) if name == "daemon" else None
        assert (daemon is not None) == (name == "daemon")
        provider = open_memory(resolve_config(home, None), home, tenant, "default", daemon=daemon)
        try:
            yield name, provider
        finally:
            provider.close()


def test_every_request_of_the_registry_is_served_alike_on_every_route(
    routes: Routes, monkeypatch: pytest.MonkeyPatch
) -> None:
    missing = [r.request.__name__ for r in registry.ROUTES if r.request not in SAMPLES]
    assert not missing, f"no sample for {missing}: add one to SAMPLES"
    bound = routes.bind()
    tenant = bound["local"].tenant
    monkeypatch.setenv(TOKEN_ENV, bound["remote"].env[TOKEN_ENV])
    seen: dict[str, list[Any]] = {}
    for name, provider in _providers(routes, tenant):
        made = provider.apply(c.RememberRequest(
            body="Always use pnpm to install dependencies.", idempotency_key="setup"
        ))  # fmt: skip
        ids: dict[str, Any] = {"rid": made.record.id}
        ids["export"] = provider.query(c.ExportQuery()).lines
        ctx = provider.query(c.TaskQuery(task="install the dependencies"))
        ids["app"] = ctx.resident[0].application_id
        cited = [
            lc.ObserveRequest(idempotency_key=f"evidence-{i}", success=True,
                              note="Flaky tests: rerun them.", episode_id=f"flaky-{i}")
            for i in range(2)
        ]  # fmt: skip
        ids["evidence"] = [provider.apply(r).event_id for r in cited]
        answers: list[Any] = []
        for route in registry.ROUTES:
            for tag in route.names:
                data = {route.tag: tag, **SAMPLES[route.request](ids)}
                if route.kind == "apply":
                    data["idempotency_key"] = f"parity-{tag}"
                request = route.request.model_validate(data)
                call = provider.query if route.kind == "query" else provider.apply
                try:
                    answer = call(request)
                except CairnError as exc:
                    answers.append([tag, type(exc).__name__, str(exc)])
                    continue
                assert isinstance(answer, route.answer), (name, tag, answer)
                answers.append([tag, type(answer).__name__, answer.model_dump(mode="json")])
        seen[name] = answers
    refused = [a for a in seen["local"] if isinstance(a[2], str)]
    assert not refused, refused  # every sample is served, none refused
    served = {a[0] for a in seen["local"]}
    assert served == set(registry.QUERIES) | set(registry.MUTATIONS)
    masks = {name: Masks(()) for name in seen}
    for name in ("daemon", "remote"):
        for a, b in zip(seen["local"], seen[name], strict=True):
            a_, b_ = masks["local"].value(a), masks[name].value(b)
            assert alike(a_, b_), f"{a[0]}:\n  local {a_!r}\n  {name} {b_!r}"


# -- input the services take as the contract checked it -------------------------------------

LINE = "the character U+000A (it must be one line)"
# (request, its fields ("rid": the route's memory, "app": its application), the one line)
REFUSED: list[tuple[type[Any], dict[str, Any], str]] = [
    (c.ListQuery, {"tag": "a\nb"}, f"tag contains {LINE}"),
    (c.ListQuery, {"tag": 5}, "tag must be text, not an integer"),
    (c.ListQuery, {"text": "a\x00b"}, "text contains a NUL byte"),
    (c.ListQuery, {"project_id": "x\ny"}, f"project id contains {LINE}"),
    (c.ListQuery, {"as_of": "2026-13-45"}, "as_of is not an ISO-8601 time: '2026-13-45'"),
    (c.JournalQuery, {"session_id": "a\nb"}, f"session id contains {LINE}"),
    (c.JournalQuery, {"episode_id": "\x07"}, "episode id contains the character U+0007"),
    (c.ShowQuery, {"record_id": "\x07abc"}, "not a memory id: '\\x07abc'"),
    (c.ShowQuery, {"record_id": "  "}, "a memory id is needed"),
    (c.ShowQuery, {"record_id": "rid", "as_of": "soon"}, "as_of is not an ISO-8601 time: 'soon'"),
    (c.RecallQuery, {"query": "x", "as_of": "not a time"},
     "as_of is not an ISO-8601 time: 'not a time'"),
    (c.ForgetRequest, {"record_id": "rid", "reason": "x" * 300},
     f"unknown reason {'x' * 300!r:.60} (expected one of: 'user-remove', 'markdown-delete' or "
     "'negative-feedback')"),
    (c.RememberRequest, {"body": "Use tabs.", "idempotency_key": "a\nb"},
     f"idempotency key contains {LINE}"),
    (c.FeedbackRequest, {"application_id": "app", "outcome": "ignored", "sender": "a\x00b"},
     "sender contains a NUL byte"),
    (c.FeedbackRequest, {"application_id": "app", "outcome": "ignored", "session_id": "a b"},
     "session id 'a b' must be printable, without spaces"),
    (c.FeedbackRequest, {"application_id": "\x01", "outcome": "ignored"},
     "not an application id: '\\x01'"),
    (lc.ObserveRequest, {"success": True, "occurred_at": "yesterday"},
     "occurred_at is not an ISO-8601 time: 'yesterday'"),
    (lc.ObserveRequest, {"success": True, "session_id": "a b"},
     "session id 'a b' must be printable, without spaces"),
    (lc.DeltaRequest, {"op": "create", "statement": "Rerun.", "project_id": "x\ny"},
     f"project_id contains {LINE}"),
    (lc.DeltaRequest, {"op": "create", "statement": "Rerun.", "evidence": ["e"] * 1001},
     "evidence has 1,001 items; the limit is 1,000"),
    (lc.DeltaRequest, {"op": "create", "statement": "Rerun.", "title": "a\nb"},
     f"title contains {LINE}"),
    (lc.ReviewRequest, {"transcript": "user: hi\x00"}, "transcript contains a NUL byte"),
    (lc.AskQuery, {"question": "why?", "project_id": "x\ny"}, f"project id contains {LINE}"),
    (pc.NameProjectRequest, {"project_id": "nope", "name": "app"}, "not a project id: 'nope'"),
    (pc.NameProjectRequest, {"project_id": "git:0123456789abcdef", "name": "a\nb"},
     f"project name contains {LINE}"),
    (c.ImportRequest, {"lines": [], "source": "a\nb"}, f"import source contains {LINE}"),
    (c.ListQuery, {"agent": "a/b"}, "invalid agent name 'a/b'"),
    (c.RememberRequest, {"body": "Use tabs.", "agent": ".."}, "invalid agent name '..'"),
]  # fmt: skip


# (a method of cairn.Memory, its arguments, the one line)
API_REFUSED: list[tuple[str, tuple[str, ...], dict[str, Any], str]] = [
    ("list", (), {"tag": "a\nb"}, f"tag contains {LINE}"),
    ("get", ("\x07abc",), {}, "not a memory id: '\\x07abc'"),
    ("forget", ("rid",), {"reason": "x" * 300}, REFUSED[11][2]),
    ("remember", ("Use tabs.",), {"event_id": "a\nb"}, f"idempotency key contains {LINE}"),
    ("feedback", ("app", "ignored"), {"sender": "a\x00b"}, "sender contains a NUL byte"),
]


def _journal(client: Any) -> list[str]:
    return [e.event_id for e in client.value(c.JournalQuery)]


def test_bad_ids_filters_keys_and_reasons_are_refused_alike_on_every_route(
    parity: Parity, routes: Routes, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the services take as the contract checked it (ids, filters, times, keys, a
    forget's reason, who reported an outcome, a delta's fields, a project's name) is refused
    in the contract's one line, alike in process, through the daemon, through the remote
    provider, as raw HTTP to the server and by the command line; and nothing changes."""
    from cairn.errors import InvalidInput
    from cairn.memory import Memory
    from cairn.provider.client import Client

    tenant = parity.routes["local"].tenant
    monkeypatch.setenv(TOKEN_ENV, parity.routes["remote"].env[TOKEN_ENV])
    wrong: list[str] = []
    for name, provider in _providers(routes, tenant):
        client = Client(provider)
        made = provider.apply(c.RememberRequest(body="Always use pnpm.", idempotency_key="r"))
        ids = {"rid": made.record.id}
        ids["app"] = (
            provider.query(c.TaskQuery(task="install with pnpm")).resident[0].application_id
        )
        before = _journal(client)
        for model, fields, message in REFUSED:
            data = {k: ids.get(v, v) if isinstance(v, str) else v for k, v in fields.items()}
            try:
                if registry.BY_REQUEST[model].kind == "query":
                    client.query(model, object, **data)
                else:
                    client.apply(model, object, data.pop("idempotency_key", None), **data)
            except InvalidInput as exc:
                if str(exc) != message:
                    wrong.append(f"{name} {model.__name__}: {exc}")
            else:
                wrong.append(f"{name} {model.__name__} {fields}: served")
        api = Memory(provider)  # the Python API over the same route
        for method, args, keywords, message in API_REFUSED:
            try:
                getattr(api, method)(*(ids.get(a, a) for a in args), **keywords)
            except InvalidInput as exc:
                if str(exc) != message:
                    wrong.append(f"{name} API {method}: {exc}")
            else:
                wrong.append(f"{name} API {method} {keywords}: served")
        if name == "remote":  # the server's own parse, as JSON from any HTTP client
            http = routes.server.client(parity.routes["remote"].env[TOKEN_ENV])
            for model, fields, message in REFUSED:
                route = registry.BY_REQUEST[model]
                body = {k: ids.get(v, v) if isinstance(v, str) else v for k, v in fields.items()}
                body[route.tag] = route.names[0]
                if route.kind == "apply":
                    body.setdefault("idempotency_key", f"http-{uuid.uuid4().hex}")
                reply = http.post(route.path, json=body)
                said = (reply.status_code, reply.json().get("error"))
                if said != (400, message):
                    wrong.append(f"HTTP {model.__name__}: {said}")
        if _journal(client) != before:
            wrong.append(f"{name}: the journal changed")
    journals = {n: r.cli("--json", "journal").out for n, r in parity.routes.items()}
    for args, message in (
        (("list", "--tag", "a\nb"), f"tag contains {LINE}"),
        (("show", "\x07abc"), "not a memory id: '\\x07abc'"),
        (("observe", "--success", "--event-id", "a\nb"), f"idempotency key contains {LINE}"),
        (("observe", "--success", "--session", "a b"),
         "session id 'a b' must be printable, without spaces"),
    ):  # fmt: skip
        for name, route in parity.routes.items():  # each route answers exactly this
            # in the repository (which the command would name, a write) and outside it
            for where in (route.repo, route.home):
                result = route.cli(*args, cwd=where)
                if result != Result(2, "", f"cairn: error: {message}\n"):
                    wrong.append(f"cli on {name} {args} in {where.name}: {result}")
    for name, route in parity.routes.items():
        now = route.cli("--json", "journal").out
        if now != journals[name]:
            added = [e for e in json.loads(now) if e not in json.loads(journals[name])]
            wrong.append(f"cli on {name}: the journal changed: {added}")
    assert not wrong, "\n".join(wrong)


def _markdown(route: Route) -> dict[str, str]:
    """The Markdown files of the route's tenant in its home, masked (path -> text)."""
    folder = route.home / "tenants" / route.tenant
    return {
        str(path.relative_to(folder)): route.masks.text(path.read_text(encoding="utf-8"))
        for path in sorted(folder.rglob("*.md"))
    }


def test_the_markdown_projection_is_kept_alike_in_process_and_through_the_daemon(
    parity: Parity,
) -> None:
    """The daemon is its home's engine: it keeps the home's Markdown as the command line
    does in-process (a permanent forget purges it there too), and its file is the home's
    to check; a remote memory has neither here, and says so in one line."""
    p = parity
    remote = p.routes.pop("remote")
    for args, why in (
        (("sync",), "with memory.remote the memory is the server's"),
        (("rebuild", "--from-markdown"), "with memory.remote the memory is the server's"),
        (("doctor",), "check it where it is served"),  # the store's file is the server's
        (("reembed",), "check it where it is served"),  # and so is its embedder
    ):
        refused = remote.cli(*args)
        assert refused.code == 2 and refused.out == "", refused
        assert why in refused.err and refused.err.count("\n") == 1, refused
    p.run("remember", "Always use pnpm to install dependencies.", keep={"rule": first_id})
    p.run("remember", "Keep secrets out of the repository.", "--scope", "project",
          keep={"secret": first_id})  # fmt: skip
    files = {name: _markdown(route) for name, route in p.routes.items()}
    assert any("Always use pnpm" in text for text in files["local"].values()), files
    assert files["daemon"] == files["local"]
    p.run("sync")
    p.run("--json", "forget", "--permanent", Var("secret"))
    files = {name: _markdown(route) for name, route in p.routes.items()}
    assert not any("Keep secrets" in text for text in files["local"].values()), files
    assert files["daemon"] == files["local"]
    p.run("rebuild")
    p.run("rebuild", "--from-markdown")
    p.run("list")
    # migrate is the operator's, for a PostgreSQL store: a SQLite home refuses it alike
    p.routes["remote"] = remote
    migrated = p.run("migrate", "--dry-run", code=2)
    assert migrated.code == 2 and "PostgreSQL" in migrated.err, migrated
    remote = p.routes.pop("remote")
    checked = p.run("doctor")  # the file the daemon serves is this home's, as in-process
    assert "integrity  SQLite's integrity_check: ok" in checked.out, checked
    # The daemon holds the model in memory: a switch waits until it is stopped.
    switched = {name: route.cli("reembed") for name, route in p.routes.items()}
    assert switched["local"].code == 0 and "nothing to do" in switched["local"].out, switched
    assert switched["daemon"].code == 2 and "cairn daemon stop" in switched["daemon"].err
    COMPARED.add("reembed")
    p.check()


# -- the agent hooks: in-process, run whole by the daemon, over the remote provider -----


def test_the_agent_hooks_do_alike_on_every_route(parity: Parity, routes: Routes) -> None:
    from hook_events import event, transcript_lines

    p = parity
    transcript = routes.root / "session.jsonl"
    transcript.write_text("\n".join(transcript_lines()) + "\n", encoding="utf-8")

    def hook(kind: str, name: str, **changes: Any) -> Result:
        data = event(name, cwd=str(routes.repo), **changes)
        return p.run("hook", kind, stdin=json.dumps(data).encode())

    p.run("remember", "Always use pnpm to install dependencies.")
    started_ = hook("session-start", "session-start")
    assert "Always use pnpm" in started_.out, started_
    assert "always run the linter" in hook("prompt", "prompt-rule").out.lower()
    listed = p.run("--json", "list")
    assert any("linter" in m["body"] for m in listed.json()), listed
    assert any("run the linter" in text for text in _hooks_markdown(p).values())
    hook("prompt", "prompt-task")
    hook("prompt", "prompt-one-off")
    hook("prompt", "prompt-forget")
    hook("prompt", "prompt-nothing")
    hook("stop", "stop", transcript_path=str(transcript))
    hook("stop", "stop", transcript_path=str(transcript))  # the same stop: nothing more
    hook("session-start", "session-start-compact")
    hook("prompt", "prompt-rule", prompt="not json \x00 at all")
    _hooks_markdown(p)  # and after the last of them
    p.run("--json", "list", "--all")
    journals = {name: route.cli("--json", "journal") for name, route in p.routes.items()}
    COMPARED.add("journal")
    assert "episode.completed" in {e["type"] for e in journals["local"].json()}
    # The one deliberate difference: an outcome is attributed by the process that serves
    # it (SPEC §6). In-process and in the daemon the hook itself does (the host's session,
    # and it read the verifier's exit code); a server attributes what a remote client
    # sends to the client's token and takes no caller's word that a verifier ran.
    remote = journals["remote"].json()
    for seen in remote:
        if seen["type"] == "episode.completed":
            assert seen["session_id"].startswith("token:tok_"), seen
            assert seen["payload"]["deterministic"] is False, seen
            assert seen["payload"]["provenance"]["session"] == seen["session_id"], seen
    local = {e["event_id"]: e for e in journals["local"].json()}
    for seen in remote:
        if seen["type"] == "episode.completed":
            mine = local.get(seen["event_id"], {})
            seen["session_id"] = mine.get("session_id")
            for name in ("deterministic", "provenance"):
                seen["payload"][name] = mine.get("payload", {}).get(name)
    journals["remote"] = Result(0, json.dumps(remote), journals["remote"].err)
    found = differences(journals, {n: r.masks for n, r in p.routes.items()})
    assert not found, found
    p.run("--json", "explain")
    # a hook shows the host nothing when it fails; it logs the error, on every route alike
    logged = {name: _hook_errors(route) for name, route in p.routes.items()}
    assert logged["local"] == ["cairn.errors.InvalidInput: task contains a NUL byte"], logged
    assert logged["daemon"] == logged["local"] == logged["remote"], logged
    p.check()


def _hooks_markdown(p: Parity) -> dict[str, str]:
    """The home's Markdown after the hooks so far, alike in-process and in the daemon. The
    daemon refreshes it right after a hook's reply (the host does not wait for the files):
    in a moment its files are the in-process hooks' files."""
    files = {name: _markdown(p.routes[name]) for name in ("local", "daemon")}
    deadline = time.monotonic() + 30
    while files["daemon"] != files["local"] and time.monotonic() < deadline:
        time.sleep(0.05)
        files["daemon"] = _markdown(p.routes["daemon"])
    assert files["daemon"] == files["local"]
    return files["local"]


def _hook_errors(route: Route) -> list[str]:
    log = route.home / "logs" / "hooks.log"
    text = log.read_text(encoding="utf-8") if log.exists() else ""
    return [line for line in text.splitlines() if line.startswith("cairn.errors.")]


def test_the_entry_point_in_a_process_of_its_own_alike(parity: Parity) -> None:
    """The installed ``cairn`` (its fast paths first) as a real process on each route."""
    import subprocess

    def real(*args: str) -> dict[str, Result]:
        out = {}
        for name, route in parity.routes.items():
            proc = subprocess.run(
                [sys.executable, "-m", "cairn.cli.fast", "--tenant", route.tenant, *args],
                env=route.subprocess_env(), cwd=route.repo, capture_output=True, timeout=120,
                check=False,
            )  # fmt: skip
            out[name] = Result(proc.returncode, proc.stdout.decode(), proc.stderr.decode())
        found = differences(out, {n: r.masks for n, r in parity.routes.items()})
        if found:
            parity.failures.append(f"cairn {' '.join(args)}:\n  " + "\n  ".join(found))
        return out

    assert parity.run("remember", "Always use pnpm to install dependencies.").code == 0
    recalled = real("recall", "how do I install dependencies?")  # the daemon's fast path
    assert "Always use pnpm" in recalled["local"].out
    refused = real("show", "01ARZ3NDEKTSV4RRFFQ69G5FAV")["local"]
    assert refused.code == 2 and refused.err.startswith("cairn: error:"), refused
    parity.check()


def test_concurrent_writes_through_the_daemon_each_refresh_their_markdown(
    routes: Routes,
) -> None:
    """The daemon answers on several threads: every write's Markdown is rewritten, none
    skipped because another tenant's rewrite was under way."""
    from concurrent.futures import ThreadPoolExecutor

    from cairn.daemon.paths import daemon_paths
    from cairn.provider.remote import RemoteProvider

    socket = str(daemon_paths(routes.daemon_home).socket)
    tenants = [f"c{n}{uuid.uuid4().hex[:6]}" for n in range(8)]

    def write(tenant: str) -> str:
        provider = RemoteProvider.over_socket(socket, tenant=tenant, agent="default")
        try:
            for n in range(3):
                body = f"Rule {n} of tenant {tenant}: always write tests first."
                provider.apply(c.RememberRequest(body=body, idempotency_key=f"{tenant}-{n}"))
        finally:
            provider.close()
        return tenant

    with ThreadPoolExecutor(8) as pool:
        done = list(pool.map(write, tenants))
    assert done == tenants
    for tenant in tenants:
        profile = routes.daemon_home / "tenants" / tenant / "default" / "profile.md"
        text = profile.read_text(encoding="utf-8")
        assert all(f"Rule {n} of tenant {tenant}" in text for n in range(3)), (tenant, text)


def test_every_command_is_compared_on_the_routes(request: pytest.FixtureRequest) -> None:
    """Runs last: a command added to the command line without a parity step fails here."""
    here = [i for i in request.session.items if i.path == request.path]
    if len(here) < len(_MODULE_TESTS):
        pytest.skip("only with the whole module (the other tests compare the commands)")
    missing = sorted(set(COMMAND_MODULES) - LOCAL_ONLY - COMPARED)
    assert not missing, f"no route-parity step runs {missing}: add one to this module"


_MODULE_TESTS = [name for name in dict(globals()) if name.startswith("test_")]

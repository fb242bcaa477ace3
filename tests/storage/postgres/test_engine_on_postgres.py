"""The whole engine on PostgreSQL, chosen by ``memory.store.url``: the Python API's own tests
run again here with the ``mem`` fixture on a PostgreSQL schema, and what only a shared
database can show (two processes on one store) is tried as well."""

from __future__ import annotations

import inspect
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import test_memory
import test_tasks
from cairn import Memory
from cairn.adapters.hashing import HashingEmbedder
from cairn.errors import ConfigError, InvalidInput
from conftest import FrozenClock
from pg_support import fresh_schema


def pg_config(url: str, schema: str, **store: Any) -> dict[str, Any]:
    return {"memory": {"store": {"url": url, "postgresSchema": schema, **store}}}


@pytest.fixture
def place() -> Iterator[tuple[str, str]]:
    with fresh_schema("api") as made:
        yield made


@pytest.fixture
def mem(
    place: tuple[str, str],
    embedder: HashingEmbedder,
    clock: FrozenClock,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[Memory]:
    monkeypatch.setenv("CAIRN_HOME", str(tmp_path / "home"))  # the Markdown files go here
    memory = Memory.open(config=pg_config(*place), embedder=embedder, clock=clock)
    assert memory.status().backend == "postgresql"
    yield memory
    memory.close()


# The API's tests that take ``mem`` run here on PostgreSQL (same functions, this fixture).
for _module in (test_memory, test_tasks):
    for _name, _test in vars(_module).items():
        if _name.startswith("test_") and "mem" in inspect.signature(_test).parameters:
            globals()[_name] = _test


def test_two_processes_on_one_schema_see_each_others_writes_at_once(
    place: tuple[str, str], embedder: HashingEmbedder, clock: FrozenClock
) -> None:
    config = pg_config(*place, poolSize=2)
    first = Memory.open(config=config, embedder=embedder, clock=clock)
    second = Memory.open(config=config, embedder=embedder, clock=clock)
    written = first.remember("The release train leaves every Tuesday at noon")
    found = second.recall("when does the release train leave")
    assert [c.record.id for c in found.ranked][:1] == [written.id]
    second.forget(written.id, permanent=True)
    assert not first.recall("release train Tuesday").ranked
    assert first.status().counts["records"] == 0
    first.close()
    second.close()


def test_a_sqlite_url_names_the_file(tmp_path: Path, embedder: HashingEmbedder) -> None:
    path = tmp_path / "by-url" / "memory.db"
    config = {"memory": {"store": {"url": f"sqlite:///{path}"}}}
    with Memory.open(tmp_path / "ignored.db", config=config, embedder=embedder) as mem:
        mem.remember("stored through the URL")
        assert mem.status().backend == "sqlite"
    assert path.exists() and not (tmp_path / "ignored.db").exists()


def test_a_store_of_another_embedder_is_refused(place: tuple[str, str]) -> None:
    with Memory.open(config=pg_config(*place), embedder=HashingEmbedder()) as mem:
        mem.remember("embedded with the hashing model")

    class Other(HashingEmbedder):
        @property
        def model_id(self) -> str:
            return "another-model"

    with pytest.raises(InvalidInput, match="holds vectors of the embedder 'hashing-"):
        Memory.open(config=pg_config(*place), embedder=Other())


def test_without_the_postgres_extra_the_error_says_what_to_install(
    place: tuple[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "cairn.storage.postgres", None)
    with pytest.raises(ConfigError, match=r"needs the postgres extra \(pip install"):
        Memory.open(config=pg_config(*place), embedder=HashingEmbedder())


@pytest.mark.parametrize(
    ("store", "message"),
    [
        ({"url": "mysql://db/x"}, "memory.store.url: .*expected sqlite:///"),
        ({"url": "sqlite:///"}, "memory.store.url: .*expected sqlite:///"),
        ({"url": "sqlite:///a.db", "path": "b.db"}, "memory.store: .*two stores"),
        ({"url": "postgresql://h/d", "postgresSchema": "Bad-Name"}, "memory.store.postgresSchema"),
    ],
)
def test_a_bad_store_setting_is_one_config_error_naming_it(
    store: dict[str, Any], message: str
) -> None:
    with pytest.raises(ConfigError, match=message):
        Memory.open(config={"memory": {"store": store}}, embedder=HashingEmbedder())

"""Hostile Python values at the API, the ones JSON cannot carry: each call raises one
InvalidInput (never TypeError, AttributeError, OverflowError, RecursionError, or a raw
sqlite3 error) and changes nothing."""

from __future__ import annotations

import io
from collections.abc import Callable, Iterator
from datetime import UTC, date, datetime, timedelta, timezone
from decimal import Decimal
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from cairn import InvalidInput, Memory, MemoryInput

Call = Callable[[Memory, dict[str, str]], Any]


def _cyclic() -> dict[str, Any]:
    loop: dict[str, Any] = {}
    loop["again"] = loop
    return loop


class Text(str):
    """A subclass of str, as some libraries hand out."""


CALLS: list[tuple[str, Call]] = [
    ("body bytes", lambda m, ids: m.store(b"bytes body")),  # type: ignore[arg-type]
    ("body None", lambda m, ids: m.store(None)),  # type: ignore[arg-type]
    ("body list", lambda m, ids: m.store(["x"])),  # type: ignore[arg-type]
    ("tags set", lambda m, ids: m.store("x", tags={"a", "b"})),  # type: ignore[arg-type]
    ("tags str", lambda m, ids: m.store("x", tags="abc")),
    ("tags generator", lambda m, ids: m.store("x", tags=(t for t in "ab"))),  # type: ignore[arg-type]
    ("tags bytes", lambda m, ids: m.store("x", tags=[b"a"])),  # type: ignore[list-item]
    ("paths str", lambda m, ids: m.store("x", path_patterns="src/**")),
    ("source cyclic", lambda m, ids: m.store("x", source=_cyclic())),
    ("source list", lambda m, ids: m.store("x", source=[("who", "me")])),  # type: ignore[arg-type]
    ("source set value", lambda m, ids: m.store("x", source={"a": {1, 2}})),
    ("source bytes value", lambda m, ids: m.store("x", source={"a": b"x"})),
    ("source nan", lambda m, ids: m.store("x", source={"a": float("nan")})),
    ("source int key", lambda m, ids: m.store("x", source={1: "x"})),  # type: ignore[dict-item]
    ("source decimal", lambda m, ids: m.store("x", source={"a": Decimal("1.5")})),
    ("pinned str", lambda m, ids: m.store("x", pinned="no")),  # type: ignore[arg-type]
    ("pinned int", lambda m, ids: m.store("x", pinned=1)),  # type: ignore[arg-type]
    ("pinned numpy", lambda m, ids: m.store("x", pinned=np.bool_(True))),  # type: ignore[arg-type]
    ("time year 1", lambda m, ids: m.store("x", occurred_at=datetime(1, 1, 1))),
    ("time date 999", lambda m, ids: m.store("x", occurred_at=date(999, 12, 31))),
    (
        "time max west",
        lambda m, ids: m.store(
            "x", occurred_at=datetime.max.replace(tzinfo=timezone(timedelta(hours=-3)))
        ),
    ),
    ("time int", lambda m, ids: m.store("x", occurred_at=1683554160)),  # type: ignore[arg-type]
    ("time float", lambda m, ids: m.store("x", occurred_at=1.5)),  # type: ignore[arg-type]
    ("trust list", lambda m, ids: m.store("x", trust=["system"])),  # type: ignore[arg-type]
    ("origin bad", lambda m, ids: m.store("x", origin="root")),
    ("event id int", lambda m, ids: m.store("x", event_id=5)),  # type: ignore[arg-type]
    ("event id newline", lambda m, ids: m.store("x", event_id="a\nb")),
    ("tenant empty", lambda m, ids: m.for_tenant("")),
    ("tenant slash", lambda m, ids: m.for_tenant("a/b")),
    ("tenant 300", lambda m, ids: m.for_tenant("t" * 300)),
    ("agent slash", lambda m, ids: m.store("x", agent="a/b")),
    ("agent zero width", lambda m, ids: m.recall("x", agent="a\u200bb")),
    ("unknown field", lambda m, ids: m.store("x", tenant="other")),
    ("agent dotdot", lambda m, ids: m.store("x", agent="..")),
    ("tenant int", lambda m, ids: m.for_tenant(5)),  # type: ignore[arg-type]
    ("position float", lambda m, ids: m.store_many([MemoryInput("x", position=1.0)])),  # type: ignore[arg-type]
    ("position bool", lambda m, ids: m.store_many([MemoryInput("x", position=True)])),
    (
        "position numpy big",
        lambda m, ids: m.store_many([MemoryInput("x", position=np.int64(2**40))]),
    ),  # type: ignore[arg-type]
    ("position decimal", lambda m, ids: m.store_many([MemoryInput("x", position=Decimal(3))])),  # type: ignore[arg-type]
    ("position inf", lambda m, ids: m.store_many([MemoryInput("x", position=float("inf"))])),  # type: ignore[arg-type]
    ("item dict", lambda m, ids: m.store_many([{"body": "x"}])),  # type: ignore[list-item]
    ("item str", lambda m, ids: m.store_many(["x"])),  # type: ignore[list-item]
    ("batch 0", lambda m, ids: m.store_many([MemoryInput("x")], batch_size=0)),
    ("batch -1", lambda m, ids: m.store_many([MemoryInput("x")], batch_size=-1)),
    ("batch bool", lambda m, ids: m.store_many([MemoryInput("x")], batch_size=True)),
    ("batch float", lambda m, ids: m.store_many([MemoryInput("x")], batch_size=1.5)),  # type: ignore[arg-type]
    (
        "second item bad",
        lambda m, ids: m.store_many([MemoryInput("ok"), MemoryInput("x", tags="ab")]),
    ),
    ("get None", lambda m, ids: m.get(None)),  # type: ignore[arg-type]
    ("get int", lambda m, ids: m.get(5)),  # type: ignore[arg-type]
    ("get bytes", lambda m, ids: m.get(ids["alpha"].encode())),  # type: ignore[arg-type]
    ("get as_of old", lambda m, ids: m.get(ids["alpha"], as_of="0999-01-01")),
    ("get as_of int", lambda m, ids: m.get(ids["alpha"], as_of=5)),  # type: ignore[arg-type]
    ("history None", lambda m, ids: m.history(None)),  # type: ignore[arg-type]
    ("history nul", lambda m, ids: m.history("a\x00")),
    ("list limit huge", lambda m, ids: m.list(limit=10**30)),
    ("list limit 0", lambda m, ids: m.list(limit=0)),
    ("list limit str", lambda m, ids: m.list(limit="5")),  # type: ignore[arg-type]
    ("list limit float", lambda m, ids: m.list(limit=5.0)),  # type: ignore[arg-type]
    ("list forgotten str", lambda m, ids: m.list(include_forgotten="no")),  # type: ignore[arg-type]
    ("list as_of future", lambda m, ids: m.list(as_of="10000-01-01")),
    ("list project nul", lambda m, ids: m.list(project_id="a\x00")),
    ("recall None", lambda m, ids: m.recall(None)),  # type: ignore[arg-type]
    ("recall nul", lambda m, ids: m.recall("a\x00")),
    ("recall huge", lambda m, ids: m.recall("x" * 10_001)),
    ("recall results huge", lambda m, ids: m.recall("x", max_results=10**20)),
    ("recall results bool", lambda m, ids: m.recall("x", max_results=True)),
    ("recall chars float", lambda m, ids: m.recall("x", max_chars=float("inf"))),  # type: ignore[arg-type]
    ("recall trust str", lambda m, ids: m.recall("x", include_trust="system")),
    ("recall trust bad", lambda m, ids: m.recall("x", include_trust=["root"])),
    ("correct body None", lambda m, ids: m.correct(ids["alpha"], None)),  # type: ignore[arg-type]
    ("correct title nl", lambda m, ids: m.correct(ids["alpha"], "x", title="a\nb")),
    ("correct marker", lambda m, ids: m.correct(ids["alpha"], "[permanently forgotten]")),
    ("correct authority", lambda m, ids: m.correct(ids["alpha"], "x", authority="god")),
    ("correct other tenant", lambda m, ids: m.correct(ids["other"], "x")),
    ("forget permanent str", lambda m, ids: m.forget(ids["alpha"], permanent="no")),  # type: ignore[arg-type]
    ("forget reason", lambda m, ids: m.forget(ids["alpha"], reason="spite")),
    ("forget other tenant", lambda m, ids: m.forget(ids["other"], permanent=True)),
    ("restore live", lambda m, ids: m.restore(ids["alpha"])),
    ("context paths str", lambda m, ids: m.context("task", paths="src/a.py")),
    ("context paths nul", lambda m, ids: m.context("task", paths=["a\x00"])),
    ("context op list", lambda m, ids: m.context("task", operation=["edit"])),  # type: ignore[arg-type]
    ("context budget neg", lambda m, ids: m.context("task", task_budget=-1)),
    ("context budget str", lambda m, ids: m.context("task", profile_budget="9")),  # type: ignore[arg-type]
    ("context session sp", lambda m, ids: m.context("task", session_id="a b")),
    ("context task None", lambda m, ids: m.context(None)),  # type: ignore[arg-type]
    ("expand task nul", lambda m, ids: m.expand(ids["alpha"], task="\x00")),
    ("feedback app None", lambda m, ids: m.feedback(None, "ignored")),  # type: ignore[arg-type]
    ("feedback outcome", lambda m, ids: m.feedback(ids["app"], "great")),
    ("signal bytes", lambda m, ids: m.signal(b"always x")),  # type: ignore[arg-type]
    ("signal marker", lambda m, ids: m.signal("[permanently forgotten]")),
    ("import bytes lines", lambda m, ids: m.import_([b'{"format": "cairn.export.v1"}'])),  # type: ignore[list-item]
    ("import source nl", lambda m, ids: m.import_([], source="a\nb")),
    (
        "import surrogate",
        lambda m, ids: m.import_(['{"format": "cairn.export.v1"}', '{"\ud800": 1}']),
    ),
    ("export agent", lambda m, ids: m.export(io.StringIO(), agent="a/b")),
    ("import a string", lambda m, ids: m.import_('{"format": "cairn.export.v1"}')),
    ("import an int", lambda m, ids: m.import_(5)),  # type: ignore[arg-type]
    ("open path int", lambda m, ids: Memory.open(5)),  # type: ignore[arg-type]
    ("open path bytes", lambda m, ids: Memory.open(b"/tmp/x.db")),  # type: ignore[arg-type]
    ("open path nul", lambda m, ids: Memory.open("/tmp/a\x00b.db")),
    ("open path empty", lambda m, ids: Memory.open("", {})),
    ("open config int", lambda m, ids: Memory.open(None, 5)),  # type: ignore[arg-type]
    ("open config bad", lambda m, ids: Memory.open(None, {"memory": 5})),
    ("open tenant", lambda m, ids: Memory.open(None, {}, tenant="a/b")),
    ("open agent", lambda m, ids: Memory.open(None, {}, agent="")),
]


@pytest.fixture
def seeded(tmp_path: Path) -> Iterator[tuple[Memory, dict[str, str]]]:
    mem = Memory.open(tmp_path / "memory.db", {"memory": {"embeddings": {"provider": "hashing"}}})
    alpha = mem.remember("seed alpha memory")
    other = mem.for_tenant("other").remember("seed other tenant memory")
    context = mem.context("seed alpha memory")
    ids = {"alpha": alpha.id, "other": other.id, "app": context.applications[0].application_id}
    yield mem, ids
    mem.close()


def _state(mem: Memory) -> list[str]:
    out = []
    for tenant in ("default", "other"):
        buffer = io.StringIO()
        mem.for_tenant(tenant).export(buffer)
        out.append(buffer.getvalue())
        out.append(repr(mem.for_tenant(tenant).status().counts))
    return out


@pytest.mark.parametrize(("name", "call"), CALLS, ids=[c[0] for c in CALLS])
def test_a_hostile_python_value_is_one_invalid_input(
    name: str, call: Call, seeded: tuple[Memory, dict[str, str]]
) -> None:
    mem, ids = seeded
    before = _state(mem)
    with pytest.raises(InvalidInput) as caught:
        call(mem, ids)
    message = str(caught.value)
    assert "\n" not in message and message.isprintable(), message
    assert _state(mem) == before
    mem.recall("seed alpha")  # still serves


def test_a_str_subclass_is_validated_as_text(seeded: tuple[Memory, dict[str, str]]) -> None:
    mem, _ = seeded
    record = mem.store(Text("a memory in a str subclass"))
    assert type(record.body) is str or isinstance(record.body, str)
    assert mem.get(record.id).body == "a memory in a str subclass"


def test_datetimes_are_stored_in_utc(seeded: tuple[Memory, dict[str, str]]) -> None:
    mem, _ = seeded
    east = datetime(2024, 1, 1, 1, 0, tzinfo=timezone(timedelta(hours=2)))
    assert mem.store("t", occurred_at=east).occurred_at == "2023-12-31T23:00:00.000000Z"
    assert mem.store("d", occurred_at=date(2024, 2, 29)).occurred_at.startswith("2024-02-29T00")
    naive = datetime(2024, 3, 1, 12, 30)
    assert mem.store("n", occurred_at=naive).occurred_at == "2024-03-01T12:30:00.000000Z"
    utc = datetime(9999, 12, 31, 23, 59, tzinfo=UTC)
    assert mem.store("u", occurred_at=utc).occurred_at.startswith("9999-12-31T23:59")


def test_numpy_integers_are_integers(seeded: tuple[Memory, dict[str, str]]) -> None:
    mem, _ = seeded
    (stored,) = mem.store_many([MemoryInput("ep", episode_id="e", position=np.int64(7))])  # type: ignore[arg-type]
    record = mem.get(stored)
    assert record.position == 7 and type(record.position) is int

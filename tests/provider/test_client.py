"""The one client every interface sends through: build, attribute, check, collect."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from cairn import Memory
from cairn.adapters.hashing import HashingEmbedder
from cairn.errors import InvalidInput, StorageError
from cairn.provider import contract as c
from cairn.provider.attribution import COMMAND_LINE, Attribution
from cairn.provider.client import Client, stable_key
from cairn.provider.contract import learning as lc


def _memory(tmp_path: Path) -> Memory:
    return Memory.open(tmp_path / "m.db", config={}, embedder=HashingEmbedder())


def test_a_lazy_client_opens_its_provider_on_the_first_request_only(tmp_path: Path) -> None:
    with _memory(tmp_path) as mem:
        opened: list[int] = []

        def opener() -> Any:
            opened.append(1)
            return mem.provider

        client = Client(opener=opener, tenant="default", agent="default")
        assert client.key("a", 1) == stable_key("default", "default", "a", 1)
        assert not client.opened and not opened  # a key needs no provider
        written = client.apply(c.RememberRequest, c.WriteResponse, "k1", body="Use pnpm.")
        again = client.query(c.ShowQuery, c.RecordResponse, record_id=written.record.id)
        assert again.record.body == "Use pnpm." and opened == [1]


def test_a_refused_request_is_one_line_and_sends_nothing(tmp_path: Path) -> None:
    with _memory(tmp_path) as mem:
        client = Client(mem.provider)
        with pytest.raises(InvalidInput, match=r"^pinned must be true or false, not a string$"):
            client.apply(c.RememberRequest, c.WriteResponse, "k", body="x", pinned="yes")
        with pytest.raises(InvalidInput, match="unknown field 'colour'"):
            client.query(c.ListQuery, c.RecordsResponse, colour="red")
        assert mem.list() == [] and mem.journal() == []


def test_an_answer_of_another_type_is_a_defect_named_as_such(tmp_path: Path) -> None:
    with _memory(tmp_path) as mem:
        client = Client(mem.provider)
        with pytest.raises(StorageError, match="answered RecordsResponse, expected RecordResponse"):
            client.query(c.ListQuery, c.RecordResponse)


def test_outcomes_are_attributed_as_the_client_says_and_warnings_are_kept(
    tmp_path: Path,
) -> None:
    with _memory(tmp_path) as mem:
        hook = Client(mem.provider, attribution=Attribution("host-1", verified=True))
        seen = hook.apply(lc.ObserveRequest, lc.ObserveResponse, "o1", success=True,
                          session_id="forged", sender="system", note="x")  # fmt: skip
        cli = Client(mem.provider, attribution=COMMAND_LINE)
        other = cli.apply(lc.ObserveRequest, lc.ObserveResponse, "o2", success=True,
                          session_id="forged", deterministic=True, command="make test")  # fmt: skip
        library = Client(mem.provider)  # as given: the library is its own serving process
        own = library.apply(lc.ObserveRequest, lc.ObserveResponse, "o3", success=True,
                            session_id="s-lib", note="y")  # fmt: skip
        events = {e.event_id: e for e in mem.journal()}
        assert events[seen.event_id].session_id == "host-1"
        assert events[seen.event_id].sender == "user"  # the owner, never the caller's word
        assert events[other.event_id].session_id is None
        assert events[other.event_id].payload.get("deterministic") is not True
        assert events[own.event_id].session_id == "s-lib"
        with pytest.raises(InvalidInput, match="is not a request"):
            library.send(c.RecordResponse.model_construct(), c.RecordResponse)


def test_a_mutation_without_a_key_gets_a_new_one_each_time(tmp_path: Path) -> None:
    with _memory(tmp_path) as mem:
        client = Client(mem.provider)
        first = client.apply(c.StoreRequest, c.WriteResponse, None, body="The build uses make.")
        client.apply(c.ForgetRequest, c.ForgetResponse, None, record_id=first.record.id)
        second = client.apply(c.StoreRequest, c.WriteResponse, None, body="The build uses make.")
        assert second.created and second.record.id != first.record.id


def test_the_warnings_of_mutations_are_collected_the_latest_kept(tmp_path: Path) -> None:
    with _memory(tmp_path) as mem:
        real = mem.provider

        class Warning:  # the engine's provider, with a warning on every write
            tenant, agent, progress = real.tenant, real.agent, None

            def __init__(self) -> None:
                self.n = 0

            def query(self, request: Any) -> Any:
                return real.query(request)

            def apply(self, request: Any) -> Any:
                self.n += 1
                return real.apply(request).model_copy(update={"warnings": [f"w{self.n}"]})

        sink: list[str] = []
        client = Client(Warning(), warnings=sink)  # type: ignore[arg-type]
        client.query(c.ListQuery, c.RecordsResponse)
        assert sink == []  # a query reports no warnings
        for i in range(105):
            client.apply(c.StoreRequest, c.WriteResponse, f"k{i}", body=f"fact {i}")
        assert client.warnings is sink and len(sink) == 100
        assert sink[0] == "w6" and sink[-1] == "w105"

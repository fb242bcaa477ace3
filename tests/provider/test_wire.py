"""The contract's models at the edges only: in process the engine answers with its own
values; a response is built for a route that sends one, and a response from another
process turns back into the same values."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from cairn import Memory
from cairn.adapters.hashing import HashingEmbedder
from cairn.engine.recall.pipeline import RecallResult
from cairn.errors import StorageError
from cairn.model import Expanded, Record
from cairn.provider import contract as c
from cairn.provider import views, wire
from cairn.provider.client import Client

NOW = datetime(2026, 6, 1, tzinfo=UTC)


def _memory(tmp_path: Path) -> Memory:
    mem = Memory.open(
        tmp_path / "memory.db", config={}, embedder=HashingEmbedder(), clock=lambda: NOW
    )
    mem.store("Always use pnpm to install dependencies", tags=["tools"])
    mem.store("Deploy to staging with make deploy-staging", title="Deploys")
    mem.store("Run ruff before every commit")
    return mem


def test_in_process_no_model_of_the_contract_is_built(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with _memory(tmp_path) as mem:

        def refuse(*args: Any) -> Any:
            raise AssertionError("a response was built in process")

        monkeypatch.setattr(views, "RESPONSES", dict.fromkeys(views.RESPONSES, refuse))
        monkeypatch.setattr(wire, "VALUES", {})
        result = mem.recall("how do I install dependencies?")
        assert isinstance(result, RecallResult) and result.memories
        record = mem.get(result.memories[0].record.id)
        assert isinstance(record, Record) and "pnpm" in record.body
        assert [r.id for r in mem.history(record.id)] == [record.id]
        assert len(mem.list()) == 3 and mem.journal() and mem.tombstones() == []
        # a route that sends the response on builds it
        with pytest.raises(AssertionError, match="built in process"):
            mem.provider.query(c.ShowQuery(record_id=record.id))


def test_a_response_is_valid_and_its_value_is_the_engines(tmp_path: Path) -> None:
    with _memory(tmp_path) as mem:
        result = mem.recall("how do I install dependencies and deploy?")
        assert len(result.ranked) >= 2 and result.memories
        built = mem.provider.query(c.RecallQuery(query=result.query))
        assert isinstance(built, c.RecallResponse)
        parsed = c.RecallResponse.model_validate_json(built.model_dump_json())
        assert parsed.model_dump() == built.model_dump()  # what is sent is valid
        again = wire.value(parsed)
        assert again.preamble == result.preamble and again.trace == result.trace
        assert [(x.score, x.relevance, x.record) for x in again.ranked] == [
            (x.score, x.relevance, x.record) for x in result.ranked
        ]
        app = mem.context("install dependencies").manifest or mem.context("pnpm").resident
        shown = mem.get(result.memories[0].record.id)
        over = c.RecordResponse.model_validate_json(
            mem.provider.query(c.ShowQuery(record_id=shown.id)).model_dump_json()
        )
        assert wire.value(over) == shown
        assert app is not None
        with pytest.raises(StorageError, match="ExplainResponse has no value"):
            wire.value(mem.provider.query(c.ExplainQuery()))


def test_a_recalled_memory_goes_on_the_wire_without_a_storage_row(tmp_path: Path) -> None:
    with _memory(tmp_path) as mem:
        built = mem.provider.query(c.RecallQuery(query="install dependencies and deploy"))
        assert isinstance(built, c.RecallResponse) and len(built.ranked) >= 2
        assert "row" not in c.RecalledModel.model_json_schema()["properties"]
        sent = json.loads(built.model_dump_json())
        assert all("row" not in m for m in (*sent["memories"], *sent["ranked"]))
        # a daemon or server started by an older cairn still sends the row: it is read as
        # this version's answer
        for n, m in enumerate((*sent["memories"], *sent["ranked"])):
            m["row"] = n + 1
        older = c.RecallResponse.model_validate_json(json.dumps(sent))
        assert older.model_dump() == built.model_dump()
        assert wire.value(older).ranked == wire.value(built).ranked


def test_through_another_process_the_api_gets_the_same_values(tmp_path: Path) -> None:
    with _memory(tmp_path) as mem:
        local = mem.provider

        class Elsewhere:  # the same engine behind a wire: JSON both ways, no ``serve``
            tenant, agent, progress = local.tenant, local.agent, None

            def query(self, request: Any) -> Any:
                sent = local.query(type(request).model_validate_json(request.model_dump_json()))
                return type(sent).model_validate_json(sent.model_dump_json())

            def apply(self, request: Any) -> Any:
                return local.apply(request)

        here, there = Client(local), Client(Elsewhere())  # type: ignore[arg-type]
        for model, data in (
            (c.RecallQuery, {"query": "deploy to staging"}),
            (c.ListQuery, {}),
            (c.JournalQuery, {}),
            (c.TombstonesQuery, {}),
            (c.ExportQuery, {}),
        ):
            near, far = here.value(model, **data), there.value(model, **data)
            if isinstance(near, RecallResult):
                near, far = near.ranked, far.ranked
                assert [x.record for x in near] == [x.record for x in far]
            else:
                assert near == far, model
        record = mem.list()[0]
        far_expanded = there.value(c.ExpandQuery, record_id=record.id)
        assert isinstance(far_expanded, Expanded) and far_expanded.record == record


def test_a_recall_is_sent_as_its_models_would_send_it_byte_for_byte(tmp_path: Path) -> None:
    """The server sends a recall's JSON without building its models: the same bytes as
    the models', for delivered, ranked-only, dropped and trusted-external memories, a
    non-ASCII body and a non-finite score (null, as the models send it)."""
    with _memory(tmp_path) as mem:
        mem.store("部署前先跑测试 — run the tests before every deploy", tags=["测试"])
        mem.store("An external note on deploys", trust="external")
        for query, extra in (
            ("how do I install dependencies and deploy?", {}),
            ("deploy tests", {"max_results": 1}),
            ("deploy", {"include_trust": ["system", "learned", "external"]}),
            ("nothing at all matches this", {}),
        ):
            request = c.RecallQuery(query=query, **extra)
            result = mem.provider.serve(request)
            assert isinstance(result, RecallResult)
            models = wire.recall_response(result).model_dump_json().encode()
            assert wire.recall_json(result) == models
            sent, timings = mem.provider.query_json(request)
            assert json.loads(sent)["ranked"] == json.loads(models)["ranked"]
            assert timings is not None and "total" in timings
        result = mem.recall("deploy")
        assert result.ranked
        first = result.ranked[0]
        odd = replace(
            first, breakdown=replace(first.breakdown, final=float("inf")), fused=float("nan")
        )
        strange = replace(result, ranked=(odd, *result.ranked[1:]))
        sent = wire.recall_json(strange)
        assert sent == wire.recall_response(strange).model_dump_json().encode()
        assert json.loads(sent)["ranked"][0]["score"] is None
        # a value the serializer does not know takes the models' path, as before
        unknown = replace(result, trace=({"odd": object()},))
        with pytest.raises(Exception) as refused:
            wire.recall_response(unknown).model_dump_json()
        with pytest.raises(type(refused.value)):
            wire.recall_json(unknown)


def test_other_views_are_sent_as_their_models(tmp_path: Path) -> None:
    with _memory(tmp_path) as mem:
        for request in (c.ListQuery(), c.JournalQuery(), c.ShowQuery(record_id=mem.list()[0].id)):
            sent, timings = mem.provider.query_json(request)
            assert sent == mem.provider.query(request).model_dump_json().encode()
            assert timings is None

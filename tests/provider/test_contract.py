"""The provider contract, on every route (embedded and through the server): typed requests
in, typed responses out."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from cairn import InvalidInput, Memory
from cairn.provider import CONTRACT_VERSION
from cairn.provider import contract as c


def test_contract_round_trip(mem: Memory) -> None:
    provider = mem.provider
    status = provider.status()
    assert status.contract == CONTRACT_VERSION and status.provider in ("local", "remote")
    assert status.counts["records"] == 0 and status.tenant == mem.tenant

    made = provider.apply(
        c.RememberRequest(idempotency_key="k1", body="Always use pnpm", kind="policy")
    )
    again = provider.apply(
        c.RememberRequest(idempotency_key="k1", body="Always use pnpm", kind="policy")
    )
    assert isinstance(made, c.WriteResponse) and isinstance(again, c.WriteResponse)
    assert made.record.id == again.record.id and made.created and not again.created
    assert provider.status().counts["records"] == 1  # the retry was a no-op

    task = provider.query(c.TaskQuery(task="install dependencies with pnpm"))
    assert isinstance(task, c.TaskResponse)
    assert task.resident[0].body == "Always use pnpm"
    app_id = task.resident[0].application_id
    fed = provider.apply(
        c.FeedbackRequest(idempotency_key="k2", application_id=app_id, outcome="used-successfully")
    )
    assert isinstance(fed, c.FeedbackResponse)
    assert fed.record.used_count == 1 and fed.changes["used_count"] == [0, 1]

    recall = provider.query(c.RecallQuery(query="pnpm"))
    assert isinstance(recall, c.RecallResponse) and "pnpm" in recall.preamble
    listed = provider.query(c.ListQuery())
    assert isinstance(listed, c.RecordsResponse) and len(listed.records) == 1
    rid = made.record.id
    forgot = provider.apply(c.ForgetRequest(idempotency_key="k3", record_id=rid))
    assert isinstance(forgot, c.ForgetResponse) and forgot.tombstone.record_id == rid
    retried = provider.apply(c.ForgetRequest(idempotency_key="k3", record_id=rid))
    assert isinstance(retried, c.ForgetResponse)  # the same key again: no error, no change
    empty = provider.query(c.ListQuery())
    assert isinstance(empty, c.RecordsResponse) and empty.records == []


def test_requests_parse_from_json_and_refuse_unknown_fields() -> None:
    parsed = c.parse_query({"view": "recall", "query": "pnpm", "max_results": 3})
    assert isinstance(parsed, c.RecallQuery) and parsed.max_results == 3
    with pytest.raises(ValidationError):
        c.parse_query({"view": "everything"})
    with pytest.raises(ValidationError):
        c.parse_apply({"mutation": "remember", "idempotency_key": "", "body": "x"})
    with pytest.raises(ValidationError):
        c.parse_apply({"mutation": "remember", "idempotency_key": "k", "body": "x", "tenant": "b"})


def test_the_engine_refuses_what_the_schema_lets_through(mem: Memory) -> None:
    with pytest.raises(InvalidInput, match="no memory"):
        mem.provider.apply(c.CorrectRequest(idempotency_key="k", record_id="01NOPE", text="x"))
    with pytest.raises(InvalidInput, match="empty"):
        mem.provider.apply(c.RememberRequest(idempotency_key="k", body="   "))


def test_json_schemas_exist_for_every_request_and_response() -> None:
    for adapter in (c.QUERY, c.APPLY):
        schema = adapter.json_schema()
        assert "discriminator" in schema or "oneOf" in schema
    assert c.StatusResponse.model_json_schema()["properties"]["contract"]["default"] == (
        CONTRACT_VERSION
    )

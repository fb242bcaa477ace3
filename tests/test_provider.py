from __future__ import annotations

import pytest
from pydantic import ValidationError

from cairn import InvalidInput, Memory
from cairn.provider import (
    CONTRACT_VERSION,
    ApplyRequest,
    LocalProvider,
    QueryRequest,
)


def test_contract_round_trip(mem: Memory) -> None:
    provider = LocalProvider(mem)
    status = provider.status()
    assert status.contract == CONTRACT_VERSION and status.provider == "local"
    assert status.counts["records"] == 0

    made = provider.apply(
        ApplyRequest(
            mutation="remember", idempotency_key="k1", text="Always use pnpm", kind="policy"
        )
    )
    again = provider.apply(
        ApplyRequest(
            mutation="remember", idempotency_key="k1", text="Always use pnpm", kind="policy"
        )
    )
    assert made.record and again.record and made.record["id"] == again.record["id"]
    assert provider.status().counts["records"] == 1  # the retry was a no-op

    task = provider.query(QueryRequest(view="task", text="install dependencies with pnpm"))
    assert task.resident[0]["body"] == "Always use pnpm"
    app_id = task.resident[0]["application_id"]
    fed = provider.apply(
        ApplyRequest(
            mutation="feedback",
            idempotency_key="k2",
            application_id=app_id,
            outcome="used-successfully",
        )
    )
    assert fed.record and fed.record["used_count"] == 1

    recall = provider.query(QueryRequest(view="recall", text="pnpm"))
    assert recall.preamble and "pnpm" in recall.preamble
    manage = provider.query(QueryRequest(view="manage"))
    assert len(manage.items) == 1
    rid = made.record["id"]
    provider.apply(ApplyRequest(mutation="forget", idempotency_key="k3", record_id=rid))
    assert provider.query(QueryRequest(view="manage")).items == ()


def test_contract_rejects_bad_requests(mem: Memory) -> None:
    provider = LocalProvider(mem)
    with pytest.raises(ValidationError):
        QueryRequest(view="everything")  # type: ignore[arg-type]
    with pytest.raises(ValidationError):
        ApplyRequest(mutation="remember", idempotency_key="", text="x")
    with pytest.raises(InvalidInput):
        provider.apply(ApplyRequest(mutation="correct", idempotency_key="k", text="x"))
    with pytest.raises(InvalidInput, match="not served"):
        provider.apply(ApplyRequest(mutation="delta", idempotency_key="k"))

"""The recall response: built without per-field checks, the same model as model_construct
builds, and handed back to the embedded API as the engine's own result."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from cairn import Memory
from cairn.adapters.hashing import HashingEmbedder
from cairn.engine.recall.pipeline import RecallResult
from cairn.provider import contract as c
from cairn.provider.convert import recall_response, record_model, to_recall_result

NOW = datetime(2026, 6, 1, tzinfo=UTC)


def recalled_result(tmp_path: Path) -> tuple[Memory, RecallResult]:
    mem = Memory.open(
        tmp_path / "memory.db", config={}, embedder=HashingEmbedder(), clock=lambda: NOW
    )
    mem.store("Always use pnpm to install dependencies", tags=["tools"])
    mem.store("Deploy to staging with make deploy-staging", title="Deploys")
    mem.store("Run ruff before every commit")
    return mem, mem.recall("how do I install dependencies and deploy?")


def by_model_construct(result: RecallResult) -> c.RecallResponse:
    def one(cand) -> c.RecalledModel:  # type: ignore[no-untyped-def]
        r = cand.relevance
        return c.RecalledModel.model_construct(
            row=cand.row,
            record=record_model(cand.record),
            score=cand.score,
            fused=cand.fused,
            ranks=dict(cand.ranks),
            factors=cand.breakdown.as_dict(),
            relevance=c.RelevanceModel.model_construct(
                score=r.score, evidence=r.evidence, cosine=r.cosine, coverage=r.coverage
            ),
            line=cand.line,
        )

    return c.RecallResponse.model_construct(
        query=result.query,
        preamble=result.preamble,
        memories=[one(x) for x in result.memories],
        ranked=[one(x) for x in result.ranked],
        trace=list(result.trace),
        timings_ms=dict(result.timings_ms),
        rerank=result.rerank,
        failures=dict(result.failures),
    )


def test_the_response_is_what_model_construct_builds(tmp_path: Path) -> None:
    mem, result = recalled_result(tmp_path)
    assert len(result.ranked) >= 2 and result.memories
    fast, slow = recall_response(result), by_model_construct(result)
    assert fast.model_dump() == slow.model_dump()
    assert fast.model_fields_set == slow.model_fields_set
    assert fast.ranked[0].model_fields_set == slow.ranked[0].model_fields_set
    assert fast.ranked[0].relevance.model_fields_set == slow.ranked[0].relevance.model_fields_set
    # and it is a valid response: its JSON parses back to the same values
    again = c.RecallResponse.model_validate_json(fast.model_dump_json())
    assert again.model_dump() == fast.model_dump()
    mem.close()


def test_the_embedded_api_gets_the_engines_result_back(tmp_path: Path) -> None:
    mem, result = recalled_result(tmp_path)
    response = recall_response(result)
    assert to_recall_result(response) is result
    # A response from elsewhere (the wire) carries no result: it is converted back.
    parsed = c.RecallResponse.model_validate_json(response.model_dump_json())
    rebuilt = to_recall_result(parsed)
    assert rebuilt.preamble == result.preamble and rebuilt.trace == result.trace
    assert [(x.row, x.score, x.relevance, x.record) for x in rebuilt.ranked] == [
        (x.row, x.score, x.relevance, x.record) for x in result.ranked
    ]
    mem.close()

"""The vector lane's weight follows the store's embedder unless the config sets one."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

import pytest

from cairn.adapters import embedding, multilingual_use
from cairn.adapters.hashing import HashingEmbedder
from cairn.config import Rag, parse_config
from cairn.engine.recall import lanes
from cairn.engine.recall.embedder_weights import for_embedder
from cairn.engine.recall.fusion import LaneRanking
from cairn.engine.recall.pipeline import MemoryRecall, RecallRequest
from cairn.storage.ports import LaneHit
from twins.record_store import MemoryRecordStore
from twins.search_index import MemorySearchIndex


def _rag(agent_rag: dict[str, object]) -> Rag:
    return parse_config({"agents": {"default": {"rag": agent_rag}}}).agent("default").rag


def test_the_multilingual_embedder_weighs_its_lane_more() -> None:
    rag = _rag({})
    chosen = for_embedder(rag, multilingual_use.MODEL_ID)
    assert chosen.weights.vector == 2.5
    assert (chosen.weights.fts, chosen.weights.entity) == (rag.weights.fts, rag.weights.entity)
    assert chosen.minScore == rag.minScore and rag.weights.vector == 1.5  # the config's, untouched


@pytest.mark.parametrize("model", [embedding.MODEL_ID, "hashing-64", "some-model"])
def test_other_embedders_keep_the_configured_weight(model: str) -> None:
    rag = _rag({})
    assert for_embedder(rag, model) is rag


def test_a_weight_the_config_sets_wins() -> None:
    rag = _rag({"weights": {"vector": 1.0}})
    assert for_embedder(rag, multilingual_use.MODEL_ID).weights.vector == 1.0
    only_fts = _rag({"weights": {"fts": 2.0}})  # the vector weight left to the embedder
    chosen = for_embedder(only_fts, multilingual_use.MODEL_ID)
    assert (chosen.weights.fts, chosen.weights.vector) == (2.0, 2.5)


class _Named(HashingEmbedder):
    """The hashing embedder under another model's id (the recall reads only the id)."""

    def __init__(self, model_id: str) -> None:
        super().__init__()
        self._id = model_id

    @property
    def model_id(self) -> str:
        return self._id


@pytest.mark.parametrize(
    ("model", "weight"), [(multilingual_use.MODEL_ID, 2.5), (embedding.MODEL_ID, 1.5)]
)
def test_a_recall_weighs_the_vector_lane_for_its_embedder(
    model: str, weight: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[float] = []
    real = lanes.ranking

    def spy(name: str, w: float, hits: Sequence[LaneHit]) -> LaneRanking:
        if name == "vector":
            seen.append(w)
        return real(name, w, hits)

    monkeypatch.setattr(lanes, "ranking", spy)
    records = MemoryRecordStore()
    recall = MemoryRecall(records, MemorySearchIndex(records), _Named(model))
    recall.recall(RecallRequest("deploy kestrel", "t", "a"), _rag({}), datetime.now(UTC))
    assert seen == [weight]

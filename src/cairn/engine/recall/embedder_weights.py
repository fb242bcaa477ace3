"""The vector lane's weight for the embedder that wrote the store, when the config sets
none (``rag.weights.vector``; a weight the config sets always wins).

MiniLM keeps the default 1.5. The multilingual USE gets 2.5: its keyword lane cannot match
across languages (a Chinese question shares no word with an English memory), so the
vector lane carries more of a bilingual store's recall. Measured with
``benchmarks/bilingual.py`` (709 queries; recall@10 all / across languages, even and odd
halves) and held against LoCoMo on the same model (any@10, conversations 1-5 / 6-10):

    weight  bilingual all        across languages     LoCoMo any@10
    1.5     0.908 (0.904/0.913)  0.750 (0.739/0.762)  0.857 (0.861/0.853)
    2.0     0.932 (0.921/0.944)  0.802 (0.775/0.832)  0.854 (0.857/0.851)
    2.5     0.938 (0.927/0.949)  0.821 (0.793/0.851)  0.852 (0.853/0.851)
    3.0     0.946 (0.941/0.952)  0.849 (0.838/0.861)  0.851 (0.854/0.848)
    4.0     0.953 (0.952/0.955)  0.873 (0.874/0.871)  0.837 (0.843/0.830)

Every step up helps both bilingual halves; 2.5 is the largest that keeps LoCoMo any@10
at 0.85 or more on both halves (docs/benchmarks.md, "Chinese by default").
"""

from __future__ import annotations

from cairn.adapters import multilingual_use
from cairn.config import Rag

VECTOR_WEIGHT = {multilingual_use.MODEL_ID: 2.5}


def for_embedder(rag: Rag, model_id: str) -> Rag:
    """``rag`` with the embedder's vector weight, unless the config sets one."""
    weight = VECTOR_WEIGHT.get(model_id)
    if weight is None or "vector" in rag.weights.model_fields_set:
        return rag
    weights = rag.weights.model_copy(update={"vector": weight})
    return rag.model_copy(update={"weights": weights})

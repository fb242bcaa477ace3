"""A sentence-transformers CrossEncoder as recall's reranker (the optional extra
``cairn-memory[rerank]``): one relevance score per text for a query. It meets the
engine's ``Reranker`` protocol (:mod:`cairn.engine.recall.rerank`) by shape."""

from __future__ import annotations

from collections.abc import Sequence


class CrossEncoderReranker:
    """sentence-transformers CrossEncoder (optional extra ``cairn-memory[rerank]``)."""

    def __init__(self, model: str) -> None:
        try:
            from sentence_transformers import CrossEncoder
        except ImportError as exc:
            raise RuntimeError(
                "reranking needs the optional extra: pip install 'cairn-memory[rerank]'"
            ) from exc
        self._model = CrossEncoder(model, local_files_only=True)

    def rerank(self, query: str, texts: Sequence[str]) -> list[float]:
        scores = self._model.predict([(query, t) for t in texts])
        return [float(s) for s in scores]

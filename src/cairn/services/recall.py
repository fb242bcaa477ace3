"""Recall as a service: the agent's settings, then the pipeline (the request was checked
at the contract)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime

import numpy as np

from cairn.config import Config, Rag
from cairn.engine.recall.pipeline import MemoryRecall, RecallRequest, RecallResult
from cairn.model import Namespace
from cairn.timeutil import parse_time

# Told each recall's latency by stage (telemetry: counts only, never the query).
OnRecall = Callable[[Namespace, Mapping[str, float]], None]


class Recall:
    def __init__(
        self,
        pipeline: MemoryRecall,
        config: Config,
        clock: Callable[[], datetime],
        on_recall: OnRecall | None = None,
    ):
        self._pipeline = pipeline
        self._config = config
        self._clock = clock
        self._on_recall = on_recall

    def recall(
        self,
        query: str,
        ns: Namespace,
        *,
        project_id: str | None = None,
        max_results: int | None = None,
        max_chars: int | None = None,
        include_trust: Sequence[str] | None = None,
        rag: Rag | None = None,
        as_of: str | None = None,
    ) -> RecallResult:
        """The memories that apply to ``query``, inside the budget, with a trace
        (``as_of``: as memory stood then, evicted and superseded versions included)."""
        # The request was checked at the contract (provider/checked.py: the query's text,
        # the project id, the time as stored; the counts and trust levels by their types).
        request = self._request(query, ns, project_id, max_results, max_chars, include_trust)
        at = parse_time(as_of) if as_of is not None else None
        if not self._config.agent(ns.agent).retrieval.enabled:
            return RecallResult(query, "", (), (), (), {}, None)
        rag = rag or self._config.agent(ns.agent).rag
        if at is not None:
            return self._pipeline.recall_as_of(request, rag, at)
        result = self._pipeline.recall(request, rag, self._clock())
        if self._on_recall is not None:
            self._on_recall(ns, result.timings_ms)
        return result

    def recall_near(
        self,
        query: str,
        ns: Namespace,
        vector: np.ndarray,
        *,
        project_id: str | None = None,
        max_results: int | None = None,
        rag: Rag | None = None,
    ) -> tuple[RecallResult, dict[str, float]]:
        """A recall, and the cosine of ``vector`` to each ranked memory, by record id."""
        request = self._request(query, ns, project_id, max_results, None, None)
        if not self._config.agent(ns.agent).retrieval.enabled:
            return RecallResult(query, "", (), (), (), {}, None), {}
        rag = rag or self._config.agent(ns.agent).rag
        result, cosines = self._pipeline.recall_near(request, rag, self._clock(), vector)
        if self._on_recall is not None:
            self._on_recall(ns, result.timings_ms)
        return result, cosines

    def _request(
        self,
        query: str,
        ns: Namespace,
        project_id: str | None,
        max_results: int | None,
        max_chars: int | None,
        include_trust: Sequence[str] | None,
    ) -> RecallRequest:
        return RecallRequest(
            query=query,
            tenant=ns.tenant,
            agent=ns.agent,
            project_id=project_id,
            max_results=max_results,
            max_chars=max_chars,
            include_trust=tuple(include_trust) if include_trust is not None else None,
        )

"""The search index's port: the lanes, each filtered by tenant, agent, scope and liveness
inside the lane, before ranking."""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Protocol

import numpy as np

from cairn.storage.ports.values import EpisodePlace, LaneFilter, LaneHit, TermCounts


class SearchIndex(Protocol):
    def keyword(self, where: LaneFilter, terms: Sequence[str], limit: int) -> list[LaneHit]:
        """BM25 over index terms (:func:`cairn.text.index_terms`), OR-joined; statistics
        are those of the tenant and agent searched."""
        ...

    def term_counts(self, where: LaneFilter, terms: Sequence[str]) -> TermCounts: ...

    def keyword_scores(
        self, where: LaneFilter, terms: Sequence[str], rows: Sequence[int]
    ) -> dict[int, float]:
        """BM25 of these live rows of the namespace (absent: not theirs, or no term)."""
        ...

    def vector(self, where: LaneFilter, query: np.ndarray, limit: int) -> list[LaneHit]: ...

    def vector_scores(
        self, where: LaneFilter, query: np.ndarray, rows: Sequence[int]
    ) -> dict[int, float]:
        """Cosine of the query to these rows of the namespace that have a vector."""
        ...

    def entity(self, where: LaneFilter, seeds: Sequence[int], per_entity_cap: int) -> list[LaneHit]:
        """Live rows sharing entity keys with the seeds; score = how many they share."""
        ...

    def places(self, where: LaneFilter, rows: Sequence[int]) -> dict[int, EpisodePlace]: ...

    def neighbours(
        self, where: LaneFilter, places: Sequence[EpisodePlace], window: int
    ) -> dict[int, EpisodePlace]:
        """Live rows in scope within ``window`` positions of these places, same episode."""
        ...

    def refresh(self) -> None:
        """Catch up with the record store now (lanes also catch up before answering)."""
        ...

    def holding(self) -> AbstractContextManager[None]:
        """Everything this thread asks inside reads one state of the index: an index that
        follows the feed catches up once when the hold begins (a recall's ~8 calls, one
        read of the feed's head); one that reads the database each time holds nothing."""
        ...

    def close(self) -> None: ...

"""Entity postings for the opt-in entity lane: which rows of a partition share a key.

Keys arrive hashed (:func:`cairn.storage.terms.entity_blob`) with the change feed. Rows are
appended in feed order, which is row order for new rows, so the newest rows of a key are
at the end of its list (``perEntityCap`` keeps the newest).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from cairn.storage.terms import decode_keys


class EntityPostings:
    def __init__(self) -> None:
        self._by_key: dict[tuple[str, str], dict[int, list[int]]] = {}
        self._keys_of: dict[int, tuple[tuple[str, str], np.ndarray]] = {}

    def sync(
        self,
        rows: Sequence[int],
        tenants: Sequence[str],
        agents: Sequence[str],
        blobs: Sequence[bytes | None],
    ) -> None:
        for row, tenant, agent, blob in zip(rows, tenants, agents, blobs, strict=True):
            old = self._keys_of.pop(row, None)
            if old is not None:
                postings = self._by_key.get(old[0], {})
                for key in old[1].tolist():
                    members = postings.get(key)
                    if members is not None and row in members:
                        members.remove(row)
            if not blob:
                continue
            namespace = (tenant, agent)
            keys = decode_keys(blob)
            self._keys_of[row] = (namespace, keys)
            postings = self._by_key.setdefault(namespace, {})
            for key in keys.tolist():
                postings.setdefault(key, []).append(row)

    def shared(
        self, tenant: str, agent: str, seeds: Sequence[int], per_key_cap: int
    ) -> dict[int, int]:
        """Row -> number of the seeds' keys it carries (among each key's newest rows)."""
        namespace = (tenant, agent)
        postings = self._by_key.get(namespace, {})
        keys: set[int] = set()
        for seed in seeds:
            found = self._keys_of.get(seed)
            if found is not None and found[0] == namespace:
                keys.update(found[1].tolist())
        counts: dict[int, int] = {}
        for key in keys:
            members = postings.get(key, [])
            for row in sorted(members)[-per_key_cap:]:
                counts[row] = counts.get(row, 0) + 1
        return counts

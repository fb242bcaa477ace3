"""Exact cosine search over in-memory float32 blocks, one block per tenant and agent.

Why not sqlite-vec: the stdlib ``sqlite3`` here cannot load extensions, and measured on this
2-core machine an exact k=10 search over 100k x 384 took 38 ms in sqlite-vec against 7.5 ms
for one numpy matrix-vector product. The matrix is a cache of the ``vectors`` table: the
store feeds it every row whose ``change_seq`` moved since the last sync, so several processes
writing the same file stay consistent.

Why one block per tenant and agent: a recall only ever ranks the rows of one tenant and
agent, so each such partition keeps its rows in a contiguous matrix of its own and a search
is one matrix-vector product over exactly those rows. Measured at 100k memories (largest
tenant 40k): gathering the tenant's rows into a copy first cost 60 ms, one product over
all rows plus a tenant mask 33 ms, the product over a contiguous per-tenant block 12.5 ms.
Only liveness and the project scope are still masked, inside the block, before ranking.

Rows to slots: SQLite hands out row ids densely (max + 1), so a numpy array indexed by row id
maps a row to its block and slot (8 bytes a row, and lookups for many rows are vectorised);
a row id far past the dense range (not made by cairn) falls back to a dict.

Dead slots: superseded, evicted or forgotten rows keep their slot with ``live`` False (a
later sync may bring them back). A purged row's vector is zeroed at once, so its bytes do not
linger in this process either. A block whose dead slots outnumber its live ones is compacted.

Change journal: a block that an approximate index follows (:mod:`cairn.storage.inprocess.ann_graph`)
is ``tracked``: every synced change to one of its rows is noted (``CHANGED_VECTOR`` when the
vector is new or differs, ``PURGED`` when it was deleted), so the approximate index applies
increments without rescanning the block.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from cairn.storage.inprocess.arrays import capacity_for, grown
from cairn.storage.inprocess.blas import one_blas_thread

CHANGED_VECTOR = 1
PURGED = 2
_DENSE_SLACK = 1 << 20  # how far past the rows seen a new row id may land and stay dense
_OFFSET_BITS = 32


class Block:
    """The rows of one tenant and agent, contiguous, with their scope and liveness."""

    def __init__(self, block_id: int, tenant: str, agent: str, dim: int) -> None:
        self.id = block_id
        self.tenant = tenant
        self.agent = agent
        self.dim = dim
        self.size = 0
        self.live_count = 0
        self.matrix = np.zeros((1024, dim), dtype=np.float32)
        self.rows = np.zeros(1024, dtype=np.int64)
        self.project = np.zeros(1024, dtype=np.int32)  # 0 = global scope
        self.live = np.zeros(1024, dtype=bool)
        self.seq = np.zeros(1024, dtype=np.int64)  # change_seq of the row when last synced
        self.models: set[str] = set()
        self.tracked = False
        self.journal: dict[int, int] = {}  # row -> CHANGED_VECTOR | PURGED, while tracked

    def grow(self, needed: int) -> None:
        if needed > len(self.rows):
            size = capacity_for(len(self.rows), needed)
            for attr in ("matrix", "rows", "project", "live", "seq"):
                setattr(self, attr, grown(getattr(self, attr), size, self.size))

    def note(self, row: int, flags: int) -> None:
        if self.tracked:
            self.journal[row] = self.journal.get(row, 0) | flags

    def eligible(self, slots: np.ndarray, project_code: int | None) -> np.ndarray:
        """Which of these slots are live and in scope (``project_code`` None: any scope)."""
        mask: np.ndarray = self.live[slots]
        if project_code is not None:
            proj = self.project[slots]
            mask &= (proj == 0) | (proj == project_code)
        return mask

    def scope_mask(self, project_code: int | None) -> np.ndarray | None:
        """Eligibility of every slot, or None when every slot is eligible."""
        n = self.size
        mask: np.ndarray | None = None
        if self.live_count < n:
            mask = self.live[:n]
        if project_code is not None:
            proj = self.project[:n]
            in_scope = (proj == 0) | (proj == project_code)
            mask = in_scope if mask is None else mask & in_scope
        return mask

    def search(
        self, query: np.ndarray, project_code: int | None, limit: int
    ) -> list[tuple[int, float]]:
        """Exact top ``limit`` (row, cosine) among live rows in scope."""
        n = self.size
        if n == 0 or limit <= 0 or self.live_count == 0:
            return []
        mask = self.scope_mask(project_code)
        eligible = n if mask is None else int(np.count_nonzero(mask))
        if eligible == 0:
            return []
        with one_blas_thread():
            sims = self.matrix[:n] @ query
        if mask is not None:
            np.copyto(sims, -np.inf, where=~mask)
        return self.top(np.arange(n), sims, min(limit, eligible))

    def top(self, slots: np.ndarray, sims: np.ndarray, k: int) -> list[tuple[int, float]]:
        """The ``k`` best of ``slots`` by ``sims`` as (row, cosine), best first."""
        if k <= 0 or len(sims) == 0:
            return []
        k = min(k, len(sims))
        best = np.argpartition(sims, len(sims) - k)[len(sims) - k :] if k < len(sims) else None
        order = np.arange(len(sims)) if best is None else best
        order = order[np.argsort(-sims[order], kind="stable")]
        return list(zip(self.rows[slots[order]].tolist(), sims[order].tolist(), strict=True))

    def compact(self) -> list[int]:
        """Drop dead slots; returns the rows that left (their slots no longer exist)."""
        n = self.size
        keep = np.flatnonzero(self.live[:n])
        gone = [int(r) for r in self.rows[:n][~self.live[:n]]]
        for attr in ("matrix", "rows", "project", "live", "seq"):
            arr = getattr(self, attr)
            arr[: len(keep)] = arr[keep]
            arr[len(keep) : n] = 0
        self.size = len(keep)
        return gone


class ExactVectorIndex:
    def __init__(self, dim: int) -> None:
        self.dim = dim
        self._codes: dict[str | None, int] = {None: 0}
        self._blocks: list[Block] = []
        self._block_of: dict[tuple[int, int], Block] = {}
        self._loc = np.full(1024, -1, dtype=np.int64)  # row -> block id << 32 | slot
        self._sparse: dict[int, int] = {}  # rows past the dense range

    def __len__(self) -> int:
        return sum(b.live_count for b in self._blocks)

    def code(self, name: str | None) -> int:
        """A stable small integer for a tenant, agent or project name (0 for None)."""
        found = self._codes.get(name)
        if found is None:
            found = len(self._codes)
            self._codes[name] = found
        return found

    def known_code(self, name: str | None) -> int | None:
        return self._codes.get(name)

    def blocks(self) -> list[Block]:
        return list(self._blocks)

    def block(self, tenant: str, agent: str) -> Block | None:
        tenant_code = self._codes.get(tenant)
        agent_code = self._codes.get(agent)
        if tenant_code is None or agent_code is None:
            return None
        return self._block_of.get((tenant_code, agent_code))

    def project_code(self, project_id: str | None) -> int | None:
        """The scope filter for a search: None = any scope; an unknown project matches
        only global rows (-1 never occurs as a stored code)."""
        return None if project_id is None else self._codes.get(project_id, -1)

    # -- row map --------------------------------------------------------------------------

    def _locate(self, rows: np.ndarray) -> np.ndarray:
        """block id << 32 | slot for each row, -1 where the row has no slot."""
        out = np.full(len(rows), -1, dtype=np.int64)
        dense = (rows >= 0) & (rows < len(self._loc))
        out[dense] = self._loc[rows[dense]]
        if self._sparse:
            for i in np.flatnonzero(~dense):
                out[i] = self._sparse.get(int(rows[i]), -1)
        return out

    def _place(self, rows: np.ndarray, packed: np.ndarray) -> None:
        if len(rows) == 0:
            return
        top = int(rows.max())
        if top >= len(self._loc) and top < 2 * len(self._loc) + _DENSE_SLACK:
            grown = np.full(max(top + 1, 2 * len(self._loc)), -1, dtype=np.int64)
            grown[: len(self._loc)] = self._loc
            self._loc = grown
            for row in [r for r in self._sparse if r < len(grown)]:  # now in the dense range
                grown[row] = self._sparse.pop(row)
        dense = (rows >= 0) & (rows < len(self._loc))
        self._loc[rows[dense]] = packed[dense]
        for i in np.flatnonzero(~dense):
            if packed[i] < 0:
                self._sparse.pop(int(rows[i]), None)
            else:
                self._sparse[int(rows[i])] = int(packed[i])

    def slots(self, block: Block, rows: np.ndarray) -> np.ndarray:
        """Slots of ``rows`` in ``block``, -1 for rows that are elsewhere or nowhere."""
        packed = self._locate(np.asarray(rows, dtype=np.int64))
        inside = (packed >= 0) & ((packed >> _OFFSET_BITS) == block.id)
        return np.where(inside, packed & ((1 << _OFFSET_BITS) - 1), -1)

    def _block_for(self, tenant: str, agent: str) -> Block:
        key = (self.code(tenant), self.code(agent))
        found = self._block_of.get(key)
        if found is None:
            found = Block(len(self._blocks), tenant, agent, self.dim)
            self._blocks.append(found)
            self._block_of[key] = found
        return found

    # -- writes ---------------------------------------------------------------------------

    def upsert(
        self,
        row: int,
        tenant: str,
        agent: str,
        project_id: str | None,
        live: bool,
        vector: np.ndarray | None,
    ) -> None:
        if vector is None:
            self._update_meta(row, project_id, live)
            return
        self.upsert_many(
            [row], [tenant], [agent], [project_id], [live], np.asarray(vector)[None, :]
        )

    def _update_meta(self, row: int, project_id: str | None, live: bool) -> None:
        packed = int(self._locate(np.asarray([row], dtype=np.int64))[0])
        if packed < 0:
            return  # nothing to search for a row without a vector
        block = self._blocks[packed >> _OFFSET_BITS]
        slot = packed & ((1 << _OFFSET_BITS) - 1)
        block.live_count += int(live) - int(block.live[slot])
        block.live[slot] = live
        block.project[slot] = self.code(project_id)
        block.note(row, 0)

    def upsert_many(
        self,
        rows: Sequence[int],
        tenants: Sequence[str],
        agents: Sequence[str],
        projects: Sequence[str | None],
        live: Sequence[bool],
        vectors: np.ndarray,
        models: Sequence[str] | None = None,
        seqs: Sequence[int] | None = None,
    ) -> None:
        """Insert or update rows that have a vector (rows must be distinct in one call);
        ``models`` and ``seqs`` (their ``change_seq``) are kept for the ANN's checks."""
        if len(rows) == 0:
            return
        row_arr = np.asarray(rows, dtype=np.int64)
        vecs = np.asarray(vectors, dtype=np.float32).reshape(len(rows), self.dim)
        live_arr = np.asarray(live, dtype=bool)
        seq_arr = np.zeros(len(rows), dtype=np.int64) if seqs is None else np.asarray(seqs)
        project_arr = np.fromiter((self.code(p) for p in projects), np.int32, len(rows))
        packed = self._locate(row_arr)
        groups: dict[Block, list[int]] = {}
        for i, (tenant, agent) in enumerate(zip(tenants, agents, strict=True)):
            groups.setdefault(self._block_for(tenant, agent), []).append(i)
        for block, members in groups.items():
            idx = np.asarray(members, dtype=np.int64)
            if models is not None:
                block.models.update(models[i] for i in members)
            here = packed[idx]
            inside = (here >= 0) & ((here >> _OFFSET_BITS) == block.id)
            elsewhere = idx[(here >= 0) & ~inside]
            for i in elsewhere:  # a row moved partitions: leave the old slot dead
                self._kill(int(packed[i]), int(row_arr[i]))
            old = idx[inside]
            if len(old):
                slot = here[inside] & ((1 << _OFFSET_BITS) - 1)
                changed = np.any(block.matrix[slot] != vecs[old], axis=1)
                block.live_count += int(live_arr[old].sum()) - int(block.live[slot].sum())
                block.matrix[slot] = vecs[old]
                block.project[slot] = project_arr[old]
                block.live[slot] = live_arr[old]
                block.seq[slot] = seq_arr[old]
                if block.tracked:
                    for r, c in zip(row_arr[old].tolist(), changed.tolist(), strict=True):
                        block.note(r, CHANGED_VECTOR if c else 0)
            fresh = idx[~inside]
            if len(fresh):
                start = block.size
                end = start + len(fresh)
                block.grow(end)
                block.matrix[start:end] = vecs[fresh]
                block.rows[start:end] = row_arr[fresh]
                block.project[start:end] = project_arr[fresh]
                block.live[start:end] = live_arr[fresh]
                block.seq[start:end] = seq_arr[fresh]
                block.live_count += int(live_arr[fresh].sum())
                block.size = end
                self._place(row_arr[fresh], (block.id << _OFFSET_BITS) + np.arange(start, end))
                if block.tracked:
                    for r in row_arr[fresh].tolist():
                        block.note(r, CHANGED_VECTOR)
        for block in groups:
            if block.size >= 4096 and block.live_count * 2 < block.size:
                self._compact(block)

    def _kill(self, packed: int, row: int) -> None:
        block = self._blocks[packed >> _OFFSET_BITS]
        slot = packed & ((1 << _OFFSET_BITS) - 1)
        if block.live[slot]:
            block.live_count -= 1
        block.live[slot] = False
        block.note(row, 0)

    def _compact(self, block: Block) -> None:
        gone = np.asarray(block.compact(), dtype=np.int64)
        stale = gone[(self._locate(gone) >> _OFFSET_BITS) == block.id]
        self._place(stale, np.full(len(stale), -1, dtype=np.int64))
        n = block.size
        self._place(block.rows[:n], (block.id << _OFFSET_BITS) + np.arange(n))

    def drop(self, row: int) -> None:
        """The row lost its vector (a purge): out of results, and its bytes zeroed."""
        packed = int(self._locate(np.asarray([row], dtype=np.int64))[0])
        if packed < 0:
            return
        block = self._blocks[packed >> _OFFSET_BITS]
        slot = packed & ((1 << _OFFSET_BITS) - 1)
        self._kill(packed, row)
        block.matrix[slot] = 0.0
        # The slot stays (dead) until compaction, but the row no longer maps to it.
        self._place(np.asarray([row], dtype=np.int64), np.asarray([-1], dtype=np.int64))
        block.note(row, PURGED)

    # -- reads ----------------------------------------------------------------------------

    def search(
        self,
        query: np.ndarray,
        tenant: str,
        agent: str,
        project_id: str | None,
        limit: int,
    ) -> list[tuple[int, float]]:
        """Top ``limit`` (row, cosine) among live rows of this tenant, agent and scope."""
        block = self.block(tenant, agent)
        if block is None:
            return []
        return block.search(query, self.project_code(project_id), limit)

    def scores(self, query: np.ndarray, rows: Sequence[int]) -> dict[int, float]:
        """Cosine for specific rows (those with a vector), e.g. keyword hits the vector
        lane's top-k did not reach."""
        if len(rows) == 0:
            return {}
        row_arr = np.asarray(rows, dtype=np.int64)
        packed = self._locate(row_arr)
        out: dict[int, float] = {}
        found = packed >= 0
        for block_id in np.unique(packed[found] >> _OFFSET_BITS).tolist():
            block = self._blocks[block_id]
            sel = found & ((packed >> _OFFSET_BITS) == block_id)
            slots = packed[sel] & ((1 << _OFFSET_BITS) - 1)
            sims = block.matrix[slots] @ query
            for row, sim in zip(row_arr[sel].tolist(), sims.tolist(), strict=True):
                out[row] = float(sim)
        return out

    def rows(self) -> Sequence[int]:
        return [int(r) for b in self._blocks for r in b.rows[: b.size][b.live[: b.size]]]

"""Bulk writes: embedding ahead of the commits, and committing chunk by chunk.

A bulk write (``Writes.store_many``) checks every item first, then commits them
:data:`COMMIT_ITEMS` at a time, each chunk its own transaction, so it holds the store's
writer lock for one chunk at a time and every other request gets its turn in between.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor

from cairn.model import MemoryInput, Namespace, Record
from cairn.services.journal import Journal
from cairn.services.journal import Vectors as Vectors  # the vectors of a batch

Progress = Callable[[int, int], None]

# Items of a bulk write committed per transaction.
COMMIT_ITEMS = 500


class EmbedAhead:
    """Embeds batches of records on one background thread while the caller goes on.

    The model runs outside the interpreter lock (onnxruntime releases it), so a bulk write
    validates, redacts and reads the next items, and commits the batches already embedded,
    while the model works on the next batch: the CPU-bound Python of a write and the
    model's kernels overlap instead of taking turns. Nothing here writes; the caller
    commits each batch when :meth:`Future.result` hands over its vectors, and
    :meth:`close` (always, e.g. when an item turns out invalid) drops what was not
    started yet and waits for the batch under way."""

    def __init__(self, embed: Callable[[Sequence[Record]], Vectors]) -> None:
        self._embed = embed
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="cairn-embed")

    def submit(self, records: Sequence[Record]) -> Future[Vectors]:
        return self._pool.submit(self._embed, list(records))

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)

    def __enter__(self) -> EmbedAhead:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def commit_chunks(
    journal: Journal,
    todo: list[tuple[Record, str]],
    batches: list[tuple[int, Future[Vectors]]],
    ns: Namespace,
    progress: Progress | None,
) -> list[bool]:
    """Commit ``todo`` COMMIT_ITEMS at a time, each chunk once its vectors are in."""
    fresh: list[bool] = []
    vectors = Vectors("")  # keeps the model of the batches it holds
    pending = iter(batches)
    embedded = 0
    for start in range(0, len(todo), COMMIT_ITEMS):
        part = todo[start : start + COMMIT_ITEMS]
        while embedded < start + len(part):
            embedded, future = next(pending)
            vectors.add(future.result())
            if progress:
                progress(embedded, len(todo))
        events = [
            journal.event("memory.stored", {"record": r.to_dict()}, ns, k, sender="tool")
            for r, k in part
        ]
        fresh += journal.commit(events, vectors)
        if embedded == start + len(part):
            vectors = Vectors("")  # the next chunk's texts are in the batches still to come
    return fresh


def item_key(batch_key: str, index: int, item: MemoryInput) -> str:
    """An ingest item's idempotency key, when the caller gave only the batch's: from the
    batch key, the item's place in the batch and its content (every field), so a retried
    batch maps each item onto the event its first try wrote."""
    content = json.dumps(
        [getattr(item, name) for name in MemoryInput.__dataclass_fields__],
        ensure_ascii=False,
        sort_keys=True,
        default=str,
    )
    text = "\0".join((batch_key, str(index), content))
    return "ingest:" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:40]

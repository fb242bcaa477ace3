"""Rebuilding a damaged SQLite store (``cairn doctor --repair``), losing nothing that can
still be read.

The journal is the store's source of truth: every event still readable in the damaged
file is copied into a new store, which a rebuild (the same replay as ``cairn rebuild``)
turns back into memories. What the journal lost, the damaged file's rows of memories may
still hold (read row by row, imported under their own ids); and the Markdown projection:
each memory there whose id the journal did not give back is restored from it (as
``cairn rebuild --from-markdown`` does). The new store is built under another name and
swapped in whole; the damaged file is kept beside it, renamed, never deleted.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from cairn.adapters.embedding import Embedder
from cairn.compose import follow_store, make_embedder, open_provider, sqlite_store
from cairn.config import Config
from cairn.errors import InvalidInput
from cairn.memory import Memory
from cairn.model import EXPORT_FORMAT, Record
from cairn.projection import MarkdownProjection
from cairn.projection.markdown_files import TENANTS_DIR, file_header
from cairn.provider.client import Client
from cairn.provider.contract import RebuildRequest, RebuildResponse
from cairn.provider.local import LocalProvider
from cairn.storage.sqlite.doctor import Finding, check, salvage_events, salvage_records

__all__ = ["Finding", "Repair", "check", "check_sqlite", "repair_sqlite", "repair_store"]

OpenStore = Callable[[Path], LocalProvider]
_SIDES = ("-wal", "-shm", "-journal", ".ann")


@dataclass(frozen=True, slots=True)
class Repair:
    events: int  # journal events read back from the damaged file
    unreadable: int  # events (or stretches) that could not be read
    replayed: int  # events replayed into the new store
    from_rows: int  # memories the journal lost, read back from the damaged file's rows
    from_markdown: int  # memories the journal lost, restored from the Markdown files
    kept: Path | None  # where the damaged file is now (None: there was none)


def _pairs(folder: Path, journal: set[tuple[str, str]]) -> list[tuple[str, str]]:
    """Every tenant and agent with events in the journal or Markdown files in
    ``folder``."""
    found = {("default", "default"), *journal}
    tenants = folder / TENANTS_DIR
    if tenants.is_dir():
        for path in sorted(tenants.rglob("*.md")):
            header = file_header(path) or {}
            tenant, agent = header.get("tenant"), header.get("agent")
            if isinstance(tenant, str) and isinstance(agent, str) and tenant and agent:
                found.add((tenant, agent))
    return sorted(found)


def check_sqlite(config: Config, home: Path) -> tuple[Path, list[Finding]]:
    """``cairn doctor``: this home's SQLite file and every finding of :func:`check` on it."""
    path = sqlite_store(config, home)
    return path, check(path)


def repair_sqlite(config: Config, home: Path, *, embedder: Embedder | None = None) -> Repair:
    """``cairn doctor --repair``: :func:`repair_store` on this home's file."""

    def fresh(path: Path) -> LocalProvider:
        provider = open_provider(
            config, path=path, home=home, markdown=False,
            embedder=embedder or make_embedder(follow_store(config, path, home)),
        )  # fmt: skip
        assert isinstance(provider, LocalProvider)
        return provider

    return repair_store(sqlite_store(config, home), fresh)


def repair_store(path: Path, open_store: OpenStore) -> Repair:
    """Rebuild the store at ``path`` from what of its journal can be read, then from its
    Markdown files; ``open_store`` opens a provider on a new file (no Markdown writes)."""
    findings = check(path)
    if any("another program" in f.detail or "not an SQLite file" in f.detail for f in findings):
        raise InvalidInput(f"{path} is not a cairn store; doctor leaves it alone")
    salvage = salvage_events(path)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    fresh = path.with_name(f".{path.name}.repair-{stamp}-{os.getpid()}")
    provider = open_store(fresh)
    try:
        with provider.ports.records.transaction() as tx:
            tx.append_events(salvage.events)
        tenants = sorted({e.tenant for e in salvage.events})
        replayed = 0
        for tenant in tenants:
            client = Client(provider.bound(tenant=tenant))
            key = f"doctor-{stamp}-{tenant}"
            replayed += client.apply(RebuildRequest, RebuildResponse, key).replayed
        from_rows = _restore_rows(provider, salvage_records(path))
        restored = 0
        for tenant, agent in _pairs(path.parent, {(e.tenant, e.agent) for e in salvage.events}):
            mem = Memory(provider.bound(tenant=tenant, agent=agent))
            restored += MarkdownProjection.for_memory(path.parent, mem).restore_records(mem)
    except BaseException:
        provider.close()
        _remove(fresh)
        raise
    provider.close()
    kept = _swap(path, fresh, stamp)
    return Repair(len(salvage.events), salvage.unreadable, replayed, from_rows, restored, kept)


def _restore_rows(provider: LocalProvider, found: list[Record]) -> int:
    """The memories still readable in the damaged file's rows whose events were lost,
    imported under their own ids (what a replay gave back is left alone)."""
    by_pair: dict[tuple[str, str], list[Record]] = {}
    for record in found:
        by_pair.setdefault((record.tenant, record.agent), []).append(record)
    restored = 0
    for (tenant, agent), records in sorted(by_pair.items()):
        mem = Memory(provider.bound(tenant=tenant, agent=agent))
        known = {r.id for r in mem.list(include_forgotten=True)}
        lines = [json.dumps({"format": EXPORT_FORMAT, "source": "doctor"})]
        lines += [
            json.dumps({"type": "record", "record": r.to_dict()}, ensure_ascii=False)
            for r in records
            if r.id not in known
        ]
        if len(lines) > 1:
            restored += mem.import_(lines)
    return restored


def _swap(path: Path, fresh: Path, stamp: str) -> Path | None:
    """The new file under the store's name; the damaged one (and its side files) kept
    under ``<name>.damaged-<time>``."""
    kept: Path | None = None
    if path.exists():
        kept = path.with_name(f"{path.name}.damaged-{stamp}")
        for side in _SIDES:
            old = Path(f"{path}{side}")
            if old.exists():
                os.replace(old, f"{kept}{side}")
        os.replace(path, kept)
    os.replace(fresh, path)
    _remove_sides(fresh)
    return kept


def _remove_sides(path: Path) -> None:
    for side in _SIDES:
        target = Path(f"{path}{side}")
        with contextlib.suppress(OSError):
            if target.is_dir():
                shutil.rmtree(target)
            else:
                target.unlink()


def _remove(path: Path) -> None:
    with contextlib.suppress(OSError):
        path.unlink()
    _remove_sides(path)

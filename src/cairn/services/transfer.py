"""Export and import: every version and tombstone as JSON lines, lossless and idempotent.

Importing into a tenant always creates that tenant's own copy: records keep their ids,
versions and times and move to the importing tenant and agent, where keys are scoped,
so an export of another tenant can never touch, shadow or block a row of that tenant.
Each line becomes a journal event whose id is derived from the namespace and the line,
so importing the same file twice changes nothing.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from collections.abc import Iterable, Iterator
from dataclasses import fields
from typing import Any

from cairn.config import Config
from cairn.engine.apply import record_from_payload
from cairn.errors import InvalidInput
from cairn.model import (
    AUTHORITIES,
    KINDS,
    MEMORY_TYPES,
    ORIGINS,
    SCOPES,
    STATES,
    TOMBSTONE_REASONS,
    TRUST_LEVELS,
    Event,
    Record,
    Tombstone,
)
from cairn.services.journal import Journal, Namespace
from cairn.storage.ports import RecordQuery, RecordStore
from cairn.validation import check_text

EXPORT_FORMAT = "cairn.export.v1"
_ENUMS = {
    "kind": KINDS,
    "memory_type": MEMORY_TYPES,
    "authority": AUTHORITIES,
    "origin": ORIGINS,
    "trust": TRUST_LEVELS,
    "scope": SCOPES,
    "state": STATES,
}
_RECORD_FIELDS = {f.name for f in fields(Record)}
_TOMBSTONE_FIELDS = {f.name for f in fields(Tombstone)}


def _line(data: dict[str, Any]) -> str:
    return json.dumps(data, ensure_ascii=False, sort_keys=True)


class Transfer:
    def __init__(self, records: RecordStore, journal: Journal, config: Config) -> None:
        self._records = records
        self._journal = journal
        self._config = config

    def export(self, ns: Namespace) -> Iterator[str]:
        """The lines of an export: a header, every version, every tombstone."""
        yield _line({"format": EXPORT_FORMAT, "tenant": ns.tenant, "agent": ns.agent})
        query = RecordQuery(ns.tenant, ns.agent, include_inactive=True)
        for record in self._records.list_records(query):
            for version in self._records.history(ns.tenant, ns.agent, record.id):
                if version.body == "":
                    continue  # a permanently forgotten skeleton: only its tombstone travels
                yield _line({"type": "record", "record": version.to_dict()})
        for stone in self._records.tombstones(ns.tenant, ns.agent):
            yield _line({"type": "tombstone", "tombstone": stone.to_dict()})

    def parse(self, lines: Iterable[str], ns: Namespace, *, source: str = "import") -> list[Event]:
        """Validate every line first; the events an import would append."""
        events: list[Event] = []
        chains: dict[str, list[tuple[str, Record]]] = {}  # record id -> (where, version)
        header_seen = False
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            where = f"{source}:{number}"
            try:
                data = json.loads(line)
            except (json.JSONDecodeError, RecursionError):
                raise InvalidInput(f"{where}: not JSON") from None
            if not isinstance(data, dict):
                raise InvalidInput(f"{where}: expected an object")
            if not header_seen:
                if data.get("format") != EXPORT_FORMAT:
                    raise InvalidInput(f"{where}: not a cairn export ({EXPORT_FORMAT})")
                header_seen = True
                continue
            digest = hashlib.sha256(f"{ns.tenant}/{ns.agent}/{line.strip()}".encode()).hexdigest()
            key = f"import:{digest[:32]}"
            if data.get("type") == "record":
                record = self._record(data.get("record"), ns, where)
                chains.setdefault(record.id, []).append((where, record))
                events.append(
                    self._journal.event("memory.imported", {"record": record.to_dict()}, ns, key)
                )
            elif data.get("type") == "tombstone":
                stone = self._tombstone(data.get("tombstone"), ns, where)
                events.append(
                    self._journal.event("import.tombstone", {"tombstone": stone.to_dict()}, ns, key)
                )
            else:
                raise InvalidInput(f"{where}: unknown type {str(data.get('type'))[:40]!r}")
        if not header_seen:
            raise InvalidInput(f"{source}: empty import: no cairn export header")
        for chain in chains.values():
            _check_history(chain)
        return events

    def _record(self, data: Any, ns: Namespace, where: str) -> Record:
        if not isinstance(data, dict):
            raise InvalidInput(f"{where}: record must be an object")
        unknown = set(data) - _RECORD_FIELDS
        if unknown:
            raise InvalidInput(f"{where}: unknown record field {sorted(unknown)[0]!r}")
        for name, allowed in _ENUMS.items():
            if name in data and data[name] not in allowed:
                raise InvalidInput(f"{where}: unknown {name} {str(data[name])[:40]!r}")
        try:
            record = record_from_payload({**data, "tenant": ns.tenant, "agent": ns.agent})
            check_text("body", record.body, self._config.memory.store.maxBodyChars)
        except InvalidInput as exc:
            raise InvalidInput(f"{where}: {exc}") from None
        except (TypeError, ValueError) as exc:
            raise InvalidInput(f"{where}: malformed record ({exc})") from None
        if record.trust == "system" and record.origin in ("reflection", "review"):
            raise InvalidInput(f"{where}: a learned record cannot have trust 'system'")
        return record

    def _tombstone(self, data: Any, ns: Namespace, where: str) -> Tombstone:
        if not isinstance(data, dict):
            raise InvalidInput(f"{where}: tombstone must be an object")
        unknown = set(data) - _TOMBSTONE_FIELDS
        if unknown:
            raise InvalidInput(f"{where}: unknown tombstone field {sorted(unknown)[0]!r}")
        if data.get("reason") not in TOMBSTONE_REASONS:
            raise InvalidInput(f"{where}: unknown reason {str(data.get('reason'))[:40]!r}")
        try:
            return Tombstone(**{**data, "tenant": ns.tenant, "agent": ns.agent})
        except TypeError as exc:
            raise InvalidInput(f"{where}: malformed tombstone ({exc})") from None

    def import_(self, lines: Iterable[str], ns: Namespace, *, source: str = "import") -> int:
        """All lines validated first, then written in one transaction; returns how many
        entries were new."""
        events = self.parse(lines, ns, source=source)
        records = [
            record_from_payload(e.payload["record"]) for e in events if "record" in e.payload
        ]
        applied = self._journal.commit(events, self._journal.embed(records))
        return sum(applied)


def _check_history(chain: list[tuple[str, Record]]) -> None:
    """The versions of one record in an export: consecutive, each superseded by the next,
    the newest by none (so an import can never leave two current versions, or none)."""
    for (_, old), (where, new) in itertools.pairwise(chain):
        if new.version != old.version + 1 or old.superseded_by != new.version:
            raise InvalidInput(
                f"{where}: version {new.version} of memory {new.id} does not follow"
                f" version {old.version} (superseded by {old.superseded_by})"
            )
    where, newest = chain[-1]
    if newest.superseded_by is not None:
        raise InvalidInput(
            f"{where}: version {newest.version} of memory {newest.id} is superseded by"
            f" version {newest.superseded_by}, which the import does not hold"
        )

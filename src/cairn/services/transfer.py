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
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from cairn.config import Config
from cairn.errors import InvalidInput
from cairn.model import (
    EXPORT_FORMAT,
    Event,
    Namespace,
    Record,
    Tombstone,
    record_from_dict,
)
from cairn.services.journal import Journal, Vectors
from cairn.services.secrets import SecretGuard
from cairn.storage.ports import RecordQuery, Records
from cairn.text import text_hash
from cairn.validation import (
    parse_json_line,
    validate_export_record,
    validate_export_tombstone,
)

EMBED_BATCH = 256  # records embedded between two progress reports


def _line(data: dict[str, Any]) -> str:
    return json.dumps(data, ensure_ascii=False, sort_keys=True)


class Transfer:
    def __init__(self, records: Records, journal: Journal, config: Config) -> None:
        self._records = records
        self._journal = journal
        self._config = config
        self._guard = SecretGuard()

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
        """Validate every line first; the events an import would append (``source`` as
        the contract checked it: ImportRequest)."""
        if isinstance(lines, str | bytes):
            raise InvalidInput("import takes the lines of an export, not one string")
        events: list[Event] = []
        chains: dict[str, list[tuple[str, Record]]] = {}  # record id -> (where, version)
        header_seen = False
        for number, line in enumerate(lines, start=1):
            where = f"{source}:{number}"
            if not isinstance(line, str):
                raise InvalidInput(f"{where}: a line must be text, not {type(line).__name__}")
            if not line.strip():
                continue
            data = parse_json_line(line, where=where)
            if not isinstance(data, dict):
                raise InvalidInput(f"{where}: expected an object")
            if not header_seen:
                if data.get("format") != EXPORT_FORMAT:
                    raise InvalidInput(f"{where}: not a cairn export ({EXPORT_FORMAT})")
                header_seen = True
                continue
            kind = data.get("type")
            if kind not in ("record", "tombstone"):
                raise InvalidInput(f"{where}: unknown type {str(kind)[:40]!r}")
            if set(data) != {"type", kind}:
                raise InvalidInput(f"{where}: an entry holds only its type and its {kind}")
            if kind == "record":
                limit = self._config.memory.store.maxBodyChars
                fields = validate_export_record(data["record"], where=where, max_body_chars=limit)
                fields = self._policed(data["record"], fields, where)
                record = Record(**{**fields, "tenant": ns.tenant, "agent": ns.agent})
                payload: dict[str, Any] = {"record": record.to_dict()}
            else:
                fields = validate_export_tombstone(data["tombstone"], where=where)
                stone = Tombstone(**{**fields, "tenant": ns.tenant, "agent": ns.agent})
                payload = {"tombstone": stone.to_dict()}
            # Hashed only now: every string of the line is known to be valid UTF-8.
            digest = hashlib.sha256(f"{ns.tenant}/{ns.agent}/{line.strip()}".encode()).hexdigest()
            key = f"import:{digest[:32]}"
            if kind == "record":
                chain = chains.setdefault(record.id, [])
                if any(held == record for _, held in chain):
                    continue  # the same line twice: one import of it
                chain.append((where, record))
            event_type = "memory.imported" if kind == "record" else "import.tombstone"
            events.append(self._journal.event(event_type, payload, ns, key))
        if not header_seen:
            raise InvalidInput(f"{source}: empty import: no cairn export header")
        for chain in chains.values():
            _check_history(chain)
        return events

    def _policed(self, raw: dict[str, Any], fields: dict[str, Any], where: str) -> dict[str, Any]:
        """An exported record's texts after this store's secret policy: an export made
        under ``allow`` keeps its secrets, and importing it must not bring them in. The
        redacted record is checked again, as an export of it would be."""
        texts = {name: fields.get(name) for name in IMPORTED_TEXTS}
        texts, found = self._guard.scrub(self._config.memory.secrets, texts, where=where)
        if not found:
            return fields
        changed = {k: v for k, v in texts.items() if k in raw}
        again = {**raw, **changed, "text_hash": text_hash(texts["body"])}
        limit = self._config.memory.store.maxBodyChars
        return validate_export_record(again, where=where, max_body_chars=limit)

    def import_(
        self,
        lines: Iterable[str],
        ns: Namespace,
        *,
        source: str = "import",
        progress: Callable[[int, int], None] | None = None,
    ) -> int:
        """All lines validated first, then written in one transaction; returns how many
        entries were new. ``progress(done, total)``: records embedded so far."""
        events = self.parse(lines, ns, source=source)
        records = [record_from_dict(e.payload["record"]) for e in events if "record" in e.payload]
        vectors = Vectors("")  # with the model of its vectors: one, or "" for several
        for start in range(0, len(records), EMBED_BATCH):
            vectors.add(self._journal.embed(records[start : start + EMBED_BATCH]))
            if progress is not None:
                progress(min(start + EMBED_BATCH, len(records)), len(records))
        applied = self._journal.commit(events, vectors)
        return sum(applied)


# An imported record's texts (a learned doc's earlier bodies are in its source).
IMPORTED_TEXTS = (
    "body", "title", "tags", "source", "external_ref", "project_id", "path_patterns",
    "operations", "phases", "task_types",
)  # fmt: skip


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

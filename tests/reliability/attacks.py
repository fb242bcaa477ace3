"""Cross-tenant attacks: tenant B goes after tenant A's memories in the same file.

A (``acme``) holds stores, explicit memories, corrected ones (two versions), forgotten
ones, a permanently forgotten one and an application. B (``rival``), through the API and
the CLI, then:

1. reads A's ids and searches A's words: get, history, as_of, expand, feedback on A's
   application, recall, context, list, tombstones, journal, export, status;
2. writes A's ids: correct, forget, forget --permanent, restore, evict, unevict; reuses
   A's idempotency keys for its own writes (they must make B's own records);
3. imports A's export, versions of A's ids that A does not have, and permanent
   tombstones for A's live ids; then corrects, forgets, restores, permanently forgets
   its copies, and rebuilds.

A cross-tenant *read* is any of A's words in what B is shown before B imported them; a
cross-tenant *write* is any change to A's rows (every table, byte for byte), A's Markdown
files or A's export. Afterwards A's own work must still go through: correcting the id B
holds versions of, restoring the record B tombstoned. Agents inside one tenant are walls
of the same kind for the journal and every id, checked the same way.
"""

from __future__ import annotations

import json
import random
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cairn import Memory
from cairn.errors import CairnError
from cairn.model import MemoryInput
from reliability.checks import export_lines, structure
from reliability.harness import Tally, Words, body_for, cairn, make_home, open_memory, word_of

A, B = "acme", "rival"
_rng = random.Random(5)  # the filler words of the victim's bodies


@dataclass
class AttackResult:
    tried: int = 0
    refused: int = 0  # refused with a clear error (NotFound, InvalidInput, Conflict, exit 2)
    own_copy: int = 0  # succeeded, on the attacker's own data only
    reads: list[str] = field(default_factory=list)  # cross-tenant reads
    writes: list[str] = field(default_factory=list)  # cross-tenant writes
    tally: Tally = field(default_factory=lambda: Tally("cross-tenant"))

    def as_dict(self) -> dict[str, Any]:
        data = {k: v for k, v in vars(self).items() if k not in ("reads", "writes", "tally")}
        data.update(
            cross_tenant_reads=len(self.reads),
            cross_tenant_writes=len(self.writes),
            messages=(self.reads + self.writes + self.tally.failures())[:50],
        )
        return data


def tenant_rows(db: Path, tenant: str) -> dict[str, list[tuple[Any, ...]]]:
    """Every row a tenant owns, in every table, as stored (the feed stamps included)."""
    conn = sqlite3.connect(db)
    try:
        mine = "SELECT row FROM records WHERE tenant = ?"
        queries = {
            "events": "SELECT * FROM events WHERE tenant = ? ORDER BY seq",
            "records": "SELECT * FROM records WHERE tenant = ? ORDER BY row",
            "tombstones": "SELECT * FROM tombstones WHERE tenant = ? ORDER BY agent, record_id",
            "applications": "SELECT * FROM applications WHERE tenant = ? ORDER BY application_id",
            "pending_purges": "SELECT * FROM pending_purges WHERE tenant = ?",
            "vectors": f"SELECT * FROM vectors WHERE row IN ({mine}) ORDER BY row",
            "record_terms": f"SELECT * FROM record_terms WHERE row IN ({mine}) ORDER BY row",
        }
        return {name: conn.execute(sql, (tenant,)).fetchall() for name, sql in queries.items()}
    finally:
        conn.close()


class Attacker:
    def __init__(self, result: AttackResult, needles: list[str]) -> None:
        self.result = result
        self.needles = needles  # A's words: none may reach B before B imports them

    def leak(self, what: str, shown: str) -> None:
        found = [n for n in self.needles if n in shown]
        if found:
            self.result.reads.append(f"{what}: B saw {found[:3]}")

    def refused(self, what: str, call: Callable[[], Any]) -> None:
        """The call must fail with one of cairn's clear errors."""
        self.result.tried += 1
        try:
            value = call()
        except CairnError:
            self.result.refused += 1
            return
        except Exception as exc:
            self.result.tally.problem("errors", f"{what}: {type(exc).__name__}: {exc}")
            return
        self.result.writes.append(f"{what}: accepted, returned {str(value)[:120]}")

    def shown(
        self, what: str, call: Callable[[], Any], view: Callable[[Any], Any] = lambda value: value
    ) -> Any:
        """A read that may succeed; what it shows (``view``: without the attacker's own
        query echoed back) must hold nothing of A's."""
        self.result.tried += 1
        try:
            value = call()
        except CairnError:
            self.result.refused += 1
            return None
        self.leak(what, repr(view(value)))
        self.result.own_copy += 1
        return value

    def cli(self, home: Path, *args: str) -> None:
        self.result.tried += 1
        run = cairn(home, "--tenant", B, *args)
        if "Traceback" in run.stderr:
            self.result.tally.problem("tracebacks", f"cairn {' '.join(args)}: {run.stderr[-400:]}")
        if run.returncode not in (0, 2):
            self.result.tally.problem(
                "errors", f"cairn {' '.join(args)}: exit {run.returncode}: {run.stderr[-300:]}"
            )
        self.leak(f"cairn {' '.join(args)}", run.stdout + run.stderr)
        if run.returncode == 2:
            self.result.refused += 1
        else:
            self.result.own_copy += 1


def _victim(home: Path, words: Words) -> tuple[Memory, dict[str, Any]]:
    """Tenant A's memories: every kind of state a record can be in."""
    a = open_memory(home, tenant=A)
    bodies = [body_for(words(), _rng) for _ in range(30)]
    ids = a.store_many([MemoryInput(body=b) for b in bodies])
    ids += [a.remember(body_for(words(), _rng)).id for _ in range(5)]
    for record_id in ids[:3]:
        a.correct(record_id, body_for(words(), _rng))
    for record_id in ids[3:5]:
        a.forget(record_id)
    a.forget(ids[5], permanent=True)
    a.evict(ids[6])
    applied = a.context("deploy note filed under the lantern").applications
    application = applied[0].application_id if applied else a.expand(ids[7]).application_id
    return a, {
        "ids": ids,
        "live": ids[7:],
        "corrected": ids[:3],
        "forgotten": ids[3:5],
        "purged": ids[5],
        "evicted": ids[6],
        "application": application,
    }


def run_attacks(root: Path) -> AttackResult:
    home = make_home(root / "tenants-home", real=False)
    result = AttackResult()
    a, known = _victim(home, Words(3000))
    words = [w for line in export_lines(a) for w in [word_of(line)] if w]
    everything = sorted({word_of(r.body) or "" for r in a.list(include_forgotten=True)})
    needles = sorted(set(words) | set(everything) - {""})
    export = root / "acme-export.jsonl"
    export.write_text("\n".join(export_lines(a)) + "\n", encoding="utf-8")
    before_rows = tenant_rows(home / "memory.db", A)
    before_export = export_lines(a)
    before_files = _files(home / "tenants" / A)
    a.close()

    b = open_memory(home, tenant=B)
    attacker = Attacker(result, needles)
    ids = known["ids"]
    _reads(attacker, b, ids, known, needles)
    _writes(attacker, b, ids, known, a_keys=_event_ids(home / "memory.db", A))
    for args in (
        ("show", ids[0]),
        ("show", ids[0], "--history"),
        ("list", "--all"),
        ("journal",),
        ("export",),
        ("status",),
        ("recall", needles[0]),
        ("context", "--task", needles[1]),
        ("expand", ids[8]),
        ("correct", ids[9], "rival text"),
        ("forget", ids[10]),
        ("forget", ids[11], "--permanent"),
        ("restore", ids[3]),
        ("feedback", known["application"], "used-successfully"),
    ):
        attacker.cli(home, *args)
    attacker.needles = []  # from here on B holds copies of A's words, legitimately
    _imports(attacker, b, ids, known, export)
    attacker.cli(home, "import", str(export))
    attacker.cli(home, "forget", ids[12], "--permanent")
    attacker.cli(home, "rebuild")
    b.rebuild()
    b.close()

    after_rows = tenant_rows(home / "memory.db", A)
    for table, rows in before_rows.items():
        if after_rows[table] != rows:
            result.writes.append(f"A's {table} changed ({len(rows)} -> {len(after_rows[table])})")
    if _files(home / "tenants" / A) != before_files:
        result.writes.append("A's Markdown files changed")
    a = open_memory(home, tenant=A)
    try:
        if export_lines(a) != before_export:
            result.writes.append("A's export changed")
        _victim_still_works(a, result, known)
        _agents(a, result)
    finally:
        a.close()
    structure(home / "memory.db", result.tally, "after the attacks")
    return result


def _reads(
    at: Attacker, b: Memory, ids: list[str], known: dict[str, Any], needles: list[str]
) -> None:
    for record_id in ids:
        at.refused(f"B get {record_id}", lambda i=record_id: b.get(i))
        at.refused(f"B history {record_id}", lambda i=record_id: b.history(i))
        at.refused(
            f"B get as_of {record_id}", lambda i=record_id: b.get(i, as_of="2100-01-01T00:00:00Z")
        )
    for record_id in known["live"][:5]:
        at.refused(f"B expand {record_id}", lambda i=record_id: b.expand(i))
    at.refused(
        "B feedback on A's application",
        lambda: b.feedback(known["application"], "used-successfully"),
    )
    for word in needles[:10]:
        at.shown(
            f"B recall {word}",
            lambda w=word: b.recall(w),
            lambda r: (r.preamble, r.ranked, r.trace),
        )
        at.shown(
            f"B context {word}",
            lambda w=word: b.context(f"note filed under {w}"),
            lambda c: (c.resident, c.manifest, c.applications),
        )
    at.shown("B list", lambda: b.list(include_forgotten=True))
    at.shown("B tombstones", b.tombstones)
    at.shown("B journal", b.journal)
    at.shown("B export", lambda: export_lines(b))
    at.shown("B explain", b.explain)
    status = at.shown("B status", b.status)
    if status is not None and any(status.counts[k] for k in ("records", "events", "versions")):
        at.result.reads.append(f"B status counts A's rows: {status.counts}")


def _writes(
    at: Attacker, b: Memory, ids: list[str], known: dict[str, Any], a_keys: list[str]
) -> None:
    for record_id in ids[:12]:
        at.refused(f"B correct {record_id}", lambda i=record_id: b.correct(i, "rival text"))
        at.refused(f"B forget {record_id}", lambda i=record_id: b.forget(i))
        at.refused(f"B purge {record_id}", lambda i=record_id: b.forget(i, permanent=True))
        at.refused(f"B evict {record_id}", lambda i=record_id: b.evict(i))
    for record_id in [*known["forgotten"], known["purged"]]:
        at.refused(f"B restore {record_id}", lambda i=record_id: b.restore(i))
    at.refused(f"B unevict {known['evicted']}", lambda: b.unevict(known["evicted"]))
    for key in a_keys[:10]:  # A's idempotency keys must not hand B A's records
        at.result.tried += 1
        record = b.store(f"rival's own note under key {key}", event_id=key)
        if record.tenant != B or record.id in ids:
            at.result.writes.append(f"B store with A's key {key} returned {record.id}")
        else:
            at.result.own_copy += 1


def _imports(at: Attacker, b: Memory, ids: list[str], known: dict[str, Any], export: Path) -> None:
    lines = export.read_text(encoding="utf-8").splitlines()
    at.result.tried += 1
    count = b.import_(lines)
    copies = {r.id for r in b.list(include_forgotten=True)}
    if count and set(ids) - {known["purged"]} <= copies:
        at.result.own_copy += 1
    else:
        at.result.tally.problem("errors", f"B's import of A's export made {count}, not a copy")
    header = lines[0]
    versions, stones = [header], [header]
    for record_id in known["live"][:5]:  # versions A does not have; tombstones in A's name
        base = json.loads(next(x for x in lines if f'"id": "{record_id}"' in x))["record"]
        versions.append(
            json.dumps(
                {
                    "type": "record",
                    "record": {
                        **base,
                        "version": base["version"] + 1,
                        "supersedes": base["version"],
                        "body": "rival version",
                        "text_hash": "7" * 64,
                    },
                }
            )
        )
        stones.append(
            json.dumps(
                {
                    "type": "tombstone",
                    "tombstone": {
                        "record_id": record_id,
                        "tenant": A,
                        "agent": "default",
                        "scope": "global",
                        "project_id": None,
                        "text_hash": "0" * 64,
                        "reason": "user-remove",
                        "permanent": True,
                        "removed_at": "2026-01-01T00:00:00Z",
                        "restored_at": None,
                    },
                }
            )
        )
    for forged in (versions, stones):
        at.result.tried += 1
        try:
            b.import_(forged)
            at.result.own_copy += 1
        except CairnError:
            at.result.refused += 1
    for record_id in known["live"][:4]:
        at.shown(f"B correct its copy {record_id}", lambda i=record_id: b.correct(i, "rival"))
    for record_id in known["forgotten"]:
        at.shown(f"B restore its copy {record_id}", lambda i=record_id: b.restore(i))
    for record_id in known["live"][5:10]:
        at.shown(f"B purge its copy {record_id}", lambda i=record_id: b.forget(i, permanent=True))


def _victim_still_works(a: Memory, result: AttackResult, known: dict[str, Any]) -> None:
    """A's own work is neither blocked nor bent by what B did."""
    try:
        for record_id in known["live"][:5]:
            before = a.get(record_id)
            after = a.correct(record_id, body_for(Words(3001)(), _rng))
            if after.version != before.version + 1:
                result.writes.append(f"A's correct of {record_id} made v{after.version}")
        for record_id in known["forgotten"]:
            a.restore(record_id)
        for record_id in known["live"][5:10]:
            word = word_of(a.get(record_id).body) or ""
            if not any(t["id"] == record_id for t in a.recall(word).trace):
                result.writes.append(f"B's purge of its copy took {record_id} from A's lanes")
    except CairnError as exc:
        result.writes.append(f"A's own work was refused after B's attacks: {exc}")


def _agents(a: Memory, result: AttackResult) -> None:
    """Inside a tenant, an agent reads only its own journal and ids."""
    result.tried += 2
    other = a.journal(agent="helper")
    if other:
        result.reads.append(f"agent helper reads {len(other)} events of agent default")
    try:
        a.get(a.list()[0].id, agent="helper")
        result.reads.append("agent helper reads agent default's record")
    except CairnError:
        result.refused += 1


def _event_ids(db: Path, tenant: str) -> list[str]:
    conn = sqlite3.connect(db)
    try:
        found = conn.execute("SELECT event_id FROM events WHERE tenant = ? ORDER BY seq", (tenant,))
        return [r[0] for r in found]
    finally:
        conn.close()


def _files(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }

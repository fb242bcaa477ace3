"""What the harness checks after every kill, on the reopened store.

- ``compare``: the state is exactly what the acknowledged writes (and the one write in
  flight, if it committed) made -- every acknowledged write present, nothing else.
- ``structure``: no half record, read straight from the SQLite file: every record version
  has its journal event and every event its record, versions chain, every live row has its
  vector and keyword terms, tombstones match forgets, no permanent forget left pending.
- ``lanes``: each live record is found by its unique word through the keyword lane and the
  vector lane (the recall trace names each candidate's lanes), the keyword lane finds it
  alone, and no lane returns a row that is not a live current version; dead words
  (superseded, forgotten) find nothing by keyword.
- ``replay``: ``rebuild`` and compare the export before and after.
- ``leaks`` (harness.py): no byte of a permanently forgotten body in any file.
"""

from __future__ import annotations

import io
import itertools
import json
import random
import sqlite3
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from cairn import Memory
from cairn.model import Record
from reliability.harness import Tally, leaks, needles_of, word_of


class Version(NamedTuple):
    version: int
    supersedes: int | None
    superseded_by: int | None
    state: str
    purged: int
    body: str
    forgotten_at: str | None
    row: int


@dataclass
class Expect:
    """What one record must look like: its current version, its word, its state."""

    version: int
    word: str
    state: str = "live"  # live | forgotten | purged
    words: set[str] = field(default_factory=set)  # every word it ever had
    secrets: set[str] = field(default_factory=set)  # other unique words of its body

    def __post_init__(self) -> None:
        self.words.add(self.word)

    def copy(self) -> Expect:
        return Expect(self.version, self.word, self.state, set(self.words), set(self.secrets))


class Model:
    """The expected state of one tenant and agent, built from acknowledged writes."""

    def __init__(self) -> None:
        self.records: dict[str, Expect] = {}

    def add(
        self,
        record_id: str,
        word: str,
        *,
        version: int = 1,
        state: str = "live",
        secret: str | None = None,
    ) -> None:
        secrets = {secret} if secret else set()
        self.records[record_id] = Expect(version, word, state, secrets=secrets)

    def correct(self, record_id: str, word: str) -> None:
        e = self.records[record_id]
        e.version += 1
        e.word = word
        e.words.add(word)

    def set_state(self, record_id: str, state: str) -> None:
        self.records[record_id].state = state

    def ids(self, state: str) -> list[str]:
        return sorted(i for i, e in self.records.items() if e.state == state)

    def dead_words(self) -> list[str]:
        out = []
        for e in self.records.values():
            out += sorted(e.words | e.secrets if e.state != "live" else e.words - {e.word})
        return out

    def purged_needles(self) -> dict[bytes, str]:
        gone = [e for e in self.records.values() if e.state == "purged"]
        return needles_of({w for e in gone for w in e.words | e.secrets})


# -- the state against the model ----------------------------------------------------------


def compare(mem: Memory, model: Model, tally: Tally, what: str) -> dict[str, Record]:
    """Every expected record exactly as expected, and no record the model does not know.
    Returns the current versions (forgotten ones included)."""
    actual = {r.id: r for r in mem.list(include_forgotten=True)}
    stones = {t.record_id: t for t in mem.tombstones()}
    for record_id, e in model.records.items():
        tally.checked += 1
        found = actual.get(record_id)
        stone = stones.get(record_id)
        if e.state == "purged":
            if found is not None or stone is None or not stone.permanent:
                tally.problem("lost", f"{what}: permanent forget of {record_id} not in force")
            continue
        if found is None:
            tally.problem("lost", f"{what}: {record_id} ({e.state}, v{e.version}) is missing")
            continue
        if found.version != e.version or word_of(found.body) != e.word:
            tally.problem(
                "lost",
                f"{what}: {record_id} is v{found.version} {word_of(found.body)},"
                f" expected v{e.version} {e.word}",
            )
        forgotten = found.forgotten_at is not None
        if forgotten != (e.state == "forgotten"):
            tally.problem("lost", f"{what}: {record_id} forgotten={forgotten}, expected {e.state}")
        active = stone is not None and stone.restored_at is None
        if active != (e.state == "forgotten"):
            tally.problem("partial", f"{what}: {record_id} tombstone active={active}, {e.state}")
    for record_id in sorted(set(actual) - set(model.records)):
        body = actual[record_id].body
        tally.problem("partial", f"{what}: unexpected record {record_id} ({word_of(body)})")
    return actual


# -- the file itself ------------------------------------------------------------------------


def structure(db: Path, tally: Tally, what: str) -> None:
    """Half records, read from the file with a plain SQLite connection."""
    conn = sqlite3.connect(db)
    try:
        _structure(conn, tally, what)
    finally:
        conn.close()


def _structure(conn: sqlite3.Connection, tally: Tally, what: str) -> None:
    def bad(message: str) -> None:
        tally.problem("partial", f"{what}: {message}")

    integrity = conn.execute("PRAGMA integrity_check").fetchone()[0]
    if integrity != "ok":
        bad(f"integrity_check: {integrity}")
    vectors = {r for (r,) in conn.execute("SELECT row FROM vectors")}
    terms = {r for (r,) in conn.execute("SELECT row FROM record_terms")}
    versions: dict[tuple[str, str, str], list[Version]] = defaultdict(list)
    rows = set()
    for found in conn.execute(
        "SELECT tenant, agent, id, version, supersedes, superseded_by, state, purged, body,"
        " forgotten_at, row FROM records ORDER BY version"
    ):
        v = Version(*found[3:])
        versions[found[:3]].append(v)
        rows.add(v.row)
        if v.purged and (v.body or v.row in vectors or v.row in terms):
            bad(f"purged row {v.row} of {found[2]} keeps its body, vector or terms")
        if not v.purged and (v.row not in vectors or v.row not in terms):
            bad(f"row {v.row} of {found[2]} v{v.version} has no vector or no keyword terms")
    for orphan in sorted((vectors | terms) - rows):
        bad(f"derived row {orphan} without its record")
    creates: dict[tuple[str, str, str], set[int]] = defaultdict(set)
    corrects: Counter[tuple[str, str, str]] = Counter()
    forgets: set[tuple[str, str, str]] = set()
    imported_stones: set[tuple[str, str, str]] = set()
    for tenant, agent, kind, payload in conn.execute(
        "SELECT tenant, agent, type, payload FROM events ORDER BY seq"
    ):
        data = json.loads(payload)
        action = data.get("action")
        if kind in ("memory.stored", "memory.imported") or action == "remember":
            record = data["record"]
            creates[(tenant, agent, record["id"])].add(int(record["version"]))
        elif action == "correct":
            corrects[(tenant, agent, data["record_id"])] += 1
        elif action == "forget":
            forgets.add((tenant, agent, data["record_id"]))
        elif kind == "import.tombstone":
            imported_stones.add((tenant, agent, data["tombstone"]["record_id"]))
    for key in sorted(set(creates) - set(versions)):
        bad(f"journal event without its record: {key[2]}")
    for key, chain in sorted(versions.items()):
        _chain(key, chain, creates.get(key), corrects[key], bad)
    stones = {
        r[:3]: r[3:]
        for r in conn.execute(
            "SELECT tenant, agent, record_id, permanent, restored_at FROM tombstones"
        )
    }
    for key in sorted(forgets - set(stones)):
        bad(f"forget event of {key[2]} without a tombstone")
    for key, (permanent, restored) in sorted(stones.items()):
        if key not in forgets and key not in imported_stones:
            bad(f"tombstone of {key[2]} without its journal event")
        chain = versions.get(key)
        if chain is None:
            continue
        if (restored is None) != (chain[-1].forgotten_at is not None):
            bad(f"tombstone of {key[2]} (restored {restored}) disagrees with its record")
        if bool(permanent) != all(v.purged for v in chain):
            bad(f"permanent={permanent} tombstone of {key[2]} but purged rows disagree")
    for key, chain in versions.items():
        if chain[-1].forgotten_at is not None and key not in stones:
            bad(f"{key[2]} is forgotten without a tombstone")
        if any(v.purged for v in chain) and not stones.get(key, (0,))[0]:
            bad(f"{key[2]} is purged without a permanent tombstone")
    pending = conn.execute("SELECT count(*) FROM pending_purges").fetchone()[0]
    if pending:
        tally.problem("leaked", f"{what}: {pending} permanent forgets still pending after open")


def _chain(
    key: tuple[str, str, str],
    chain: list[Version],
    created: set[int] | None,
    corrected: int,
    bad: Callable[[str], None],
) -> None:
    """Versions 1..n of one record, linked both ways, each made by one journal event."""
    record_id = key[2]
    if not created:
        bad(f"record {record_id} without the journal event that created it")
        return
    numbers = [v.version for v in chain]
    if created - set(numbers):
        bad(f"record {record_id}: versions {sorted(created - set(numbers))} in the journal only")
    if len(numbers) != len(created) + corrected:
        bad(f"record {record_id}: {len(numbers)} versions, the journal {len(created) + corrected}")
    for old, new in itertools.pairwise(chain):
        linked = new.version == old.version + 1 and old.superseded_by == new.version
        if not linked or new.supersedes != old.version or old.state != "superseded":
            bad(f"record {record_id}: v{old.version} -> v{new.version} chain broken")
    if chain[-1].superseded_by is not None:
        bad(f"record {record_id}: newest version v{chain[-1].version} is superseded")


# -- lanes ----------------------------------------------------------------------------------


def lanes(mem: Memory, actual: dict[str, Record], ids: list[str], tally: Tally, what: str) -> None:
    """Each of ``ids`` (live records) found by its word in both lanes, alone by keyword;
    every candidate of every recall a live current version.

    With the hashing embedder the vector lane is lexical: the unique word finds its record.
    A real model gives a nonsense word no meaning to rank by (all of them look alike to it),
    so there the vector lane is asked with the record's own embedded text, and must rank
    the record among its first three (its own vector: cosine 1)."""
    current = {r.id: r.version for r in actual.values() if r.forgotten_at is None}
    lexical = (mem.status().embedder or "").startswith("hashing")
    for record_id in ids:
        record = actual.get(record_id)
        word = word_of(record.body) if record is not None else None
        if record is None or word is None:
            continue  # compare() has reported it
        tally.lane_checks += 1
        trace = mem.recall(word).trace
        mine = [t for t in trace if t["id"] == record_id]
        if not mine or mine[0]["version"] != record.version:
            tally.problem("lanes", f"{what}: {record_id} ({word}) not recalled by its word")
            continue
        if "keyword" not in mine[0]["ranks"]:
            tally.problem("lanes", f"{what}: the keyword lane misses {record_id} ({word})")
        if lexical and "vector" not in mine[0]["ranks"]:
            tally.problem("lanes", f"{what}: the vector lane misses {record_id} ({word})")
        others = [t["id"] for t in trace if t["id"] != record_id and "keyword" in t["ranks"]]
        if others:
            tally.problem("lanes", f"{what}: keyword {word} also finds {others[:3]}")
        if not lexical:
            text = f"{record.title}: {record.body}" if record.title else record.body
            by_text = mem.recall(text).trace
            rank = next((t["ranks"].get("vector") for t in by_text if t["id"] == record_id), None)
            trace = (*trace, *by_text)
            if rank is None or rank > 3:
                tally.problem(
                    "lanes", f"{what}: the vector lane ranks {record_id} at {rank} for its own text"
                )
        ghosts = [t for t in trace if current.get(t["id"]) != t["version"]]
        if ghosts:
            g = ghosts[0]
            tally.problem("lanes", f"{what}: a lane returned {g['id']} v{g['version']}, not live")


def absent(mem: Memory, words: list[str], tally: Tally, what: str) -> None:
    """Words of superseded, forgotten and purged versions: the keyword lane finds nothing."""
    for word in words:
        tally.absent_checks += 1
        hits = [t["id"] for t in mem.recall(word).trace if "keyword" in t["ranks"]]
        if hits:
            tally.problem("lanes", f"{what}: dead word {word} still finds {hits[:3]}")


def export_lines(mem: Memory) -> list[str]:
    out = io.StringIO()
    mem.export(out)
    return out.getvalue().splitlines()


def replay(mem: Memory, tally: Tally, what: str) -> None:
    """Rebuild from the journal; the export must not change by one byte."""
    tally.replays += 1
    before = export_lines(mem)
    mem.rebuild()
    after = export_lines(mem)
    if before != after:
        diff = sorted(set(before) ^ set(after))
        tally.problem("replay", f"{what}: rebuild changed {len(diff)} export lines: {diff[:2]}")


def verify(
    home: Path,
    mem: Memory,
    model: Model,
    tally: Tally,
    what: str,
    *,
    rng: random.Random,
    touched: set[str] = frozenset(),  # type: ignore[assignment]
    sample: int = 40,
    with_replay: bool = True,
) -> None:
    """Every check, on the reopened store (the caller closes it and checks the files)."""
    actual = compare(mem, model, tally, what)
    structure(home / "memory.db", tally, what)
    live = model.ids("live")
    chosen = set(rng.sample(live, min(sample, len(live))))
    fresh = sorted(touched & set(live))
    chosen |= set(rng.sample(fresh, min(2 * sample, len(fresh))))
    lanes(mem, actual, sorted(chosen), tally, what)
    dead = model.dead_words()
    absent(mem, rng.sample(dead, min(sample // 2, len(dead))), tally, what)
    if with_replay:
        replay(mem, tally, what)
    for leak in leaks(home, model.purged_needles()):
        tally.problem("leaked", f"{what}: {leak} (store open)")


def after_close(home: Path, model: Model, tally: Tally, what: str) -> None:
    for leak in leaks(home, model.purged_needles()):
        tally.problem("leaked", f"{what}: {leak} (store closed)")

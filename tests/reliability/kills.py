"""SIGKILL at random points of real work, then check everything (see checks.py).

Five scenarios, each on its own home that lives for a series of cycles (then a fresh one,
so the checks stay fast):

- ``import``: ``cairn import`` of an export made by another store (corrections, forgets and
  a permanent forget included); then the same import again must add exactly what is missing.
- ``ingest``: ``cairn ingest`` of a JSONL file that grows every cycle; the re-run must store
  exactly the lines not yet stored and skip the rest: nothing twice.
- ``edits``: a worker on the API storing, remembering, correcting, forgetting, restoring.
- ``purges``: a worker remembering bodies with a secret word and forgetting them
  permanently; no byte of them may remain in any file once the store is reopened.
- ``rebuild``: ``cairn rebuild`` of a store of ~1,300 memories with history; a killed
  rebuild must leave the old state, byte for byte in its export.

A CLI command is killed at a uniformly random point of its expected run time (0.3x to
1.05x of the last measured run, so some kills land after it finished: those runs count as
completed, not as kills); a worker is killed at a random point up to 2.5 s after it is
ready. Only a SIGKILL that reached a running process counts as a kill.
"""

from __future__ import annotations

import json
import random
import shutil
import signal
import sqlite3
import subprocess
import tempfile
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cairn.model import MemoryInput
from reliability.checks import Model, after_close, compare, export_lines, structure, verify
from reliability.harness import (
    Run,
    Tally,
    Words,
    body_for,
    cairn,
    check_output,
    child_env,
    leaks,
    make_home,
    needles_of,
    open_memory,
    word_of,
    worker_argv,
)


class Namespaces:
    """Word namespaces handed out once each, so no two processes share a word."""

    def __init__(self, start: int = 1) -> None:
        self._next = start

    def __call__(self) -> Words:
        return Words(self.reserve())

    def reserve(self) -> int:
        """A namespace for another process."""
        self._next += 1
        return self._next - 1


class Scenario:
    name = ""
    series_length = 8  # cycles before a fresh home

    def __init__(self, root: Path, rng: random.Random, names: Namespaces, *, real: bool,
                 scale: float = 1.0, sample: int = 40) -> None:
        self.root = root / self.name
        self.rng = rng
        self.names = names
        self.real = real
        self.scale = scale
        self.sample = sample
        self.cycles = 0
        self.series = 0
        self.expected_seconds: float | None = None  # last run that was not killed
        self.home = self.root
        self.model = Model()

    def size(self, low: int, high: int) -> int:
        return max(1, int(self.rng.randint(low, high) * self.scale))

    def fresh_home(self) -> None:
        self.series += 1
        self.home = make_home(self.root / f"home-{self.series}", real=self.real)
        self.model = Model()
        self.expected_seconds = None
        self.seed()

    def seed(self) -> None:
        """Fill a fresh home (in-process, through the API)."""

    def run_cycle(self, tally: Tally) -> None:
        if self.cycles % self.series_length == 0:
            self.fresh_home()
        self.cycles += 1
        what = f"{self.name} #{self.cycles}"
        try:
            self.cycle(tally, what)
        except Exception:
            tally.problem("errors", f"{what}: {traceback.format_exc()[-1500:]}")
            self.cycles = 0  # the state is unknown now: start a fresh home

    def cycle(self, tally: Tally, what: str) -> None:
        raise NotImplementedError

    def delay(self) -> float:
        assert self.expected_seconds is not None
        return self.rng.uniform(0.3, 1.05) * self.expected_seconds

    def timed(self, run: Run) -> None:
        if not run.killed and run.ok:
            self.expected_seconds = run.seconds

    def check(self, tally: Tally, what: str, touched: set[str], *, replay: bool = True) -> None:
        mem = open_memory(self.home)
        try:
            verify(self.home, mem, self.model, tally, what, rng=self.rng, touched=touched,
                   sample=self.sample, with_replay=replay)
        finally:
            mem.close()
        after_close(self.home, self.model, tally, what)

    def quick_check(self, tally: Tally, what: str) -> None:
        mem = open_memory(self.home)
        try:
            compare(mem, self.model, tally, what)
        finally:
            mem.close()
        structure(self.home / "memory.db", tally, what)


def _count(tally: Tally, run: Run, committed: bool) -> None:
    if run.killed:
        tally.kills += 1
        if committed:
            tally.committed += 1
        else:
            tally.rolled_back += 1
    elif run.ok:
        tally.completed += 1


# -- import --------------------------------------------------------------------------------


class ImportScenario(Scenario):
    name = "import"

    def make_export(self) -> tuple[Path, Model, int]:
        """An export of another store: stores, explicit memories, corrections, forgets and
        one permanent forget; returns the file, its records and its entry count."""
        scratch = make_home(self.root / "scratch", real=False, markdown=False)
        words, source = self.names(), Model()
        mem = open_memory(scratch)
        try:
            items = [body_for(words(), self.rng) for _ in range(self.size(150, 1200))]
            ids = mem.store_many([MemoryInput(body=b) for b in items])
            for record_id, body in zip(ids, items, strict=True):
                source.add(record_id, word_of(body) or "")
            for _ in range(max(1, len(ids) // 20)):
                word = words()
                source.add(mem.remember(body_for(word, self.rng)).id, word)
            for record_id in self.rng.sample(ids, len(ids) // 10):
                word = words()
                mem.correct(record_id, body_for(word, self.rng))
                source.correct(record_id, word)
            for record_id in self.rng.sample(ids, len(ids) // 20 + 2):
                permanent = record_id == ids[0]
                mem.forget(record_id, permanent=permanent)
                source.set_state(record_id, "purged" if permanent else "forgotten")
            lines = export_lines(mem)
        finally:
            mem.close()
            shutil.rmtree(scratch)
        path = self.root / f"export-{self.series}-{self.cycles}.jsonl"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        return path, source, len(lines) - 1

    def cycle(self, tally: Tally, what: str) -> None:
        path, source, entries = self.make_export()
        kill = self.delay() if self.expected_seconds is not None else None
        run = cairn(self.home, "--json", "import", str(path), kill_after=kill)
        check_output(tally, run, what)
        self.timed(run)
        mem = open_memory(self.home)
        try:
            held = {r.id for r in mem.list(include_forgotten=True)}
        finally:
            mem.close()
        wanted = {i for i, e in source.records.items() if e.state != "purged"}
        present = len(wanted & held)
        committed = present == len(wanted)
        if present not in (0, len(wanted)):
            tally.problem("partial", f"{what}: {present} of {len(wanted)} imported records")
        if run.ok and not committed:
            tally.problem("lost", f"{what}: import acknowledged, {present}/{len(wanted)} there")
        _count(tally, run, committed)
        if run.ok:
            tally.acknowledged += len(wanted)
        if committed:
            self.model.records.update({i: e.copy() for i, e in source.records.items()})
        self.check(tally, what, wanted if committed else set())
        again = cairn(self.home, "--json", "import", str(path))
        check_output(tally, again, f"{what} re-run")
        if again.ok:
            imported = json.loads(again.stdout)["imported"]
            expected = 0 if committed else entries
            if imported != expected:
                tally.problem("partial", f"{what}: re-run imported {imported}, not {expected}")
            self.model.records.update({i: e.copy() for i, e in source.records.items()})
            self.quick_check(tally, f"{what} re-run")


# -- ingest --------------------------------------------------------------------------------


class IngestScenario(Scenario):
    name = "ingest"
    series_length = 10

    def seed(self) -> None:
        self.file = self.home / "memories.jsonl"
        self.lines: list[str] = []
        self.words = self.names()

    def line(self) -> tuple[str, str]:
        word = self.words()
        item: dict[str, Any] = {"body": body_for(word, self.rng)}
        roll = self.rng.random()
        if roll < 0.25:
            item["title"] = f"{self.rng.choice(('build', 'deploy', 'garden'))} notes"
        if self.rng.random() < 0.3:
            item["tags"] = ["ops", f"batch-{self.cycles}"]
        if self.rng.random() < 0.2:
            item["kind"] = "preference"  # owned: goes to the Markdown projection
        if self.rng.random() < 0.2:
            item["occurred_at"] = "2025-03-04T10:00:00Z"
        if self.rng.random() < 0.1:
            item.update(scope="project", project_id="proj-a")
        return json.dumps(item), word

    def words_held(self) -> dict[str, list[str]]:
        mem = open_memory(self.home)
        try:
            held: dict[str, list[str]] = {}
            for r in mem.list(include_forgotten=True):
                held.setdefault(word_of(r.body) or "", []).append(r.id)
            return held
        finally:
            mem.close()

    def cycle(self, tally: Tally, what: str) -> None:
        new = [self.line() for _ in range(self.size(40, 400))]
        self.lines += [line for line, _ in new]
        self.file.write_text("\n".join(self.lines) + "\n", encoding="utf-8")
        kill = self.delay() if self.expected_seconds is not None else None
        run = cairn(self.home, "--json", "ingest", str(self.file), kill_after=kill)
        check_output(tally, run, what)
        self.timed(run)
        held = self.words_held()
        present = [w for _, w in new if w in held]
        committed = len(present) == len(new)
        if len(present) not in (0, len(new)):
            tally.problem("partial", f"{what}: {len(present)} of {len(new)} lines stored")
        if run.ok and not committed:
            tally.problem("lost", f"{what}: ingest acknowledged, {len(present)} stored")
        _count(tally, run, committed)
        if run.ok:
            tally.acknowledged += len(new)
        if committed:
            for _, word in new:
                self.model.add(held[word][0], word)
        self.check(tally, what, {held[w][0] for w in present})
        again = cairn(self.home, "--json", "ingest", str(self.file))
        check_output(tally, again, f"{what} re-run")
        if again.ok:
            done = json.loads(again.stdout)
            stored = 0 if committed else len(new)
            if (done["stored"], done["skipped"]) != (stored, len(self.lines) - stored):
                tally.problem(
                    "partial",
                    f"{what}: re-run stored {done['stored']} skipped {done['skipped']},"
                    f" expected {stored} and {len(self.lines) - stored}",
                )
            held = self.words_held()
            for _, word in new:
                if word in held and held[word][0] not in self.model.records:
                    self.model.add(held[word][0], word)
            self.quick_check(tally, f"{what} re-run")  # each line exactly once


# -- rebuild -------------------------------------------------------------------------------


def _generation(db: Path) -> int:
    conn = sqlite3.connect(db)
    try:
        return int(conn.execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()[0])
    finally:
        conn.close()


class RebuildScenario(Scenario):
    name = "rebuild"

    def seed(self) -> None:
        self.words = self.names()
        self.mutate(stores=self.size(1000, 1400), corrections=120, forgets=30, purges=12)

    def mutate(self, *, stores: int, corrections: int, forgets: int, purges: int) -> None:
        """Writes through the API between rebuilds, so each rebuild has history to replay:
        stores, explicit memories, corrections, forgets, restores, permanent forgets."""
        mem = open_memory(self.home)
        try:
            bodies = [body_for(self.words(), self.rng) for _ in range(stores)]
            for record_id, body in zip(mem.store_many([MemoryInput(body=b) for b in bodies]),
                                       bodies, strict=True):
                self.model.add(record_id, word_of(body) or "")
            for _ in range(max(1, stores // 30)):
                word = self.words()
                self.model.add(mem.remember(body_for(word, self.rng)).id, word)
            live = self.model.ids("live")
            for record_id in self.rng.sample(live, min(corrections, len(live))):
                word = self.words()
                mem.correct(record_id, body_for(word, self.rng))
                self.model.correct(record_id, word)
            live = self.model.ids("live")
            for n, record_id in enumerate(self.rng.sample(live, min(forgets + purges, len(live)))):
                permanent = n < purges
                mem.forget(record_id, permanent=permanent)
                self.model.set_state(record_id, "purged" if permanent else "forgotten")
            for record_id in self.model.ids("forgotten")[: forgets // 4]:
                mem.restore(record_id)
                self.model.set_state(record_id, "live")
        finally:
            mem.close()

    def cycle(self, tally: Tally, what: str) -> None:
        if self.cycles > 1:
            self.mutate(stores=20, corrections=4, forgets=2, purges=1)
        mem = open_memory(self.home)
        try:
            before = export_lines(mem)
        finally:
            mem.close()
        generation = _generation(self.home / "memory.db")
        if self.expected_seconds is None:
            self.timed(cairn(self.home, "rebuild"))  # how long one takes here
            generation = _generation(self.home / "memory.db")
        run = cairn(self.home, "rebuild", kill_after=self.delay())
        check_output(tally, run, what)
        self.timed(run)
        committed = _generation(self.home / "memory.db") != generation
        _count(tally, run, committed)
        mem = open_memory(self.home)
        try:
            after = export_lines(mem)
        finally:
            mem.close()
        if after != before:
            changed = sorted(set(before) ^ set(after))
            tally.problem("rebuild", f"{what}: the state changed: {len(changed)} lines differ")
        self.check(tally, what, set())


# -- workers on the API --------------------------------------------------------------------


class WorkerScenario(Scenario):
    """A worker process runs one operation mix until it is killed."""

    mix = "edits"
    series_length = 20
    window = 2.5  # seconds after the worker is ready

    def seed(self) -> None:
        words = self.names()
        mem = open_memory(self.home)
        try:
            bodies = [body_for(words(), self.rng) for _ in range(self.size(40, 80))]
            for record_id, body in zip(mem.store_many([MemoryInput(body=b) for b in bodies]),
                                       bodies, strict=True):
                self.model.add(record_id, word_of(body) or "")
            for _ in range(self.size(10, 20)):
                word = words()
                self.model.add(mem.remember(body_for(word, self.rng)).id, word)
        finally:
            mem.close()

    def cycle(self, tally: Tally, what: str) -> None:
        state = self.root / "state.json"
        log = self.root / f"ops-{self.series}-{self.cycles}.log"
        records = self.model.records
        state.write_text(json.dumps({
            "live": {i: records[i].word for i in self.model.ids("live")},
            "forgotten": {i: records[i].word for i in self.model.ids("forgotten")},
            "secrets": {i: sorted(e.secrets)[0] for i, e in records.items() if e.secrets},
        }))
        argv = worker_argv("ops", str(self.home), str(state), str(log),
                           str(self.rng.randrange(2**31)), str(self.names.reserve()), self.mix)
        run = _run_worker(argv, self.home, log, lambda: self.rng.uniform(0, self.window))
        check_output(tally, run, what)
        intents, acks = _read_log(log)
        tally.acknowledged += sum(1 for n in acks if intents[n]["op"] in _WRITES)
        flight = [n for n in intents if n not in acks]
        pre_needles = self._needles(intents, acks, flight)
        found_before = leaks(self.home, pre_needles) if pre_needles else []
        db = self.home / "memory.db"
        for n in sorted(acks):
            self.apply(intents[n], acks[n])
        committed = False
        if flight:
            intent = intents[flight[0]]
            payload = _event(db, intent["key"])
            committed = payload is not None
            if committed:
                record_id = (payload.get("record") or {}).get("id") or intent.get("id")
                self.apply(intent, {"id": record_id})
        _count(tally, run, committed)
        tally.purges_resumed += _pending_purges(db)
        if found_before:
            in_flight_purge = flight and intents[flight[0]]["op"] == "purge" and committed
            if in_flight_purge:
                tally.files_cleaned_on_open += 1
            acked_words = needles_of({
                w for n in acks if intents[n]["op"] == "purge"
                for w in records[intents[n]["id"]].words | records[intents[n]["id"]].secrets
            })
            at_rest = leaks(self.home, acked_words)
            for leak in at_rest:
                tally.problem("leaked", f"{what}: acknowledged permanent forget left {leak}")
        touched = {intents[n].get("id") or acks.get(n, {}).get("id") for n in intents}
        self.check(tally, what, {t for t in touched if t})

    def _needles(self, intents: dict[int, dict[str, Any]], acks: dict[int, dict[str, Any]],
                 flight: list[int]) -> set[bytes]:
        """Words of every record a permanent forget of this run may have purged."""
        words: set[str] = set()
        for n in [*acks, *flight]:
            intent = intents[n]
            if intent["op"] != "purge":
                continue
            e = self.model.records.get(intent["id"])
            if e is not None:
                words |= e.words | e.secrets
            for other in intents.values():  # corrected in this run: its new words too
                if other.get("id") == intent["id"] and other.get("word"):
                    words.add(other["word"])
        return needles_of(words)

    def apply(self, intent: dict[str, Any], ack: dict[str, Any]) -> None:
        op = intent["op"]
        if op in ("store", "remember"):
            self.model.add(ack["id"], intent["word"], secret=intent.get("secret"))
        elif op == "correct":
            self.model.correct(intent["id"], intent["word"])
        elif op == "forget":
            self.model.set_state(intent["id"], "forgotten")
        elif op == "purge":
            self.model.set_state(intent["id"], "purged")
        elif op == "restore":
            self.model.set_state(intent["id"], "live")


_WRITES = ("store", "remember", "correct", "forget", "purge", "restore")


class EditsScenario(WorkerScenario):
    name = "edits"
    mix = "edits"


class PurgesScenario(WorkerScenario):
    name = "purges"
    mix = "purges"


def _run_worker(argv: list[str], home: Path, log: Path, delay: Callable[[], float]) -> Run:
    """Start the worker, wait until it is ready (its store open), then SIGKILL it after a
    random delay. The run's ``killed`` says whether the kill found it running."""
    with tempfile.TemporaryFile() as err:
        start = time.monotonic()
        proc = subprocess.Popen(argv, env=child_env(home), stdout=subprocess.DEVNULL, stderr=err)
        while time.monotonic() - start < 120 and proc.poll() is None:
            if log.exists() and log.read_text().startswith('{"ready"'):
                break
            time.sleep(0.01)
        try:
            proc.wait(timeout=delay())
            killed = False
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            killed = proc.returncode == -signal.SIGKILL
        err.seek(0)
        stderr = err.read().decode("utf-8", "replace")
    return Run(tuple(argv), proc.returncode, killed, "", stderr, time.monotonic() - start)


def _read_log(log: Path) -> tuple[dict[int, dict[str, Any]], dict[int, dict[str, Any]]]:
    intents: dict[int, dict[str, Any]] = {}
    acks: dict[int, dict[str, Any]] = {}
    text = log.read_text(encoding="utf-8") if log.exists() else ""
    for line in text.split("\n")[:-1]:  # a line cut by the kill is not an acknowledgement
        data = json.loads(line)
        if "ack" in data:
            acks[data["ack"]] = data
        elif "n" in data:
            intents[data["n"]] = data
    return intents, acks


def _event(db: Path, key: str) -> dict[str, Any] | None:
    conn = sqlite3.connect(db)
    try:
        found = conn.execute(
            "SELECT payload FROM events WHERE tenant = 'default' AND agent = 'default'"
            " AND event_id = ?", (key,)).fetchone()
    finally:
        conn.close()
    return json.loads(found[0]) if found else None


def _pending_purges(db: Path) -> int:
    conn = sqlite3.connect(db)
    try:
        return int(conn.execute("SELECT count(*) FROM pending_purges").fetchone()[0])
    finally:
        conn.close()


SCENARIOS: dict[str, type[Scenario]] = {
    s.name: s
    for s in (ImportScenario, IngestScenario, EditsScenario, PurgesScenario, RebuildScenario)
}


def run_kills(root: Path, kills: dict[str, int], *, seed: int, real: bool = False,
              scale: float = 1.0, sample: int = 40,
              progress: Callable[[str], None] | None = None) -> dict[str, Tally]:
    """Run each scenario until it delivered its number of kills (at most 3x as many cycles:
    a run that keeps finishing before its kill is a finding too)."""
    rng = random.Random(seed)
    names = Namespaces(start=2000 if real else 1)
    tallies: dict[str, Tally] = {}
    for name, wanted in kills.items():
        scenario = SCENARIOS[name](root, rng, names, real=real, scale=scale, sample=sample)
        tally = tallies[name] = Tally(name + (" (real model)" if real else ""))
        started = time.monotonic()
        cycles = 0
        while tally.kills < wanted and cycles < 3 * wanted:
            cycles += 1
            scenario.run_cycle(tally)
            if progress:
                progress(f"{tally.name}: cycle {cycles}, {tally.kills}/{wanted} kills,"
                         f" {len(tally.failures())} problems")
        tally.seconds = time.monotonic() - started
    return tallies

"""Kill scenarios of worker processes on the API: ``edits`` and ``purges`` (workers.py)."""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cairn.model import MemoryInput
from reliability.harness import (
    Run,
    Tally,
    body_for,
    check_output,
    child_env,
    leaks,
    needles_of,
    open_memory,
    word_of,
    worker_argv,
)
from reliability.scenario import Scenario, count_kill

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
            for record_id, body in zip(
                mem.store_many([MemoryInput(body=b) for b in bodies]), bodies, strict=True
            ):
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
        state.write_text(
            json.dumps(
                {
                    "live": {i: records[i].word for i in self.model.ids("live")},
                    "forgotten": {i: records[i].word for i in self.model.ids("forgotten")},
                    "secrets": {i: sorted(e.secrets)[0] for i, e in records.items() if e.secrets},
                }
            )
        )
        argv = worker_argv(
            "ops",
            str(self.home),
            str(state),
            str(log),
            str(self.rng.randrange(2**31)),
            str(self.names.reserve()),
            self.mix,
        )
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
        count_kill(tally, run, committed)
        tally.purges_resumed += _pending_purges(db)
        if found_before:
            in_flight_purge = flight and intents[flight[0]]["op"] == "purge" and committed
            if in_flight_purge:
                tally.files_cleaned_on_open += 1
            acked_words = needles_of(
                {
                    w
                    for n in acks
                    if intents[n]["op"] == "purge"
                    for w in records[intents[n]["id"]].words | records[intents[n]["id"]].secrets
                }
            )
            at_rest = leaks(self.home, acked_words)
            for leak in at_rest:
                tally.problem(
                    "leaked",
                    f"{what}: acknowledged permanent forget left {leak}"
                    f" (warnings: {_warnings(log)})",
                )
        touched = {intents[n].get("id") or acks.get(n, {}).get("id") for n in intents}
        self.check(tally, what, {t for t in touched if t})

    def _needles(
        self, intents: dict[int, dict[str, Any]], acks: dict[int, dict[str, Any]], flight: list[int]
    ) -> dict[bytes, str]:
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


def _warnings(log: Path) -> list[str]:
    text = log.read_text(encoding="utf-8") if log.exists() else ""
    return [json.loads(x)["warning"] for x in text.split("\n")[:-1] if '"warning"' in x]


def _event(db: Path, key: str) -> dict[str, Any] | None:
    conn = sqlite3.connect(db)
    try:
        found = conn.execute(
            "SELECT payload FROM events WHERE tenant = 'default' AND agent = 'default'"
            " AND event_id = ?",
            (key,),
        ).fetchone()
    finally:
        conn.close()
    return json.loads(found[0]) if found else None


def _pending_purges(db: Path) -> int:
    conn = sqlite3.connect(db)
    try:
        return int(conn.execute("SELECT count(*) FROM pending_purges").fetchone()[0])
    finally:
        conn.close()

"""Kill scenarios of the `cairn` command: ``import``, ``ingest``, ``rebuild``."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from cairn.model import MemoryInput
from reliability.checks import Model, export_lines
from reliability.harness import (
    Tally,
    body_for,
    cairn,
    check_output,
    make_home,
    open_memory,
    word_of,
)
from reliability.scenario import Scenario, count_kill

# -- import --------------------------------------------------------------------------------


class ImportScenario(Scenario):
    """Each series imports the exports of one other store as it changes: every cycle that
    store gains memories, corrects, forgets, restores and permanently forgets some, and its
    new export is imported (killed), then imported again."""

    name = "import"

    def seed(self) -> None:
        self.source_home = make_home(
            self.root / f"source-{self.series}", real=False, markdown=False
        )
        self.source = Model()
        self.words = self.names()
        self.imported: set[str] = set()  # export lines the target's journal holds

    def evolve(self) -> list[str]:
        """Change the source store; returns its export."""
        source, rng, words = self.source, self.rng, self.words
        mem = open_memory(self.source_home)
        try:
            bodies = [body_for(words(), rng) for _ in range(self.size(150, 900))]
            ids = mem.store_many([MemoryInput(body=b) for b in bodies])
            for record_id, body in zip(ids, bodies, strict=True):
                source.add(record_id, word_of(body) or "")
            for _ in range(max(1, len(ids) // 30)):
                word = words()
                source.add(mem.remember(body_for(word, rng)).id, word)
            live = source.ids("live")
            for record_id in rng.sample(live, len(live) // 12):
                word = words()
                mem.correct(record_id, body_for(word, rng))
                source.correct(record_id, word)
            for n, record_id in enumerate(rng.sample(source.ids("live"), len(live) // 25 + 2)):
                mem.forget(record_id, permanent=n == 0)
                source.set_state(record_id, "purged" if n == 0 else "forgotten")
            for record_id in source.ids("forgotten")[:2]:
                mem.restore(record_id)
                source.set_state(record_id, "live")
            return export_lines(mem)
        finally:
            mem.close()

    def cycle(self, tally: Tally, what: str) -> None:
        known = set(self.source.records)
        lines = self.evolve()
        fresh = {
            i for i, e in self.source.records.items() if i not in known and e.state != "purged"
        }
        path = self.root / f"export-{self.series}-{self.cycles}.jsonl"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        new_lines = len(set(lines[1:]) - self.imported)
        kill = self.delay() if self.expected_seconds is not None else None
        run = cairn(self.home, "--json", "import", str(path), kill_after=kill)
        check_output(tally, run, what)
        self.timed(run)
        mem = open_memory(self.home)
        try:
            held = {r.id for r in mem.list(include_forgotten=True)}
        finally:
            mem.close()
        present = len(fresh & held)
        committed = present == len(fresh)
        if present not in (0, len(fresh)):
            tally.problem("partial", f"{what}: {present} of {len(fresh)} new records imported")
        if run.ok and not committed:
            tally.problem("lost", f"{what}: import acknowledged, {present}/{len(fresh)} there")
        if run.ok and json.loads(run.stdout)["imported"] != new_lines:
            tally.problem("partial", f"{what}: imported {run.stdout.strip()}, not {new_lines}")
        count_kill(tally, run, committed)
        if run.ok:
            tally.acknowledged += new_lines
        if committed:
            self.model.records = {i: e.copy() for i, e in self.source.records.items()}
            self.imported |= set(lines[1:])
        self.check(tally, what, fresh if committed else set())
        again = cairn(self.home, "--json", "import", str(path))
        check_output(tally, again, f"{what} re-run")
        if again.ok:
            imported = json.loads(again.stdout)["imported"]
            expected = 0 if committed else new_lines
            if imported != expected:
                tally.problem("partial", f"{what}: re-run imported {imported}, not {expected}")
            self.model.records = {i: e.copy() for i, e in self.source.records.items()}
            self.imported |= set(lines[1:])
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
        count_kill(tally, run, committed)
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
            for record_id, body in zip(
                mem.store_many([MemoryInput(body=b) for b in bodies]), bodies, strict=True
            ):
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
        count_kill(tally, run, committed)
        mem = open_memory(self.home)
        try:
            after = export_lines(mem)
        finally:
            mem.close()
        if after != before:
            changed = sorted(set(before) ^ set(after))
            tally.problem("rebuild", f"{what}: the state changed: {len(changed)} lines differ")
        self.check(tally, what, set())

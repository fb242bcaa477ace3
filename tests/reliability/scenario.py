"""The frame of a kill scenario: a home that lives for a series of cycles, the expected
run time a kill is drawn from, and the checks after each cycle (checks.py)."""

from __future__ import annotations

import random
import traceback
from pathlib import Path

from reliability.checks import Model, after_close, compare, structure, verify
from reliability.harness import Run, Tally, Words, make_home, open_memory


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

    def __init__(
        self,
        root: Path,
        rng: random.Random,
        names: Namespaces,
        *,
        real: bool,
        scale: float = 1.0,
        sample: int = 40,
    ) -> None:
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
            verify(
                self.home,
                mem,
                self.model,
                tally,
                what,
                rng=self.rng,
                touched=touched,
                sample=self.sample,
                with_replay=replay,
            )
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


def count_kill(tally: Tally, run: Run, committed: bool) -> None:
    if run.killed:
        tally.kills += 1
        if committed:
            tally.committed += 1
        else:
            tally.rolled_back += 1
    elif run.ok:
        tally.completed += 1

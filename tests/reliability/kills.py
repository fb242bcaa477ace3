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

import random
import time
from collections.abc import Callable
from pathlib import Path

from reliability.api_kills import EditsScenario, PurgesScenario
from reliability.cli_kills import ImportScenario, IngestScenario, RebuildScenario
from reliability.harness import Tally
from reliability.scenario import Namespaces, Scenario

SCENARIOS: dict[str, type[Scenario]] = {
    s.name: s
    for s in (ImportScenario, IngestScenario, EditsScenario, PurgesScenario, RebuildScenario)
}


def run_kills(
    root: Path,
    kills: dict[str, int],
    *,
    seed: int,
    real: bool = False,
    scale: float = 1.0,
    sample: int = 40,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Tally]:
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
                progress(
                    f"{tally.name}: cycle {cycles}, {tally.kills}/{wanted} kills,"
                    f" {len(tally.failures())} problems"
                )
        tally.seconds = time.monotonic() - started
    return tallies

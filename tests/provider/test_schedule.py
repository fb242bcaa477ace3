"""Scheduled learning: reflection and the sweep run when due, and only then."""

from __future__ import annotations

import time
from pathlib import Path

from cairn.provider.schedule import LearningSchedule, run_due
from services.support import open_mem, succeed


def test_runs_are_due_by_their_intervals(tmp_path: Path, clock) -> None:
    with open_mem(tmp_path / "m.db", clock) as mem:
        succeed(mem, "e1", "Run make check before pushing")
        succeed(mem, "e2", "Run make check before pushing")
        assert run_due(mem.provider, ["default"]) == ["default:reflect", "default:sweep"]
        assert len(mem.list()) == 1
        clock.advance(hours=2)
        assert run_due(mem.provider, ["default"]) == []  # neither is due
        clock.advance(hours=1, minutes=1)
        assert run_due(mem.provider, ["default"]) == ["default:reflect"]  # every 3 h
        clock.advance(hours=21)
        assert run_due(mem.provider, ["default"]) == ["default:reflect", "default:sweep"]


def test_the_thread_runs_in_the_background_and_stops(tmp_path: Path, clock) -> None:
    with open_mem(tmp_path / "m.db", clock) as mem:
        succeed(mem, "e1", "Run make check before pushing")
        succeed(mem, "e2", "Run make check before pushing")
        schedule = LearningSchedule(mem.provider, ["default"], tick_s=0.05)
        schedule.start()
        deadline = time.monotonic() + 10
        while not mem.list() and time.monotonic() < deadline:
            time.sleep(0.05)
        schedule.stop()
        assert len(mem.list()) == 1


def test_a_run_the_contract_refuses_is_logged_in_one_line(tmp_path: Path, clock, caplog) -> None:
    """The schedule sends through the Client like every route: a request the contract
    refuses is its one-line error in the log, and changes nothing."""
    with open_mem(tmp_path / "m.db", clock) as mem:
        succeed(mem, "e1", "Run make check before pushing")
        succeed(mem, "e2", "Run make check before pushing")
        before = mem.provider.status().counts
        with caplog.at_level("WARNING", logger="cairn.provider.schedule"):
            assert run_due(mem.provider, ["", "x" * 500]) == []
        messages = [r.getMessage() for r in caplog.records]
        assert len(messages) == 4  # reflect and sweep, for each agent
        assert all("\n" not in m for m in messages), messages
        assert all("agent" in m and "validation error" not in m for m in messages), messages
        assert mem.provider.status().counts == before
        assert mem.list() == []

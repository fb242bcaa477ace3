"""SIGKILL at random points of real work loses nothing acknowledged and leaves no half record.

The quick mode of the harness (``benchmarks/reliability.py --full`` runs 200+ kills): a few
dozen kills across ``cairn import``, ``cairn ingest`` (and its re-run), correct/forget
through the API, permanent forget and ``cairn rebuild``; then the same on the real default
model, fewer. First, the checks themselves are shown to catch each kind of damage.
"""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path

import pytest

from cairn.model import MemoryInput
from reliability.checks import Model, after_close, compare, lanes, structure, verify
from reliability.harness import Tally, Words, body_for, make_home, open_memory, word_of
from reliability.kills import run_kills


def _home_with(tmp_path: Path, count: int = 30) -> tuple[Path, Model]:
    home = make_home(tmp_path / "home", real=False)
    model, words, rng = Model(), Words(7), random.Random(3)
    with open_memory(home) as mem:
        bodies = [body_for(words(), rng) for _ in range(count)]
        for record_id, body in zip(
            mem.store_many([MemoryInput(body=b) for b in bodies]), bodies, strict=True
        ):
            model.add(record_id, word_of(body) or "")
        word = words()
        model.add(
            mem.remember(body_for(word, rng, secret="zqzzzzzzzzq")).id, word, secret="zqzzzzzzzzq"
        )
    return home, model


def _sql(home: Path, statement: str) -> None:
    with sqlite3.connect(home / "memory.db") as conn:
        conn.execute(statement)


def test_the_checks_pass_on_an_intact_store(tmp_path: Path) -> None:
    home, model = _home_with(tmp_path)
    tally = Tally("intact")
    with open_memory(home) as mem:
        verify(home, mem, model, tally, "intact", rng=random.Random(1), sample=100)
    after_close(home, model, tally, "intact")
    assert tally.failures() == []
    assert tally.lane_checks == 31 and tally.replays == 1 and tally.checked == 31


def test_the_checks_catch_each_kind_of_damage(tmp_path: Path) -> None:
    home, model = _home_with(tmp_path)
    live = model.ids("live")
    tally = Tally("damaged")
    # An acknowledged write missing; a record no write made.
    model.add("01NOTTHERE0000000000000000", "zqbbbbbbbbq")
    fake = model.records.pop(live[0])
    with open_memory(home) as mem:
        compare(mem, model, tally, "damaged")
    assert len(tally.problems["lost"]) == 1 and len(tally.problems["partial"]) == 1
    model.records[live[0]] = fake
    del model.records["01NOTTHERE0000000000000000"]
    # Half records: a row without its vector, a journal event without its record.
    _sql(home, f"DELETE FROM vectors WHERE row = (SELECT row FROM records WHERE id = '{live[1]}')")
    _sql(
        home,
        "UPDATE events SET payload = json_set(payload, '$.record.id', 'GHOST')"
        " WHERE seq = (SELECT max(seq) FROM events)",
    )
    structure(home / "memory.db", tally, "damaged")
    assert any("no vector" in p for p in tally.problems["partial"])
    assert any("without its record: GHOST" in p for p in tally.problems["partial"])
    # A live record the keyword lane cannot find (its terms gone).
    _sql(
        home,
        f"DELETE FROM record_terms WHERE row = (SELECT row FROM records WHERE id = '{live[2]}')",
    )
    with open_memory(home) as mem:
        actual = {r.id: r for r in mem.list(include_forgotten=True)}
        lanes(mem, actual, [live[2], live[3]], tally, "damaged")
    assert len(tally.problems["lanes"]) == 1 and live[2] in tally.problems["lanes"][0]
    # Bytes of a permanently forgotten body left in a file.
    secret_owner = next(i for i, e in model.records.items() if e.secrets)
    model.set_state(secret_owner, "purged")
    after_close(home, model, tally, "damaged")
    assert any("profile.md" in p for p in tally.problems["leaked"])


@pytest.mark.slow
def test_sigkills_at_random_points_lose_nothing_and_leave_no_half_record(
    tmp_path: Path,
) -> None:
    wanted = {"import": 4, "ingest": 6, "edits": 8, "purges": 8, "rebuild": 4}
    tallies = run_kills(tmp_path, wanted, seed=20260601, scale=0.5, sample=20)
    failures = [f for t in tallies.values() for f in t.failures()]
    assert failures == []
    assert {name: t.kills for name, t in tallies.items()} == wanted
    assert sum(t.committed for t in tallies.values()) > 0  # kills landed on both sides
    assert sum(t.rolled_back for t in tallies.values()) > 0  # of a commit
    assert all(t.checked > 0 and t.lane_checks > 0 for t in tallies.values())


@pytest.mark.slow
def test_sigkills_on_the_real_default_model(tmp_path: Path) -> None:
    wanted = {"ingest": 2, "purges": 2}
    tallies = run_kills(tmp_path, wanted, seed=7, real=True, scale=0.3, sample=10)
    assert [f for t in tallies.values() for f in t.failures()] == []
    assert {name: t.kills for name, t in tallies.items()} == wanted

"""The hook's notes of one session: epochs, what the agent already has, outcomes settled."""

from __future__ import annotations

import os
import time
from pathlib import Path

from cairn.hooks.session import KEEP_SECONDS, SessionLog


def test_a_session_remembers_what_it_was_given_until_its_context_starts_over(
    tmp_path: Path,
) -> None:
    log = SessionLog(tmp_path, "s-1")
    log.start_epoch()
    log.add([("A1", "R1", 1), ("A2", "R2", 3)])
    log.save()
    again = SessionLog(tmp_path, "s-1")
    assert again.seen() == {("R1", 1), ("R2", 3)}
    assert [d.application_id for d in again.pending()] == ["A1", "A2"]
    again.settle(["A1"])
    assert [d.application_id for d in again.pending()] == ["A2"]
    again.start_epoch()  # compaction: the agent's context no longer holds them
    assert again.seen() == set()
    assert [d.application_id for d in again.pending()] == ["A2"]  # still waits for an outcome
    assert SessionLog(tmp_path, "s-2").deliveries == []


def test_any_session_id_makes_a_safe_file_name(tmp_path: Path) -> None:
    log = SessionLog(tmp_path, "../../etc/passwd")
    log.add([("A", "R", 1)])
    log.save()
    assert log.path.parent == tmp_path and ".." not in log.path.name
    assert SessionLog(tmp_path, "../../etc/passwd").seen() == {("R", 1)}


def test_an_unreadable_note_starts_afresh_and_old_notes_are_swept(tmp_path: Path) -> None:
    (tmp_path / "broken.json").write_text("{not json", encoding="utf-8")
    assert SessionLog(tmp_path, "broken").deliveries == []
    old = tmp_path / "old.json"
    old.write_text("{}", encoding="utf-8")
    past = time.time() - KEEP_SECONDS - 60
    os.utime(old, (past, past))
    SessionLog(tmp_path, "new").save()
    assert not old.exists() and (tmp_path / "new.json").exists()


def test_a_folder_is_swept_at_most_once_an_hour_in_one_process(tmp_path: Path) -> None:
    from cairn.hooks import session

    old = tmp_path / "old.json"
    session._sweep(tmp_path, now=10_000_000.0)  # nothing to remove yet: the folder is swept
    old.write_text("{}", encoding="utf-8")
    past = 10_000_000.0 - KEEP_SECONDS - 60
    os.utime(old, (past, past))
    session._sweep(tmp_path, now=10_000_000.0 + 60)
    assert old.exists()  # within the hour: not swept again
    session._sweep(tmp_path, now=10_000_000.0 + session.SWEEP_EVERY_SECONDS + 1)
    assert not old.exists()


def test_a_note_that_did_not_change_is_not_written_again_but_stays_fresh(
    tmp_path: Path,
) -> None:
    log = SessionLog(tmp_path, "s-1")
    log.add([("A1", "R1", 1)])
    log.save()
    first = log.path.stat()
    past = time.time() - 3600
    os.utime(log.path, (past, past))
    again = SessionLog(tmp_path, "s-1")
    assert again.seen() == {("R1", 1)}
    again.save()  # a prompt that delivered nothing new
    kept = again.path.stat()
    assert kept.st_ino == first.st_ino  # the same file, not replaced
    assert kept.st_mtime > past + 3000  # but its time moved: the sweep keeps a live session
    again.add([("A2", "R2", 1)])
    again.save()
    assert again.path.stat().st_ino != first.st_ino  # a change is written (a new file)
    assert SessionLog(tmp_path, "s-1").seen() == {("R1", 1), ("R2", 1)}
    again.save()  # unchanged since its own save: not written again
    assert SessionLog(tmp_path, "s-1").seen() == {("R1", 1), ("R2", 1)}


def test_an_unchanged_note_does_not_undo_another_process_s_save(tmp_path: Path) -> None:
    SessionLog(tmp_path, "s-1").save()
    slow, quick = SessionLog(tmp_path, "s-1"), SessionLog(tmp_path, "s-1")
    quick.add([("A1", "R1", 1)])
    quick.save()
    slow.save()  # it changed nothing: what the other wrote stays
    assert SessionLog(tmp_path, "s-1").seen() == {("R1", 1)}


def test_a_note_is_written_as_json_dumps_writes_it_and_read_back_the_same_way(
    tmp_path: Path,
) -> None:
    """The note's text made from kept delivery lines is json.dumps' text, character for
    character; a note read again in the same process (kept) or changed on disk by another
    (read afresh) gives what a fresh parse of the file gives."""
    import json
    import random

    from cairn.hooks import session

    rng = random.Random(4)
    log = SessionLog(tmp_path, "s-1")
    for step in range(40):
        if rng.random() < 0.2:
            log.start_epoch()
        log.add([(f"A{step}-{n}", f"R{rng.randrange(9)}", rng.randrange(1, 4)) for n in range(3)])
        if rng.random() < 0.3:
            log.settle(d.application_id for d in rng.sample(log.deliveries, 2))
        log.reviewed = step if rng.random() < 0.2 else log.reviewed
        log.save()
        text = log.path.read_text(encoding="utf-8")
        data = json.loads(text)
        assert text == json.dumps(data)  # as json.dumps writes it
        again = SessionLog(tmp_path, "s-1")  # kept by this process
        assert (again.epoch, again.reviewed, again.deliveries) == (
            data["epoch"],
            data["reviewed"],
            [session.Delivery(**d) for d in data["deliveries"]],
        )
        log = again
    # Another process's note, and a hand-made one of other types: read as they are.
    other = {"epoch": 7, "reviewed": 2, "deliveries": [
        {"application_id": "X", "record_id": "R", "version": True, "epoch": 7, "judged": 0},
    ]}  # fmt: skip
    twin = SessionLog(tmp_path, "s-2")  # its equal delivery (1 == True, False == 0) kept
    twin.epoch = 7
    twin.add([("X", "R", 1)])
    twin.save()
    log.path.write_text(json.dumps(other), encoding="utf-8")
    changed = SessionLog(tmp_path, "s-1")
    assert (changed.epoch, changed.reviewed) == (7, 2)
    assert [d.application_id for d in changed.deliveries] == ["X"]
    changed.add([("Y", "R", 1)])
    changed.save()
    written = json.loads(changed.path.read_text(encoding="utf-8"))
    kept = json.dumps(written["deliveries"][0])  # True and 0 kept as they were, not 1, false
    assert kept == json.dumps(other["deliveries"][0])
    assert written["deliveries"][1]["version"] == 1

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

"""What one agent session has been given: the hook's own notes between its calls.

A hook is a new process on every event, so what the session already received (and must
not be repeated on every prompt) and which deliveries still wait for an outcome are kept
in a small JSON file per session under the cairn home. It is bookkeeping of the hook, not
memory: memory is reached only through the provider. A session start (also after the
host compacts the conversation) opens a new *epoch*: what came before is no longer in the
agent's context, so it may be given again.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import time
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path

from cairn.homes import make_private_folder, open_private

KEEP_SECONDS = 14 * 24 * 3600  # a session file untouched this long is removed
SWEEP_EVERY_SECONDS = 3600.0
_swept: dict[str, float] = {}  # folder -> when this process last swept it
_SAFE = re.compile(r"[A-Za-z0-9_-]{1,100}")


@dataclass(frozen=True, slots=True)
class Delivery:
    """One item the agent was shown, and whether its outcome is settled."""

    application_id: str
    record_id: str
    version: int
    epoch: int
    judged: bool = False


class SessionLog:
    def __init__(self, folder: Path, session_id: str) -> None:
        name = session_id if _SAFE.fullmatch(session_id) else _digest(session_id)
        self.path = folder / f"{name}.json"
        self.epoch = 0
        self.deliveries: list[Delivery] = []
        self.reviewed = -1  # the index of the last turn the stop hook reviewed
        self._read: str | None = None  # the note as read, to know whether it changed
        self._load()

    def _load(self) -> None:
        try:
            text = self.path.read_text(encoding="utf-8")
        except OSError:
            return  # a new session
        held = _notes.get(str(self.path))
        if held is not None and held[0] == text:  # as this process last read or wrote it
            self._read, self.epoch, self.reviewed = text, held[1], held[2]
            self.deliveries = list(held[3])
            return
        try:
            data = json.loads(text)
        except ValueError:
            return  # an unreadable note: start afresh
        self._read = text
        if not isinstance(data, dict):
            return
        self.epoch = int(data.get("epoch", 0))
        self.reviewed = int(data.get("reviewed", -1))
        self.deliveries = [Delivery(**d) for d in data.get("deliveries", [])]
        _keep(self.path, text, self)

    def start_epoch(self) -> None:
        """The agent's context starts empty again (a new session, a resume, a compaction)."""
        self.epoch += 1

    def seen(self) -> set[tuple[str, int]]:
        """Record versions the agent's current context already holds."""
        return {(d.record_id, d.version) for d in self.deliveries if d.epoch == self.epoch}

    def add(self, items: Iterable[tuple[str, str, int]]) -> None:
        """Deliveries as ``(application_id, record_id, version)``."""
        self.deliveries += [Delivery(a, r, v, self.epoch) for a, r, v in items]

    def pending(self) -> list[Delivery]:
        return [d for d in self.deliveries if not d.judged]

    def settle(self, application_ids: Iterable[str]) -> None:
        done = set(application_ids)
        self.deliveries = [
            replace(d, judged=True) if d.application_id in done else d for d in self.deliveries
        ]

    def save(self) -> None:
        text = note_text(self.epoch, self.reviewed, self.deliveries)
        _keep(self.path, text, self)
        if text == self._read and _touched(self.path):
            # As it is on disk: only its time moves (the sweep goes by it). Replacing a
            # file costs a few milliseconds of waiting on ext4 (it flushes the new one).
            _sweep(self.path.parent)
            return
        make_private_folder(self.path.parent.parent)  # mkdir's parents get the umask's mode
        make_private_folder(self.path.parent)
        temporary = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        with open_private(temporary, "w") as out:
            out.write(text)
        os.replace(temporary, self.path)
        self._read = text
        _sweep(self.path.parent)


# A long-lived process (the daemon) reads and writes the same sessions' notes prompt
# after prompt: each note as it last read or wrote it, and each delivery's JSON.
_NOTES_KEPT = 64
_LINES_KEPT = 20_000
_notes: dict[str, tuple[str, int, int, tuple[Delivery, ...]]] = {}
_lines: dict[Delivery, str] = {}


def _keep(path: Path, text: str, log: SessionLog) -> None:
    if len(_notes) >= _NOTES_KEPT:
        _notes.clear()
    _notes[str(path)] = (text, log.epoch, log.reviewed, tuple(log.deliveries))


def note_text(epoch: int, reviewed: int, deliveries: Iterable[Delivery]) -> str:
    """``json.dumps`` of the note, character for character, each delivery's JSON made
    once (by hand: ``dataclasses.asdict`` deep-copies every field)."""
    if len(_lines) >= _LINES_KEPT:
        _lines.clear()
    lines = []
    for d in deliveries:
        # Only a delivery of the types a hook writes is kept (1 == True == 1.0 as keys).
        plain = type(d.version) is int and type(d.epoch) is int and type(d.judged) is bool
        line = _lines.get(d) if plain else None
        if line is None:
            line = json.dumps(
                {
                    "application_id": d.application_id,
                    "record_id": d.record_id,
                    "version": d.version,
                    "epoch": d.epoch,
                    "judged": d.judged,
                }
            )
            if plain:
                _lines[d] = line
        lines.append(line)
    head = json.dumps({"epoch": epoch, "reviewed": reviewed})
    return f'{head[:-1]}, "deliveries": [{", ".join(lines)}]}}'


def _touched(path: Path) -> bool:
    """Whether ``path`` is still there, its modification time now."""
    try:
        os.utime(path)
    except OSError:
        return False
    return True


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def _sweep(folder: Path, *, now: float | None = None) -> None:
    """Remove the notes of sessions long over: at most once an hour per folder in one
    process (a daemon saves on every prompt; a note lives for weeks)."""
    moment = time.time() if now is None else now
    key = str(folder)
    if moment < _swept.get(key, float("-inf")) + SWEEP_EVERY_SECONDS:
        return
    _swept[key] = moment
    cutoff = moment - KEEP_SECONDS
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return
    for entry in entries:
        try:
            if entry.name.endswith(".json") and entry.stat().st_mtime < cutoff:
                os.unlink(entry.path)
        except OSError:
            continue

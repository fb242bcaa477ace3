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
from typing import Any

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
            data = json.loads(text)
        except (OSError, ValueError):
            return  # a new session (or an unreadable note: start afresh)
        self._read = text
        if not isinstance(data, dict):
            return
        self.epoch = int(data.get("epoch", 0))
        self.reviewed = int(data.get("reviewed", -1))
        self.deliveries = [Delivery(**d) for d in data.get("deliveries", [])]

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
        data: dict[str, Any] = {
            "epoch": self.epoch,
            "reviewed": self.reviewed,
            # By hand: dataclasses.asdict deep-copies every field, the most of a save.
            "deliveries": [
                {
                    "application_id": d.application_id,
                    "record_id": d.record_id,
                    "version": d.version,
                    "epoch": d.epoch,
                    "judged": d.judged,
                }
                for d in self.deliveries
            ],
        }
        text = json.dumps(data)
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

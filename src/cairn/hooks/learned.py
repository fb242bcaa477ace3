"""What the hooks learned without being asked, told to the user at the next session start.

The Stop hook reviews the user's words and may store facts and rules from them: nothing a
person should have to discover in ``cairn list``. Each record it (or ``review``) stores is
noted here, under the cairn home beside the sessions' notes, and the next ``SessionStart``
in the same repository (or anywhere, for a global record) says what it was, with the way to
drop it: ``learned in the last session: …; `cairn forget ID` to drop``. A note is told once.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from cairn.homes import make_private_folder, open_private

NOTES = ".learned.json"  # a dot: no session's own note (a safe session id) has this name
KEEP = 50  # notes kept at most (the oldest told ones go first)
SHOWN_CHARS = 80
MAX_TOLD = 5


def _path(folder: Path) -> Path:
    return folder / NOTES


def _read(folder: Path) -> list[dict[str, Any]]:
    try:
        data = json.loads(_path(folder).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    return [d for d in data if isinstance(d, dict)] if isinstance(data, list) else []


def _write(folder: Path, notes: list[dict[str, Any]]) -> None:
    make_private_folder(folder.parent)  # the hooks' folder under the home: 0700
    make_private_folder(folder)
    untold = [n for n in notes if not n.get("told")]
    told = [n for n in notes if n.get("told")]
    kept = (told + untold)[-KEEP:] if len(notes) > KEEP else notes
    temporary = folder / f".learned.{os.getpid()}.tmp"
    with open_private(temporary, "w") as out:  # 0600: it holds what was remembered
        out.write(json.dumps(kept, ensure_ascii=False))
    os.replace(temporary, _path(folder))


def note(folder: Path, session_id: str, records: Iterable[Any]) -> None:
    """Note records a review stored (contract ``RecordModel``s), once each."""
    notes = _read(folder)
    known = {n.get("id") for n in notes}
    fresh = [
        {
            "id": r.id,
            "body": r.body,
            "scope": r.scope,
            "project_id": r.project_id,
            "session_id": session_id,
            "told": False,
        }
        for r in records
        if r.id not in known
    ]
    if fresh:
        _write(folder, notes + fresh)


def tell(folder: Path, project_id: str | None) -> str:
    """The line for a session starting in ``project_id``'s repository ("" for none); what
    it names is marked as told."""
    notes = _read(folder)
    due = [
        n
        for n in notes
        if not n.get("told") and (n.get("scope") == "global" or n.get("project_id") == project_id)
    ]
    if not due:
        return ""
    for n in due:
        n["told"] = True
    _write(folder, notes)
    return render(due)


def render(due: Sequence[dict[str, Any]]) -> str:
    items = []
    for n in due[:MAX_TOLD]:
        body = " ".join(str(n.get("body", "")).split())
        if len(body) > SHOWN_CHARS:
            body = body[: SHOWN_CHARS - 1] + "…"
        where = "this repository" if n.get("scope") == "project" else "every project"
        items.append(f"{n['id']} “{body}” ({where})")
    more = f" and {len(due) - MAX_TOLD} more (cairn list)" if len(due) > MAX_TOLD else ""
    first = str(due[0]["id"])
    return (
        f"cairn learned in the last session: {'; '.join(items)}{more};"
        f" `cairn forget {first}` (or another id) to drop"
    )

"""The recorded Claude Code events and transcript of tests/data/hooks, for the tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parent / "data" / "hooks" / "claude-code"


def event(name: str, **changes: Any) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((DATA / f"{name}.json").read_text(encoding="utf-8"))
    data.update(changes)
    return data


def raw(name: str, **changes: Any) -> bytes:
    return json.dumps(event(name, **changes)).encode("utf-8")


def transcript_lines() -> list[str]:
    return (DATA / "transcript.jsonl").read_text(encoding="utf-8").splitlines()

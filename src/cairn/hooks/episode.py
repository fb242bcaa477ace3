"""A finished turn for learning (SPEC §6): the episode is observed, the user's words are
reviewed.

- ``observe`` (``episode.completed``): what was asked, whether the turn ended well (not
  on a failed tool call), the tools used and how many steps, the agent's last words as
  its note, and the deliveries the turn plainly used (:mod:`cairn.hooks.outcomes`) —
  which the observation marks ``used-successfully``. When the turn ended on a test or
  verifier command (``pytest``, ``make test``, ``cargo test`` …) whose exit code the
  transcript records, the hook itself saw a deterministic verdict: the observation says
  so, with the command (a caller's own "deterministic" flag is never taken, see
  :mod:`cairn.provider.attribution`). A turn that read the web or another
  outside source is observed with ``content_trust: external``, so reflection never learns
  from it.
- ``review``: the user's prompt, for the facts and rules stated in it (a rule the prompt
  hook already remembered is skipped as already remembered).

Both under keys of the session and the turn: a second stop of the same turn adds nothing.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from cairn.hooks.events import HookEvent
from cairn.hooks.transcript import Turn
from cairn.limits import MAX_COMMAND_CHARS, MAX_KEY_CHARS, MAX_LIST_ITEMS, MAX_QUERY_CHARS

if TYPE_CHECKING:
    from cairn.provider.client import Client

NOTE_CHARS = 2000
# Tools whose results come from outside the user's machine and words.
OUTSIDE_TOOLS = frozenset(("WebFetch", "WebSearch"))
SHELL_TOOLS = frozenset(("Bash",))
VERIFIER = re.compile(
    r"(?:^|[\s;&|(])(?:pytest|python3? -m pytest|make (?:test|check|verify|lint)[\w-]*|"
    r"(?:npm|pnpm|yarn|bun)(?: run)? test|cargo test|go test|tox|nox|mvn(?:w)? test|"
    r"gradle(?:w)? test|ruff check|mypy|tsc(?: --noEmit)?)(?=$|[\s;&|)])"
)


def _clip(text: str, limit: int) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[: limit - 1] + "…"


def reads_outside(turn: Turn) -> bool:
    """The turn brought in outside content: the web, or another MCP server's tools."""
    return any(
        t.name in OUTSIDE_TOOLS or (t.name.startswith("mcp__") and "__memory_" not in t.name)
        for t in turn.tools
    )


def observation(
    event: HookEvent, turn: Turn, project_id: str | None, used: Sequence[str]
) -> dict[str, Any]:
    """The ``observe`` request's fields for the turn; ``used``: the application ids the
    turn plainly used (counted only when it ended well)."""
    success = not turn.ended_in_failure
    verifier = verified_by(turn)
    return {
        "type": "episode.completed",
        "success": success,
        "episode_id": f"{event.host}:{event.session_id}"[:MAX_KEY_CHARS],
        "session_id": event.session_id[:MAX_KEY_CHARS],
        "content_trust": "external" if reads_outside(turn) else "learned",
        "tools": sorted({t.name for t in turn.tools if t.name})[:MAX_LIST_ITEMS],
        "steps": len(turn.tools),
        "task": _clip(turn.prompt, MAX_QUERY_CHARS) or None,
        "note": _clip(turn.replies[-1], NOTE_CHARS) if turn.replies else None,
        "project_id": project_id,
        "applications": list(used) if success else [],
        "deterministic": verifier is not None,
        "command": verifier,
        "occurred_at": turn.started_at,
    }


def verified_by(turn: Turn) -> str | None:
    """The verifier command the turn ended on, when its result is recorded: the exit code
    the hook saw decides the turn, deterministically."""
    judged = [t for t in turn.tools if t.failed is not None]
    if not judged or judged[-1].name not in SHELL_TOOLS:
        return None
    command = judged[-1].input.get("command")
    if not isinstance(command, str) or VERIFIER.search(command) is None:
        return None
    return _clip(command, MAX_COMMAND_CHARS)


def record_turn(
    memory: Client, event: HookEvent, turn: Turn, project_id: str | None, used: Sequence[str]
) -> list[Any]:
    """Observe and review one turn; the records the review stored."""
    from cairn.errors import InvalidInput
    from cairn.provider.contract import learning as lc

    turn_key = turn.uuid or turn.index
    try:
        memory.apply(
            lc.ObserveRequest,
            lc.ObserveResponse,
            memory.key("hook-observe", event.host, event.session_id, turn_key),
            **observation(event, turn, project_id, used),
        )
    except InvalidInput as exc:
        # The policy refuse kept a turn holding a secret out (the words cross the daemon
        # and HTTP, the exception's class does not): the review below still runs.
        if " a secret (" not in str(exc):
            raise
    return review_turn(memory, event, turn, project_id)


def review_turn(memory: Client, event: HookEvent, turn: Turn, project_id: str | None) -> list[Any]:
    """Review the user's words of one turn (under the turn's key: once); what it stored."""
    from cairn.provider.contract import learning as lc

    if not turn.prompt.strip():
        return []
    reviewed = memory.apply(
        lc.ReviewRequest,
        lc.ReviewResponse,
        memory.key("hook-review", event.host, event.session_id, turn.uuid or turn.index),
        transcript=json.dumps([{"role": "user", "content": turn.prompt}], ensure_ascii=False),
        format="messages",
        project_id=project_id,
    )
    return list(reviewed.stored)

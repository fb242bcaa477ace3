"""A finished turn as an episode of memory: what was asked, what the agent did, how it
ended — the raw material review and reflection learn from (SPEC §6).

Seam: the contract's ``observe`` mutation (an episode with its trajectory and outcome) is
the intended route. Until it exists the turn is written as a ``store`` of an ``episode``
memory — the user's prompt, the agent's last words, the tools it used and which failed —
under the session's episode id and the turn's position, so recall's episode context links
the turns of one session. :func:`record_turn` is the one place to switch.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from cairn.hooks.events import HookEvent
from cairn.hooks.transcript import Turn

if TYPE_CHECKING:
    from cairn.hooks.gateway import Gateway

PROMPT_CHARS = 1000
REPLY_CHARS = 600
PATH_KEYS = ("file_path", "notebook_path", "path")
MAX_PATHS = 10


@dataclass(frozen=True, slots=True)
class Episode:
    body: str
    episode_id: str
    position: int
    occurred_at: str | None
    source: dict[str, Any]


def _clip(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def describe(event: HookEvent, turn: Turn) -> Episode:
    """The episode of one turn: plain text, short, with no tool output in it (tool output
    is data from outside, often large, sometimes secret)."""
    lines = [f"Asked: {_clip(turn.prompt, PROMPT_CHARS)}"]
    if turn.replies:
        lines.append(f"Answered: {_clip(turn.replies[-1], REPLY_CHARS)}")
    if turn.tools:
        used = Counter(t.name for t in turn.tools)
        failed = Counter(t.name for t in turn.failed_tools)
        parts = [
            f"{name} ×{n}" + (f" ({failed[name]} failed)" if failed[name] else "")
            for name, n in sorted(used.items())
        ]
        lines.append("Tools: " + ", ".join(parts))
    paths = []
    for call in turn.tools:
        for key in PATH_KEYS:
            value = call.input.get(key)
            if isinstance(value, str) and value not in paths:
                paths.append(value)
    if paths:
        lines.append("Files: " + ", ".join(paths[:MAX_PATHS]))
    lines.append("Ended: " + ("on a failed tool call" if turn.ended_in_failure else "normally"))
    return Episode(
        body="\n".join(lines),
        episode_id=f"{event.host}:{event.session_id}"[:200],
        position=turn.index,
        occurred_at=turn.started_at,
        source={"host": event.host, "session_id": event.session_id, "turn": turn.uuid},
    )


def record_turn(memory: Gateway, event: HookEvent, turn: Turn, project_id: str | None) -> Any:
    """Write the turn's episode through the provider, once: the key is the session and
    the turn, so a second stop of the same turn adds nothing."""
    from cairn.provider import contract as c

    episode = describe(event, turn)
    return memory.apply(
        c.StoreRequest,
        c.WriteResponse,
        memory.key("episode", event.host, event.session_id, turn.uuid or turn.index),
        body=episode.body,
        kind="episode",
        memory_type="episodic",
        origin="system",
        tags=["session"],
        scope="project" if project_id else "global",
        project_id=project_id,
        episode_id=episode.episode_id,
        position=episode.position,
        occurred_at=episode.occurred_at,
        source=episode.source,
    )

"""What a host's hook asks and what cairn answers, in no host's format.

A host adapter (:mod:`cairn.hooks.claude_code`) turns the host's event into a
:class:`HookEvent` and a :class:`HookReply` back into the host's output; everything in
between (:mod:`cairn.hooks.handlers`) knows no host. Standard library only: the hook is
on the path of every prompt.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

HookKind = Literal["session-start", "prompt", "stop"]
HOOK_KINDS: tuple[HookKind, ...] = ("session-start", "prompt", "stop")


class HookInputError(ValueError):
    """The host's event is not what this hook expects (logged; the host sees nothing)."""


@dataclass(frozen=True, slots=True)
class HookEvent:
    """One hook call: a session starting, a prompt submitted, or the agent stopping."""

    host: str  # the adapter that read it, e.g. "claude-code"
    kind: HookKind
    session_id: str
    cwd: str | None  # the folder the agent works in: its repository is the project
    transcript_path: str | None = None
    prompt: str | None = None  # prompt: the user's words
    source: str | None = None  # session-start: startup | resume | clear | compact
    stop_hook_active: bool = False  # stop: the host is already continuing for a stop hook


@dataclass(frozen=True, slots=True)
class HookReply:
    """What the agent should be told (``context``) and what the user should see
    (``notice``: one line about what cairn did). Both empty: the hook says nothing."""

    context: str = ""
    notice: str = ""

    @property
    def silent(self) -> bool:
        return not self.context and not self.notice


SILENT = HookReply()

"""Transcripts as agents write them, read into turns (for ``cairn review``).

Two formats:

* a Claude Code session (JSONL): one event per line with a ``type`` (``user``,
  ``assistant``, ``summary``, ``system``...) and, for messages, a ``message`` holding
  ``role`` and ``content`` — a string, or a list of blocks (``text``, ``tool_use``,
  ``tool_result``, ``thinking``...);
* a plain list of ``{role, content}`` messages (a JSON array, or one message per line).

Only words a person typed are a user turn: tool results travel in ``user`` events too and
are dropped, as are meta events and the text a harness injects in tags
(``<command-name>``, ``<local-command-stdout>``, ``<system-reminder>``...).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from cairn.errors import InvalidInput

_INJECTED = re.compile(r"<([a-z][a-z0-9-]*)(?:\s[^>]*)?>.*?</\1>", re.DOTALL)
_INJECTED_OPEN = re.compile(r"^\s*<[a-z][a-z0-9-]*[\s>]")
ROLES = ("user", "assistant", "system", "tool")


@dataclass(frozen=True, slots=True)
class Turn:
    role: str  # user | assistant | system | tool
    text: str
    index: int  # its place in the transcript
    session: str | None = None
    at: str | None = None


def _text_of(content: Any) -> str:
    """The typed text of a message's content (tool calls and results left out)."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    parts = [
        str(block.get("text") or "")
        for block in content
        if isinstance(block, dict) and block.get("type") in ("text", None)
    ]
    parts += [block for block in content if isinstance(block, str)]
    return "\n".join(p for p in parts if p)


def _has_tool_result(content: Any) -> bool:
    return isinstance(content, list) and any(
        isinstance(b, dict) and b.get("type") == "tool_result" for b in content
    )


def _clean(text: str) -> str:
    """A person's words without what a harness wrapped around them."""
    text = _INJECTED.sub(" ", text)
    return "" if _INJECTED_OPEN.match(text) else text.strip()


def _claude_turn(line: dict[str, Any], index: int) -> Turn | None:
    kind = line.get("type")
    message = line.get("message")
    if kind not in ("user", "assistant") or not isinstance(message, dict):
        return None
    role = str(message.get("role") or kind)
    content = message.get("content")
    if role == "user" and (line.get("isMeta") or _has_tool_result(content)):
        role = "tool"  # a tool's output or the harness's note, never the person's words
    text = _clean(_text_of(content)) if role == "user" else _text_of(content).strip()
    if not text:
        return None
    session = line.get("sessionId")
    at = line.get("timestamp")
    return Turn(
        role if role in ROLES else "system",
        text,
        index,
        session if isinstance(session, str) else None,
        at if isinstance(at, str) else None,
    )


def _message_turn(item: dict[str, Any], index: int) -> Turn | None:
    role = item.get("role")
    if role not in ROLES:
        return None
    text = _text_of(item.get("content"))
    text = _clean(text) if role == "user" else text.strip()
    return Turn(str(role), text, index) if text else None


def _lines(text: str) -> list[tuple[int, Any]]:
    out: list[tuple[int, Any]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            out.append((number, json.loads(line)))
        except (json.JSONDecodeError, RecursionError):
            raise InvalidInput(f"transcript line {number}: not JSON") from None
    return out


def read_transcript(text: str, fmt: str = "auto") -> list[Turn]:
    """The turns of a transcript; ``fmt``: auto, claude-jsonl or messages."""
    if fmt not in ("auto", "claude-jsonl", "messages"):
        raise InvalidInput(f"unknown transcript format {fmt!r}")
    stripped = text.strip()
    if not stripped:
        raise InvalidInput("the transcript is empty")
    if stripped.startswith("["):
        try:
            items = json.loads(stripped)
        except (json.JSONDecodeError, RecursionError):
            raise InvalidInput("the transcript is not a JSON list of messages") from None
        if not isinstance(items, list):
            raise InvalidInput("the transcript is not a JSON list of messages")
        lines = list(enumerate(items, start=1))
    else:
        lines = _lines(stripped)
    turns: list[Turn] = []
    for index, item in lines:
        if not isinstance(item, dict):
            raise InvalidInput(f"transcript item {index}: not an object")
        claude = "message" in item or item.get("type") in ("summary", "system", "user")
        if fmt == "claude-jsonl" or (fmt == "auto" and claude and "role" not in item):
            turn = _claude_turn(item, index)
        else:
            turn = _message_turn(item, index)
        if turn is not None:
            turns.append(turn)
    return turns

"""A session's transcript, read back as turns: the user's prompt, what the agent said,
and the tools it called with whether each failed.

Claude Code keeps the transcript as JSON Lines: ``user`` entries hold a prompt (a string,
or text blocks) or tool results (``tool_result`` blocks with ``tool_use_id`` and
``is_error``); ``assistant`` entries hold ``text``, ``thinking`` and ``tool_use`` blocks
(``id``, ``name``, ``input``). Sub-agent entries (``isSidechain``) and meta entries
(``isMeta``) are not the user's conversation. Lines that are not JSON objects are skipped:
a transcript being written may end in half a line.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from cairn.limits import MAX_TRANSCRIPT_BYTES


@dataclass(frozen=True, slots=True)
class ToolCall:
    id: str
    name: str
    input: dict[str, Any]
    failed: bool | None = None  # None: no result recorded (yet)


@dataclass(frozen=True, slots=True)
class Turn:
    """One prompt of the user and everything the agent did until it stopped."""

    index: int  # 0 for the session's first prompt
    uuid: str | None
    prompt: str
    started_at: str | None
    replies: tuple[str, ...] = ()
    tools: tuple[ToolCall, ...] = ()

    @property
    def failed_tools(self) -> tuple[ToolCall, ...]:
        return tuple(t for t in self.tools if t.failed)

    @property
    def ended_in_failure(self) -> bool:
        """The last tool call with a result failed (the agent stopped on an error)."""
        judged = [t for t in self.tools if t.failed is not None]
        return bool(judged) and bool(judged[-1].failed)

    def said(self) -> str:
        """Everything the agent wrote and passed to tools, as one text to search."""
        parts = list(self.replies)
        parts += [json.dumps(t.input, ensure_ascii=False) for t in self.tools]
        return "\n".join(parts)


def _prompt_of(content: Any) -> str | None:
    if isinstance(content, str):
        return content
    if not isinstance(content, list) or not content:
        return None
    if any(isinstance(b, dict) and b.get("type") == "tool_result" for b in content):
        return None
    texts = [b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text"]
    texts = [t for t in texts if isinstance(t, str)]
    return "\n".join(texts) if texts else None


def _results_of(content: Any) -> dict[str, bool]:
    if not isinstance(content, list):
        return {}
    return {
        str(b.get("tool_use_id")): bool(b.get("is_error"))
        for b in content
        if isinstance(b, dict) and b.get("type") == "tool_result"
    }


class _Builder:
    def __init__(self, index: int, uuid: str | None, prompt: str, at: str | None) -> None:
        self.turn = Turn(index, uuid, prompt, at)
        self.replies: list[str] = []
        self.tools: dict[str, ToolCall] = {}

    def assistant(self, content: Any) -> None:
        if isinstance(content, str):
            self.replies.append(content)
            return
        for block in content if isinstance(content, list) else []:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "text" and isinstance(block.get("text"), str):
                self.replies.append(block["text"])
            elif block.get("type") == "tool_use":
                given = block.get("input")
                call = ToolCall(
                    str(block.get("id", "")),
                    str(block.get("name", "")),
                    given if isinstance(given, dict) else {},
                )
                self.tools[call.id] = call

    def results(self, outcome: dict[str, bool]) -> None:
        for tool_id, failed in outcome.items():
            if tool_id in self.tools:
                self.tools[tool_id] = replace(self.tools[tool_id], failed=failed)

    def build(self) -> Turn:
        return replace(
            self.turn,
            replies=tuple(r for r in self.replies if r.strip()),
            tools=tuple(self.tools.values()),
        )


def parse_turns(lines: Iterable[str]) -> list[Turn]:
    """The turns of a transcript, in order."""
    turns: list[Turn] = []
    current: _Builder | None = None

    def close() -> None:
        if current is not None:
            turns.append(current.build())

    for line in lines:
        try:
            entry = json.loads(line)
        except (json.JSONDecodeError, RecursionError):
            continue
        if not isinstance(entry, dict) or entry.get("isSidechain") or entry.get("isMeta"):
            continue
        message = entry.get("message")
        if not isinstance(message, dict):
            continue
        content = message.get("content")
        if entry.get("type") == "user":
            prompt = _prompt_of(content)
            if prompt is not None:
                close()
                at = entry.get("timestamp")
                uuid = entry.get("uuid")
                current = _Builder(
                    len(turns),
                    uuid if isinstance(uuid, str) else None,
                    prompt,
                    at if isinstance(at, str) else None,
                )
            elif current is not None:
                current.results(_results_of(content))
        elif entry.get("type") == "assistant" and current is not None:
            current.assistant(content)
    close()
    return turns


def read_turns(path: str | Path) -> list[Turn]:
    """The turns of the transcript file (none when it is missing or too large)."""
    file = Path(path).expanduser()
    try:
        if file.stat().st_size > MAX_TRANSCRIPT_BYTES:
            return []
        text = file.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    return parse_turns(text.splitlines())

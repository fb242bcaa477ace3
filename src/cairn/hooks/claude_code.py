"""The Claude Code host: its hook events in, its hook output out.

Claude Code runs a command hook with one JSON object on standard input. Every event
carries ``session_id``, ``transcript_path``, ``cwd`` and ``hook_event_name`` (recent
versions add ``permission_mode``); ``SessionStart`` adds ``source``, ``UserPromptSubmit``
adds ``prompt``, ``Stop`` adds ``stop_hook_active``. On exit 0 the host reads standard
output as one JSON document: ``hookSpecificOutput.additionalContext`` is added to the
agent's context (SessionStart, UserPromptSubmit), ``systemMessage`` is shown to the user.
Empty output changes nothing. Another host is one more module like this one.
"""

from __future__ import annotations

import json
import re
from typing import Any

from cairn.hooks.events import HookEvent, HookInputError, HookKind, HookReply
from cairn.limits import MAX_HOOK_EVENT_BYTES as MAX_INPUT_BYTES

HOST = "claude-code"
EVENT_NAMES: dict[HookKind, str] = {
    "session-start": "SessionStart",
    "prompt": "UserPromptSubmit",
    "stop": "Stop",
}
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """An object whose keys are all different: a repeated key (two prompts, two session
    ids) is refused like on every other JSON boundary, not resolved to its last value."""
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise HookInputError(f"the event is not valid: the key {key!r} appears twice")
        out[key] = value
    return out


def _text(data: dict[str, Any], key: str, *, required: bool = False) -> str | None:
    value = data.get(key)
    if value is None:
        if required:
            raise HookInputError(f"the {key} field is missing")
        return None
    if not isinstance(value, str):
        raise HookInputError(f"the {key} field is not a string")
    # A host that cuts a prompt may cut a surrogate pair in two, and JSON carries the half
    # as an escape. Refused further in, the whole prompt would get no memory and store no
    # rule, with only a log line to say so: the half is the character it cannot be.
    return _LONE_SURROGATE.sub("\ufffd", value)


def parse_event(kind: HookKind, raw: bytes) -> HookEvent:
    """The event on standard input, for the hook ``kind`` the settings installed."""
    if len(raw) > MAX_INPUT_BYTES:
        raise HookInputError(f"the event is {len(raw):,} bytes; at most {MAX_INPUT_BYTES:,}")
    try:
        data = json.loads(raw.decode("utf-8"), object_pairs_hook=_unique_keys)
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise HookInputError(f"the event is not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise HookInputError("the event is not a JSON object")
    name = _text(data, "hook_event_name")
    if name is not None and name != EVENT_NAMES[kind]:
        raise HookInputError(
            f"'cairn hook {kind}' received a {name} event (installed under the wrong event?)"
        )
    session_id = _text(data, "session_id", required=True)
    assert session_id is not None
    if not session_id.strip():
        raise HookInputError("the session_id field is empty")
    prompt = _text(data, "prompt", required=kind == "prompt")
    active = data.get("stop_hook_active", False)
    if not isinstance(active, bool):
        raise HookInputError("the stop_hook_active field is not true or false")
    return HookEvent(
        host=HOST,
        kind=kind,
        session_id=session_id,
        cwd=_text(data, "cwd"),
        transcript_path=_text(data, "transcript_path"),
        prompt=prompt,
        source=_text(data, "source"),
        stop_hook_active=active,
    )


def render_reply(event: HookEvent, reply: HookReply) -> str:
    """Standard output for the host: one JSON document, or nothing at all."""
    if reply.silent or event.kind == "stop":
        return ""  # a Stop hook that prints a decision could keep the agent going
    text = "\n\n".join(part for part in (reply.notice, reply.context) if part)
    output: dict[str, Any] = {
        "hookSpecificOutput": {
            "hookEventName": EVENT_NAMES[event.kind],
            "additionalContext": text,
        }
    }
    if reply.notice:
        output["systemMessage"] = reply.notice
    return json.dumps(output, ensure_ascii=False)

"""The Claude Code adapter: recorded host events in, the host's output format out."""

from __future__ import annotations

import json

import pytest

from cairn.hooks.claude_code import parse_event, render_reply
from cairn.hooks.events import SILENT, HookInputError, HookReply
from hook_events import event, raw


def test_every_recorded_event_parses_to_the_neutral_event() -> None:
    start = parse_event("session-start", raw("session-start"))
    assert (start.kind, start.source, start.host) == ("session-start", "startup", "claude-code")
    assert start.session_id == event("session-start")["session_id"]
    assert start.cwd == "/home/dana/src/shop"
    assert start.transcript_path is not None and start.transcript_path.endswith(".jsonl")
    prompt = parse_event("prompt", raw("prompt-rule"))
    assert prompt.prompt is not None and prompt.prompt.startswith("From now on")
    stop = parse_event("stop", raw("stop"))
    assert stop.stop_hook_active is False
    assert parse_event("stop", raw("stop-active")).stop_hook_active is True


@pytest.mark.parametrize(
    ("kind", "data", "says"),
    [
        ("prompt", b"not json", "not JSON"),
        ("prompt", b"[1, 2]", "not a JSON object"),
        ("prompt", raw("stop"), "received a Stop event"),
        ("prompt", json.dumps({"hook_event_name": "UserPromptSubmit"}).encode(), "session_id"),
        ("prompt", raw("prompt-rule", prompt=None), "prompt field is missing"),
        ("prompt", raw("prompt-rule", prompt=7), "prompt field is not a string"),
        ("stop", raw("stop", stop_hook_active="yes"), "stop_hook_active"),
        ("session-start", raw("session-start", session_id="  "), "session_id field is empty"),
    ],
)
def test_an_event_that_is_not_what_the_hook_expects_is_refused(
    kind: str, data: bytes, says: str
) -> None:
    with pytest.raises(HookInputError, match=says):
        parse_event(kind, data)  # type: ignore[arg-type]


def test_a_reply_is_the_hosts_json_and_silence_is_no_output() -> None:
    prompt = parse_event("prompt", raw("prompt-rule"))
    assert render_reply(prompt, SILENT) == ""
    out = json.loads(render_reply(prompt, HookReply(context="Apply these: x", notice="did y")))
    assert out["hookSpecificOutput"] == {
        "hookEventName": "UserPromptSubmit",
        "additionalContext": "did y\n\nApply these: x",
    }
    assert out["systemMessage"] == "did y"
    start = parse_event("session-start", raw("session-start"))
    out = json.loads(render_reply(start, HookReply(context="ctx")))
    assert out == {
        "hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": "ctx"}
    }


def test_a_stop_hook_never_prints_so_it_can_never_block() -> None:
    stop = parse_event("stop", raw("stop"))
    assert render_reply(stop, HookReply(context="anything", notice="anything")) == ""

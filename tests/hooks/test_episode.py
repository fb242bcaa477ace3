"""A finished turn as an observation for learning."""

from __future__ import annotations

from dataclasses import replace

from cairn.hooks.claude_code import parse_event
from cairn.hooks.episode import observation, reads_outside
from cairn.hooks.transcript import ToolCall, parse_turns
from cairn.provider.contract import learning as lc
from hook_events import raw, transcript_lines


def test_the_observation_of_a_turn_says_what_was_asked_done_and_how_it_ended() -> None:
    event = parse_event("stop", raw("stop"))
    turn = parse_turns(transcript_lines())[-1]
    seen = observation(event, turn, "git:0123456789abcdef", ["01APP"])
    assert seen["type"] == "episode.completed" and seen["success"] is True
    assert seen["task"] == "Install the dependencies and run the tests."
    assert seen["note"].startswith("Dependencies are installed and all 31 tests pass")
    assert seen["tools"] == ["Bash", "Edit"] and seen["steps"] == 4
    assert seen["applications"] == ["01APP"]
    assert seen["episode_id"] == f"claude-code:{event.session_id}"
    assert seen["session_id"] == event.session_id and seen["occurred_at"] == turn.started_at
    assert seen["content_trust"] == "learned"
    assert "FAIL src/cart" not in str(seen)  # no tool output
    lc.ObserveRequest(idempotency_key="k", **seen)  # a valid request of the contract


def test_a_failed_turn_judges_no_delivery_and_outside_content_is_never_learned() -> None:
    event = parse_event("stop", raw("stop"))
    turn = parse_turns(transcript_lines())[-1]
    failed = replace(turn, tools=(*turn.tools, ToolCall("x", "Bash", {"command": "make"}, True)))
    seen = observation(event, failed, None, ["01APP"])
    assert seen["success"] is False and seen["applications"] == []
    web = replace(turn, tools=(*turn.tools, ToolCall("w", "WebFetch", {"url": "https://x"})))
    assert reads_outside(web) and observation(event, web, None, [])["content_trust"] == "external"
    other_mcp = ToolCall("m", "mcp__github__get_issue", {"n": 1})
    own_mcp = ToolCall("c", "mcp__cairn__memory_recall", {"query": "x"})
    assert reads_outside(replace(turn, tools=(other_mcp,)))
    assert not reads_outside(replace(turn, tools=(own_mcp,)))


def test_a_turn_that_ends_on_a_verifier_is_judged_deterministically() -> None:
    event = parse_event("stop", raw("stop"))
    turn = parse_turns(transcript_lines())[-1]  # ends on `pnpm test -- --run`, passing
    seen = observation(event, turn, None, [])
    assert seen["deterministic"] is True and seen["command"] == "pnpm test -- --run"
    red = replace(turn, tools=(*turn.tools, ToolCall("t", "Bash", {"command": "pytest -q"}, True)))
    seen = observation(event, red, None, [])
    assert (seen["success"], seen["deterministic"], seen["command"]) == (False, True, "pytest -q")
    unrecorded = replace(turn, tools=(ToolCall("p", "Bash", {"command": "make test"}),))
    assert observation(event, unrecorded, None, [])["deterministic"] is False
    # Not a verifier, or not the last word: no deterministic verdict.
    for tail in (
        ToolCall("l", "Bash", {"command": "ls -la"}, False),
        ToolCall("e", "Edit", {"file_path": "x"}, False),
        ToolCall("s", "Bash", {"command": "echo pytester"}, False),
    ):
        seen = observation(event, replace(turn, tools=(*turn.tools, tail)), None, [])
        assert seen["deterministic"] is False and seen["command"] is None, tail

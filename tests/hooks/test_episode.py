"""A finished turn described as an episode."""

from __future__ import annotations

from cairn.hooks.claude_code import parse_event
from cairn.hooks.episode import describe
from cairn.hooks.transcript import parse_turns
from hook_events import raw, transcript_lines


def test_the_episode_of_a_turn_says_what_was_asked_done_and_how_it_ended() -> None:
    event = parse_event("stop", raw("stop"))
    turn = parse_turns(transcript_lines())[-1]
    episode = describe(event, turn)
    lines = episode.body.splitlines()
    assert lines[0] == "Asked: Install the dependencies and run the tests."
    assert lines[1].startswith("Answered: Dependencies are installed")
    assert "Tools: Bash ×3 (1 failed), Edit ×1" in lines
    assert "Files: /home/dana/src/shop/src/cart/total.test.ts" in lines
    assert lines[-1] == "Ended: normally"
    assert "FAIL src/cart" not in episode.body  # no tool output
    assert episode.episode_id == f"claude-code:{event.session_id}"
    assert episode.position == 1 and episode.occurred_at == turn.started_at
    assert episode.source["turn"] == turn.uuid

"""Reading a recorded Claude Code transcript back as turns."""

from __future__ import annotations

import json
from pathlib import Path

from cairn.hooks.transcript import parse_turns, read_turns
from hook_events import DATA, transcript_lines


def test_the_recorded_transcript_reads_as_its_two_prompts() -> None:
    turns = parse_turns(transcript_lines())
    assert [t.index for t in turns] == [0, 1]
    first, second = turns
    assert first.prompt.startswith("Fix the rounding")  # the /clear meta entry is not a prompt
    assert [t.name for t in first.tools] == ["Read", "Edit"]
    assert first.replies[-1] == "The total is now rounded to cents."
    assert second.prompt == "Install the dependencies and run the tests."
    assert second.started_at is not None and second.uuid is not None
    # the sub-agent's own prompt is not the user's: still one turn
    assert [t.name for t in second.tools] == ["Bash", "Bash", "Edit", "Bash"]
    assert [t.failed for t in second.tools] == [False, True, False, False]
    assert [t.input["command"] for t in second.failed_tools] == ["pnpm test -- --run"]
    assert not second.ended_in_failure  # the last test run passed
    assert "31 tests pass" in second.replies[-1]


def test_a_turn_that_stops_on_a_failed_call_ended_in_failure() -> None:
    lines = transcript_lines()
    cut = next(i for i, line in enumerate(lines) if '"is_error": true' in line)
    turn = parse_turns(lines[: cut + 1])[-1]
    assert turn.ended_in_failure


def test_half_written_and_foreign_lines_are_skipped(tmp_path: Path) -> None:
    lines = [*transcript_lines(), '{"type": "assistant", "message": {"content": [{"ty', "42", ""]
    path = tmp_path / "t.jsonl"
    path.write_text("\n".join(lines), encoding="utf-8")
    assert len(read_turns(path)) == 2
    assert read_turns(tmp_path / "missing.jsonl") == []


def test_said_holds_the_agents_words_and_tool_inputs() -> None:
    turn = parse_turns(transcript_lines())[1]
    said = turn.said()
    assert "pnpm install" in said and "31 tests pass" in said
    assert "Lockfile is up to date" not in said  # tool output is not what the agent said
    assert json.loads((DATA / "stop.json").read_text())["hook_event_name"] == "Stop"

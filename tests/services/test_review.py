"""Review on the transcript formats agents write, and ask, offline."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cairn.engine.learning.transcripts import read_transcript
from cairn.errors import InvalidInput

from .support import open_mem

SESSION = Path(__file__).parent / "data" / "claude_code_session.jsonl"


def test_a_claude_code_session_gives_the_users_own_statements_only(tmp_path: Path, clock) -> None:
    turns = read_transcript(SESSION.read_text())
    # The harness's note and the tool's output ride in "user" events: they are not the user's.
    roles = [t.role for t in turns]
    assert roles == ["tool", "user", "assistant", "user", "assistant", "user"]
    with open_mem(tmp_path / "m.db", clock) as mem:
        done = mem.review(SESSION.read_text(), project_id="shop")
        stored = {(r.kind, r.body) for r in done.stored}
        assert stored == {
            ("profile", "I maintain the billing service and I work in the Berlin office."),
            ("policy", "From now on, always run make check before pushing."),
            ("fact", "Our staging cluster runs in eu-west-1."),
        }
        assert all(
            (r.origin, r.authority, r.trust, r.state) == ("review", "inferred", "learned", "trial")
            for r in done.stored
        )
        bodies = " ".join(r.body for r in mem.list())
        # Never the assistant's or a tool's words as the user's, nor a harness's.
        for foreign in (
            "full test suite",
            "deploy on Fridays",
            "on fire",
            "code in a block",
            "clear",
            "Caveat",
        ):
            assert foreign not in bodies
        reasons = {s["text"]: s["reason"] for s in done.skipped}
        assert reasons["Just this once, skip the lint step."] == "a one-off: not stored"
        assert reasons["Forget what I said about Fridays."] == "a forget: not stored"
        assert (done.turns, done.user_turns) == (6, 3)
        again = mem.review(SESSION.read_text(), project_id="shop")
        assert again.stored == [] and len(mem.list()) == 3  # the same review: a no-op


def test_a_plain_list_of_messages(tmp_path: Path, clock) -> None:
    messages = [
        {"role": "system", "content": "You are a helpful assistant. I am the system prompt."},
        {"role": "user", "content": "My timezone is Europe/Berlin. Please answer briefly."},
        {"role": "assistant", "content": "My name is Claude and I prefer tea."},
        {
            "role": "user",
            "content": [{"type": "text", "text": "I prefer concise answers in English."}],
        },
        {"role": "tool", "content": "I am a tool output"},
    ]
    with open_mem(tmp_path / "m.db", clock) as mem:
        done = mem.review(messages)
        assert sorted(r.body for r in done.stored) == [
            "I prefer concise answers in English.",
            "My timezone is Europe/Berlin.",
        ]
        jsonl = "\n".join(json.dumps(m) for m in messages)
        assert read_transcript(jsonl, "messages") == read_transcript(json.dumps(messages))
    with pytest.raises(InvalidInput, match="line 1: not JSON"):
        read_transcript("{not json")
    with pytest.raises(InvalidInput, match="empty"):
        read_transcript("  ")


def test_review_with_learning_off_stores_nothing(tmp_path: Path, clock) -> None:
    with open_mem(tmp_path / "m.db", clock, {"enabled": False}) as mem:
        done = mem.review(SESSION.read_text(), project_id="shop")
        assert done.stored == [] and done.reason == "learning is off for this agent"
        assert mem.list() == []


def test_ask_quotes_the_supporting_memories_or_says_it_has_no_answer(tmp_path: Path, clock) -> None:
    with open_mem(tmp_path / "m.db", clock) as mem:
        cluster = mem.remember("The staging cluster runs in eu-west-1. It has three nodes.")
        mem.remember("Commit subjects stay under 60 characters.")
        found = mem.ask("Where does the staging cluster run?")
        assert found.answered and not found.llm
        assert [c.record_id for c in found.citations] == [cluster.id]
        assert found.citations[0].quote == "The staging cluster runs in eu-west-1."
        assert f"[{cluster.id}]" in found.answer
        nothing = mem.ask("What is the capital of Peru?")
        assert not nothing.answered and nothing.answer == "Memory has no answer to that."
        assert nothing.citations == []

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


ASK_SET = Path(__file__).parent / "data" / "ask_questions.json"


def test_ask_answers_what_memory_holds_and_abstains_on_the_rest(tmp_path: Path, clock) -> None:
    """The checked-in set (benchmarks/ask.py reports it with the default embedder)."""
    data = json.loads(ASK_SET.read_text(encoding="utf-8"))
    assert len(data["answerable"]) >= 50 and len(data["unanswerable"]) >= 50
    with open_mem(tmp_path / "m.db", clock) as mem:
        ids = {mem.store(body, kind="fact").id: key for key, body in data["memories"].items()}
        answered = unrelated = 0
        for question, expected in data["answerable"]:
            got = mem.ask(question)
            cited = [ids[c.record_id] for c in got.citations]
            unrelated += sum(c not in expected for c in cited)
            answered += got.answered and any(c in expected for c in cited)
        abstained = sum(not mem.ask(q).answered for q in data["unanswerable"])
    assert answered / len(data["answerable"]) >= 0.9
    assert abstained / len(data["unanswerable"]) >= 0.9
    assert unrelated == 0


def test_ask_never_quotes_a_near_miss(tmp_path: Path, clock) -> None:
    with open_mem(tmp_path / "m.db", clock) as mem:
        mem.store("The staging database runs on port 5433", kind="fact")
        owner = mem.store("Dana owns the billing service", kind="fact")
        for question in (
            "What port does the production database run on?",
            "Who owns the search service?",
            "Who owns the billing database?",
        ):
            got = mem.ask(question)
            assert not got.answered and got.citations == [], question
        got = mem.ask("Who owns the billing service?")
        assert got.answered and [c.record_id for c in got.citations] == [owner.id]

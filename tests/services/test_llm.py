"""The LLM-backed features over a local fake of the chat API: checked before use, falling
back to the offline paths, off with memory.enabled: false, announced once."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from llm_server import FakeChat, fake_chat

from .support import docs, open_mem, succeed


def _llm(chat: FakeChat, **more: Any) -> dict[str, Any]:
    return {"llm": {"baseUrl": chat.url, "model": "m", "timeoutS": 0.5, "retries": 0}, **more}


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CAIRN_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


def test_the_first_run_notice_lists_the_features_once(tmp_path: Path, clock, capsys) -> None:
    with fake_chat() as chat:
        for _ in range(2):
            open_mem(tmp_path / "m.db", clock, **_llm(chat)).close()
        err = capsys.readouterr().err
        assert err.count("LLM features active: review, distill, ask") == 1
        assert "memory.enabled: false" in err
        off = _llm(chat)
        off["llm"]["features"] = {"ask": False}
        open_mem(tmp_path / "m.db", clock, **off).close()  # another set: said again
        assert "review, distill —" in capsys.readouterr().err
        mem = open_mem(tmp_path / "m.db", clock, enabled=False, **_llm(chat))
        assert mem.telemetry().llm_features == []
        assert mem.ask("anything?").llm is False
        mem.close()
        assert chat.received == []  # the master switch: no request at all


def test_review_keeps_only_what_the_user_said(tmp_path: Path, clock) -> None:
    messages = [
        {"role": "user", "content": "I maintain the billing service. We deploy on Tuesdays."},
        {"role": "assistant", "content": "Noted. I suggest you rotate the API keys weekly."},
    ]
    items = [
        {"text": "The user maintains the billing service", "kind": "profile", "turn": 1},
        {"text": "Deploys happen on Tuesdays", "kind": "fact", "turn": 1},
        {"text": "Rotate the API keys weekly", "kind": "policy", "turn": 2},  # the assistant's
    ]
    with fake_chat() as chat, open_mem(tmp_path / "m.db", clock, **_llm(chat)) as mem:
        chat.then(text=json.dumps({"items": items}))
        done = mem.review(messages)
        assert done.llm
        assert sorted(r.body for r in done.stored) == [
            "Deploys happen on Tuesdays",
            "The user maintains the billing service",
        ]
        assert "assistant" not in chat.received[0]["messages"][1]["content"].lower()
        chat.then(raw=b"{broken")
        fallback = mem.review([{"role": "user", "content": "Our CI runs on Buildkite agents."}])
        assert not fallback.llm and "offline extraction" in fallback.warnings[0]
        assert [r.body for r in fallback.stored] == ["Our CI runs on Buildkite agents."]


def test_ask_must_cite_the_memories_it_was_given(tmp_path: Path, clock) -> None:
    with fake_chat() as chat, open_mem(tmp_path / "m.db", clock, **_llm(chat)) as mem:
        fact = mem.remember("The staging cluster runs in eu-west-1.")
        chat.then(text=f"It runs in eu-west-1 [{fact.id}].")
        grounded = mem.ask("Where does the staging cluster run?")
        assert grounded.llm and [c.record_id for c in grounded.citations] == [fact.id]
        chat.then(text="Probably us-east-1.")  # no citation: not trusted
        loose = mem.ask("Where does the staging cluster run?")
        assert not loose.llm and loose.citations[0].record_id == fact.id
        assert "cited no memory" in loose.warnings[0]
        chat.then(text="NO ANSWER")
        assert not mem.ask("Where does the staging cluster run?").answered
        chat.then(delay_s=1.0)  # a timeout: the extractive answer
        slow = mem.ask("Where does the staging cluster run?")
        assert slow.answered and not slow.llm and "timed out" in slow.warnings[0]


def test_distillation_words_the_doc_but_never_its_tools(tmp_path: Path, clock) -> None:
    with fake_chat() as chat, open_mem(tmp_path / "m.db", clock, **_llm(chat)) as mem:
        for key in ("a", "b"):
            succeed(mem, key, "ran make ship, it worked", tools=["make", "bash"])
        chat.then(text="Ship with make ship.")
        run = mem.reflect()
        assert run.admitted == 1
        (doc,) = docs(mem)
        assert doc.body == "Ship with make ship.\nTools: make, bash"
        for key in ("c", "d"):
            succeed(mem, key, "ran the smoke test first, then curl", tools=["curl", "bash"])
        chat.then(raw=b"[]")
        second = mem.reflect()
        assert any("notes' own words" in w for w in second.warnings)

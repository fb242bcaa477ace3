"""The OpenAI-compatible chat adapter against a local server speaking that API."""

from __future__ import annotations

import pytest

from cairn.adapters.llm import LlmError, TokenBudget, chat_model
from llm_server import fake_chat

MESSAGES = [{"role": "user", "content": "say ok"}]


def _model(url: str, **kw):  # type: ignore[no-untyped-def]
    settings = {"api_key_env": "TEST_LLM_KEY", "timeout_s": 0.5, "retries": 1, **kw}
    return chat_model(url, "test-model", environ={"TEST_LLM_KEY": "sk-test"}, **settings)


def test_a_reply_its_usage_and_the_key_from_the_environment() -> None:
    with fake_chat() as chat:
        chat.then(text="ok, done")
        model = _model(chat.url)
        budget = TokenBudget(1000)
        reply = model.complete(MESSAGES, budget=budget, max_tokens=20)
        model.close()
    assert reply.text == "ok, done" and budget.used == 60
    assert chat.received[0]["model"] == "test-model" and chat.received[0]["max_tokens"] == 20
    assert chat.received[0]["messages"] == MESSAGES
    assert chat.headers[0]["Authorization"] == "Bearer sk-test"


def test_a_timeout_is_retried_then_reported() -> None:
    with fake_chat() as chat:
        chat.then(delay_s=1.5).then(text="second try")
        model = _model(chat.url)
        assert model.complete(MESSAGES, budget=TokenBudget(1000)).text == "second try"
        chat.then(delay_s=1.5).then(delay_s=1.5)
        with pytest.raises(LlmError, match="timed out after 2 attempts"):
            model.complete(MESSAGES, budget=TokenBudget(1000))
        model.close()


@pytest.mark.parametrize(
    "raw",
    [b"not json at all", b'{"choices": []}', b'{"choices": [{"message": {"content": 7}}]}'],
)
def test_a_malformed_reply_is_an_error_never_a_guess(raw: bytes) -> None:
    with fake_chat() as chat:
        chat.then(raw=raw)
        model = _model(chat.url, retries=0)
        with pytest.raises(LlmError, match="malformed"):
            model.complete(MESSAGES, budget=TokenBudget(1000))
        model.close()


def test_server_errors_are_retried_refusals_are_not_and_the_budget_caps_a_run() -> None:
    with fake_chat() as chat:
        chat.then(status=503, raw=b"{}").then(text="recovered")
        model = _model(chat.url)
        assert model.complete(MESSAGES, budget=TokenBudget(1000)).text == "recovered"
        chat.then(status=401, raw=b'{"error": "bad key"}')
        with pytest.raises(LlmError, match="refused the request \\(401\\)"):
            model.complete(MESSAGES, budget=TokenBudget(1000))
        sent = len(chat.received)
        with pytest.raises(LlmError, match="budget"):
            model.complete(MESSAGES, budget=TokenBudget(100), max_tokens=200)
        assert len(chat.received) == sent  # nothing was sent
        model.close()
    assert chat_model(None, "m", api_key_env="X", timeout_s=1, retries=0) is None

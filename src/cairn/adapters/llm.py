"""An optional LLM: the OpenAI-compatible chat API over HTTP (``httpx``).

Nothing in the default path uses it. Configured (``memory.llm.baseUrl`` and ``model``),
it words reflection's docs, extracts from transcripts and answers questions; every such
feature has an offline path it falls back to when the model fails. The key is read from
an environment variable, never from a file. Each call has a timeout and is retried on a
timeout, a connection error or a 5xx/429 answer; a reply that is not the API's shape is
an error, never a guess. A token budget per run caps what a run may spend.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from cairn.errors import CairnError


class LlmError(CairnError):
    """The model could not give an answer (timeout, refusal, malformed reply, budget)."""


@dataclass
class TokenBudget:
    """Tokens one run may spend (prompt and completion, as the API reports them)."""

    limit: int
    used: int = 0

    @property
    def remaining(self) -> int:
        return max(0, self.limit - self.used)

    def spend(self, tokens: int) -> None:
        self.used += max(0, tokens)


@dataclass(frozen=True, slots=True)
class ChatReply:
    text: str
    prompt_tokens: int
    completion_tokens: int


def _estimate(messages: Sequence[Mapping[str, str]]) -> int:
    """A rough token count (4 characters a token), for the budget check before a call."""
    return sum(len(m.get("content", "")) for m in messages) // 4 + 8 * len(messages)


class ChatModel:
    """One chat endpoint: ``complete(messages)`` -> the assistant's text."""

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key: str | None = None,
        timeout_s: float = 30.0,
        retries: int = 2,
        transport: Any = None,
    ) -> None:
        import httpx

        self.base_url = base_url.rstrip("/")
        self.model = model
        self._retries = retries
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.Client(
            timeout=httpx.Timeout(timeout_s), headers=headers, transport=transport
        )

    def close(self) -> None:
        self._client.close()

    def complete(
        self,
        messages: Sequence[Mapping[str, str]],
        *,
        budget: TokenBudget,
        max_tokens: int = 512,
    ) -> ChatReply:
        import httpx

        needed = _estimate(messages) + max_tokens
        if needed > budget.remaining:
            raise LlmError(
                f"the run's token budget is spent ({budget.used} of {budget.limit} used)"
            )
        body = {
            "model": self.model,
            "messages": [dict(m) for m in messages],
            "max_tokens": max_tokens,
            "temperature": 0,
        }
        url = f"{self.base_url}/chat/completions"
        failure = "no attempt"
        for attempt in range(self._retries + 1):
            if attempt:
                time.sleep(min(2.0, 0.2 * 2 ** (attempt - 1)))
            try:
                response = self._client.post(url, json=body)
            except httpx.TimeoutException:
                failure = "timed out"
                continue
            except httpx.HTTPError as exc:
                failure = f"could not connect ({type(exc).__name__})"
                continue
            if response.status_code == 429 or response.status_code >= 500:
                failure = f"answered {response.status_code}"
                continue
            if response.status_code >= 400:
                raise LlmError(f"the model endpoint refused the request ({response.status_code})")
            reply = _reply(response)
            budget.spend(reply.prompt_tokens + reply.completion_tokens)
            return reply
        raise LlmError(f"the model endpoint {failure} after {self._retries + 1} attempts")


def _reply(response: Any) -> ChatReply:
    try:
        data = response.json()
        text = data["choices"][0]["message"]["content"]
    except (ValueError, KeyError, IndexError, TypeError):
        raise LlmError("the model endpoint sent a malformed reply") from None
    if not isinstance(text, str):
        raise LlmError("the model endpoint sent a malformed reply (no text)")
    usage = data.get("usage") if isinstance(data, dict) else None
    usage = usage if isinstance(usage, dict) else {}

    def count(name: str, fallback: int) -> int:
        value = usage.get(name)
        return value if isinstance(value, int) and value >= 0 else fallback

    return ChatReply(text, count("prompt_tokens", 0), count("completion_tokens", len(text) // 4))


def chat_model(
    base_url: str | None,
    model: str | None,
    *,
    api_key_env: str,
    timeout_s: float,
    retries: int,
    environ: Mapping[str, str] | None = None,
) -> ChatModel | None:
    """The configured model, or None when none is configured."""
    if not base_url or not model:
        return None
    key = (environ if environ is not None else os.environ).get(api_key_env)
    return ChatModel(base_url, model, api_key=key, timeout_s=timeout_s, retries=retries)

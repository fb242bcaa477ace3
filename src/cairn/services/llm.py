"""The LLM-backed features (SPEC §6), each over its offline path.

``review`` (extract from transcripts), ``distill`` (word reflection's docs) and ``ask``
(grounded answers) use the model only when one is configured, ``memory.enabled`` is on
and the feature's own switch is on. Whatever the model says is checked before it is
used — an extracted statement must be in the user's own words, an answer must cite the
memories it was given — and any failure (timeout, malformed reply, spent budget) falls
back to the offline path with a warning. The tool footprint and verification of a doc
are never the model's: they stay what the runs recorded.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from cairn.adapters.llm import ChatModel, LlmError, TokenBudget
from cairn.config import Config
from cairn.engine.learning.answers import NO_ANSWER, Answer, Citation, best_sentence
from cairn.engine.learning.clustering import signature
from cairn.engine.learning.distill import Draft
from cairn.engine.learning.extraction import Extracted
from cairn.engine.learning.observations import Observation
from cairn.engine.learning.reflect import Wording
from cairn.engine.learning.transcripts import Turn
from cairn.engine.selectors import Selector
from cairn.engine.statements.reader import read_statement
from cairn.model import Record
from cairn.services.llm_notice import FEATURES as FEATURES
from cairn.services.llm_notice import NOTICE_FILE as NOTICE_FILE
from cairn.services.llm_notice import active_features
from cairn.services.llm_notice import first_run_notice as first_run_notice
from cairn.services.llm_notice import notice_text as notice_text

# An extracted statement is the user's when this share of its content words is theirs
# (a model says "the user", and rephrases a little; it may not bring in what they did
# not say).
MIN_SUPPORT = 0.6
_FRAME_WORDS = frozenset(("user", "user'", "their"))
_KINDS = ("fact", "profile", "policy", "preference")


class LlmFeatures:
    def __init__(self, model: ChatModel | None, config: Config) -> None:
        self._model = model
        self._config = config

    def active(self, feature: str) -> bool:
        return self._model is not None and feature in active_features(self._config)

    def budget(self) -> TokenBudget:
        return TokenBudget(self._config.memory.llm.maxTokensPerRun)

    def close(self) -> None:
        if self._model is not None:
            self._model.close()

    def _ask(self, system: str, user: str, budget: TokenBudget, max_tokens: int) -> str:
        assert self._model is not None
        messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
        return self._model.complete(messages, budget=budget, max_tokens=max_tokens).text.strip()

    # -- distill -------------------------------------------------------------------------

    def wording(self, warnings: list[str]) -> Wording | None:
        if not self.active("distill"):
            return None
        budget = self.budget()

        def word(kind: str, members: Sequence[Observation], draft: Draft) -> Draft:
            notes = "\n".join(f"- {m.note}" for m in members[:20])
            try:
                text = self._ask(
                    "Summarise what worked into one short advisory guideline (at most two"
                    " sentences) for an agent doing this kind of task again. Reply with the"
                    " guideline only.",
                    f"Kind of doc: {kind}\nWhat the successful runs noted:\n{notes}",
                    budget,
                    200,
                )
            except LlmError as exc:
                warnings.append(f"distillation kept the notes' own words: {exc}")
                return draft
            if not text or len(text) > 2000:
                return draft
            return Draft(" ".join(text.split()), draft.tools, draft.commands)

        return word

    # -- review --------------------------------------------------------------------------

    def extract(self, turns: Sequence[Turn], warnings: list[str]) -> list[Extracted] | None:
        """Statements the model found in the user's turns, each checked to be in the
        user's own words; None: use the offline extraction."""
        if not self.active("review"):
            return None
        mine = [t for t in turns if t.role == "user"]
        if not mine:
            return []
        said = frozenset().union(*(signature(t.text) for t in mine))
        numbered = "\n".join(f"[{t.index}] {t.text}" for t in mine)
        try:
            reply = self._ask(
                "From the user's messages, extract durable facts about the user and their"
                " work, and lasting rules for how they want work done. Use only what the"
                ' user said. Reply with JSON: {"items": [{"text": "...", "kind":'
                ' "fact|profile|policy|preference", "turn": N}]}',
                numbered,
                self.budget(),
                800,
            )
            items = json.loads(reply).get("items")
            if not isinstance(items, list):
                raise ValueError("no items")
        except (LlmError, ValueError, AttributeError) as exc:
            warnings.append(f"review used the offline extraction: {exc}")
            return None
        out: list[Extracted] = []
        for item in items:
            if not isinstance(item, dict) or not isinstance(item.get("text"), str):
                continue
            text = " ".join(item["text"].split())[:1000]
            words = signature(text) - _FRAME_WORDS
            if not words or len(words & said) / len(words) < MIN_SUPPORT:
                continue  # not the user's own words: never stored as theirs
            kind = item.get("kind") if item.get("kind") in _KINDS else "fact"
            turn = item["turn"] if isinstance(item.get("turn"), int) else 0
            selector = read_statement(text).selector if kind in ("policy", "preference") else None
            out.append(Extracted(text, str(kind), "llm", selector or Selector(), int(turn)))
        return out

    # -- ask -----------------------------------------------------------------------------

    def answer(
        self, question: str, hits: Sequence[tuple[Record, float]], warnings: list[str]
    ) -> Answer | None:
        if not self.active("ask") or not hits:
            return None
        by_id = {r.id: (r, s) for r, s in hits}
        numbered = "\n".join(f"[{r.id}] {r.body}" for r, _ in hits)
        try:
            text = self._ask(
                "Answer the question using only the memories given, citing each memory you"
                " use as [id]. If they do not answer it, reply exactly: NO ANSWER",
                f"Memories:\n{numbered}\n\nQuestion: {question}",
                self.budget(),
                400,
            )
        except LlmError as exc:
            warnings.append(f"the answer is extractive: {exc}")
            return None
        if text.strip().upper().startswith("NO ANSWER"):
            return Answer(False, NO_ANSWER, ())
        cited = [i for i in by_id if f"[{i}]" in text]
        if not cited:
            warnings.append("the model cited no memory; the answer is extractive")
            return None
        wanted = signature(question)
        citations = tuple(
            Citation(i, best_sentence(wanted, by_id[i][0].body)[0] or by_id[i][0].body, by_id[i][1])
            for i in cited
        )
        return Answer(True, text, citations)

"""The embedder of a store that has not chosen one: a write's first texts choose, a query
never does, the store's record wins, and nothing changes it once the store records it."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from cairn.adapters.chosen import Choice, ChosenEmbedder
from cairn.adapters.hashing import HashingEmbedder
from cairn.errors import InvalidInput

# Two stand-ins told apart by their model ids: "hashing-16" plays the English model,
# "hashing-24" the multilingual one.
MODELS = {"english": 16, "multilingual": 24}
PROVIDER_OF = {f"hashing-{d}": p for p, d in MODELS.items()}


def _decide(texts: Sequence[str]) -> Choice:
    if any("数据" in t for t in texts):
        return Choice("multilingual", "first texts", "Chinese")
    return Choice("english", "first texts", "English")


def _embedder(record: list[tuple[str, str | None] | None]) -> ChosenEmbedder:
    made: list[str] = []

    def make(provider: str) -> HashingEmbedder:
        made.append(provider)
        return HashingEmbedder(MODELS[provider])

    chosen = ChosenEmbedder(
        Choice("english", "default", "nothing written yet"),
        make,
        _decide,
        lambda model: PROVIDER_OF.get(model, "unknown"),
    )
    chosen.attach(lambda: record[0])
    return chosen


def test_the_first_write_chooses_and_a_later_one_keeps_the_choice() -> None:
    chosen = _embedder([None])
    assert (chosen.model_id, chosen.choice.by) == ("hashing-16", "default")
    model, vectors = chosen.embed_write(["数据库迁移用 goose"])
    assert model == "hashing-24" and vectors.shape == (1, 24)
    assert chosen.choice == Choice("multilingual", "first texts", "Chinese")
    assert not chosen.settled  # tentative until a commit records it
    model, _ = chosen.embed_write(["deploys go through staging"])  # no new choice
    assert model == "hashing-24"
    chosen.settle()
    assert chosen.settled and chosen.dim == 24


def test_a_query_never_chooses() -> None:
    chosen = _embedder([None])
    assert chosen.embed(["数据库迁移用什么工具？"]).shape == (1, 16)
    assert chosen.choice.by == "default" and chosen.model_id == "hashing-16"


def test_the_store_record_wins_over_the_texts_and_over_a_tentative_choice() -> None:
    record: list[tuple[str, str | None] | None] = [None]
    chosen = _embedder(record)
    chosen.embed_write(["deploys go through staging"])  # tentative: english
    record[0] = ("hashing-24", "first texts: 1 of 1 text Chinese or mixed")  # another process
    model, vectors = chosen.embed_write(["the runbook is in the wiki"])
    assert model == "hashing-24" and vectors.shape == (1, 24)
    assert chosen.settled
    assert chosen.choice == Choice("multilingual", "first texts", "1 of 1 text Chinese or mixed")
    # a query, too, follows the record once another process wrote it
    fresh = _embedder(record)
    assert fresh.settled and fresh.embed(["anything"]).shape == (1, 24)


def test_a_store_of_an_unknown_model_is_refused_in_one_line() -> None:
    with pytest.raises(InvalidInput, match="cannot compute") as failure:
        _embedder([("some-other-model-v9", None)])
    assert "\n" not in str(failure.value)


@pytest.mark.parametrize(
    ("reason", "by", "detail"),
    [
        (None, "store", "the vectors it holds"),  # a store from before reasons were kept
        ("locale: zh_CN.UTF-8", "locale", "zh_CN.UTF-8"),
        (
            "first texts: 2 of 3 texts Chinese or mixed",
            "first texts",
            "2 of 3 texts Chinese or mixed",
        ),
        ("store: switched by cairn reembed", "store", "switched by cairn reembed"),
        ("config: memory.embeddings.provider", "store", "the vectors it holds"),
        ("garbage", "store", "the vectors it holds"),
    ],
)
def test_a_recorded_reason_is_read_back(reason: str | None, by: str, detail: str) -> None:
    choice = Choice.recorded("use-multilingual", reason)
    assert (choice.provider, choice.by, choice.detail) == ("use-multilingual", by, detail)


def test_a_choice_names_one_of_the_known_reasons() -> None:
    with pytest.raises(ValueError, match="chosen by 'whim'"):
        Choice("minilm-onnx", "whim", "because")
    assert Choice("minilm-onnx", "first texts", "English").reason == "first texts: English"

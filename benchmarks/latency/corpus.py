"""The corpus of the latency benchmarks: memories, queries and their vectors.

Memories are shaped like an agent's memory: each picks a topic (tied to its tenant and
project), draws sentences of the pool (:mod:`latency.vocabulary`) mostly from that topic
until it reaches a log-uniform target of 5-120 words, and usually ends with a short unique
detail (a ticket, a PR number, a date). Tenants are of uneven size (40/30/20/10 %), five
projects each, 60 % of the memories project-scoped, with a mix of kinds, trust levels
(10 % system, 5 % external) and tags. Memory ``i`` is generated from its own seeded RNG,
so the first 10k of a 100k store are the 10k store.

Stored vectors are SYNTHETIC: the normalised mean of the real embeddings of a memory's
sentences plus small Gaussian noise (norm :data:`NOISE_NORM`), re-normalised, so they
cluster like real embeddings of the same texts; :class:`LookupEmbedder` hands them to
``store_many``. Query vectors are REAL: queries are never in its table, so the real model
embeds them.
"""

from __future__ import annotations

import hashlib
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from cairn import MemoryInput
from cairn.adapters.embedding import DIM, MODEL_ID, Embedder
from latency.vocabulary import (
    COMMON_WORDS,
    PROJECT_NAMES,
    UNSEEN_TOPICS,
    Sentence,
    Topic,
    make_pool,
)

NOISE_NORM = 0.15
MATCHING_SHARE = 0.7
TENANT_WEIGHTS = (0.4, 0.3, 0.2, 0.1)
PROJECTS_PER_TENANT = 5


@dataclass(frozen=True, slots=True)
class SynthMemory:
    index: int
    tenant: str
    project: str | None
    item: MemoryInput
    sentences: tuple[int, ...]
    keys: tuple[str, ...]

    @property
    def embedding_text(self) -> str:
        # What cairn embeds for a record (cairn.memory.embedding_text).
        return f"{self.item.title}: {self.item.body}" if self.item.title else self.item.body


@dataclass
class Dataset:
    seed: int
    tenants: tuple[str, ...]
    topics: list[Topic]
    pool: list[Sentence]
    by_topic: list[list[int]] = field(default_factory=list)
    projects: dict[str, list[str]] = field(default_factory=dict)
    project_topics: dict[tuple[str, str], list[int]] = field(default_factory=dict)

    @classmethod
    def build(cls, seed: int, pool_size: int, n_tenants: int) -> Dataset:
        topics, pool = make_pool(seed, pool_size, n_topics=48)
        tenants = tuple(f"tenant-{i}" for i in range(n_tenants))
        ds = cls(seed, tenants, topics, pool)
        ds.by_topic = [[] for _ in topics]
        for i, s in enumerate(pool):
            ds.by_topic[s.topic].append(i)
        rng = random.Random(f"{seed}:projects")
        for tenant in tenants:
            names = rng.sample(PROJECT_NAMES, PROJECTS_PER_TENANT)
            ds.projects[tenant] = [f"{tenant}/{n}" for n in names]
            for project in ds.projects[tenant]:
                ds.project_topics[(tenant, project)] = rng.sample(range(len(topics)), 4)
        return ds

    def tenant_weights(self) -> list[float]:
        n = len(self.tenants)
        if n == len(TENANT_WEIGHTS):
            return list(TENANT_WEIGHTS)
        return [1.0 / n] * n

    def memory(self, i: int) -> SynthMemory:
        rng = random.Random(f"{self.seed}:mem:{i}")
        tenant = rng.choices(self.tenants, self.tenant_weights())[0]
        project: str | None = None
        if rng.random() < 0.6:
            project = rng.choice(self.projects[tenant])
            topic = rng.choice(self.project_topics[(tenant, project)])
        else:
            topic = rng.randrange(len(self.topics))
        target = round(5 * (120 / 5) ** rng.random())  # log-uniform 5..120 words
        own = self.by_topic[topic]
        chosen: list[int] = []
        n_words = 0
        while n_words < target and len(chosen) < 16:
            sid = rng.choice(own) if rng.random() < 0.85 else rng.randrange(len(self.pool))
            if sid in chosen:
                continue
            chosen.append(sid)
            n_words += len(self.pool[sid].text.split())
        tail = ""
        if rng.random() < 0.9:  # a unique detail, so bodies rarely repeat
            tail = rng.choice(
                [
                    f"(ticket {rng.choice(['OPS', 'PLAT', 'WEB'])}-{rng.randint(1, 99999)})",
                    f"Noted {rng.randint(2023, 2025)}-{rng.randint(1, 12):02d}-"
                    f"{rng.randint(1, 28):02d}.",
                    f"See PR #{rng.randint(1, 99999)}.",
                    f"Ref {rng.getrandbits(32):08x}.",
                ]
            )
        words = " ".join(self.pool[s].text for s in chosen).split()
        room = 120 - len(tail.split())
        if len(words) > room:
            words = words[:room]
            words[-1] = words[-1].rstrip(".,;:") + "."
        body = " ".join([*words, tail]) if tail else " ".join(words)
        keys = tuple(dict.fromkeys(k for s in chosen for k in self.pool[s].keys))
        kind = rng.choices(
            ["fact", "episode", "preference", "policy", "skill"], [40, 30, 15, 10, 5]
        )[0]
        occurred = None
        if kind == "episode":
            occurred = (
                f"{rng.randint(2023, 2025)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
                f"T{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:00Z"
            )
        title = None
        if rng.random() < 0.1:
            title = f"{self.topics[topic].component} notes"
        tags: tuple[str, ...] = ()
        if rng.random() < 0.3:
            tags = (self.topics[topic].component, rng.choice(self.topics[topic].tools))
        trust = rng.choices(["learned", "system", "external"], [85, 10, 5])[0]
        item = MemoryInput(
            body=body,
            kind=kind,
            title=title,
            tags=tags,
            trust=trust,
            occurred_at=occurred,
            source={"session": f"s{rng.randint(1, 5000)}"},
            scope="project" if project else "global",
            project_id=project,
        )
        return SynthMemory(i, tenant, project, item, tuple(chosen), keys)


@dataclass(frozen=True, slots=True)
class Query:
    text: str
    tenant: str
    project: str | None
    source: int | None  # the memory the question was written from; None: unmatched


_MATCHED_QUESTIONS = (
    "What do we know about {a}?",
    "what did we decide about {a} and {b}",
    "How do I fix {a} in {b}?",
    "When did {a} change?",
    "why is {a} slow",
    "What did {a} say about {b}?",
    "who owns {a}",
    "{a} {b} config",
    "Remind me of the rules for {a}.",
    "Is there anything I should know before touching {a}?",
)
_UNMATCHED_QUESTIONS = (
    "How often should I do the {u}?",
    "what's the best way to handle the {u}",
    "Any notes about the {u} from last spring?",
    "Where did I put the info on my {u}?",
    "Who recommended the {u}?",
)


def make_queries(ds: Dataset, size: int, n: int, label: str) -> list[Query]:
    """``n`` questions: 70 % written from a stored memory's keys, 30 % about other things."""
    rng = random.Random(f"{ds.seed}:queries:{label}:{size}")
    out: list[Query] = []
    while len(out) < n:
        if rng.random() < MATCHING_SHARE:
            mem = ds.memory(rng.randrange(size))
            # Memories made only of key-less sentences: ask about their longer words.
            content = [w.strip(".,;:()`") for w in mem.item.body.split() if len(w) > 5]
            keys = list(mem.keys) or list(dict.fromkeys(content))[:4] or [mem.item.body]
            a, b = rng.sample(keys, 2) if len(keys) > 1 else (keys[0], rng.choice(COMMON_WORDS))
            text = rng.choice(_MATCHED_QUESTIONS).format(a=a, b=b)
            project = mem.project if mem.project and rng.random() < 0.5 else None
            out.append(Query(text, mem.tenant, project, mem.index))
        else:
            tenant = rng.choices(ds.tenants, ds.tenant_weights())[0]
            text = rng.choice(_UNMATCHED_QUESTIONS).format(u=rng.choice(UNSEEN_TOPICS))
            project = rng.choice(ds.projects[tenant]) if rng.random() < 0.5 else None
            out.append(Query(text, tenant, project, None))
    return out


def pool_cache(ds: Dataset, workdir: Path) -> Path:
    """Where the real embeddings of this exact pool (and model) are cached."""
    texts = [s.text for s in ds.pool]
    digest = hashlib.sha256("\n".join([MODEL_ID, *texts]).encode("utf-8")).hexdigest()[:16]
    return workdir / f"pool-{digest}.npy"


def memory_vectors(ds: Dataset, memories: Sequence[SynthMemory], pool: np.ndarray) -> np.ndarray:
    """SYNTHETIC vectors: normalised mean of the sentences' real embeddings + noise."""
    out = np.empty((len(memories), DIM), dtype=np.float32)
    rng = np.random.default_rng(ds.seed)
    sigma = NOISE_NORM / np.sqrt(DIM)
    for start in range(0, len(memories), 10_000):
        chunk = memories[start : start + 10_000]
        idx = np.fromiter((s for m in chunk for s in m.sentences), dtype=np.int64)
        counts = np.fromiter((len(m.sentences) for m in chunk), dtype=np.int64)
        offsets = np.concatenate([[0], np.cumsum(counts)[:-1]])
        means = np.add.reduceat(pool[idx], offsets, axis=0) / counts[:, None]
        means /= np.linalg.norm(means, axis=1, keepdims=True)
        means += rng.standard_normal(means.shape).astype(np.float32) * sigma
        means /= np.linalg.norm(means, axis=1, keepdims=True)
        out[start : start + len(chunk)] = means
    return out


class LookupEmbedder:
    """Embedder: precomputed vectors for stored texts, the real model for anything else.

    Records when each ``embed`` call starts and ends, so ingest batches can be timed.
    """

    def __init__(self, table: dict[str, int], vectors: np.ndarray, real: Embedder) -> None:
        self._table = table
        self._vectors = vectors
        self._real = real
        self.calls: list[tuple[float, float]] = []
        self.looked_up = 0
        self.embedded_for_real = 0

    @property
    def model_id(self) -> str:
        # The synthetic vectors live in the real model's space (means of its embeddings),
        # and queries are embedded by it, so they share its id.
        return self._real.model_id

    @property
    def dim(self) -> int:
        return DIM

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        start = time.perf_counter()
        rows = [self._table.get(t, -1) for t in texts]
        out = np.empty((len(texts), DIM), dtype=np.float32)
        known = [i for i, r in enumerate(rows) if r >= 0]
        if known:
            out[known] = self._vectors[[rows[i] for i in known]]
        missing = [i for i, r in enumerate(rows) if r < 0]
        if missing:
            out[missing] = self._real.embed([texts[i] for i in missing])
        self.looked_up += len(known)
        self.embedded_for_real += len(missing)
        self.calls.append((start, time.perf_counter()))
        return out

"""Recall latency by stage, ingest rate, peak memory and file size of cairn at 10k-100k+.

    python benchmarks/recall_latency.py                          # 10k and 100k memories
    python benchmarks/recall_latency.py --sizes 10000 --queries 100 --json out.json
    python benchmarks/recall_latency.py --profile                # + cProfile at the largest size

Everything goes through the public API (``Memory.open``, ``store_many``, ``recall``). The
run is deterministic for a ``--seed`` (the data, the queries and their order; not the clock).

Data
    Synthetic but shaped like an agent's memory: a pool of ``--pool`` (3,000) distinct
    sentences is generated from ~35 templates over a vocabulary mixing common English,
    people's names, code identifiers (snake_case, camelCase, paths, env vars), tools,
    numbers, versions and dates, grouped into topics. Each memory picks a topic (tied to
    its tenant and project), draws sentences mostly from that topic until it reaches a
    log-uniform target of 5-120 words, and usually ends with a short unique detail (a
    ticket, a PR number, a date). Memories are spread over ``--tenants`` (4) tenants of
    uneven size (40/30/20/10 %), five projects each, 60 % project-scoped, with a mix of
    kinds, trust levels (10 % system, 5 % external) and tags. Memory ``i`` is generated
    from its own seeded RNG, so the first 10k of the 100k store are the 10k store.

Vectors -- which ones are synthetic
    Embedding 100k texts with the real model takes ~45 min on the 2-core machine, so only
    the sentence pool is embedded with the real model (``MiniLmOnnxEmbedder``, cached as
    ``pool-<hash>.npy`` in the workdir). A stored memory's vector is SYNTHETIC: the
    normalised mean of the real embeddings of its sentences plus small Gaussian noise
    (norm 0.15), re-normalised -- so stored vectors cluster like real embeddings of the
    same texts. They are handed to ``store_many`` through ``LookupEmbedder``, an
    ``embedder=`` that looks stored texts up in the precomputed table and falls back to the
    real model for anything else. Every QUERY vector is REAL: queries are never in the
    table, so ``embed`` in the recall timings is the real model on the query text.

Measurements (each size in fresh subprocesses, so sizes never share a heap)
    ingest    generate the memories, precompute their vectors (untimed), then time
              ``store_many`` per tenant into an empty file. Batch times come from the
              embedder's call (a batch starts) to the ``progress`` callback (it committed).
    recall    a fresh process opens the file: ``Memory.open`` time; the first (cold) query
              reported alone (it loads the model and the vector index); ``--warmup``
              queries; then ``--queries`` measured queries. Per query: each stage of
              ``timings_ms``, wall time of the ``recall`` call (end to end, with the query
              embedding), "engine" = wall - embed, and "untimed" = wall - sum of stages.
    real      ingest of the first ``--real-sample`` memories into an empty file with the
              default embedder (the real model embeds every body).
    RSS       peak RSS of each worker's own address space (VmHWM; ingest workers also
              hold the harness's precomputed vectors, reported apart), plus ``ru_maxrss``
              of the parent and of its children (on Linux ``ru_maxrss`` survives fork and
              exec, so a worker's own ``ru_maxrss`` would include its parent's peak).
    DB size   main file and WAL right after ingest, and after close (checkpointed).

Only medians and p95 are quoted; ingest throughput is given over the whole run and per
batch (median, and the p95 batch time). ``--profile`` adds a cProfile of the measured
queries at the largest size and of a 10k ingest, written to the workdir.
"""

from __future__ import annotations

import argparse
import cProfile
import hashlib
import io
import json
import os
import platform
import pstats
import random
import resource
import sqlite3
import statistics
import string
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

from cairn import Memory, MemoryInput, __version__
from cairn.adapters.embedding import DIM, MODEL_ID, Embedder, MiniLmOnnxEmbedder

STAGES = (
    "formulate",
    "lane.keyword",
    "embed",
    "lane.vector",
    "fuse",
    "fetch",
    "score",
    "budget",
    "format",
    "total",
)
DERIVED = ("untimed", "wall", "engine", "cpu")
NOISE_NORM = 0.15
MATCHING_SHARE = 0.7
TENANT_WEIGHTS = (0.4, 0.3, 0.2, 0.1)
PROJECTS_PER_TENANT = 5
# The team's goals, checked at the largest size (set for 100k).
TARGETS = {"wall_p95_ms": 40.0, "engine_p95_ms": 15.0, "ingest_per_s": 5000.0}

# --------------------------------------------------------------------------------------
# vocabulary
# --------------------------------------------------------------------------------------


def _w(text: str) -> list[str]:
    return text.split()


_COMMON = _w(
    """
account answer approach area attempt backup balance branch budget build cache change
check client code comment config cost customer data deadline decision default deploy
design detail document draft email error estimate event feature feedback file fix flow
format goal guide habit handler history idea image import incident input issue job key
label launch layer limit list log loop meeting message metric migration model module
note number option order owner page patch path payment plan policy port price priority
process product profile project queue question quota rate reason record release report
request result review risk role rule schedule schema score script search secret server
service session setting shift signal size source spec step storage story summary support
system table target task team template test thread ticket timeout token tool topic trace
update upload user value version view warning window worker workflow
"""
)
_ADJ = _w(
    """
slow fast broken stable flaky noisy quiet urgent optional strict lazy verbose terse
expensive cheap stale fresh risky safe huge tiny legacy shiny
"""
)
_VERBS = _w(
    """
fails crashes stalls hangs retries recovers drifts spikes leaks degrades restarts
"""
)
_ADV = _w("silently randomly rarely often daily nightly sometimes always")
_FIRST = _w(
    """
Alice Bob Carol Dmitri Elena Farah Gabriel Hana Ivan Jonas Keiko Liam Maria Noor Oscar
Priya Quinn Rafael Sofia Tariq Uma Viktor Wen Ximena Yusuf Zoe Amara Bjorn Chen Diego
Emeka Freya Giulia Hiro Ingrid Jamal Kavya Lucas Mei Nikolai
"""
)
_LAST = _w(
    """
Okafor Schmidt Tanaka Novak Garcia Rossi Kowalski Haddad Larsen Mbeki Petrov Silva Dubois
Nakamura Fischer Moreau Ivanova Lindqvist Costa Brennan Reyes Yilmaz Andersen Kim
"""
)
_TOOLS = _w(
    """
pnpm npm yarn poetry uv pip docker kubectl helm terraform ansible postgres redis sqlite
kafka nginx grafana prometheus sentry pytest ruff mypy black webpack vite esbuild jest
playwright celery airflow dbt spark duckdb clickhouse elasticsearch rabbitmq vault
"""
)
_LANGS = _w("Python TypeScript Go Rust Kotlin Java Swift Ruby")
_COMPONENTS = _w(
    """
auth-service billing-worker search-indexer payment-gateway notification-hub
report-builder image-resizer session-store rate-limiter feature-flags audit-log
export-job ingest-pipeline sync-daemon webhook-relay admin-console mobile-api
pricing-engine email-sender cron-scheduler cache-warmer user-directory geo-lookup
"""
)
_AREAS = """
dependency management, code formatting, linting, deployments, database migrations,
load testing, error tracking, feature flags, secrets, local development, CI caching,
logging, on-call handover, release notes, code review, onboarding
""".replace("\n", " ").split(", ")
_STYLES = """
short answers, code examples, bullet points, type hints everywhere, small pull requests,
tabs over spaces, early returns, long explanations, emoji in commits, verbose logs,
docstrings on public functions, meetings before noon
""".replace("\n", " ").split(", ")
_CONDITIONS = """
the queue is full, the cache is cold, two replicas restart at once, the token expires,
traffic spikes after a release, the disk is above 90 percent, the VPN drops,
a migration is still running, the upstream returns 429, DNS resolution is slow
""".replace("\n", " ").split(", ")
_CAUSES = """
the fixture shares a temp dir, the clock is mocked wrongly, the vendor API changed,
legal review is pending, the test data is not reset, two jobs race on the lock,
the staging database was wiped, the design is not final
""".replace("\n", " ").split(", ")
_REGIONS = _w("eu-west-1 us-east-1 ap-southeast-2 eu-central-1 us-west-2")
_BRANCHES = _w("main release staging develop production")
_ENVS = _w("staging production dev preview")
_OSES = _w("macOS Linux Windows NixOS")
_EDITORS = ["Neovim", "VS Code", "Emacs", "PyCharm", "Zed", "Helix"]
_FOODS = _w("ramen tacos dumplings sushi pho falafel pierogi curry")
_PLACES = _w("Lisbon Osaka Nairobi Toronto Kraków Austin Seoul Bergen")
_COMPANIES = _w("Acme Globex Initech Umbrella Hooli Vandelay Stark Wayne")
_MONTHS = _w(
    """
January February March April May June July August September October November December
"""
)
_WORD_PARTS = _w(
    """
user order cart token retry config parse load save fetch build render cache queue batch
index record event session price tax invoice report sync merge flush limit window
"""
)
_PROJECT_NAMES = _w(
    """
atlas orion-api billing-v2 mobile-app data-lake helios kestrel nimbus polaris quartz
rover saturn tundra umbra vega zephyr
"""
)
# Words that never occur in stored memories: most "unmatched" queries are about these.
_UNSEEN = """
sourdough starter, tax return, piano lesson, marathon training, passport renewal,
violin strings, garden hose, solar panel, wedding venue, telescope lens, bicycle chain,
fishing license, yoga retreat, orchid watering, chess opening, kayak rental,
""".replace("\n", " ").split(", ")


def _snake(rng: random.Random) -> str:
    return f"{rng.choice(_WORD_PARTS)}_{rng.choice(_WORD_PARTS)}" + rng.choice(
        ["", "", "_ms", "_id", "_v2", "s"]
    )


def _camel(rng: random.Random) -> str:
    return rng.choice(["get", "set", "load", "handle", "build", "parse"]) + "".join(
        rng.choice(_WORD_PARTS).capitalize() for _ in range(rng.randint(1, 2))
    )


def _path(rng: random.Random) -> str:
    ext = rng.choice(["py", "ts", "go", "rs", "yaml", "sql"])
    root = rng.choice(["src", "lib", "app", "pkg"])
    return f"{root}/{rng.choice(_WORD_PARTS)}/{_snake(rng)}.{ext}"


def _date(rng: random.Random) -> str:
    y, m, d = rng.randint(2023, 2025), rng.randint(1, 12), rng.randint(1, 28)
    month = _MONTHS[m - 1]
    return rng.choice([f"{y}-{m:02d}-{d:02d}", f"{month} {d}", f"{month} {d}, {y}"])


def _version(rng: random.Random) -> str:
    return f"{rng.randint(0, 9)}.{rng.randint(0, 30)}.{rng.randint(0, 12)}"


@dataclass(frozen=True, slots=True)
class Topic:
    component: str
    idents: tuple[str, ...]
    paths: tuple[str, ...]
    tools: tuple[str, ...]
    people: tuple[str, ...]
    env_var: str
    table: str
    feature: str


def _topics(rng: random.Random, n: int) -> list[Topic]:
    out = []
    for i in range(n):
        comp = _COMPONENTS[i % len(_COMPONENTS)]
        if i >= len(_COMPONENTS):
            comp = f"{comp}-{rng.choice(_WORD_PARTS)}"
        suffix = rng.choice(["URL", "TOKEN", "TIMEOUT", "MODE"])
        kind = rng.choice(["items", "events", "log", "state"])
        flavour = rng.choice(["export", "dashboard", "v2", "sync", "alerts"])
        out.append(
            Topic(
                component=comp,
                idents=tuple(rng.choice([_snake, _camel])(rng) for _ in range(6)),
                paths=(_path(rng), _path(rng)),
                tools=tuple(rng.sample(_TOOLS, 3)),
                people=tuple(rng.sample(_FIRST, 3)),
                env_var=f"{rng.choice(_WORD_PARTS).upper()}_{suffix}",
                table=f"{rng.choice(_WORD_PARTS)}_{kind}",
                feature=f"{rng.choice(_WORD_PARTS)} {flavour}",
            )
        )
    return out


@dataclass(frozen=True, slots=True)
class Sentence:
    text: str
    topic: int
    keys: tuple[str, ...]  # slot fills worth asking about (names, identifiers, tools, ...)


# Sentence templates: `{slot}` is filled by SLOTS; a topic's own values are preferred, so
# sentences of one topic share components, identifiers, people and tools.
TEMPLATES = (
    "{person} prefers {tool} over {any_tool} for {area}.",
    "Always run {cmd} before pushing to {branch}.",
    "Never push directly to {branch}; open a pull request and ask {person} for a review.",
    "The {component} times out after {seconds} seconds when {cond}.",
    "On {date}, {person} moved the {component} deploy to {region}.",
    "{ident} in {path} returns None when the {noun} is empty, which broke {component} on {date}.",
    "Meeting with {person} {last} on {date}: we agreed to ship the {feature} by {date2}.",
    "Use {tool} {version} for {component}; newer versions break {ident}.",
    "{person} is out of office until {date}.",
    "Set {env_var} to {value} in {env}, otherwise {component} cannot reach {tool}.",
    "{person} likes {style} and dislikes {style2}.",
    "Bug {ticket}: {component} leaks memory after {requests} requests; fixed in {version}.",
    "Port {port} is reserved for {component} on the {env} cluster.",
    "{any_person}'s birthday is {month_day}; they love {food}.",
    "The budget for the {feature} is {money} per month, approved by {person} on {date}.",
    "Tests for {ident} are flaky on CI because {cause}.",
    "Rotate the {env_var} secret for {component} every {days} days.",
    "{person} asked to rename {ident} to {ident2} in {path}.",
    "We use {tool} for {area} in {component} and {any_tool} everywhere else.",
    "The {noun} {verb} {adv} when {cond}.",
    "Latency of {component} rose to {ms} ms at p95 after the {date} release.",
    "Migration {migration} adds column {ident} to table {table}; run it with {cmd}.",
    "{person} {last} from {company} is the contact for {area}.",
    "Prefer {style} in {lang} code.",
    "In {component}, {path} owns the {area} logic; do not duplicate it elsewhere.",
    "Dinner with {any_person} in {place} on {date}; the {food} was {adj}.",
    "The deadline for the {feature} moved from {date} to {date2} because {cause}.",
    "{component} retries {retries} times with exponential backoff starting at {backoff} ms.",
    "Use {lang} {version} here.",
    "{person} uses {os} and {editor}.",
    "Avoid {any_tool} for {component}.",
    "The {adj} {noun} in {ident} needs a {noun2} {noun3} before the next {noun4} review.",
    "Our {noun} {noun2} for the {feature} is {adj}; {person} will write a new one this week.",
    "{table} grew to {rows} million rows by {date}; queries on {ident} need an index.",
    "Remember that {person} reviews every change to {path} and wants {style}.",
)
# Slots whose values make a memory findable: questions are written from these.
KEY_SLOTS = frozenset(
    _w("person any_person tool any_tool component ident path feature env_var table ticket")
    + _w("lang branch")
)
Slot = Callable[[random.Random, Topic], str]


def _own(rng: random.Random, own: Sequence[str], everyone: Sequence[str]) -> str:
    return rng.choice(own) if rng.random() < 0.75 else rng.choice(everyone)


def _cmd(r: random.Random, t: Topic) -> str:
    verb = r.choice(["test", "run lint", "build", "check", "install --frozen-lockfile"])
    return f"`{r.choice(t.tools)} {verb}`"


SLOTS: dict[str, Slot] = {
    "person": lambda r, t: _own(r, t.people, _FIRST),
    "any_person": lambda r, t: r.choice(_FIRST),
    "last": lambda r, t: r.choice(_LAST),
    "tool": lambda r, t: _own(r, t.tools, _TOOLS),
    "any_tool": lambda r, t: r.choice(_TOOLS),
    "area": lambda r, t: r.choice(_AREAS),
    "branch": lambda r, t: r.choice(_BRANCHES),
    "cmd": _cmd,
    "component": lambda r, t: t.component,
    "seconds": lambda r, t: str(r.choice([5, 10, 30, 60, 120])),
    "cond": lambda r, t: r.choice(_CONDITIONS),
    "cause": lambda r, t: r.choice(_CAUSES),
    "date": lambda r, t: _date(r),
    "date2": lambda r, t: _date(r),
    "region": lambda r, t: r.choice(_REGIONS),
    "ident": lambda r, t: r.choice(t.idents),
    "ident2": lambda r, t: r.choice(t.idents) + "_new",
    "path": lambda r, t: r.choice(t.paths),
    "noun": lambda r, t: r.choice(_COMMON),
    "noun2": lambda r, t: r.choice(_COMMON),
    "noun3": lambda r, t: r.choice(_COMMON),
    "noun4": lambda r, t: r.choice(_COMMON),
    "feature": lambda r, t: t.feature,
    "version": lambda r, t: _version(r),
    "env_var": lambda r, t: t.env_var,
    "value": lambda r, t: r.choice(["1", "true", "strict", "30s", "https://internal.example"]),
    "env": lambda r, t: r.choice(_ENVS),
    "style": lambda r, t: r.choice(_STYLES),
    "style2": lambda r, t: r.choice(_STYLES),
    "ticket": lambda r, t: f"{r.choice(['OPS', 'BUG', 'PLAT', 'SEC'])}-{r.randint(100, 9999)}",
    "requests": lambda r, t: f"{r.randint(1, 900) * 1000:,}",
    "port": lambda r, t: str(r.choice([3000, 5432, 6379, 8000, 8080, 8443, 9090, 9200])),
    "month_day": lambda r, t: f"{r.choice(_MONTHS)} {r.randint(1, 28)}",
    "food": lambda r, t: r.choice(_FOODS),
    "money": lambda r, t: f"${r.randint(2, 90) * 100:,}",
    "days": lambda r, t: str(r.choice([30, 60, 90])),
    "lang": lambda r, t: r.choice(_LANGS),
    "verb": lambda r, t: r.choice(_VERBS),
    "adv": lambda r, t: r.choice(_ADV),
    "adj": lambda r, t: r.choice(_ADJ),
    "ms": lambda r, t: str(r.randint(40, 900)),
    "retries": lambda r, t: str(r.randint(2, 8)),
    "backoff": lambda r, t: str(r.choice([50, 100, 250, 500])),
    "migration": lambda r, t: f"{r.randint(1, 250):04d}",
    "table": lambda r, t: t.table,
    "company": lambda r, t: r.choice(_COMPANIES),
    "place": lambda r, t: r.choice(_PLACES),
    "os": lambda r, t: r.choice(_OSES),
    "editor": lambda r, t: r.choice(_EDITORS),
    "rows": lambda r, t: str(r.randint(1, 900)),
}
_FORMATTER = string.Formatter()


def _fill(rng: random.Random, template: str, topic: Topic) -> tuple[str, tuple[str, ...]]:
    names = [name for _, name, _, _ in _FORMATTER.parse(template) if name]
    values = {name: SLOTS[name](rng, topic) for name in dict.fromkeys(names)}
    keys = tuple(v for k, v in values.items() if k in KEY_SLOTS)
    return template.format(**values), keys


def make_pool(seed: int, size: int, n_topics: int) -> tuple[list[Topic], list[Sentence]]:
    """``size`` distinct sentences, each tagged with its topic and askable keys."""
    rng = random.Random(f"{seed}:pool")
    topics = _topics(rng, n_topics)
    seen: set[str] = set()
    pool: list[Sentence] = []
    attempts = 0
    while len(pool) < size:
        attempts += 1
        if attempts > size * 50:
            raise RuntimeError("could not generate enough distinct sentences")
        topic_id = rng.randrange(n_topics)
        text, keys = _fill(rng, rng.choice(TEMPLATES), topics[topic_id])
        if text in seen:
            continue
        seen.add(text)
        pool.append(Sentence(text, topic_id, keys))
    return topics, pool


# --------------------------------------------------------------------------------------
# memories and queries
# --------------------------------------------------------------------------------------


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
            names = rng.sample(_PROJECT_NAMES, PROJECTS_PER_TENANT)
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
            a, b = rng.sample(keys, 2) if len(keys) > 1 else (keys[0], rng.choice(_COMMON))
            text = rng.choice(_MATCHED_QUESTIONS).format(a=a, b=b)
            project = mem.project if mem.project and rng.random() < 0.5 else None
            out.append(Query(text, mem.tenant, project, mem.index))
        else:
            tenant = rng.choices(ds.tenants, ds.tenant_weights())[0]
            text = rng.choice(_UNMATCHED_QUESTIONS).format(u=rng.choice(_UNSEEN))
            project = rng.choice(ds.projects[tenant]) if rng.random() < 0.5 else None
            out.append(Query(text, tenant, project, None))
    return out


# --------------------------------------------------------------------------------------
# vectors
# --------------------------------------------------------------------------------------


def pool_cache(ds: Dataset, workdir: Path) -> Path:
    """Where the real embeddings of this exact pool (and model) are cached."""
    texts = [s.text for s in ds.pool]
    digest = hashlib.sha256("\n".join([MODEL_ID, *texts]).encode("utf-8")).hexdigest()[:16]
    return workdir / f"pool-{digest}.npy"


def worker_pool(args: argparse.Namespace, ds: Dataset, out: dict[str, Any]) -> None:
    """Embed the sentence pool with the real model into its cache file."""
    start = time.perf_counter()
    vectors = MiniLmOnnxEmbedder().embed([s.text for s in ds.pool])
    out["seconds"] = time.perf_counter() - start
    out["sentences_per_s"] = len(ds.pool) / out["seconds"]
    np.save(pool_cache(ds, Path(args.workdir)), vectors)
    out["peak_rss_mb"] = peak_rss_mb()


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


# --------------------------------------------------------------------------------------
# measurement helpers
# --------------------------------------------------------------------------------------


def pct(values: Sequence[float], q: float) -> float:
    return float(np.percentile(np.asarray(values, dtype=np.float64), q)) if values else float("nan")


def summary(values: Sequence[float]) -> dict[str, float]:
    return {"p50": pct(values, 50), "p95": pct(values, 95), "n": len(values)}


def maxrss_mb() -> float:
    """``ru_maxrss``; on Linux it is inherited across fork and exec (the parent's peak)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # KiB on Linux


def peak_rss_mb() -> float:
    """Peak RSS of this process's own address space (VmHWM, reset at exec)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return maxrss_mb()


def current_rss_mb() -> float:
    with open("/proc/self/statm", encoding="ascii") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def file_sizes(db: Path) -> dict[str, int]:
    def size(p: Path) -> int:
        return p.stat().st_size if p.exists() else 0

    return {
        "db_bytes": size(db),
        "wal_bytes": size(Path(f"{db}-wal")),
        "shm_bytes": size(Path(f"{db}-shm")),
    }


def fresh_db(path: Path) -> None:
    for p in (path, Path(f"{path}-wal"), Path(f"{path}-shm")):
        p.unlink(missing_ok=True)


def ingest(
    mem: Memory,
    memories: Sequence[SynthMemory],
    tenants: Sequence[str],
    batch_size: int,
    embed_starts: Callable[[], list[float]] | None,
) -> dict[str, Any]:
    """Time ``store_many`` (one call per tenant) and each of its batches.

    A batch ends at its ``progress`` callback (committed). It starts at the embedder's call
    for it when ``embed_starts`` can tell (so the up-front validation of the whole call is
    kept apart), else at the previous batch's end or the call's start.
    """
    by_tenant: dict[str, list[MemoryInput]] = {t: [] for t in tenants}
    for m in memories:
        by_tenant[m.tenant].append(m.item)
    batches: list[tuple[float, int]] = []  # (end time, memories in the batch)
    calls: list[tuple[float, int]] = []  # (start time, index of its first batch)
    wall = 0.0
    for tenant, items in by_tenant.items():
        if not items:
            continue
        done_before = [0]

        def progress(done: int, _total: int, seen: list[int] = done_before) -> None:
            batches.append((time.perf_counter(), done - seen[0]))
            seen[0] = done

        start = time.perf_counter()
        calls.append((start, len(batches)))
        mem.store_many(items, batch_size=batch_size, tenant=tenant, progress=progress)
        wall += time.perf_counter() - start
    starts = sorted(embed_starts()) if embed_starts is not None else []
    batch_ms: list[float] = []
    rates: list[float] = []
    validate_s = 0.0
    call_iter = iter(calls)
    next_call = next(call_iter, None)
    prev_end = 0.0
    for i, (end, n) in enumerate(batches):
        begin = prev_end
        if next_call is not None and next_call[1] == i:
            begin = next_call[0]
            next_call = next(call_iter, None)
        inside = [s for s in starts if begin <= s < end]
        if inside:
            if begin != prev_end:  # first batch of a call: validation came before it
                validate_s += inside[0] - begin
            begin = inside[0]
        ms = (end - begin) * 1000
        batch_ms.append(ms)
        if ms > 0:
            rates.append(n / (ms / 1000))
        prev_end = end
    return {
        "memories": len(memories),
        "batch_size": batch_size,
        "store_many_calls": len(calls),
        "seconds": wall,
        "per_s": len(memories) / wall,
        "batches": len(batches),
        "batch_ms": summary(batch_ms),
        "per_s_median_batch": statistics.median(rates) if rates else None,
        "validate_s": validate_s if starts else None,
    }


# --------------------------------------------------------------------------------------
# workers (each runs in its own process)
# --------------------------------------------------------------------------------------


def _memories(ds: Dataset, n: int, first: int = 0) -> list[SynthMemory]:
    return [ds.memory(i) for i in range(first, first + n)]


def worker_ingest(args: argparse.Namespace, ds: Dataset, out: dict[str, Any]) -> None:
    size: int = args.w_size
    workdir = Path(args.workdir)
    db = workdir / f"recall-{size}.db"
    fresh_db(db)
    out["rss_mb_after_import"] = current_rss_mb()
    pool = np.load(args.w_pool)
    start = time.perf_counter()
    memories = _memories(ds, size)
    vectors = memory_vectors(ds, memories, pool)
    table = {m.embedding_text: i for i, m in enumerate(memories)}
    out["generate_s"] = time.perf_counter() - start
    out["distinct_bodies"] = len({m.item.body for m in memories})
    out["mean_words"] = statistics.fmean(len(m.item.body.split()) for m in memories)
    out["tenants"] = {t: sum(m.tenant == t for m in memories) for t in ds.tenants}
    out["harness_vectors_mb"] = vectors.nbytes / 2**20
    out["rss_mb_before_ingest"] = current_rss_mb()
    embedder = LookupEmbedder(table, vectors, MiniLmOnnxEmbedder())
    mem = Memory.open(db, config={}, embedder=embedder, tenant=ds.tenants[0])
    result = ingest(
        mem,
        memories,
        ds.tenants,
        args.batch_size,
        lambda: [s for s, _ in embedder.calls],
    )
    result["lookup_ms_total"] = sum((e - s) * 1000 for s, e in embedder.calls)
    result["embedded_for_real"] = embedder.embedded_for_real
    out["ingest"] = result
    out["files_after_ingest"] = file_sizes(db)
    out["status"] = {k: v for k, v in mem.status().items() if k != "path"}
    mem.close()
    out["files_after_close"] = file_sizes(db)
    out["peak_rss_mb"] = peak_rss_mb()


def worker_real_ingest(args: argparse.Namespace, ds: Dataset, out: dict[str, Any]) -> None:
    n: int = args.real_sample
    db = Path(args.workdir) / f"real-ingest-{n}.db"
    fresh_db(db)
    memories = _memories(ds, n)
    from cairn import Config
    from cairn.compose import make_embedder

    embedder = make_embedder(Config())  # exactly the embedder Memory.open() would build
    start = time.perf_counter()
    embedder.embed(["warm up the model"])
    out["model_load_s"] = time.perf_counter() - start
    mem = Memory.open(db, config={}, embedder=embedder, tenant=ds.tenants[0])
    out["ingest"] = ingest(mem, memories, ds.tenants, args.batch_size, None)
    out["embedder"] = type(embedder).__name__
    mem.close()
    out["files_after_close"] = file_sizes(db)
    out["peak_rss_mb"] = peak_rss_mb()
    db.unlink(missing_ok=True)


def _recall_once(mem: Memory, q: Query) -> tuple[dict[str, float], Any]:
    cpu = time.process_time()
    start = time.perf_counter()
    result = mem.recall(q.text, tenant=q.tenant, project_id=q.project)
    wall = (time.perf_counter() - start) * 1000
    timings = dict(result.timings_ms)
    row = dict(timings)
    row["wall"] = wall
    row["engine"] = wall - timings.get("embed", 0.0)
    row["untimed"] = wall - timings.get("total", 0.0)
    # CPU time of the process (all threads, the model's too): far below wall = contention.
    row["cpu"] = (time.process_time() - cpu) * 1000
    return row, result


def worker_recall(args: argparse.Namespace, ds: Dataset, out: dict[str, Any]) -> None:
    size: int = args.w_size
    db = Path(args.workdir) / f"recall-{size}.db"
    out["rss_mb_after_import"] = current_rss_mb()
    cold_q, *_ = make_queries(ds, size, 1, "cold")
    warm = make_queries(ds, size, args.warmup, "warmup")
    measured = make_queries(ds, size, args.queries, "measured")
    embedder = LookupEmbedder({}, np.empty((0, DIM), np.float32), MiniLmOnnxEmbedder())
    start = time.perf_counter()
    mem = Memory.open(db, config={}, embedder=embedder, tenant=ds.tenants[0])
    out["open_ms"] = (time.perf_counter() - start) * 1000
    row, _ = _recall_once(mem, cold_q)
    out["cold"] = {"query": cold_q.text, **row}
    out["rss_mb_after_cold"] = current_rss_mb()
    for q in warm:
        _recall_once(mem, q)
    rows: list[dict[str, float]] = []
    hits = matched = delivered = 0
    for q in measured:
        row, result = _recall_once(mem, q)
        rows.append(row)
        delivered += len(result.memories)
        if q.source is not None:
            matched += 1
            body = ds.memory(q.source).item.body
            hits += any(c.record.body == body for c in result.memories)
    stages = [s for s in (*STAGES, *DERIVED) if any(s in r for r in rows)]
    extra = sorted({k for r in rows for k in r} - set(stages))
    out["stages"] = {s: summary([r[s] for r in rows if s in r]) for s in [*stages, *extra]}
    out["queries"] = {
        "measured": len(measured),
        "warmup": len(warm),
        "matched": matched,
        "source_delivered": hits,
        "mean_delivered": delivered / max(1, len(measured)),
        "examples": [q.text for q in measured[:5]],
    }
    out["query_vectors_from_real_model"] = embedder.embedded_for_real
    if args.w_profile:
        profiler = cProfile.Profile()
        profiler.enable()
        for q in measured:
            _recall_once(mem, q)
        profiler.disable()
        out["profile"] = _write_profile(profiler, Path(args.workdir) / f"profile-recall-{size}.txt")
    mem.close()
    out["files_after_close"] = file_sizes(db)
    out["peak_rss_mb"] = peak_rss_mb()


def worker_profile_ingest(args: argparse.Namespace, ds: Dataset, out: dict[str, Any]) -> None:
    n = min(10_000, max(args.sizes))
    db = Path(args.workdir) / "profile-ingest.db"
    fresh_db(db)
    pool = np.load(args.w_pool)
    memories = _memories(ds, n)
    vectors = memory_vectors(ds, memories, pool)
    table = {m.embedding_text: i for i, m in enumerate(memories)}
    embedder = LookupEmbedder(table, vectors, MiniLmOnnxEmbedder())
    mem = Memory.open(db, config={}, embedder=embedder, tenant=ds.tenants[0])
    profiler = cProfile.Profile()
    profiler.enable()
    result = ingest(mem, memories, ds.tenants, args.batch_size, None)
    profiler.disable()
    mem.close()
    out["ingest"] = result
    out["profile"] = _write_profile(profiler, Path(args.workdir) / "profile-ingest.txt")
    fresh_db(db)


def _write_profile(profiler: cProfile.Profile, path: Path) -> str:
    buf = io.StringIO()
    for order in ("tottime", "cumulative"):
        buf.write(f"==== sorted by {order} ====\n")
        pstats.Stats(profiler, stream=buf).strip_dirs().sort_stats(order).print_stats(35)
    path.write_text(buf.getvalue(), encoding="utf-8")
    return str(path)


WORKERS: dict[str, Callable[[argparse.Namespace, Dataset, dict[str, Any]], None]] = {
    "ingest": worker_ingest,
    "recall": worker_recall,
    "real-ingest": worker_real_ingest,
    "profile-ingest": worker_profile_ingest,
    "pool": worker_pool,
}


# --------------------------------------------------------------------------------------
# orchestration and report
# --------------------------------------------------------------------------------------


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def run_worker(args: argparse.Namespace, kind: str, extra: list[str]) -> dict[str, Any]:
    passthrough = [
        "--sizes", ",".join(map(str, args.sizes)),
        "--queries", str(args.queries),
        "--warmup", str(args.warmup),
        "--workdir", str(args.workdir),
        "--seed", str(args.seed),
        "--tenants", str(args.tenants),
        "--batch-size", str(args.batch_size),
        "--real-sample", str(args.real_sample),
    ]  # fmt: skip
    return run_script_worker(Path(__file__), passthrough, args.workdir, kind, extra)


def run_script_worker(
    script: Path, passthrough: list[str], workdir: Path, kind: str, extra: list[str]
) -> dict[str, Any]:
    """Run one measurement in a fresh process of ``script``; return the JSON it wrote.

    A fresh process per measurement keeps peak RSS and caches of one size out of the next.
    """
    with tempfile.NamedTemporaryFile("r", suffix=".json", dir=workdir, delete=False) as handle:
        out_path = Path(handle.name)
    cmd = [
        sys.executable, str(script.resolve()), *passthrough,
        "--w-kind", kind, "--w-out", str(out_path), *extra,
    ]  # fmt: skip
    start = time.perf_counter()
    subprocess.run(cmd, check=True)
    data: dict[str, Any] = json.loads(out_path.read_text(encoding="utf-8"))
    out_path.unlink()
    data["worker_wall_s"] = time.perf_counter() - start
    return data


def machine() -> dict[str, Any]:
    cpu = "unknown"
    mem_total = None
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                mem_total = round(int(line.split()[1]) / 2**20, 1)
    except OSError:
        pass
    return {
        "cpus": os.cpu_count(),
        "cpu": cpu,
        "mem_gib": mem_total,
        "platform": platform.platform(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "onnxruntime": metadata.version("onnxruntime"),
        "sqlite": sqlite3.sqlite_version,
        "cairn": __version__,
        "loadavg_at_start": os.getloadavg(),
    }


def _fmt(v: float | None, digits: int = 2) -> str:
    if v is None or (isinstance(v, float) and np.isnan(v)):
        return "-"
    return f"{v:.{digits}f}"


def print_report(report: dict[str, Any]) -> None:
    sizes = list(report["sizes"])
    print()
    print(f"cairn recall benchmark — {report['machine']['cpus']} CPUs, {report['machine']['cpu']}")
    print(
        "stored vectors: SYNTHETIC (mean of real sentence embeddings + noise); "
        "query vectors: REAL model"
    )
    loads = [report["machine"]["loadavg_at_start"][0]]
    for d in report["sizes"].values():
        loads += [x for pair in d["loadavg_1m"].values() for x in pair]
    print(f"1-min load average during the run: {min(loads):.1f}-{max(loads):.1f}", end="")
    busy = max(loads) > 1.5 * (report["machine"]["cpus"] or 1)
    print(" -- the machine was busy; treat absolute numbers with care" if busy else "")
    print()
    print("Recall latency, warm (ms); 'wall' = end to end incl. query embedding;")
    print("'engine' = wall - embed; 'untimed' = wall - sum of stages; 'cpu' = process CPU")
    head = f"{'stage':<14}" + "".join(f"{s + ' p50':>13}{s + ' p95':>13}" for s in sizes)
    print(head)
    print("-" * len(head))
    order = [*STAGES, *DERIVED]
    extra = sorted({k for s in sizes for k in report["sizes"][s]["recall"]["stages"]} - set(order))
    for stage in [*order, *extra]:
        cells = ""
        for s in sizes:
            st = report["sizes"][s]["recall"]["stages"].get(stage)
            cells += f"{_fmt(st['p50'] if st else None):>13}{_fmt(st['p95'] if st else None):>13}"
        print(f"{stage:<14}{cells}")
    print()
    print("Cold (first query in a fresh process; single query, shown for scale only)")
    print(
        f"{'size':>8} {'open ms':>9} {'wall ms':>9} {'embed ms':>9} {'vector ms':>10} "
        f"{'keyword ms':>11}"
    )
    for s in sizes:
        r = report["sizes"][s]["recall"]
        c = r["cold"]
        print(
            f"{s:>8} {_fmt(r['open_ms'], 1):>9} {_fmt(c['wall'], 1):>9} "
            f"{_fmt(c.get('embed'), 1):>9} {_fmt(c.get('lane.vector'), 1):>10} "
            f"{_fmt(c.get('lane.keyword'), 1):>11}"
        )
    print()
    print("Sanity (not a quality metric): matched queries whose source memory was delivered")
    for s in sizes:
        q = report["sizes"][s]["recall"]["queries"]
        print(
            f"{s:>8}: {q['source_delivered']}/{q['matched']} matched; "
            f"{q['mean_delivered']:.1f} memories delivered per query on average"
        )
    print()
    print("Ingest (store_many)")
    print(
        f"{'run':<28} {'memories':>9} {'batch':>6} {'overall/s':>10} "
        f"{'median batch/s':>15} {'batch p50 ms':>13} {'batch p95 ms':>13}"
    )
    real = report["ingest"].get("real_embedder")
    rows: list[tuple[str, dict[str, Any]]] = []
    if real:
        rows.append(("real model (MiniLM ONNX)", real))
    for s in sizes:
        rows.append((f"no embedding, {s}", report["ingest"]["no_embedding"][s]))
    for name, r in rows:
        print(
            f"{name:<28} {r['memories']:>9} {r['batch_size']:>6} {_fmt(r['per_s'], 0):>10} "
            f"{_fmt(r['per_s_median_batch'], 0):>15} {_fmt(r['batch_ms']['p50'], 1):>13} "
            f"{_fmt(r['batch_ms']['p95'], 1):>13}"
        )
    print()
    print("Peak RSS (MiB, VmHWM of each worker process)")
    print(
        f"{'size':>8} {'ingest':>9} {'(harness vectors)':>18} {'recall':>9} "
        f"{'recall after cold':>18}"
    )
    for s in sizes:
        d = report["sizes"][s]
        print(
            f"{s:>8} {_fmt(d['rss']['ingest_peak_mb'], 0):>9} "
            f"{_fmt(d['rss']['ingest_harness_vectors_mb'], 0):>18} "
            f"{_fmt(d['rss']['recall_peak_mb'], 0):>9} "
            f"{_fmt(d['rss']['recall_after_cold_mb'], 0):>18}"
        )
    if real:
        peak = report["ingest"]["real_embedder_peak_rss_mb"]
        print(f"real-model ingest worker: {_fmt(peak, 0)} MiB")
    print(
        f"parent: {_fmt(report['rss']['parent_peak_mb'], 0)} MiB; ru_maxrss of the largest "
        f"child: {_fmt(report['rss']['children_ru_maxrss_mb'], 0)} MiB"
    )
    print()
    print("Database size (MiB)")
    print(f"{'size':>8} {'db':>9} {'wal':>9} {'db after close':>15} {'bytes/memory':>13}")
    for s in sizes:
        f = report["sizes"][s]["db"]
        print(
            f"{s:>8} {f['after_ingest']['db_bytes'] / 2**20:>9.1f} "
            f"{f['after_ingest']['wal_bytes'] / 2**20:>9.1f} "
            f"{f['after_close']['db_bytes'] / 2**20:>15.1f} "
            f"{f['after_close']['db_bytes'] / int(s):>13.0f}"
        )
    print()
    checks = report.get("targets", {}).get("checks", [])
    if checks:
        print("Targets")
        for c in checks:
            print(
                f"  {c['what']:<52} {c['measured']:>10.1f} {c['op']} {c['target']:<8} "
                f"{c['verdict']}"
            )
    print(f"\nwall time of the whole run: {report['wall_s'] / 60:.1f} min")


def target_checks(report: dict[str, Any]) -> list[dict[str, Any]]:
    sizes = [int(s) for s in report["sizes"]]
    checks: list[dict[str, Any]] = []
    big = str(max(sizes))
    stages = report["sizes"][big]["recall"]["stages"]
    for what, key, target in (
        (f"recall wall p95 at {big}, incl. query embedding (ms)", "wall", TARGETS["wall_p95_ms"]),
        (f"engine (wall - embed) p95 at {big} (ms)", "engine", TARGETS["engine_p95_ms"]),
    ):
        measured = stages[key]["p95"]
        checks.append(
            {
                "what": what,
                "measured": measured,
                "op": "<=",
                "target": target,
                "verdict": "PASS" if measured <= target else "FAIL",
            }
        )
    for s in sizes:
        rate = report["ingest"]["no_embedding"][str(s)]["per_s"]
        checks.append(
            {
                "what": f"ingest without embedding at {s} (memories/s)",
                "measured": rate,
                "op": ">=",
                "target": TARGETS["ingest_per_s"],
                "verdict": "PASS" if rate >= TARGETS["ingest_per_s"] else "FAIL",
            }
        )
    return checks


def orchestrate(args: argparse.Namespace) -> None:
    started = time.perf_counter()
    workdir = Path(args.workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    log(f"workdir {workdir}; sizes {args.sizes}; seed {args.seed}")
    ds = Dataset.build(args.seed, args.pool, args.tenants)
    pool_file = pool_cache(ds, workdir)
    pool_info: dict[str, Any] = {"cached": pool_file.exists(), "file": str(pool_file)}
    if not pool_file.exists():
        log(f"embedding the {len(ds.pool)}-sentence pool with the real model (cached afterwards)")
        pool = run_worker(args, "pool", [])
        pool_info.update(seconds=pool["seconds"], sentences_per_s=pool["sentences_per_s"])
        log(f"  {pool['seconds']:.1f} s ({pool['sentences_per_s']:.0f} sentences/s)")
    common = ["--w-pool", str(pool_file)]
    report: dict[str, Any] = {
        "sizes": {},
        "ingest": {"no_embedding": {}},
        "machine": machine(),
        "method": {
            "stored_vectors": "synthetic: normalised mean of real MiniLM embeddings of the "
            f"memory's sentences + Gaussian noise (norm {NOISE_NORM}), re-normalised",
            "query_vectors": "real: MiniLmOnnxEmbedder on the query text, inside the timings",
            "sentence_pool": args.pool,
            "pool_embedding": pool_info,
            "tenants": list(ds.tenants),
            "tenant_weights": ds.tenant_weights(),
            "projects_per_tenant": PROJECTS_PER_TENANT,
            "matched_query_share": MATCHING_SHARE,
            "queries": args.queries,
            "warmup": args.warmup,
            "batch_size": args.batch_size,
            "seed": args.seed,
            "wall": "perf_counter around Memory.recall()",
        },
    }
    if args.real_sample > 0:
        log(f"ingest of {args.real_sample} memories with the real embedder")
        real = run_worker(args, "real-ingest", common)
        report["ingest"]["real_embedder"] = real["ingest"]
        report["ingest"]["real_embedder_model_load_s"] = real["model_load_s"]
        report["ingest"]["real_embedder_peak_rss_mb"] = real["peak_rss_mb"]
        report["ingest"]["real_embedder_loadavg_1m"] = [
            real["loadavg_start"][0],
            real["loadavg_end"][0],
        ]
        log(f"  {real['ingest']['per_s']:.1f} memories/s")
    for size in args.sizes:
        log(f"size {size}: ingest (no embedding)")
        ing = run_worker(args, "ingest", [*common, "--w-size", str(size)])
        log(
            f"  {ing['ingest']['per_s']:.0f} memories/s over {ing['ingest']['seconds']:.1f} s "
            f"(generation {ing['generate_s']:.1f} s)"
        )
        log(f"size {size}: recall ({args.warmup} warm-up + {args.queries} measured queries)")
        profile = ["--w-profile"] if args.profile and size == max(args.sizes) else []
        rec = run_worker(args, "recall", [*common, "--w-size", str(size), *profile])
        log(
            f"  wall p50 {rec['stages']['wall']['p50']:.1f} ms, "
            f"p95 {rec['stages']['wall']['p95']:.1f} ms"
        )
        report["ingest"]["no_embedding"][str(size)] = ing["ingest"]
        report["sizes"][str(size)] = {
            "recall": {
                k: rec[k]
                for k in ("stages", "cold", "open_ms", "queries", "query_vectors_from_real_model")
            },
            "ingest_no_embedding": ing["ingest"],
            "data": {k: ing[k] for k in ("distinct_bodies", "mean_words", "tenants", "generate_s")},
            "status": ing["status"],
            "rss": {
                "ingest_peak_mb": ing["peak_rss_mb"],
                "ingest_harness_vectors_mb": ing["harness_vectors_mb"],
                "ingest_before_store_mb": ing["rss_mb_before_ingest"],
                "recall_peak_mb": rec["peak_rss_mb"],
                "recall_after_import_mb": rec["rss_mb_after_import"],
                "recall_after_cold_mb": rec["rss_mb_after_cold"],
            },
            "db": {
                "after_ingest": ing["files_after_ingest"],
                "after_close": ing["files_after_close"],
            },
            "worker_wall_s": {"ingest": ing["worker_wall_s"], "recall": rec["worker_wall_s"]},
            "loadavg_1m": {
                "ingest": [ing["loadavg_start"][0], ing["loadavg_end"][0]],
                "recall": [rec["loadavg_start"][0], rec["loadavg_end"][0]],
            },
        }
        if "profile" in rec:
            report["sizes"][str(size)]["profile_file"] = rec["profile"]
    if args.profile:
        log("profiling a 10k ingest")
        prof = run_worker(args, "profile-ingest", common)
        report["ingest"]["profile_file"] = prof["profile"]
    report["rss"] = {
        "parent_peak_mb": peak_rss_mb(),
        "parent_ru_maxrss_mb": maxrss_mb(),
        "children_ru_maxrss_mb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024.0,
    }
    report["targets"] = {"goals": TARGETS, "checks": target_checks(report)}
    report["wall_s"] = time.perf_counter() - started
    print_report(report)
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2), encoding="utf-8")
        log(f"wrote {args.json}")
    if not args.keep_db:
        for size in args.sizes:
            fresh_db(workdir / f"recall-{size}.db")


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    doc = __doc__ or ""
    parser = argparse.ArgumentParser(
        description=doc.splitlines()[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", default="10000,100000", help="comma-separated store sizes")
    parser.add_argument("--queries", type=int, default=200, help="measured queries per size")
    parser.add_argument("--warmup", type=int, default=20, help="warm-up queries per size")
    parser.add_argument("--json", metavar="OUT", help="write the full report here")
    parser.add_argument(
        "--workdir",
        default=str(Path(tempfile.gettempdir()) / "cairn-recall-bench"),
        help="databases, the pool-embedding cache and profiles (default: %(default)s)",
    )
    parser.add_argument("--seed", type=int, default=1234)
    parser.add_argument("--pool", type=int, default=3000, help="distinct real-embedded sentences")
    parser.add_argument("--tenants", type=int, default=4)
    parser.add_argument("--batch-size", type=int, default=256, help="store_many batch size")
    parser.add_argument(
        "--real-sample",
        type=int,
        default=2000,
        help="memories ingested with the real model (0: skip)",
    )
    parser.add_argument("--profile", action="store_true", help="cProfile recall and ingest")
    parser.add_argument("--keep-db", action="store_true", help="keep the databases afterwards")
    # Internal: how the orchestrator runs one measurement in a fresh process.
    for name, kind in (("--w-kind", str), ("--w-out", str), ("--w-pool", str), ("--w-size", int)):
        parser.add_argument(name, type=kind, help=argparse.SUPPRESS)
    parser.add_argument("--w-profile", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    args.sizes = [int(s) for s in str(args.sizes).split(",") if s.strip()]
    if not args.sizes or min(args.sizes) < 100:
        parser.error("--sizes: each size must be at least 100")
    if args.queries < 1 or args.warmup < 0:
        parser.error("--queries must be >= 1 and --warmup >= 0")
    args.workdir = str(Path(args.workdir).resolve())
    return args


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(argv)
    if args.w_kind:
        ds = Dataset.build(args.seed, args.pool, args.tenants)
        out: dict[str, Any] = {"loadavg_start": os.getloadavg()}
        WORKERS[args.w_kind](args, ds, out)
        out["loadavg_end"] = os.getloadavg()
        out["ru_maxrss_mb"] = maxrss_mb()
        Path(args.w_out).write_text(json.dumps(out), encoding="utf-8")
        return
    orchestrate(args)


if __name__ == "__main__":
    main()

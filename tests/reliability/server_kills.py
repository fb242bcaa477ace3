"""SIGKILLs of a real ``cairn serve`` while clients keep writing, every request retried.

Clients (threads, each on its own HTTP connection) send one write after another to one
tenant: ingest batches under a batch key only (each item's key derived by the server),
ingest batches with a key per item, and single ``store`` and ``remember`` writes. A write
that gets no answer — the connection refused or cut, a timeout, a 5xx — is sent again,
the same request with the same keys, until it is answered; and a share of the answered
ones are sent once more, as a client does whose answer was lost on the way back. A killer
SIGKILLs the server at random points and starts it again on the same home (a new port,
which the clients pick up).

After the last write is answered, every body must be stored exactly once: a body stored
twice is a duplicate, an answered body not stored is lost. Both must be 0.
"""

from __future__ import annotations

import random
import threading
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from server.serving import Server

RETRY_PAUSE = 0.05  # seconds between tries while the server is down
SPARE_PLANS = 20  # writes planned a client, in shares: more than it sends while kills last


@dataclass
class ServerKillTally:
    kills: int = 0
    clients: int = 0
    requests: int = 0  # answered requests (each write once, however often it was tried)
    tries: int = 0  # every send, retries included
    unanswered_tries: int = 0  # sends that got no answer (the server was killed or down)
    resent_after_answer: int = 0  # answered writes sent again on purpose
    items: int = 0  # bodies the answered writes hold
    stored: int = 0
    duplicates: int = 0
    lost: int = 0
    refused: list[str] = field(default_factory=list)  # a 4xx: a defect of the harness or cairn
    seconds: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return {
            "kills": self.kills,
            "clients": self.clients,
            "requests": self.requests,
            "tries": self.tries,
            "unanswered_tries": self.unanswered_tries,
            "resent_after_answer": self.resent_after_answer,
            "items": self.items,
            "stored": self.stored,
            "duplicates": self.duplicates,
            "lost": self.lost,
            "refused": self.refused[:20],
            "seconds": round(self.seconds, 1),
        }

    @property
    def problems(self) -> int:
        return self.duplicates + self.lost + len(self.refused)


class _Served:
    """The server of the moment: the killer replaces it, the clients read its address."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self.lock = threading.Lock()
        self.server = Server.start(home)
        self.url = self.server.url

    def restart(self) -> None:
        self.server.kill()
        fresh = Server.start(self.home)
        with self.lock:
            self.server, self.url = fresh, fresh.url


def _writes(client: int, count: int, rng: random.Random) -> list[tuple[dict[str, Any], list[str]]]:
    """The client's requests, each with the bodies it stores."""
    out: list[tuple[dict[str, Any], list[str]]] = []
    for n in range(count):
        tag = f"c{client} w{n} {uuid.uuid4().hex[:8]}"
        shape = rng.random()
        if shape < 0.5:  # a batch under its key only: item keys derived by the server
            bodies = [f"{tag} item {i} of a keyed batch" for i in range(rng.randint(2, 12))]
            request = {"mutation": "ingest", "idempotency_key": f"batch {tag}",
                       "items": [{"body": b} for b in bodies]}  # fmt: skip
        elif shape < 0.7:  # a batch with a key per item
            bodies = [f"{tag} item {i} keyed one by one" for i in range(rng.randint(2, 8))]
            request = {"mutation": "ingest", "idempotency_key": f"batch {tag}",
                       "items": [{"body": b} for b in bodies],
                       "item_keys": [f"item {tag} {i}" for i in range(len(bodies))]}  # fmt: skip
        elif shape < 0.85:
            bodies = [f"{tag} stored by the agent"]
            request = {"mutation": "store", "idempotency_key": f"store {tag}", "body": bodies[0]}
        else:
            bodies = [f"{tag} remembered for the user"]
            request = {"mutation": "remember", "idempotency_key": f"remember {tag}",
                       "body": bodies[0]}  # fmt: skip
        out.append((request, bodies))
    return out


def _send_until_answered(
    served: _Served, token: str, request: dict[str, Any], tally: ServerKillTally, lock: Any
) -> None:
    while True:
        with served.lock:
            url = served.url
        with lock:
            tally.tries += 1
        try:
            reply = httpx.post(
                f"{url}/v1/apply",
                json=request,
                headers={"Authorization": f"Bearer {token}"},
                timeout=30,
                trust_env=False,
            )
        except httpx.HTTPError:
            reply = None
        if reply is not None and reply.status_code == 200:
            return
        if reply is not None and 400 <= reply.status_code < 500:
            with lock:
                tally.refused.append(f"{reply.status_code} {reply.text[:200]}")
            return
        with lock:
            tally.unanswered_tries += 1
        time.sleep(RETRY_PAUSE)


def _stored_bodies(served: _Served, token: str) -> list[str]:
    while True:
        try:
            reply = httpx.post(
                f"{served.url}/v1/query",
                json={"view": "manage", "include_forgotten": True},
                headers={"Authorization": f"Bearer {token}"},
                timeout=60,
                trust_env=False,
            )
            if reply.status_code == 200:
                return [r["body"] for r in reply.json()["records"]]
        except httpx.HTTPError:
            pass
        time.sleep(RETRY_PAUSE)


def run_server_kills(
    root: Path,
    *,
    kills: int,
    clients: int = 3,
    writes_per_client: int = 40,
    resend_share: float = 0.25,
    seed: int = 1,
    window: tuple[float, float] = (0.3, 1.5),
) -> ServerKillTally:
    """Kill the server ``kills`` times while ``clients`` write; then count every body."""
    rng = random.Random(seed)
    tally = ServerKillTally(clients=clients)
    lock = threading.Lock()
    started = time.monotonic()
    served = _Served(root / "home")
    tenant = f"kills-{uuid.uuid4().hex[:8]}"
    token = served.server.token(tenant)
    # A client writes at least its share and goes on until the last kill has landed: on a
    # fast machine the share alone can be answered before the killer's third pause ends.
    plans = [
        _writes(c, writes_per_client * SPARE_PLANS, random.Random(rng.random()))
        for c in range(clients)
    ]
    killed = threading.Event()
    sent: list[str] = []  # the bodies of every write answered

    def client(plan: list[tuple[dict[str, Any], list[str]]], own: random.Random) -> None:
        for n, (request, bodies) in enumerate(plan):
            if n >= writes_per_client and killed.is_set():
                break
            _send_until_answered(served, token, request, tally, lock)
            again = own.random() < resend_share
            if again:  # the answer lost on the way back: the client sends it once more
                _send_until_answered(served, token, request, tally, lock)
            with lock:
                tally.requests += 1
                tally.items += len(bodies)
                tally.resent_after_answer += again
                sent.extend(bodies)

    threads = [
        threading.Thread(target=client, args=(plan, random.Random(rng.random())), daemon=True)
        for plan in plans
    ]
    try:
        for thread in threads:
            thread.start()
        while tally.kills < kills and any(t.is_alive() for t in threads):
            time.sleep(rng.uniform(*window))
            if not any(t.is_alive() for t in threads):
                break
            served.restart()
            tally.kills += 1
        killed.set()
        for thread in threads:
            thread.join(600)
        bodies = _stored_bodies(served, token)
    finally:
        killed.set()
        served.server.stop()
    counts = Counter(bodies)
    wanted = set(sent)
    tally.stored = len(bodies)
    tally.duplicates = sum(n - 1 for n in counts.values() if n > 1)
    tally.lost = len(wanted - set(counts))
    tally.seconds = time.monotonic() - started
    return tally

"""Worker processes of the reliability harness, each on the public API (``Memory``).

    python workers.py ops HOME STATE LOG SEED NAMESPACE MIX   # until killed
    python workers.py writer HOME LOG INDEX SECONDS
    python workers.py reader HOME LOG INDEX SECONDS ACK_LOG...

``ops`` writes an *intent* line before each call and an *ack* line after it returned, so
the harness knows which writes were acknowledged and which one was in flight when the
SIGKILL came. Every call carries its own idempotency key (``event_id``), so the harness can
tell from the journal whether the write in flight committed. An exception is never
swallowed: it ends the worker with a traceback, which the harness counts.
"""

from __future__ import annotations

import json
import logging
import random
import sys
import time
from pathlib import Path
from typing import IO, Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from reliability.harness import Words, body_for, open_memory, word_of

# Operation weights of each mix.
MIXES = {
    "edits": {"store": 20, "remember": 10, "correct": 35, "forget": 20, "restore": 15},
    "purges": {"remember": 30, "store": 10, "correct": 20, "purge": 40},
}


def _line(out: IO[str], data: dict[str, Any]) -> None:
    out.write(json.dumps(data) + "\n")
    out.flush()


def ops(home: Path, state_file: Path, log: Path, seed: int, namespace: int, mix: str) -> None:
    state = json.loads(state_file.read_text())
    live: dict[str, str] = state["live"]  # id -> word
    forgotten: dict[str, str] = state["forgotten"]
    secrets: dict[str, str] = state.get("secrets", {})
    rng = random.Random(seed)
    words = Words(namespace)
    weights = MIXES[mix]
    mem = open_memory(home)
    with log.open("a", encoding="utf-8") as out:
        logging.getLogger("cairn").addHandler(_Warnings(out))
        _line(out, {"ready": True})
        n = 0
        while True:
            n += 1
            key = f"rel-{namespace}-{n}"
            choices = [op for op in weights if _possible(op, live, forgotten)]
            op = rng.choices(choices, [weights[o] for o in choices])[0]
            intent: dict[str, Any] = {"n": n, "op": op, "key": key}
            if op in ("store", "remember"):
                word = words()
                secret = words() if mix == "purges" else None
                intent.update(word=word, secret=secret)
                _line(out, intent)
                body = body_for(word, rng, secret=secret)
                call = mem.remember if op == "remember" else mem.store
                record = call(body, event_id=key)
                live[record.id] = word
                if secret:
                    secrets[record.id] = secret
            elif op == "correct":
                record_id = rng.choice(sorted(live))
                word = words()
                intent.update(id=record_id, word=word)
                _line(out, intent)
                body = body_for(word, rng, secret=secrets.get(record_id))
                record = mem.correct(record_id, body, event_id=key)
                live[record_id] = word
            elif op in ("forget", "purge"):
                record_id = rng.choice(sorted(live))
                intent.update(id=record_id)
                _line(out, intent)
                mem.forget(record_id, permanent=op == "purge", event_id=key)
                word = live.pop(record_id)
                if op == "forget":
                    forgotten[record_id] = word
                record = None
            else:  # restore
                record_id = rng.choice(sorted(forgotten))
                intent.update(id=record_id)
                _line(out, intent)
                record = mem.restore(record_id, event_id=key)
                live[record_id] = forgotten.pop(record_id)
            ack: dict[str, Any] = {"ack": n}
            if record is not None:
                ack.update(id=record.id, version=record.version)
            _line(out, ack)


class _Warnings(logging.Handler):
    """cairn's warnings (e.g. a permanent forget whose files are not clean yet) go to the
    log, so the harness can tell why a file still held something."""

    def __init__(self, out: IO[str]) -> None:
        super().__init__(logging.WARNING)
        self.out = out

    def emit(self, record: logging.LogRecord) -> None:
        _line(self.out, {"warning": record.getMessage()})


def _possible(op: str, live: dict[str, str], forgotten: dict[str, str]) -> bool:
    if op in ("correct", "forget", "purge"):
        return len(live) > 0
    if op == "restore":
        return len(forgotten) > 0
    return True


# -- concurrent load -----------------------------------------------------------------------


def writer(home: Path, log: Path, index: int, seconds: float) -> None:
    """Stores (and now and then corrects one of its own) until the time is up."""
    rng = random.Random(index)
    words = Words(1000 + index)
    mem = open_memory(home)
    mine: list[str] = []
    deadline = time.monotonic() + seconds
    with log.open("a", encoding="utf-8") as out:
        n = 0
        while time.monotonic() < deadline:
            n += 1
            word = words()
            started = time.monotonic()
            if mine and n % 8 == 0:
                op = "correct"
                target = rng.choice(mine)
                record = mem.correct(target, body_for(word, rng), event_id=f"w{index}-{n}")
            else:
                op = "store"
                record = mem.store(body_for(word, rng), event_id=f"w{index}-{n}")
                mine.append(record.id)
            ms = (time.monotonic() - started) * 1000
            _line(
                out,
                {
                    "op": op,
                    "id": record.id,
                    "version": record.version,
                    "word": word,
                    "ms": round(ms, 2),
                },
            )
    mem.close()


def _acked(path: Path) -> list[dict[str, Any]]:
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    return [json.loads(line) for line in text.split("\n")[:-1] if line]


def reader(home: Path, log: Path, index: int, seconds: float, ack_logs: list[Path]) -> None:
    """Reads while the writers write: the counts never go down, a record seen once stays,
    a write a writer acknowledged before this read began is visible, by id and by word."""
    rng = random.Random(100 + index)
    mem = open_memory(home)
    last = {"records": 0, "versions": 0, "events": 0}
    seen: list[str] = []
    problems: list[str] = []
    reads = checks = 0
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        counts = mem.status().counts
        reads += 1
        for name, before in last.items():
            if counts[name] < before:
                problems.append(f"{name} went down: {before} -> {counts[name]}")
            last[name] = counts[name]
        acks = _acked(rng.choice(ack_logs))  # read before the queries below
        if acks:
            ack = acks[-1]
            record = mem.get(ack["id"])  # NotFound would end the worker: counted
            checks += 1
            if record.version < ack["version"]:
                problems.append(f"{ack['id']} is v{record.version}, acked v{ack['version']}")
            seen.append(ack["id"])
            word = word_of(record.body)
            if reads % 3 == 0 and word:
                trace = mem.recall(word).trace
                checks += 1
                found = any(t["id"] == record.id and "keyword" in t["ranks"] for t in trace)
                # A writer may correct the record between the read and the recall: its old
                # word then rightly finds nothing. Only a version still current counts.
                if not found and mem.get(record.id).version == record.version:
                    problems.append(f"{record.id} not recalled by its word {word}")
        if seen and reads % 5 == 0:
            mem.get(rng.choice(seen))  # a record seen once never disappears
            checks += 1
    mem.close()
    log.write_text(json.dumps({"reads": reads, "checks": checks, "problems": problems}))


def main(argv: list[str]) -> None:
    command, home = argv[0], Path(argv[1])
    if command == "ops":
        ops(home, Path(argv[2]), Path(argv[3]), int(argv[4]), int(argv[5]), argv[6])
    elif command == "writer":
        writer(home, Path(argv[2]), int(argv[3]), float(argv[4]))
    elif command == "reader":
        reader(home, Path(argv[2]), int(argv[3]), float(argv[4]), [Path(p) for p in argv[5:]])
    else:
        raise SystemExit(f"unknown worker {command!r}")


if __name__ == "__main__":
    main(sys.argv[1:])

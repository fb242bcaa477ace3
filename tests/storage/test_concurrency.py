"""Several processes on one file: nothing acknowledged is lost, even on kill -9."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from cairn import Memory

WRITER = textwrap.dedent(
    """
    import hashlib, sys
    import numpy as np
    from cairn import Memory

    class Embedder:
        model_id = "test-bytes-16"
        dim = 16
        def embed(self, texts):
            out = np.zeros((len(texts), 16), dtype=np.float32)
            for i, t in enumerate(texts):
                d = hashlib.sha256(t.encode()).digest()[:16]
                out[i] = np.frombuffer(d, dtype=np.uint8).astype(np.float32) + 1
                out[i] /= np.linalg.norm(out[i])
            return out

    path, name, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
    mem = Memory.open(path, config={}, embedder=Embedder())
    for i in range(count):
        rec = mem.store(f"{name} wrote memory {i}")
        print(rec.id, flush=True)
    """
)


def spawn(path: Path, name: str, count: int) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    return subprocess.Popen(
        [sys.executable, "-c", WRITER, str(path), name, str(count)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def open_again(path: Path) -> Memory:
    # Reading needs no embedding; the dim must match the writers'.
    class Embedder:
        model_id = "test-bytes-16"
        dim = 16

        def embed(self, texts):  # type: ignore[no-untyped-def]
            import numpy as np

            return np.ones((len(texts), 16), dtype=np.float32) / 4.0

    return Memory.open(path, config={}, embedder=Embedder())


def test_two_processes_writing_at_once_lose_nothing(tmp_path: Path) -> None:
    path = tmp_path / "shared.db"
    reader = open_again(path)  # follows the writers incrementally, recalling as they go
    writers = [spawn(path, "alpha", 120), spawn(path, "beta", 120)]
    while any(proc.poll() is None for proc in writers):
        reader.recall("memory wrote alpha")
        time.sleep(0.05)
    acknowledged: list[str] = []
    for proc in writers:
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
        acknowledged += out.split()
    assert len(acknowledged) == 240
    # The long-lived reader's in-memory indexes caught every write of both processes.
    for writer in ("alpha", "beta"):  # 120 keyword hits each: all inside the lane's 200
        ranked = reader.recall(writer, max_results=240).ranked
        assert len({c.record.id for c in ranked if writer in c.record.body}) == 120
    reader.close()
    mem = open_again(path)
    stored = {r.id for r in mem.list()}
    assert stored == set(acknowledged)
    bodies = {r.body for r in mem.list()}
    assert {f"alpha wrote memory {i}" for i in range(120)} <= bodies
    assert len(list(mem.journal())) == 240
    mem.close()


def test_kill_minus_nine_loses_no_acknowledged_write(tmp_path: Path) -> None:
    path = tmp_path / "killed.db"
    proc = spawn(path, "victim", 100_000)
    assert proc.stdout is not None
    acknowledged: list[str] = []
    deadline = time.monotonic() + 120
    while len(acknowledged) < 150 and time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        acknowledged.append(line.strip())
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    assert len(acknowledged) >= 150
    mem = open_again(path)
    stored = {r.id for r in mem.list()}
    assert set(acknowledged) <= stored
    # Whatever was committed is whole: every record has its journal event.
    events = {e.payload["record"]["id"] for e in mem.journal()}
    assert stored == events
    mem.close()

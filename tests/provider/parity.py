"""The three routes to one engine, side by side, for the route-parity tests.

- ``local``: the command line in-process, on the embedded engine of its own home;
- ``daemon``: the same command line in a home a real ``cairn daemon start`` serves, so
  every request goes over the daemon's unix socket (and a plain ``cairn recall`` takes the
  entry point's fast path);
- ``remote``: the same command line in a home whose config names a real ``cairn serve``
  (``memory.remote``), the token in an environment variable.

A command line runs as the installed entry point runs it (:func:`cairn.cli.fast.main`:
the hook and recall fast paths, then the whole command line), in this process. Outputs
are compared after :class:`Masks`: every id becomes ``<id N>`` in the order the route
first showed it (so which output names which memory still has to agree), times and
dates become ``<time>``, each home's path ``<home>`` and timings ``<ms>``.
"""

from __future__ import annotations

import json
import math
import os
import re
import sys
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from cli_runner import TEST_CONFIG
from server.serving import QUIET_TICK_S, Server

ROUTE_NAMES = ("local", "daemon", "remote")
TOKEN_ENV = "CAIRN_PARITY_TOKEN"

# ids (ULIDs), and keys and digests (a key derived from an id differs as the id does)
_ID = re.compile(r"\b[0-9A-HJKMNP-TV-Z]{26}\b|\b[0-9a-f]{32,}\b")
_TIME = re.compile(
    r"\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?\b"
)
_MS_LINE = re.compile(r"(mean ms by stage: ).*")
_SEQ_LINE = re.compile(r"^ *\d+(?=  <time>)", re.MULTILINE)  # the journal's seq column
# JSON keys whose values are durations
TIMING_KEYS = frozenset(("timings_ms", "ms"))
# JSON keys whose values count the store's journal, every tenant's (each route's store
# holds other tenants, written by other tests)
SEQ_KEYS = frozenset(("seq", "resume_seq", "through_seq", "cursor"))


def _timing(key: str) -> bool:
    return key in TIMING_KEYS or key.startswith("recall:ms:")


@dataclass(frozen=True)
class Result:
    code: int
    out: str
    err: str

    def json(self) -> Any:
        return json.loads(self.out)


@dataclass
class Masks:
    """One route's id table: the n-th distinct id it showed is ``<id n>``."""

    paths: tuple[str, ...]
    ids: dict[str, str] = field(default_factory=dict)

    def text(self, text: str) -> str:
        for path in self.paths:
            text = text.replace(path, "<home>")
        text = _ID.sub(self._id, text)
        text = _TIME.sub("<time>", text)
        text = _SEQ_LINE.sub("<seq>", text)
        return _MS_LINE.sub(r"\1<ms>", text)

    def _id(self, match: re.Match[str]) -> str:
        return self.ids.setdefault(match.group(0), f"<id {len(self.ids) + 1}>")

    def value(self, data: Any) -> Any:
        if isinstance(data, dict):  # in the route's order: ids are numbered as it shows them
            return {self.text(k): self._field(k, v) for k, v in data.items()}
        if isinstance(data, list):
            return [self.value(v) for v in data]
        if isinstance(data, str):
            return self.text(data)
        return data

    def _field(self, key: str, value: Any) -> Any:
        if _timing(key):
            return "<ms>"
        if key in SEQ_KEYS and isinstance(value, int):
            return "<seq>"
        return self.value(value)

    def result(self, result: Result) -> tuple[int, Any, str]:
        """The exit code, the output (a JSON document as data, else text) and the error."""
        try:
            out: Any = self.value(json.loads(result.out)) if result.out.strip() else ""
        except ValueError:
            out = self.text(result.out)
        return result.code, out, self.text(result.err)


def invoke(
    home: Path, args: list[str], *, env: dict[str, str], stdin: bytes | None, cwd: Path
) -> Result:
    """``cairn ARGS`` as the entry point runs it, in this process."""
    from click.testing import CliRunner

    from cairn.cli.fast import fast_hook, fast_recall
    from cairn.cli.main import run

    settings: dict[str, str | None] = {"CAIRN_HOME": str(home), "CAIRN_CONFIG": None, **env}
    before = Path.cwd()
    runner = CliRunner()
    with runner.isolation(input=stdin or b"", env=settings) as (out, err, _):
        try:
            os.chdir(cwd)
            fast = fast_hook(args)
            if fast is None:
                fast = fast_recall(args)
            if fast is not None:
                if fast:
                    sys.stdout.write(fast + "\n")
                code = 0
            else:
                code = run(list(args))
        finally:
            os.chdir(before)
            sys.stdout.flush()
            sys.stderr.flush()
    return Result(code, out.getvalue().decode(), err.getvalue().decode())


@dataclass
class Route:
    """One route, bound to one tenant."""

    name: str
    home: Path
    tenant: str
    repo: Path
    env: dict[str, str] = field(default_factory=dict)
    masks: Masks = field(init=False)

    def __post_init__(self) -> None:
        self.masks = Masks((str(self.home.resolve()), str(self.home)))

    def cli(self, *args: str, stdin: bytes | None = None, cwd: Path | None = None) -> Result:
        argv = ["--tenant", self.tenant, *args]
        return invoke(self.home, argv, env=self.env, stdin=stdin, cwd=cwd or self.repo)

    def subprocess_env(self) -> dict[str, str]:
        """The environment of a real ``cairn`` process on this route."""
        env = {**os.environ, "CAIRN_HOME": str(self.home), **self.env}
        env["PYTHONPATH"] = os.pathsep.join(sys.path)
        env.pop("CAIRN_CONFIG", None)
        return env


@dataclass
class Routes:
    """The three homes: the local one, the one the daemon serves, the remote one."""

    root: Path
    repo: Path
    server: Server
    local_home: Path
    daemon_home: Path
    remote_home: Path

    def bind(self, tenant: str | None = None) -> dict[str, Route]:
        """The three routes for a fresh tenant (a token of its own on the server)."""
        tenant = tenant or f"p{uuid.uuid4().hex[:10]}"
        token = {TOKEN_ENV: self.server.token(tenant)}
        return {
            "local": Route("local", self.local_home, tenant, self.repo),
            "daemon": Route("daemon", self.daemon_home, tenant, self.repo),
            "remote": Route("remote", self.remote_home, tenant, self.repo, token),
        }


@contextmanager
def started(root: Path) -> Iterator[Routes]:
    """A repository, a real daemon and a real server, for one test module."""
    from daemon.support import make_repo, running

    root.mkdir(parents=True, exist_ok=True)
    repo = make_repo(root)
    local_home = root / "local"
    daemon_home = root / "daemon"
    remote_home = root / "remote"
    for home in (local_home, daemon_home):
        home.mkdir()
        (home / "config.yaml").write_text(TEST_CONFIG, encoding="utf-8")
    # The server's learning schedule reflects and sweeps each tenant when due, on its own
    # clock: its first tick (at start) finds no tenant, the next one comes after the tests
    # (Server.start's once-a-day tick; on the server's own 60 s a reflection landed in a
    # test's tenant between two of its reads on the remote route only).
    server = Server.start(root / "server", learning_tick_s=QUIET_TICK_S)
    try:
        remote_home.mkdir()
        remote = {"memory": {"remote": {"endpoint": server.url, "tokenEnv": TOKEN_ENV}}}
        (remote_home / "config.yaml").write_text(yaml.safe_dump(remote), encoding="utf-8")
        with running(daemon_home):
            yield Routes(root, repo, server, local_home, daemon_home, remote_home)
    finally:
        ran = [line["runs"] for line in server.logs() if line.get("event") == "learning ran"]
        code = server.stop()
        assert code == 0, server.text()[-2000:]
    assert not ran, f"the schedule reflected or swept a test's tenant under the tests: {ran}"


def alike(a: Any, b: Any) -> bool:
    """Equal, but for floats within a relative 1e-4: a score's recency factor moves with
    the seconds between a write and the read (1e-6 a second), which no two routes share."""
    if isinstance(a, float) and isinstance(b, float):
        return math.isclose(a, b, rel_tol=1e-4, abs_tol=1e-9)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(alike(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(alike(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


def differences(results: dict[str, Result], masks: dict[str, Masks]) -> list[str]:
    """What the routes answered differently (empty: the same everywhere)."""
    seen = {name: masks[name].result(r) for name, r in results.items()}
    first = seen["local"]
    out = []
    for name, other in seen.items():
        for part, a, b in zip(("exit code", "output", "error"), first, other, strict=True):
            if not alike(a, b):
                where = first_difference(a, b)
                out.append(f"{part}{where}: local {_at(a, where)!r}\n   {name} {_at(b, where)!r}")
    return out


def first_difference(a: Any, b: Any, path: str = "") -> str:
    """Where two outputs first differ (``[3].payload.sender``), to name it in a failure."""
    if isinstance(a, dict) and isinstance(b, dict):
        for key in [*a, *(k for k in b if k not in a)]:
            if key not in a or key not in b or not alike(a[key], b[key]):
                inner = first_difference(a.get(key), b.get(key), f"{path}.{key}")
                return inner if key in a and key in b else f"{path}.{key}"
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for n, (x, y) in enumerate(zip(a, b, strict=True)):
            if not alike(x, y):
                return first_difference(x, y, f"{path}[{n}]")
    return path


def _at(data: Any, path: str) -> Any:
    """The part of ``data`` at ``path`` (as :func:`first_difference` names it)."""
    for part in re.findall(r"\.([^.\[]+)|\[(\d+)\]", path):
        key, index = part
        try:
            data = data[int(index)] if index else data[key]
        except (KeyError, IndexError, TypeError):
            return "<absent>"
    return data

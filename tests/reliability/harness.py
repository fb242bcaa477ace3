"""Shared pieces of the reliability harness: homes, unique words, the real `cairn` command
run under a SIGKILL, the bytes of every file under a home, and the tally of figures.

Every process the harness starts is the real thing: the `cairn` command or a Python worker
on the public API, each with its own home folder and the same SQLite file the user gets.
The model-free hashing embedder is chosen through the home's config (as tests/cli_runner.py
does) unless a run asks for the real default model.
"""

from __future__ import annotations

import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cairn import Memory
from cairn.storage.terms import term_key

HASHING_CONFIG = "memory:\n  embeddings:\n    provider: hashing\n"
WORKERS = Path(__file__).with_name("workers.py")

# A unique word: "zq", eight letters of a 16-letter alphabet, "q" -- fixed length, so one
# word is never part of another; no English suffix, so the stemmer leaves it whole.
_ALPHABET = "bcdfghjklmnpvwxz"
WORD = re.compile(r"\bzq[bcdfghjklmnpvwxz]{8}q\b")
_FILLER = (  # no word twice in a body, and none of the template's own words
    ("blue", "quiet", "late", "shared", "small", "remote", "nightly", "careful"),
    ("lantern", "build", "ledger", "garden", "deploy", "invoice", "review", "kettle"),
    ("sits", "runs", "waits", "breaks", "ships", "moves", "stays", "fails"),
    (
        "near doors",
        "after lunch",
        "on Fridays",
        "in staging",
        "before release",
        "at offices",
        "every morning",
        "under load",
    ),
)


def _letters(value: int, width: int) -> str:
    out = []
    for _ in range(width):
        out.append(_ALPHABET[value % 16])
        value //= 16
    return "".join(reversed(out))


class Words:
    """Unique nonsense words. ``namespace`` (< 65,536) keeps the words of concurrent
    processes apart; each namespace holds 65,536 words."""

    def __init__(self, namespace: int) -> None:
        if not 0 <= namespace < 16**4:
            raise ValueError(f"namespace out of range: {namespace}")
        self._prefix = "zq" + _letters(namespace, 4)
        self._next = 0

    def __call__(self) -> str:
        word = f"{self._prefix}{_letters(self._next, 4)}q"
        self._next += 1
        return word


def body_for(word: str, rng: random.Random, *, secret: str | None = None) -> str:
    """A body holding ``word`` three times among shared filler words, each once (so the
    lanes have competitors, and no sign collision of the hashing embedder's buckets can
    cancel the word: that would take three other words in its bucket)."""
    adj, noun, verb, place = (rng.choice(options) for options in _FILLER)
    text = f"{word} note: the {adj} {noun} {verb} {place}; see {word} and {word}."
    if secret is not None:
        text += f" Vault phrase: {secret}."
    return text


def word_of(body: str) -> str | None:
    found = WORD.search(body)
    return found.group(0) if found else None


def needles_of(words: set[str]) -> dict[bytes, str]:
    """What must not survive of a permanently forgotten body: its words in UTF-8 and their
    keyword-index term keys (64-bit hashes, which would still betray the word); each
    needle with what it is, for the report."""
    out: dict[bytes, str] = {}
    for word in words:
        out[word.encode()] = word
        out[term_key(word).to_bytes(8, "little", signed=True)] = f"the term key of {word}"
    return out


# -- homes ---------------------------------------------------------------------------------


def make_home(path: Path, *, real: bool, markdown: bool = True) -> Path:
    """A home folder; ``real``: the default embedding model, else the hashing embedder;
    ``markdown``: the Markdown projection beside the file (on by default, as for users)."""
    path.mkdir(parents=True, exist_ok=True)
    config = "" if real else HASHING_CONFIG
    if not markdown:
        config += ("" if config else "memory:\n") + "  markdown:\n    enabled: false\n"
    if config:
        (path / "config.yaml").write_text(config, encoding="utf-8")
    return path


def open_memory(home: Path, *, tenant: str = "default") -> Memory:
    """The store as the CLI opens it: ``memory.db`` and ``config.yaml`` of the home (an
    open finishes any permanent forget a kill interrupted)."""
    config = home / "config.yaml"
    return Memory.open(home / "memory.db", config=config if config.exists() else {}, tenant=tenant)


def child_env(home: Path) -> dict[str, str]:
    env = {**os.environ, "CAIRN_HOME": str(home), "PYTHONPATH": os.pathsep.join(sys.path)}
    env.pop("CAIRN_CONFIG", None)
    return env


def file_bytes(home: Path) -> dict[Path, bytes]:
    """Every file under the home: the database, its WAL and shared memory, the Markdown
    projection, any ``.ann`` graph, the config."""
    return {p: p.read_bytes() for p in sorted(home.rglob("*")) if p.is_file()}


def leaks(home: Path, needles: dict[bytes, str]) -> list[str]:
    """``file: what`` for each needle found in a file under the home."""
    found = []
    for path, data in file_bytes(home).items():
        for needle, what in needles.items():
            if needle in data:
                found.append(f"{path.relative_to(home)}: {what}")
    return sorted(found)


# -- processes -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Run:
    args: tuple[str, ...]
    returncode: int
    killed: bool  # a SIGKILL reached the process while it was running
    stdout: str
    stderr: str
    seconds: float

    @property
    def ok(self) -> bool:
        return self.returncode == 0


def run_process(
    argv: list[str], env: dict[str, str], *, kill_after: float | None, timeout: float = 600
) -> Run:
    """Run ``argv``; with ``kill_after``, SIGKILL it that many seconds after the start
    unless it finished before. Output goes to files, never a pipe that could fill up."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.monotonic()
        proc = subprocess.Popen(argv, stdout=out, stderr=err, env=env)
        killed = False
        try:
            proc.wait(timeout=kill_after if kill_after is not None else timeout)
        except subprocess.TimeoutExpired:
            if kill_after is None:
                proc.kill()
                proc.wait()
                raise
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            killed = proc.returncode == -signal.SIGKILL
        seconds = time.monotonic() - start
        out.seek(0)
        err.seek(0)
        return Run(
            tuple(argv),
            proc.returncode,
            killed,
            out.read().decode("utf-8", "replace"),
            err.read().decode("utf-8", "replace"),
            seconds,
        )


def cairn(home: Path, *args: str, kill_after: float | None = None) -> Run:
    """The real `cairn` command on this home."""
    argv = [sys.executable, "-m", "cairn.cli.main", "--home", str(home), *args]
    return run_process(argv, child_env(home), kill_after=kill_after)


def worker_argv(*args: str) -> list[str]:
    return [sys.executable, str(WORKERS), *args]


# -- figures -------------------------------------------------------------------------------

PROBLEMS = (
    "lost",  # an acknowledged write missing after a kill
    "partial",  # half a record, half a batch, a duplicate, a broken version chain
    "lanes",  # a live record the keyword or vector lane does not find, or a ghost row
    "replay",  # the projection rebuilt from the journal differs from the live state
    "rebuild",  # a killed rebuild did not leave the old state
    "leaked",  # bytes of a permanently forgotten body in a file after reopening
    "tracebacks",  # a traceback in any process's output
    "words",  # a fault said in wrong words: "internal error", a traceback, the wrong exit
    "private",  # a file of a home that another user could read
    "errors",  # any other unexpected failure (an exit code, an exception)
)


@dataclass
class Tally:
    """The figures of one scenario; ``problems`` name what went wrong, by kind."""

    name: str
    kills: int = 0  # SIGKILLs that reached a running process
    committed: int = 0  # of those, how many found the killed work committed
    rolled_back: int = 0  # ... or not committed at all
    completed: int = 0  # runs that finished before their kill
    acknowledged: int = 0  # record writes acknowledged (exit 0 / the call returned)
    checked: int = 0  # checks that an acknowledged write is present, after a kill
    lane_checks: int = 0  # live records looked up by their word in both lanes
    absent_checks: int = 0  # dead words (forgotten, superseded) that must find nothing
    replays: int = 0  # rebuild-and-compare of the whole state
    purges_resumed: int = 0  # permanent forgets pending at reopen, finished by it
    files_cleaned_on_open: int = 0  # forgotten bytes a kill left in files, gone after open
    seconds: float = 0.0
    problems: dict[str, list[str]] = field(default_factory=lambda: {k: [] for k in PROBLEMS})

    def problem(self, kind: str, message: str) -> None:
        self.problems[kind].append(message)

    def merge(self, other: Tally) -> None:
        for name in (
            "kills",
            "committed",
            "rolled_back",
            "completed",
            "acknowledged",
            "checked",
            "lane_checks",
            "absent_checks",
            "replays",
            "purges_resumed",
            "files_cleaned_on_open",
        ):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.seconds += other.seconds
        for kind, messages in other.problems.items():
            self.problems[kind] += messages

    def failures(self) -> list[str]:
        return [f"{self.name}: {kind}: {m}" for kind, ms in self.problems.items() for m in ms]

    def as_dict(self) -> dict[str, Any]:
        data = {k: v for k, v in vars(self).items() if k != "problems"}
        data["problems"] = {k: len(v) for k, v in self.problems.items()}
        data["problem_messages"] = self.failures()[:50]
        return data


def check_output(tally: Tally, run: Run, what: str) -> None:
    """No traceback ever; a run that was not killed must have succeeded."""
    if "Traceback" in run.stderr or "Traceback" in run.stdout:
        tally.problem("tracebacks", f"{what}: {run.stderr.strip()[-600:]}")
    if not run.killed and not run.ok:
        tally.problem("errors", f"{what}: exit {run.returncode}: {run.stderr.strip()[-300:]}")

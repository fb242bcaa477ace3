"""Faults of the disk and of the file, through the real `cairn` command: each must be said
in true words (one line, exit 2, never "internal error") and lose nothing.

- ``disk-full``: the home on a small tmpfs, filled; writes say the disk is full and change
  nothing, reads go on, and once space is freed writes work again.
- ``read-only``: the home seen through a read-only bind mount (root ignores chmod: only a
  read-only mount, or ``chattr +i``, makes a file unwritable for root); reads work
  (``list``, ``recall``, ``show``, ``export``), writes are refused in one line.
- ``damaged``: bytes flipped in the middle of the file; every command names the file as
  damaged and says what to do, ``cairn doctor`` finds it, ``--repair`` gives every memory
  back.
- ``empty``: a 0-byte ``memory.db`` is refused (never taken for a new store) and repaired
  from the Markdown files; ``foreign``: another program's database is left byte for byte.
- ``dates``: times outside the years 1000-9999 (UTC) in every date input: one line.
- ``private``: every file of a home is 0600 and its folders 0700, for a new home and for
  an old loose one (tightened, said once); another user cannot read the store.

A case that needs what the machine does not allow (mounting, as a non-root user) is
reported as skipped, with why.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import stat
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reliability.harness import Run, Tally, cairn, make_home

DAMAGED_WORDS = ("is damaged", "cairn doctor")
WRITES = (("remember", "a note written during the fault"), ("forget", "{id}"))
READS = (("list",), ("recall", "zebrafinch"), ("show", "{id}"), ("export",), ("status",))


@dataclass
class FaultReport:
    tally: Tally = field(default_factory=lambda: Tally("faults"))
    cases: dict[str, dict[str, Any]] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {"cases": self.cases, **self.tally.as_dict()}


def _mount(*args: str) -> bool:
    if not hasattr(os, "geteuid") or os.geteuid() != 0 or shutil.which("mount") is None:
        return False
    done = subprocess.run(["mount", *args], capture_output=True, check=False)
    return done.returncode == 0


def _umount(path: Path) -> None:
    subprocess.run(["umount", "-l", str(path)], capture_output=True, check=False)


@contextlib.contextmanager
def small_disk(path: Path, size_kb: int) -> Iterator[bool]:
    """A tmpfs of ``size_kb`` at ``path`` (False: mounting is not permitted here)."""
    path.mkdir(parents=True, exist_ok=True)
    mounted = _mount("-t", "tmpfs", "-o", f"size={size_kb}k", "tmpfs", str(path))
    try:
        yield mounted
    finally:
        if mounted:
            _umount(path)


@contextlib.contextmanager
def read_only_view(source: Path, view: Path) -> Iterator[bool]:
    """``source`` seen read-only at ``view`` (False: bind mounts are not permitted)."""
    view.mkdir(parents=True, exist_ok=True)
    mounted = _mount("--bind", str(source), str(view))
    if mounted and not _mount("-o", "remount,bind,ro", str(view)):
        _umount(view)
        mounted = False
    try:
        yield mounted
    finally:
        if mounted:
            _umount(view)


def seed(home: Path, count: int = 12) -> list[str]:
    """``count`` memories in a new home; their ids."""
    lines = "".join(
        json.dumps({"body": f"zebrafinch note {i}: the build step {i} uses make target t{i}"})
        + "\n"
        for i in range(count)
    )
    ingest = home.parent / "seed.jsonl"  # beside the home: a file put in it is tightened
    ingest.write_text(lines, encoding="utf-8")
    done = cairn(home, "ingest", str(ingest))
    assert done.ok, done.stderr
    return memories(home)


def memories(home: Path) -> list[str]:
    done = cairn(home, "--json", "list", "--limit", "100000")
    return sorted(r["id"] for r in json.loads(done.stdout)) if done.ok else []


def _state(home: Path) -> list[tuple[str, int, str]]:
    done = cairn(home, "--json", "list", "--limit", "100000")
    if not done.ok:
        return []
    return sorted((r["id"], r["version"], r["body"]) for r in json.loads(done.stdout))


def _argv(command: tuple[str, ...], record_id: str) -> list[str]:
    return [part.format(id=record_id) for part in command]


def _said(report: FaultReport, case: str, run: Run, *, code: int, words: tuple[str, ...]) -> bool:
    """One line on stderr (when failing), the exit code and the words expected."""
    what = f"{case}: cairn {' '.join(run.args[5:])[:80]}"
    lines = run.stderr.strip().splitlines()
    good = run.returncode == code and "Traceback" not in run.stderr
    if code != 0:
        good = good and len(lines) == 1 and "internal error" not in run.stderr
        good = good and all(w in run.stderr for w in words)
    if not good:
        report.tally.problem("words", f"{what}: exit {run.returncode}: {run.stderr.strip()[-300:]}")
    return good


def _case(report: FaultReport, name: str, **figures: Any) -> None:
    report.cases[name] = figures


def disk_full(report: FaultReport, work: Path) -> None:
    with small_disk(work / "disk", 2048) as mounted:
        if not mounted:
            _case(report, "disk-full", skipped="mounting a tmpfs is not permitted here")
            return
        home = make_home(work / "disk" / "home", real=False)
        ids = seed(home)
        before = _state(home)
        filler = work / "disk" / "filler"
        with filler.open("wb") as out, contextlib.suppress(OSError):
            while True:
                out.write(b"\0" * 65536)
                out.flush()
        tried = told = 0
        for command in WRITES:
            tried += 1
            run = cairn(home, *_argv(command, ids[0]))
            told += _said(
                report, "disk-full", run, code=2, words=("is full", "nothing was changed")
            )
        for command in READS:
            tried += 1
            told += _said(
                report, "disk-full", cairn(home, *_argv(command, ids[0])), code=0, words=()
            )
        kept = _state(home) == before
        if not kept:
            report.tally.problem("lost", "disk-full: the memories changed under a full disk")
        filler.unlink()
        after = cairn(home, "remember", "written once space was freed")
        tried += 1
        told += _said(report, "disk-full", after, code=0, words=())
        _case(report, "disk-full", commands=tried, true_words=told, memories_kept=kept)


def read_only(report: FaultReport, work: Path) -> None:
    home = make_home(work / "ro" / "home", real=False)
    ids = seed(home)
    before = _state(home)
    with read_only_view(home, work / "ro" / "view") as mounted:
        if not mounted:
            _case(report, "read-only", skipped="a read-only bind mount is not permitted here")
            return
        view = work / "ro" / "view"
        tried = told = 0
        for command in READS:
            tried += 1
            told += _said(
                report, "read-only", cairn(view, *_argv(command, ids[0])), code=0, words=()
            )
        for command in WRITES:
            tried += 1
            run = cairn(view, *_argv(command, ids[0]))
            told += _said(report, "read-only", run, code=2, words=("cannot be written",))
        listed = _state(view) == before
    kept = _state(home) == before and listed
    if not kept:
        report.tally.problem("lost", "read-only: the memories differ")
    _case(report, "read-only", commands=tried, true_words=told, memories_kept=kept)


def damaged(report: FaultReport, work: Path) -> None:
    home = make_home(work / "damaged" / "home", real=False)
    ids = seed(home, 40)
    db = home / "memory.db"
    data = bytearray(db.read_bytes())
    middle = len(data) // 2
    data[middle : middle + 8192] = bytes(b ^ 0xFF for b in data[middle : middle + 8192])
    db.write_bytes(bytes(data))
    tried = told = 0
    commands = (*READS, *WRITES, ("journal",), ("context", "--task", "build"), ("rebuild",),
                ("recall", "zebrafinch", "--as-of", "2030-01-01"))  # fmt: skip
    for command in commands:
        run = cairn(home, *_argv(command, ids[0]))
        tried += 1
        # a command whose reads miss the damaged pages may still answer; none may lie
        told += _said(report, "damaged", run, code=run.returncode if run.returncode in (0, 2)
                      else 2, words=DAMAGED_WORDS if run.returncode else ())  # fmt: skip
    found = cairn(home, "doctor")
    tried += 1
    told += _said(report, "damaged", found, code=2, words=("cairn doctor --repair",))
    repaired = cairn(home, "doctor", "--repair")
    tried += 1
    told += _said(report, "damaged", repaired, code=0, words=())
    back = memories(home)
    if back != ids:
        report.tally.problem("lost", f"damaged: {len(set(ids) - set(back))} memories not repaired")
    sound = cairn(home, "doctor")
    told += _said(report, "damaged", sound, code=0, words=())
    _case(report, "damaged", commands=tried + 1, true_words=told, memories=len(ids),
          repaired=len(set(back) & set(ids)))  # fmt: skip


def empty_and_foreign(report: FaultReport, work: Path) -> None:
    home = make_home(work / "empty" / "home", real=False)
    ids = seed(home, 6)
    for rule in ("Always run make lint before committing.", "Never push to main directly."):
        assert cairn(home, "remember", rule).ok
    ids = memories(home)
    (home / "memory.db").write_bytes(b"")
    for side in ("memory.db-wal", "memory.db-shm"):
        (home / side).unlink(missing_ok=True)
    tried = told = 0
    for command in (*READS, *WRITES):
        tried += 1
        run = cairn(home, *_argv(command, ids[0]))
        told += _said(report, "empty", run, code=2, words=("is empty (0 bytes)",))
    untouched = (home / "memory.db").read_bytes() == b""
    repaired = cairn(home, "doctor", "--repair")
    tried += 1
    told += _said(report, "empty", repaired, code=0, words=())
    back = memories(home)
    # the journal was in the lost file: what a person owns comes back from profile.md
    owned = [i for i in ids if i in back]
    _case(report, "empty", commands=tried, true_words=told, untouched=untouched,
          restored_from_markdown=len(owned), memories=len(ids))  # fmt: skip
    foreign = make_home(work / "foreign" / "home", real=False)
    import sqlite3

    with contextlib.closing(sqlite3.connect(foreign / "memory.db")) as conn:
        conn.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY, amount REAL)")
        conn.commit()
    before = (foreign / "memory.db").read_bytes()
    foreign_told = 0
    for command in (("list",), ("remember", "x"), ("doctor", "--repair")):
        run = cairn(foreign, *command)
        foreign_told += _said(report, "foreign", run, code=2, words=("not",))
    left = (foreign / "memory.db").read_bytes() == before
    if not left:
        report.tally.problem("errors", "foreign: another program's database was changed")
    _case(report, "foreign", commands=3, true_words=foreign_told, left_byte_for_byte=left)


OUT_OF_RANGE = ("9999-12-31T23:59:59-14:00", "0001-01-01T00:00:00+14:00", "0999-12-31")


def dates(report: FaultReport, work: Path) -> None:
    home = make_home(work / "dates" / "home", real=False)
    ids = seed(home, 3)
    tried = told = 0
    for moment in OUT_OF_RANGE:
        line = json.dumps({"body": "a dated note", "occurred_at": moment})
        (home.parent / "dated.jsonl").write_text(line + "\n", encoding="utf-8")
        for command in (
            ("recall", "zebrafinch", "--as-of", moment),
            ("list", "--as-of", moment),
            ("show", ids[0], "--as-of", moment),
            ("remember", "a dated note", "--occurred-at", moment),
            ("ingest", str(home.parent / "dated.jsonl")),
        ):
            tried += 1
            told += _said(report, "dates", cairn(home, *command), code=2, words=("outside",))
    for query in ("what happened on 9999-12-31?", "in december 9999", "the winter of 9999"):
        tried += 1
        told += _said(report, "dates", cairn(home, "recall", query), code=0, words=())
    _case(report, "dates", commands=tried, true_words=told)


def _loose(home: Path) -> list[str]:
    found = []
    for path in [home, *home.rglob("*")]:
        mode = stat.S_IMODE(os.lstat(path).st_mode)
        if not path.is_symlink() and mode & 0o077:
            found.append(f"{path.relative_to(home.parent)} {mode:04o}")
    return found


def private(report: FaultReport, work: Path) -> None:
    home = make_home(work / "private" / "home", real=False)
    seed(home, 3)
    assert cairn(home, "export", str(home / "backup.jsonl")).ok
    new_loose = _loose(home)
    for path in [home, *home.rglob("*")]:  # an older cairn's store: all of it 0644 / 0755
        os.chmod(path, 0o755 if path.is_dir() else 0o644)
    first = cairn(home, "list")
    second = cairn(home, "list")
    said_once = "private to its owner" in first.stderr and second.stderr.strip() == ""
    old_loose = _loose(home)  # the export too: all of the home is private
    for what, loose in (("a new home", new_loose), ("an old home, after one open", old_loose)):
        for entry in loose:
            report.tally.problem("private", f"{what}: {entry}")
    if not said_once:
        report.tally.problem("words", f"private: said {first.stderr!r}, then {second.stderr!r}")
    other = _another_user_reads(home / "memory.db")
    if other:
        report.tally.problem("private", f"another user read the store: {other}")
    _case(report, "private", new_home_loose=len(new_loose), old_home_loose=len(old_loose),
          said_once=said_once, other_user_read=bool(other))  # fmt: skip


def _another_user_reads(path: Path) -> str:
    """What another account (``nobody``) gets reading ``path`` ("" when refused)."""
    if os.geteuid() != 0:
        return ""  # only root can become another user here; the modes are checked above
    code = (
        "import os, sys; os.setgid(65534); os.setuid(65534)\n"
        "try:\n    print(len(open(sys.argv[1], 'rb').read()))\n"
        "except PermissionError:\n    pass\n"
    )
    done = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True,
                          text=True, check=False)  # fmt: skip
    return done.stdout.strip()


CASES = (disk_full, read_only, damaged, empty_and_foreign, dates, private)


def run_faults(work: Path) -> FaultReport:
    report = FaultReport()
    for case in CASES:
        case(report, work)
    return report

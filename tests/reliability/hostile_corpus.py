"""The hostile-input corpus (tests/data/hostile/) as cases, and the store they run against.

A case is one input and what must happen to it: ``reject`` (exit 2, one error line, the
store unchanged byte for byte in its export and no row written anywhere) or ``accept``
(exit 0, and the store still serves recall, export, import and sync in every tenant).
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from click.testing import CliRunner

from cairn import Memory
from cairn.cli.main import run
from cairn.text import text_hash

CORPUS = Path(__file__).resolve().parents[1] / "data" / "hostile"
CONFIG = "memory:\n  embeddings:\n    provider: hashing\n"
TENANTS = ("default", "other")
Expect = Literal["reject", "accept"]
# A valid import entry, put before a hostile one so that the error must name line 3.
EXPORT_LINE_2 = json.dumps(
    {
        "type": "record",
        "record": {
            "id": "01J0000000000000000000LIN2",
            "version": 1,
            "body": "a valid imported line",
            "recorded_at": "2026-01-01T00:00:00.000000Z",
            "text_hash": text_hash("a valid imported line"),
        },
    }
)


@dataclass(frozen=True)
class Case:
    """One hostile input; ``id`` is its file and line (or file name) in the corpus."""

    id: str
    family: Literal["ingest", "ingest-file", "import", "import-file", "cli", "markdown", "config"]
    expect: Expect
    text: str = ""  # a line (ingest, import) or nothing
    data: bytes = b""  # a whole file (ingest-file, import-file, markdown, config)
    argv: tuple[str, ...] = ()


def _lines(relative: str) -> Iterator[tuple[int, str]]:
    path = CORPUS / relative
    for number, line in enumerate(path.read_text(encoding="utf-8").split("\n"), start=1):
        if line.strip() and not line.startswith("# "):
            yield number, line


def _files(folder: str, pattern: str = "*") -> Iterator[Path]:
    yield from sorted((CORPUS / folder).glob(pattern))


def _expect_of(name: str) -> Expect:
    return "accept" if name.startswith("accept") else "reject"


def all_cases() -> list[Case]:
    cases: list[Case] = []
    for relative, expect in (
        ("ingest/reject.jsonl", "reject"),
        ("ingest/accept.jsonl", "accept"),
        ("generated/ingest-reject.jsonl", "reject"),
        ("generated/ingest-accept.jsonl", "accept"),
    ):
        cases += [Case(f"{relative}:{n}", "ingest", expect, text=t) for n, t in _lines(relative)]
    for relative, expect in (
        ("import/reject.jsonl", "reject"),
        ("import/accept.jsonl", "accept"),
        ("generated/import-reject.jsonl", "reject"),
        ("generated/import-accept.jsonl", "accept"),
    ):
        cases += [Case(f"{relative}:{n}", "import", expect, text=t) for n, t in _lines(relative)]
    for relative, expect in (
        ("cli/reject.jsonl", "reject"),
        ("cli/accept.jsonl", "accept"),
        ("generated/cli-reject.jsonl", "reject"),
    ):
        for number, text in _lines(relative):
            argv = json.loads(text)
            assert isinstance(argv, list) and all(isinstance(a, str) for a in argv), text
            cases.append(Case(f"{relative}:{number}", "cli", expect, argv=tuple(argv)))
    for family, folder in (("ingest-file", "generated/ingest-files"),
                           ("import-file", "generated/import-files")):  # fmt: skip
        for path in _files(folder):
            cases.append(
                Case(f"{folder}/{path.name}", family, _expect_of(path.name), data=path.read_bytes())  # type: ignore[arg-type]
            )
    for path in _files("markdown", "*.md"):
        # Hostile Markdown may be refused or reported as a conflict: either way, exit 0 or
        # 2 and no traceback; what matters is checked in the runner.
        cases.append(Case(f"markdown/{path.name}", "markdown", "accept", data=path.read_bytes()))
    for path in _files("config", "*.yaml"):
        cases.append(Case(f"config/{path.name}", "config", _expect_of(path.name),
                          data=path.read_bytes()))  # fmt: skip
    return cases


# -- the seeded store --------------------------------------------------------------------


@dataclass
class Seed:
    """A home with memories in two tenants, a forgotten one, a project rule, an episode
    and an application, plus the files the argument vectors refer to."""

    root: Path
    places: dict[str, str] = field(default_factory=dict)
    fingerprint: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Result:
    exit_code: int
    stdout: str
    stderr: str
    exception: BaseException | None  # what escaped ``cairn.cli.main.run``, if anything


def invoke(home: Path, *argv: str, stdin: bytes | None = None) -> Result:
    """``cairn --home HOME ARGV...`` in process, as ``main()`` runs it (through ``run``,
    which turns every error into one line and an exit code)."""
    # CAIRN_HOME also places the internal-error log, so it stays inside the test's folder.
    env: dict[str, str | None] = {"CAIRN_CONFIG": None, "CAIRN_HOME": str(home)}
    escaped: BaseException | None = None
    code = -1
    with CliRunner().isolation(input=stdin, env=env) as (out, err, _):
        try:
            code = run(["--home", str(home), *argv])
        except SystemExit as exit_:
            code = exit_.code if isinstance(exit_.code, int) else 1
        except BaseException as exc:
            escaped = exc
    return Result(
        code,
        out.getvalue().decode("utf-8", "replace"),
        err.getvalue().decode("utf-8", "replace"),
        escaped,
    )


def build_seed(root: Path) -> Seed:
    home = root / "home"
    home.mkdir(parents=True)
    (home / "config.yaml").write_text(CONFIG)
    (root / "scratch").mkdir()
    with Memory.open(
        home / "memory.db", {"memory": {"embeddings": {"provider": "hashing"}}}
    ) as mem:
        alpha = mem.remember("seed alpha memory")
        gone = mem.remember("seed beta memory to forget")
        mem.forget(gone.id)
        mem.store("seed gamma project rule", kind="policy", scope="project",
                  project_id="git:seed", path_patterns=["src/**"])  # fmt: skip
        mem.store("seed delta episode", kind="episode", source={"who": "alice"})
        other = mem.for_tenant("other").remember("seed other tenant secret")
        context = mem.context("seed alpha memory task")
        assert context.applications, "the seed needs an application id"
        app = context.applications[0].application_id
    assert invoke(home, "sync").exit_code == 0  # writes profile.md
    export = invoke(home, "export")
    assert export.exit_code == 0
    (root / "export.jsonl").write_text(export.stdout, encoding="utf-8")
    (root / "valid.jsonl").write_text('{"body": "a valid ingest line"}\n', encoding="utf-8")
    seed = Seed(root)
    seed.places = {
        "{ID}": alpha.id,
        "{id}": alpha.id.lower(),
        "{GONE}": gone.id,
        "{OTHER}": other.id,
        "{APP}": app,
        "{RECORDED}": alpha.recorded_at,
        "{HASH}": alpha.text_hash,
    }
    seed.fingerprint = fingerprint(home)
    return seed


def places_for(seed: Seed, root: Path) -> dict[str, str]:
    return {
        **seed.places,
        "{TMP}": str(root / "scratch"),
        "{FILE}": str(root / "valid.jsonl"),
        "{EXPORT}": str(root / "export.jsonl"),
        "{HOME}": str(root / "home"),
    }


def substitute(text: str, places: dict[str, str]) -> str:
    for key, value in places.items():
        text = text.replace(key, value)
    return text


def copy_seed(seed: Seed, target: Path) -> Path:
    shutil.copytree(seed.root, target)
    return target


def fingerprint(home: Path, tenants: tuple[str, ...] = TENANTS) -> dict[str, Any]:
    """What must not change on a refused input: every tenant's export, and row counts."""
    exports = {}
    for tenant in tenants:
        result = invoke(home, "--tenant", tenant, "export")
        assert result.exit_code == 0, result.stderr
        exports[tenant] = result.stdout
    rows = {}
    db = home / "memory.db"
    if db.is_file():
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        try:
            tables = [
                r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            ]
            for table in sorted(tables):
                rows[table] = conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
        finally:
            conn.close()
    return {"exports": exports, "rows": rows}

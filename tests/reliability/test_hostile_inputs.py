"""Every input of the hostile corpus (tests/data/hostile/) through the CLI and the API.

For each input: no exception escapes and no traceback is printed; the exit code is 0 or 2;
a refused input (exit 2) leaves every tenant's ``cairn export`` byte for byte as it was and
writes no row anywhere; an accepted one leaves a store that still recalls, lists, exports,
re-imports to the same export and syncs its Markdown without change, in every tenant.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from cairn import InvalidInput, Memory, MemoryInput
from cairn.identifiers import check_name
from cairn.validation import parse_json_line
from reliability.hostile_corpus import (
    CONFIG,
    CORPUS,
    EXPORT_LINE_2,
    TENANTS,
    Case,
    Result,
    Seed,
    all_cases,
    build_seed,
    copy_seed,
    fingerprint,
    invoke,
    places_for,
    substitute,
)

CASES = all_cases()
HEADER = json.dumps({"format": "cairn.export.v1", "tenant": "default", "agent": "default"})

# Inputs that still fail for a reason outside validation; each names the defect. Strict, so
# a fix shows up as an unexpected pass and the mark is removed.
KNOWN_DEFECTS: dict[str, str] = {}


def param(case: Case) -> Any:
    marks = (
        [pytest.mark.xfail(reason=KNOWN_DEFECTS[case.id], strict=True)]
        if (case.id in KNOWN_DEFECTS)
        else []
    )
    return pytest.param(case, id=case.id, marks=marks)


@pytest.fixture(scope="module")
def seed(tmp_path_factory: pytest.TempPathFactory) -> Seed:
    return build_seed(tmp_path_factory.mktemp("seed") / "root")


def test_the_corpus_holds_at_least_500_inputs() -> None:
    assert len(CASES) >= 500
    assert len({c.id for c in CASES}) == len(CASES)
    families = {c.family for c in CASES}
    assert families == {"ingest", "ingest-file", "import", "import-file", "cli", "markdown",
                        "config"}  # fmt: skip


def test_the_generated_corpus_is_current(tmp_path: Path) -> None:
    script = CORPUS / "generate.py"
    subprocess.run([sys.executable, str(script), str(tmp_path)], check=True, timeout=120)
    fresh = {p.relative_to(tmp_path): p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    stored_root = CORPUS / "generated"
    stored = {
        p.relative_to(stored_root): p.read_bytes() for p in stored_root.rglob("*") if p.is_file()
    }
    assert sorted(fresh) == sorted(stored), "run tests/data/hostile/generate.py"
    stale = [str(k) for k in fresh if fresh[k] != stored[k]]
    assert not stale, f"stale generated files: {stale}; run tests/data/hostile/generate.py"


# -- the CLI, in process ------------------------------------------------------------------


def assert_clean(result: Result, case: Case) -> None:
    """No exception escaped, no traceback or internal error printed, exit code 0 or 2."""
    if result.exception is not None:
        raise AssertionError(f"{case.id}: {result.exception!r} escaped") from result.exception
    assert "Traceback" not in result.stderr and "Traceback" not in result.stdout
    assert "internal error" not in result.stderr, result.stderr
    assert result.exit_code in (0, 2), (result.exit_code, result.stderr)


def assert_refused(result: Result, root: Path, seed: Seed, line: int | None = None) -> None:
    assert result.exit_code == 2, f"expected exit 2, got {result.exit_code}: {result.stdout!r}"
    error = result.stderr.strip()
    if error.startswith("{"):  # under --json the error is one JSON object
        assert json.loads(error)["code"] == 2, error
    elif error.startswith("cairn: error:"):
        assert "\n" not in error, f"more than one error line: {error!r}"
        if line is not None:
            assert f":{line}: " in error, f"the error does not name line {line}: {error!r}"
    else:  # a usage error from click: "Usage: ... Error: ..."
        assert "Error:" in error, error
    assert error.isprintable() or "\n" in error
    assert fingerprint(root / "home") == seed.fingerprint, "a refused input changed the store"


def assert_usable(
    root: Path,
    seed: Seed | None,
    tenants: tuple[str, ...] = TENANTS,
    written: tuple[str, ...] = (),
    *,
    sync_clean: bool = True,
) -> None:
    """Every tenant still recalls and lists; a tenant the input did not address is exactly
    as it was; the one it wrote to exports, re-imports to the same export and serves a task;
    and a sync of cairn's own Markdown changes nothing."""
    home = root / "home"
    for tenant in dict.fromkeys(tenants):
        for argv in (["recall", "seed memory"], ["list", "--all"]):
            result = invoke(home, "--tenant", tenant, *argv)
            assert result.exit_code == 0, (tenant, argv, result.stderr, result.exception)
        exported = invoke(home, "--tenant", tenant, "export").stdout
        as_seeded = seed is not None and exported == seed.fingerprint["exports"].get(tenant)
        if tenant not in written:
            if seed is not None and tenant in seed.fingerprint["exports"]:
                assert as_seeded, f"tenant {tenant} changed, though the input did not address it"
            continue
        if as_seeded:
            continue  # the seed itself round-trips: test_the_seed_store_is_usable
        result = invoke(home, "--tenant", tenant, "context", "--task", "seed task")
        assert result.exit_code == 0, (tenant, result.stderr, result.exception)
        copy_home = root / f"roundtrip-{tenant}"
        copy_home.mkdir()
        (copy_home / "config.yaml").write_text(CONFIG)
        (root / f"export-{tenant}.jsonl").write_text(exported, encoding="utf-8")
        imported = invoke(
            copy_home, "--tenant", tenant, "import", str(root / f"export-{tenant}.jsonl")
        )
        assert imported.exit_code == 0, (tenant, imported.stderr)
        again = invoke(copy_home, "--tenant", tenant, "export").stdout
        assert again == exported, f"tenant {tenant}: export -> import -> export differs"
    if not sync_clean:
        return  # the Markdown still holds text the user must resolve
    before = fingerprint(home)
    synced = invoke(home, "sync")
    assert synced.exit_code == 0, synced.stderr
    assert fingerprint(home) == before, "sync of cairn's own Markdown changed the store"


def test_the_seed_store_is_usable(seed: Seed, tmp_path: Path) -> None:
    root = copy_seed(seed, tmp_path / "case")
    assert_usable(root, None, TENANTS, TENANTS)


class Workspace:
    """A copy of the seed that refused inputs share: a refusal is verified to change
    nothing, so the next case may run on the same copy. Anything else spoils it."""

    def __init__(self, seed: Seed, base: Path) -> None:
        self.seed = seed
        self.base = base
        self.root: Path | None = None
        self.listing: dict[str, tuple[int, int]] = {}
        self.copies = 0

    def fresh(self) -> Path:
        if self.root is None or _listing(self.root) != self.listing:
            self.copies += 1
            self.root = copy_seed(self.seed, self.base / f"copy-{self.copies}")
            self.listing = _listing(self.root)
        return self.root

    def spoil(self) -> None:
        self.root = None


def _listing(root: Path) -> dict[str, tuple[int, int]]:
    """Every file but the database (whose content the fingerprint compares)."""
    return {
        str(p.relative_to(root)): (p.stat().st_size, p.stat().st_mtime_ns)
        for p in root.rglob("*")
        if p.is_file() and not p.name.startswith("memory.db")
    }


@pytest.fixture(scope="module")
def workspace(seed: Seed, tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    return Workspace(seed, tmp_path_factory.mktemp("workspace"))


def ingest_file(folder: Path, case: Case) -> tuple[Path, int | None]:
    path = folder / "input.jsonl"
    if case.family == "ingest-file":
        path.write_bytes(case.data)
        return path, None
    if case.expect == "reject":  # two good lines first: the third must be named, none stored
        text = '{"body": "good line one"}\n{"body": "good line two"}\n' + case.text + "\n"
        path.write_text(text, encoding="utf-8", errors="surrogatepass")
        return path, 3
    path.write_text(case.text + "\n", encoding="utf-8", errors="surrogatepass")
    return path, None


def import_file(folder: Path, case: Case) -> tuple[Path, int | None]:
    path = folder / "import.jsonl"
    if case.family == "import-file":
        path.write_bytes(case.data)
        return path, None
    if case.expect == "reject":
        text = f"{HEADER}\n{EXPORT_LINE_2}\n{case.text}\n"
        path.write_text(text, encoding="utf-8", errors="surrogatepass")
        return path, 3
    path.write_text(f"{HEADER}\n{case.text}\n", encoding="utf-8", errors="surrogatepass")
    return path, None


def case_argv(case: Case, seed: Seed, root: Path, folder: Path) -> tuple[list[str], int | None]:
    """The argument vector of a case, and the line its error must name (if any)."""
    if case.family in ("ingest", "ingest-file"):
        path, line = ingest_file(folder, case)
        return ["ingest", str(path)], line
    if case.family in ("import", "import-file"):
        path, line = import_file(folder, case)
        return ["import", str(path)], line
    places = places_for(seed, root)
    return [substitute(a, places) for a in case.argv], None


def run_cli_case(
    case: Case, workspace: Workspace, folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seed = workspace.seed
    root = workspace.fresh()
    monkeypatch.chdir(root / "scratch")  # `context` resolves the repository of the cwd
    home = root / "home"
    argv, line = case_argv(case, seed, root, folder)
    try:
        result = invoke(home, *argv)
        assert_clean(result, case)
        if case.expect == "reject":
            assert_refused(result, root, seed, line)
            return
    except BaseException:
        workspace.spoil()
        raise
    workspace.spoil()
    assert result.exit_code == 0, result.stderr
    if case.family == "ingest":
        added = fingerprint(home)["rows"]["records"] - seed.fingerprint["rows"]["records"]
        assert added == 1, f"one line, {added} records"
    tenants = TENANTS
    if "--tenant" in argv[:-1]:
        tenants = (*TENANTS, argv[argv.index("--tenant") + 1])
    tenants = tuple(t for t in dict.fromkeys(tenants) if _valid_tenant(t))
    written = tenants[2:] if len(tenants) > 2 else ("default",)
    assert_usable(root, seed, tenants, written)


def _valid_tenant(name: str) -> bool:
    try:
        check_name("tenant", name)
    except InvalidInput:
        return False
    return True


def _cases(*families: str) -> list[Any]:
    return [param(c) for c in CASES if c.family in families]


@pytest.mark.parametrize("case", _cases("ingest", "ingest-file"))
def test_ingest_through_the_cli(
    case: Case, workspace: Workspace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run_cli_case(case, workspace, tmp_path, monkeypatch)


@pytest.mark.parametrize("case", _cases("import", "import-file"))
def test_import_through_the_cli(
    case: Case, workspace: Workspace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run_cli_case(case, workspace, tmp_path, monkeypatch)


@pytest.mark.parametrize("case", _cases("cli"))
def test_argument_vectors(
    case: Case, workspace: Workspace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run_cli_case(case, workspace, tmp_path, monkeypatch)


@pytest.mark.parametrize("case", _cases("markdown"))
def test_hostile_markdown(
    case: Case, seed: Seed, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A hand-edited profile.md: sync applies it, reports conflicts, or refuses it whole;
    restoring a lost database from it imports it or refuses it whole."""
    root = copy_seed(seed, tmp_path / "case")
    monkeypatch.chdir(root / "scratch")
    data = case.data
    for key, value in places_for(seed, root).items():
        data = data.replace(key.encode(), value.encode())
    (root / "home" / "profile.md").write_bytes(data)
    result = invoke(root / "home", "sync")
    conflict = result.exit_code == 1 and result.stderr.startswith(
        "cairn: error: sync could not apply"
    )
    if conflict:
        # sync's documented exit 1: some text was not applied and is kept in the file at
        # the line printed, the rest is applied. The store must still be whole.
        assert result.exception is None and "internal error" not in result.stderr
        assert_usable(root, seed, TENANTS, ("default",), sync_clean=False)
    else:
        assert_clean(result, case)
        if result.exit_code == 2:
            assert_refused(result, root, seed)
        else:
            assert_usable(root, seed, TENANTS, ("default",))
    fresh = tmp_path / "fresh"
    (fresh / "home").mkdir(parents=True)
    (fresh / "home" / "config.yaml").write_text(CONFIG)
    (fresh / "home" / "profile.md").write_bytes(data)
    restored = invoke(fresh / "home", "rebuild", "--from-markdown")
    assert_clean(restored, case)
    if restored.exit_code == 0:
        # The hostile file stays (it is the user's), so a later sync may still report it.
        assert_usable(fresh, None, ("default",), ("default",), sync_clean=False)
    else:
        assert fingerprint(fresh / "home", ("default",))["rows"].get("records", 0) == 0


@pytest.mark.parametrize("case", _cases("config"))
def test_hostile_config(case: Case, seed: Seed, tmp_path: Path) -> None:
    root = copy_seed(seed, tmp_path / "case")
    config = root / "home" / "config.yaml"
    config.write_bytes(case.data)
    checked = invoke(root / "home", "config", "check", str(config))
    assert_clean(checked, case)
    status = invoke(root / "home", "status")
    assert_clean(status, case)
    if case.id.startswith("config/reject-at-open-"):  # a valid schema naming a bad file
        assert status.exit_code == 2, status.stderr
        assert "\n" not in status.stderr.strip()
    elif case.expect == "reject":
        assert checked.exit_code == 2 and status.exit_code == 2, (checked.stderr, status.stderr)
        assert "\n" not in status.stderr.strip()
        config.write_text(CONFIG)
        assert fingerprint(root / "home") == seed.fingerprint
    else:
        assert checked.exit_code == 0 and status.exit_code == 0, (checked.stderr, status.stderr)


# -- the Python API -------------------------------------------------------------------------

MEMORY_FIELDS = set(MemoryInput.__dataclass_fields__)
STORE_PARAMETERS = MEMORY_FIELDS  # Memory.store(body, kind=..., **fields)
CLI_ONLY_REFUSED: set[str] = set()  # every MemoryInput field may be set by an ingest line


def _loose_json(text: str) -> Any:
    """What a Python caller might hold: the line as the standard library parses it."""
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return None


def _strict_ok(text: str) -> bool:
    try:
        parse_json_line(text, where="x")
    except InvalidInput:
        return False
    return True


def _api_fingerprint(mem: Memory) -> list[str]:
    out = []
    for tenant in TENANTS:
        buffer = io.StringIO()
        mem.for_tenant(tenant).export(buffer)
        out.append(buffer.getvalue())
        out.append(json.dumps(mem.for_tenant(tenant).status().counts, sort_keys=True))
    return out


def _open(root: Path) -> Memory:
    return Memory.open(
        root / "home" / "memory.db", {"memory": {"embeddings": {"provider": "hashing"}}}
    )


def _assert_api_usable(mem: Memory) -> None:
    for tenant in TENANTS:
        bound = mem.for_tenant(tenant)
        bound.recall("seed memory")
        bound.list(include_forgotten=True)
        bound.context("seed task")


@pytest.fixture(scope="module")
def api_baseline(workspace: Workspace) -> list[str]:
    with _open(workspace.fresh()) as mem:
        return _api_fingerprint(mem)


@pytest.mark.parametrize("case", _cases("ingest"))
def test_ingest_lines_through_the_api(
    case: Case, workspace: Workspace, api_baseline: list[str]
) -> None:
    data = _loose_json(case.text)
    if not isinstance(data, dict) or not set(data) <= MEMORY_FIELDS or "body" not in data:
        return  # not something a Python caller can pass as a MemoryInput
    calls = ["store_many", "store"] if set(data) <= STORE_PARAMETERS else ["store_many"]
    for call in calls:
        with _open(workspace.fresh()) as mem:
            try:
                if call == "store_many":
                    mem.store_many([MemoryInput(**data)])
                else:
                    mem.store(**data)
            except InvalidInput:
                if _api_fingerprint(mem) != api_baseline:
                    workspace.spoil()
                    raise AssertionError(f"{call} refused but changed the store") from None
                continue
            except BaseException:
                workspace.spoil()
                raise
            workspace.spoil()
            must_refuse = (
                case.expect == "reject"
                and _strict_ok(case.text)
                and CLI_ONLY_REFUSED.isdisjoint(data)
            )
            assert not must_refuse, f"{call} accepted what the CLI refuses: {case.text[:80]!r}"
            _assert_api_usable(mem)


@pytest.mark.parametrize("case", _cases("import"))
def test_import_lines_through_the_api(
    case: Case, workspace: Workspace, api_baseline: list[str]
) -> None:
    with _open(workspace.fresh()) as mem:
        try:
            mem.import_([HEADER, case.text])
        except InvalidInput:
            if _api_fingerprint(mem) != api_baseline:
                workspace.spoil()
                raise AssertionError("import refused but changed the store") from None
            assert case.expect == "reject" or not _strict_ok(case.text)
            return
        except BaseException:
            workspace.spoil()
            raise
        workspace.spoil()
        assert case.expect == "accept", f"the API imported a hostile entry: {case.text[:80]!r}"
        _assert_api_usable(mem)


# -- a real subprocess, for a sample ----------------------------------------------------------


def _sample() -> list[Any]:
    chosen = [c for c in CASES if c.family == "cli"][::40]
    chosen += [c for c in CASES if c.family == "ingest-file"][::12]
    chosen += [c for c in CASES if c.id.endswith(("reject.jsonl:5", "accept.jsonl:3"))][:4]
    return [param(c) for c in chosen]


def _argv_bytes(argv: list[str]) -> list[bytes] | None:
    try:
        return [os.fsencode(a) for a in argv]
    except UnicodeEncodeError:
        return None  # a lone surrogate outside surrogateescape cannot be an argv byte string


@pytest.mark.slow
@pytest.mark.parametrize("case", _sample())
def test_a_sample_through_a_real_process(case: Case, seed: Seed, tmp_path: Path) -> None:
    root = copy_seed(seed, tmp_path / "case")
    home = root / "home"
    if case.family in ("ingest", "ingest-file"):
        path, _ = ingest_file(root, case)
        argv = ["ingest", str(path)]
    elif case.family in ("import", "import-file"):
        path, _ = import_file(root, case)
        argv = ["import", str(path)]
    else:
        places = places_for(seed, root)
        argv = [substitute(a, places) for a in case.argv]
    encoded = _argv_bytes(["--home", str(home), *argv])
    if encoded is None or any(b"\x00" in a for a in encoded):
        pytest.skip("this argument vector cannot be passed to a real process")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    env.pop("CAIRN_CONFIG", None)
    proc = subprocess.run(
        [os.fsencode(sys.executable), b"-m", b"cairn.cli.main", *encoded],
        capture_output=True, env=env, timeout=300, check=False, cwd=root / "scratch",
    )  # fmt: skip
    stderr = proc.stderr.decode("utf-8", "replace")
    assert "Traceback" not in stderr, stderr
    assert proc.returncode in (0, 2), stderr
    if case.expect == "reject":
        assert proc.returncode == 2, stderr
        assert fingerprint(home) == seed.fingerprint
    else:
        assert proc.returncode == 0, stderr

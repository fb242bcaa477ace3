"""Layering (SPEC §2): dependencies point downward only, and one layer owns all SQL."""

from __future__ import annotations

import ast
from pathlib import Path

import cairn

PACKAGE = Path(cairn.__file__).parent


def imports_of(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
    return found


def modules_under(folder: str) -> list[Path]:
    return sorted((PACKAGE / folder).rglob("*.py"))


def test_engine_never_imports_a_storage_implementation() -> None:
    for path in modules_under("engine"):
        bad = {m for m in imports_of(path) if m.startswith("cairn.storage.sqlite")}
        assert not bad, f"{path.name} imports {bad}: the engine speaks the Store protocol only"


def test_engine_and_storage_never_import_interfaces() -> None:
    for folder in ("engine", "storage", "adapters"):
        for path in modules_under(folder):
            bad = {m for m in imports_of(path) if m.startswith(("cairn.cli", "cairn.memory"))}
            assert not bad, f"{path} imports {bad}"


def test_cli_never_touches_storage_directly() -> None:
    for path in modules_under("cli"):
        bad = {m for m in imports_of(path) if m.startswith("cairn.storage") or m == "sqlite3"}
        assert not bad, f"{path.name} imports {bad}: go through cairn.Memory"


def test_only_storage_runs_sql() -> None:
    for path in PACKAGE.rglob("*.py"):
        if "storage" in path.relative_to(PACKAGE).parts:
            continue
        assert "sqlite3" not in imports_of(path), f"{path} imports sqlite3"


def test_public_api_is_pinned() -> None:
    assert cairn.__all__ == sorted(cairn.__all__, key=str.lower) or cairn.__all__ == sorted(
        cairn.__all__
    )
    assert set(cairn.__all__) == {
        "Application",
        "CairnError",
        "Candidate",
        "Config",
        "ConfigError",
        "Conflict",
        "Event",
        "InvalidInput",
        "Memory",
        "MemoryInput",
        "NotFound",
        "RecallResult",
        "Record",
        "StorageError",
        "Tombstone",
        "__version__",
        "load_config",
    }
    for name in cairn.__all__:
        assert hasattr(cairn, name)
    assert (PACKAGE / "py.typed").exists()

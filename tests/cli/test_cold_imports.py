"""What a cold ``cairn recall`` (no daemon, a new process) imports: only what a recall
needs. The write path, the learning layer, the Markdown projection, PostgreSQL, the server, MCP, the
dashboard and the LLM client are imported on their first use, never by a recall (nor by a
process that opens the engine and reads). A deterministic budget, not a timing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

# packages (and modules) a cold recall must not import, with why each is not needed
NOT_FOR_RECALL = {
    "cairn.provider.learning": "the learning layer's handlers",
    "cairn.services.learning": "the learning layer",
    "cairn.services.reflection": "the learning layer",
    "cairn.services.review": "the learning layer",
    "cairn.services.sweep": "the learning layer",
    "cairn.services.deltas": "the learning layer",
    "cairn.services.llm": "the LLM features",
    "cairn.adapters.llm": "the LLM client",
    "cairn.services.signals": "the prompt signals (and the statement corrections)",
    "cairn.services.writes": "the write path: built on the first write",
    "cairn.services.journal": "the write path",
    "cairn.services.tasks": "the task service (context, expand, feedback)",
    "cairn.services.transfer": "export and import",
    "cairn.services.replay": "a rebuild",
    "cairn.services.secrets": "the secret scanners scrub what is written",
    "cairn.engine.apply": "the journal's events applied to the store",
    "cairn.engine.learning": "the learning layer's rules (the journal's events)",
    "cairn.engine.statements": "the statement reader reads a write's words",
    "cairn.engine.statements.correction": "the statement corrections",
    "cairn.services.markdown": "the Markdown files follow writes, not reads",
    "cairn.projection": "the Markdown projection",
    "cairn.storage.postgres": "a SQLite store",
    "cairn.server": "the HTTP server",
    "cairn.mcp_server": "the MCP server",
    "cairn.dashboard": "the dashboard",
    "cairn.provider.remote": "no remote is configured",
    "psycopg": "PostgreSQL's driver",
    "httpx": "no HTTP at all",
    "mcp": "the MCP library",
    "starlette": "the server's framework",
    "uvicorn": "the server's runner",
}

_RUN = """
import atexit, json, sys
out, argv = sys.argv[1], sys.argv[2:]
atexit.register(lambda: open(out, "w").write(json.dumps(sorted(sys.modules))))
sys.argv = ["cairn", *argv]
from cairn.cli.fast import main
main()
"""


def _loaded(home: Path, out: Path, *argv: str) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    env = {**os.environ, "CAIRN_HOME": str(home)}
    env.pop("CAIRN_CONFIG", None)
    env.pop("CAIRN_DATABASE_URL", None)
    done = subprocess.run(
        [sys.executable, "-c", _RUN, str(out), *argv],
        capture_output=True, text=True, env=env, cwd=home, timeout=120,
    )  # fmt: skip
    return done, set(json.loads(out.read_text(encoding="utf-8")))


def _forbidden(modules: set[str]) -> list[str]:
    return sorted(
        m for m in modules if any(m == p or m.startswith(p + ".") for p in NOT_FOR_RECALL)
    )


def test_a_cold_recall_imports_neither_learning_projection_postgres_nor_the_servers(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.yaml").write_text("memory:\n  embeddings:\n    provider: hashing\n")
    for text in ("We deploy with blue-green releases on Fridays.",
                 "The API runs on PostgreSQL 16 in production."):  # fmt: skip
        assert _loaded(home, tmp_path / "seed.json", "remember", text)[0].returncode == 0
    done, modules = _loaded(home, tmp_path / "recall.json", "recall", "blue-green deploy")
    assert done.returncode == 0, done.stderr
    assert "blue-green releases" in done.stdout  # it did recall, in this very process
    assert "cairn.engine.recall.pipeline" in modules  # the check reads the real process
    assert _forbidden(modules) == []


def test_the_layer_a_recall_leaves_out_is_imported_by_the_command_that_needs_it(
    tmp_path: Path,
) -> None:
    """The budget above is no blind spot: the same process shape imports the learning
    layer for an observation and the projection for a write."""
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.yaml").write_text("memory:\n  embeddings:\n    provider: hashing\n")
    done, modules = _loaded(home, tmp_path / "remember.json", "remember", "Tabs, not spaces.")
    assert done.returncode == 0, done.stderr
    assert {"cairn.services.markdown", "cairn.projection"} <= modules
    assert {"cairn.services.writes", "cairn.services.journal"} <= modules  # the write path
    assert "cairn.services.reflection" not in modules
    done, modules = _loaded(home, tmp_path / "sweep.json", "sweep")
    assert done.returncode == 0, done.stderr
    assert {"cairn.provider.learning", "cairn.services.sweep"} <= modules


_PATTERNS = """
import atexit, json, sys
out, argv = sys.argv[1], sys.argv[2:]
import cairn.embedder_choice as choice, cairn.engine.relative_dates as dates
import cairn.services.languages as languages
kept = {"choice._CJK": choice._CJK, "languages._CJK": languages._CJK,
        "languages._LATIN_WORD": languages._LATIN_WORD, "dates._EN": dates._EN,
        "dates._ZH": dates._ZH}
atexit.register(lambda: open(out, "w").write(json.dumps(
    sorted(name for name, p in kept.items() if getattr(p, "_compiled", p) is not None))))
sys.argv = ["cairn", *argv]
from cairn.cli.fast import main
main()
"""


def test_a_cold_recall_compiles_none_of_the_language_and_date_patterns(tmp_path: Path) -> None:
    """The CJK patterns (~2 ms each to compile) serve the embedder's choice and status,
    the relative dates a write or a query that names one: a recall of a query with no
    date compiles none of them; a write that names one compiles it (the check can fail)."""
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.yaml").write_text("memory:\n  embeddings:\n    provider: hashing\n")
    env = {**os.environ, "CAIRN_HOME": str(home)}
    env.pop("CAIRN_CONFIG", None)
    env.pop("CAIRN_DATABASE_URL", None)

    def compiled(*argv: str) -> list[str]:
        out = tmp_path / "compiled.json"
        done = subprocess.run(
            [sys.executable, "-c", _PATTERNS, str(out), *argv],
            capture_output=True, text=True, env=env, cwd=home, timeout=120,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        found: list[str] = json.loads(out.read_text(encoding="utf-8"))
        return found

    assert compiled("remember", "We moved to blue-green deploys last week.") == ["dates._EN"]
    assert compiled("recall", "blue-green deploy") == []


def test_a_home_without_a_config_file_starts_without_yaml(tmp_path: Path) -> None:
    """PyYAML is imported to read a config file, so a home with none (the default) does
    not import it; one with a file does (the check can fail)."""
    home = tmp_path / "home"
    home.mkdir()
    done, modules = _loaded(home, tmp_path / "bare.json", "status")
    assert done.returncode == 0, done.stderr
    assert "cairn.config" in modules  # the config was resolved, from the defaults
    assert not {m for m in modules if m == "yaml" or m.startswith("yaml.")}
    (home / "config.yaml").write_text("memory:\n  embeddings:\n    provider: hashing\n")
    done, modules = _loaded(home, tmp_path / "filed.json", "status")
    assert done.returncode == 0, done.stderr
    assert {"yaml", "cairn.config_yaml"} <= modules

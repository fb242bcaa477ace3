"""Running the real `cairn` command in tests.

Most tests choose the model-free hashing embedder through the home's config file, so a
subprocess starts in a fraction of a second; tests of the default path pass ``real=True``
(marked slow) and run the real model.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

Runner = Callable[..., subprocess.CompletedProcess[str]]
TEST_CONFIG = "memory:\n  embeddings:\n    provider: hashing\n"


def use_test_embedder(home: Path) -> None:
    home.mkdir(parents=True, exist_ok=True)
    config = home / "config.yaml"
    if not config.exists():
        config.write_text(TEST_CONFIG, encoding="utf-8")


def run_cairn(
    home: Path,
    *args: str,
    stdin: bytes | None = None,
    cwd: Path | None = None,
    real: bool = False,
) -> subprocess.CompletedProcess[str]:
    """Run the real `cairn` command in a subprocess with its own home folder."""
    if not real:
        use_test_embedder(home)
    env = {**os.environ, "CAIRN_HOME": str(home), "PYTHONPATH": os.pathsep.join(sys.path)}
    env.pop("CAIRN_CONFIG", None)
    proc = subprocess.run(
        [sys.executable, "-m", "cairn.cli.main", *args],
        input=stdin,
        capture_output=True,
        env=env,
        timeout=300,
        check=False,
        cwd=cwd,
    )
    return subprocess.CompletedProcess(
        proc.args,
        proc.returncode,
        proc.stdout.decode("utf-8", "replace"),
        proc.stderr.decode("utf-8", "replace"),
    )


def invoke_cairn(
    home: Path,
    *args: str,
    stdin: bytes | None = None,
    cwd: Path | None = None,
    real: bool = False,
) -> subprocess.CompletedProcess[str]:
    """:func:`run_cairn` in this process: the same command line (:func:`cairn.cli.main.run`,
    what the entry point calls), home, working folder, standard input and environment, the
    output and exit code captured alike, without paying Python's start and cairn's imports
    again. For what needs no process boundary; signals, pipes closed by the reader, the
    real entry point and real hosts stay with :func:`run_cairn`."""
    from click.testing import CliRunner

    from cairn.cli.main import run

    if not real:
        use_test_embedder(home)
    env: dict[str, str | None] = {"CAIRN_HOME": str(home), "CAIRN_CONFIG": None}
    before = Path.cwd()
    runner = CliRunner()
    with runner.isolation(input=stdin if stdin is not None else b"", env=env) as streams:
        out, err, _ = streams
        try:
            if cwd is not None:
                os.chdir(cwd)
            code = run(list(args))
        finally:
            os.chdir(before)
            sys.stdout.flush()
            sys.stderr.flush()
    return subprocess.CompletedProcess(
        ["cairn", *args],
        code,
        out.getvalue().decode("utf-8", "replace"),
        err.getvalue().decode("utf-8", "replace"),
    )

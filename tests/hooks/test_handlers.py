"""Where a hook's folder is: the repository, asked of git once a while per folder."""

from __future__ import annotations

import subprocess
from pathlib import Path

from cairn.hooks import handlers


def test_the_repository_is_remembered_for_a_while(tmp_path: Path) -> None:
    folder = tmp_path / "shop"
    folder.mkdir()
    assert handlers.locate(str(folder), now=1000.0).project_id is None  # not a repository
    git = ["git", "-c", "user.email=t@example.org", "-c", "user.name=t"]
    subprocess.run([*git, "init", "-q"], cwd=folder, check=True)
    subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", "i"], cwd=folder, check=True)
    assert handlers.locate(str(folder), now=1010.0).project_id is None  # still the answer
    later = 1000.0 + handlers.LOCATE_TTL_SECONDS + 1
    found = handlers.locate(str(folder), now=later)
    assert found.project_id is not None and found.project_id.startswith("git:")
    assert found.name == "shop"

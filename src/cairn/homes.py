"""Where a user's cairn home is by default. Standard library only: every command (and a
hook through the daemon) needs it before anything else, and must not pay for the config
parser to learn it."""

from __future__ import annotations

import os
from pathlib import Path


def default_home() -> Path:
    """env CAIRN_HOME, else ~/.cairn."""
    return Path(os.environ.get("CAIRN_HOME") or Path.home() / ".cairn")

"""cairn: local-first long-term memory for AI agents.

from cairn import Memory
mem = Memory.open()
mem.remember("Always use pnpm in this repository")
print(mem.recall("install the dependencies").preamble)

The names below are imported on first use, so ``import cairn`` (and every ``cairn``
command that does not open the store) costs nothing beyond Python's own start.
"""

from __future__ import annotations

import sys

__version__ = "0.1.0"

# Not ``from typing import TYPE_CHECKING``: importing typing costs a hook through the daemon
# more than its whole request; mypy takes any name TYPE_CHECKING as true.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from cairn.config import Config, load_config
    from cairn.engine.recall.pipeline import Candidate, RecallResult
    from cairn.errors import (
        CairnError,
        ConfigError,
        Conflict,
        InvalidInput,
        NotFound,
        StorageError,
    )
    from cairn.memory import Memory
    from cairn.model import Application, Event, MemoryInput, Record, Tombstone

# name -> the module that defines it
_LAZY = {
    "Application": "cairn.model",
    "CairnError": "cairn.errors",
    "Candidate": "cairn.engine.recall.pipeline",
    "Config": "cairn.config",
    "ConfigError": "cairn.errors",
    "Conflict": "cairn.errors",
    "Event": "cairn.model",
    "InvalidInput": "cairn.errors",
    "Memory": "cairn.memory",
    "MemoryInput": "cairn.model",
    "NotFound": "cairn.errors",
    "RecallResult": "cairn.engine.recall.pipeline",
    "Record": "cairn.model",
    "StorageError": "cairn.errors",
    "Tombstone": "cairn.model",
    "load_config": "cairn.config",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'cairn' has no attribute {name!r}")
    __import__(module)  # not importlib.import_module: importing importlib costs a hook
    value = getattr(sys.modules[module], name)
    globals()[name] = value  # the next lookup is a plain attribute
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})


__all__ = [
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
]

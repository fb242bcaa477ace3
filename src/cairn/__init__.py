"""cairn: local-first long-term memory for AI agents.

from cairn import Memory
mem = Memory.open()
mem.remember("Always use pnpm in this repository")
print(mem.recall("install the dependencies").preamble)
"""

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

__version__ = "0.1.0"

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

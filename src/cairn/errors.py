"""The exceptions cairn raises.

CairnError                 every error cairn raises on purpose
├── InvalidInput           the caller's input is wrong (CLI exit 2); nothing was changed
│   ├── NotFound           no such record, application or event
│   └── ConfigError        the configuration is wrong; names the dotted path of the bad key
├── Conflict               the request is well-formed but refused by policy
│                          (e.g. an inferred change to an explicit record)
└── StorageError           the database could not do what was asked
    ├── StorageUnavailable the database cannot be reached now (restarting, out of
    │                      connections, a lock not granted in time): try again soon
    └── StoreUnusable      the store's file or disk refuses: nothing was changed, and the
        │                  message says what to do (CLI exit 2)
        ├── DiskFull       the disk holding the store is full
        ├── ReadOnlyStore  the store cannot be written here (reads still work)
        └── DamagedStore   the file is damaged or cut short (``cairn doctor``)
"""

from __future__ import annotations


class CairnError(Exception):
    """Base class of every error cairn raises on purpose."""


class InvalidInput(CairnError):
    """The caller's input is wrong; the store is unchanged."""


class NotFound(InvalidInput):
    """No record (or application, or event) has that id."""


class ConfigError(InvalidInput):
    """The configuration is invalid."""


class Conflict(CairnError):
    """A well-formed request that policy refuses."""


class StorageError(CairnError):
    """The database failed."""


class StorageUnavailable(StorageError):
    """The database cannot answer now; the same request may succeed in a moment.

    ``retryable``: the connection was lost under the unit of work (the server restarted
    or dropped it), so running it once more, on a fresh connection, is what cures it."""

    def __init__(self, message: str, *, retryable: bool = False) -> None:
        super().__init__(message)
        self.retryable = retryable


class StoreUnusable(StorageError):
    """The store's file or disk refuses the request; nothing was changed."""


class DiskFull(StoreUnusable):
    """The disk holding the store is full."""


class ReadOnlyStore(StoreUnusable):
    """The store is read-only here (a read-only file, folder or file system)."""


class DamagedStore(StoreUnusable):
    """The store's file is damaged, cut short or empty."""

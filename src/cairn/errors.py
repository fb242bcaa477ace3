"""The exceptions cairn raises.

CairnError                 every error cairn raises on purpose
├── InvalidInput           the caller's input is wrong (CLI exit 2); nothing was changed
│   ├── NotFound           no such record, application or event
│   └── ConfigError        the configuration is wrong; names the dotted path of the bad key
├── Conflict               the request is well-formed but refused by policy
│                          (e.g. an inferred change to an explicit record)
└── StorageError           the database could not do what was asked
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

"""Structured logs of the server: one JSON object per line on standard error.

Every line has ``ts``, ``level``, ``logger``, ``event`` and ``pid`` (the worker process
of ``--workers`` that wrote it); a request's line adds its
route, operation, status, milliseconds, tenant and token id (never the token, never a
memory's text). uvicorn's and the PostgreSQL driver's messages go through the same
formatter, so a multi-line message is one JSON string, never loose lines.
"""

from __future__ import annotations

import json
import logging
import logging.config
import traceback
from datetime import UTC, datetime
from typing import Any

from cairn.config import redact_url

_STANDARD = frozenset(logging.LogRecord("", 0, "", 0, "", None, None).__dict__) | {"message"}


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "event": redact_url(record.getMessage()),
            "pid": record.process,
        }
        for key, value in record.__dict__.items():
            if key not in _STANDARD and not key.startswith("_") and key not in ("color_message",):
                line[key] = value
        if record.exc_info and record.exc_info[1] is not None:
            exc = record.exc_info[1]
            line["error"] = f"{type(exc).__name__}: {exc}"
            line["traceback"] = "".join(traceback.format_exception(exc))
        return json.dumps(line, ensure_ascii=False, default=str)


def log_config(level: str = "info") -> dict[str, Any]:
    """A ``logging.config.dictConfig`` for cairn's and uvicorn's loggers (uvicorn takes
    it as ``log_config``)."""
    handler = {
        "class": "logging.StreamHandler",
        "formatter": "json",
        "stream": "ext://sys.stderr",
    }
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {"json": {"()": f"{__name__}.JsonFormatter"}},
        "handlers": {"stderr": handler},
        "loggers": {
            "cairn": {"handlers": ["stderr"], "level": level.upper(), "propagate": False},
            "uvicorn": {"handlers": ["stderr"], "level": level.upper(), "propagate": False},
            "uvicorn.error": {"level": level.upper()},
            "uvicorn.access": {"handlers": [], "level": "WARNING", "propagate": False},
            # The driver and its pool (a lost connection, a failed reconnect): the same
            # JSON lines, never the root logger's plain text. Their info lines are chatter.
            "psycopg": {
                "handlers": ["stderr"],
                "level": _at_least_warning(level),
                "propagate": False,
            },
        },
    }


def _at_least_warning(level: str) -> str:
    return "DEBUG" if level.lower() == "debug" else max(level.upper(), "WARNING", key=_rank)


def _rank(name: str) -> int:
    return int(logging.getLevelName(name))


def configure(level: str = "info") -> None:
    logging.config.dictConfig(log_config(level))

"""Checks of what a person points cairn at and feeds it: paths typed on the command line, the
memory file, and JSON lines (strict JSON, strict UTF-8, split on LF only)."""

from __future__ import annotations

import json
import math
from os import PathLike
from pathlib import Path
from typing import Any

from cairn.errors import InvalidInput
from cairn.limits import (
    MAX_JSON_INT,
)
from cairn.validation.text import (
    error_at,
    kind_of,
    shown,
)


def check_path_text(name: str, value: Any) -> str:
    """A path the user typed, before it reaches the file system: text, not empty, no NUL."""
    if not isinstance(value, str) or not value.strip():
        raise InvalidInput(f"{name} is empty: give a path")
    if "\x00" in value:
        raise InvalidInput(f"{name} contains a NUL byte")
    return value


def check_path_or_none(name: str, value: Any) -> None:
    """A path the API is given (str or os.PathLike), or None."""
    if value is None:
        return
    if isinstance(value, PathLike):
        value = str(value)
    if not isinstance(value, str):
        raise InvalidInput(f"{name} must be a path (str or os.PathLike), not {kind_of(value)}")
    check_path_text(name, value)


def check_file_argument(name: str, value: Any, *, dash_ok: bool = True) -> str:
    """A file path the user typed: not empty, no NUL, a name that is not a folder."""
    if not isinstance(value, str) or not value.strip():
        dash = " (or - for standard input)" if dash_ok else ""
        raise InvalidInput(f"{name} is empty: give a file path{dash}")
    if "\x00" in value:
        raise InvalidInput(f"{name} contains a NUL byte")
    if value != "-" and Path(value).name in ("", ".", ".."):
        raise InvalidInput(f"{name} {shown(value)} names a folder, not a file")
    return value


_SQLITE_MAGIC = b"SQLite format 3\x00"


def check_database_path(path: Path) -> Path:
    """The memory file: absent (it is created), empty, or an SQLite database."""
    if "\x00" in str(path):
        raise InvalidInput("the database path contains a NUL byte")
    if path.is_dir():
        raise InvalidInput(f"{path} is a folder, not a cairn database")
    if path.parent.exists() and not path.parent.is_dir():
        raise InvalidInput(f"{path.parent} is a file, not a folder for the database")
    if path.is_symlink() and not path.exists():
        raise InvalidInput(f"{path} is a symbolic link to nothing (or to itself)")
    if path.exists() and not path.is_file():  # a device, a FIFO, a socket
        raise InvalidInput(f"{path} is not a regular file, so not a cairn database")
    if path.is_file():
        try:
            with path.open("rb") as handle:
                head = handle.read(len(_SQLITE_MAGIC))
        except OSError as exc:
            raise InvalidInput(f"{path}: cannot read ({exc.strerror or exc})") from None
        if head and head != _SQLITE_MAGIC:
            raise InvalidInput(f"{path} is not a cairn database (not an SQLite file)")
    return path


# -- JSON lines ------------------------------------------------------------------------


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise InvalidInput(f"the key {shown(key)} appears twice")
        out[key] = value
    return out


def _no_constant(word: str) -> Any:
    raise InvalidInput(f"{word} is not a JSON number")


def _bounded_int(text: str) -> int:
    digits = text.lstrip("-")
    if len(digits) > 19 or abs(number := int(text)) > MAX_JSON_INT:
        raise InvalidInput(f"the integer {shown(text)} is out of range (64 bits)")
    return number


def _finite_float(text: str) -> float:
    number = float(text)
    if not math.isfinite(number):
        raise InvalidInput(f"the number {shown(text)} is out of range")
    return number


def parse_json_line(line: str, *, where: str) -> Any:
    """Strict JSON: no NaN or Infinity, no repeated keys, integers within 64 bits."""
    try:
        return json.loads(
            line,
            object_pairs_hook=_unique_keys,
            parse_constant=_no_constant,
            parse_int=_bounded_int,
            parse_float=_finite_float,
        )
    except InvalidInput as exc:
        raise error_at(where, str(exc)) from None
    except RecursionError:
        raise error_at(where, "nested too deeply") from None
    except ValueError as exc:  # json.JSONDecodeError, and the number parsers
        raise error_at(where, f"not JSON ({str(exc).split(':')[0]})") from None


def split_lines(data: bytes, *, name: str) -> list[str]:
    """JSONL as bytes: strict UTF-8, split on LF only (a CR before it is dropped).

    ``str.splitlines`` would also split inside a JSON string at U+2028, U+0085 and other
    characters JSON allows raw, so it is not used here.
    """
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidInput(f"{name}: not valid UTF-8 text (byte {exc.start})") from None
    return [line[:-1] if line.endswith("\r") else line for line in text.split("\n")]

"""The projection files on disk: which folder a tenant and agent own, reading and
atomically writing a file, and telling whether a file holds purged text.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
import unicodedata
from pathlib import Path
from typing import Any

from cairn.errors import InvalidInput
from cairn.homes import make_private_folder
from cairn.projection.markdown_format import FILE_META
from cairn.projection.markdown_parse import split_lines

__all__ = [
    "PROFILE_FILE",
    "PROJECTS_DIR",
    "TENANTS_DIR",
    "file_header",
    "holds_purged",
    "projection_folder",
    "read_lossy",
    "read_text",
    "relocate_foreign_files",
    "write_if_changed",
]

PROFILE_FILE = "profile.md"
PROJECTS_DIR = "projects"
TENANTS_DIR = "tenants"
DEFAULT_PAIR = ("default", "default")
_PLAIN_NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,62}")
_RESERVED = {"con", "prn", "aux", "nul", *(f"{p}{n}" for p in ("com", "lpt") for n in range(10))}
_WINDOW_LINES = 400  # the longest run of lines searched for a purged body's hash


def projection_folder(home: Path, tenant: str, agent: str) -> Path:
    """Where the files of a tenant and agent live; distinct pairs never share a folder."""
    if (tenant, agent) == DEFAULT_PAIR:
        return home
    return home / TENANTS_DIR / _folder_name(tenant) / _folder_name(agent)


def _folder_name(name: str) -> str:
    if _PLAIN_NAME.fullmatch(name) and name not in _RESERVED:
        return name
    # "~" never occurs in a plain name, so an encoded name cannot equal a plain one; the
    # hash tells apart names that differ only in case or in characters dropped here.
    slug = re.sub(r"[^a-z0-9_-]+", "-", name.lower()).strip("-_")[:40] or "x"
    return f"{slug}~{hashlib.sha256(name.encode('utf-8', 'surrogatepass')).hexdigest()[:16]}"


def relocate_foreign_files(home: Path) -> None:
    """Move files that a cairn before per-pair folders wrote at the top of the home for
    another tenant or agent into that pair's folder, so both can be written again."""
    root = [home / PROFILE_FILE, *sorted((home / PROJECTS_DIR).glob("*.md"))]
    for path in root:
        header = file_header(path) if path.is_file() else None
        if header is None:
            continue
        tenant, agent = header.get("tenant", "default"), header.get("agent", "default")
        if not (isinstance(tenant, str) and isinstance(agent, str) and tenant and agent):
            continue
        if (tenant, agent) == DEFAULT_PAIR:
            continue
        target = projection_folder(home, tenant, agent) / path.relative_to(home)
        if target.exists():
            continue  # both exist: the header check refuses the stray file, loudly
        make_private_folder(target.parent)
        os.replace(path, target)


def file_header(path: Path) -> dict[str, Any] | None:
    """The ``cairn-file`` header of a file, read even when the rest does not parse."""
    # Lossy: a file an editor saved in another encoding is still recognised as ours.
    for line in split_lines(_read_head(path, 20))[:20]:
        if line.startswith(FILE_META) and line.rstrip().endswith("-->"):
            try:
                data = json.loads(line.rstrip()[len(FILE_META) : -3])
                json.dumps(data, ensure_ascii=False).encode("utf-8")  # no lone surrogate
            except (json.JSONDecodeError, RecursionError, UnicodeEncodeError):
                return None
            return data if isinstance(data, dict) else None
    return None


def holds_purged(text: str, ids: set[str], hashes: set[str]) -> bool:
    """True when ``text`` names a purged id, or holds a run of whole lines whose content
    hash is a purged body's (the way any rendered or pasted body is laid out)."""
    if any(record_id in text for record_id in ids):
        return True
    if not hashes:
        return False
    lines = [
        " ".join(unicodedata.normalize("NFKC", line).casefold().split())
        for line in split_lines(text)
    ]
    for start in range(len(lines)):
        if not lines[start]:
            continue
        digest = hashlib.sha256(lines[start].encode("utf-8", "surrogatepass"))
        if digest.hexdigest() in hashes:
            return True
        for line in lines[start + 1 : start + _WINDOW_LINES]:
            if line:
                digest.update(f" {line}".encode("utf-8", "surrogatepass"))
                if digest.copy().hexdigest() in hashes:
                    return True
    return False


def read_text(path: Path) -> str:
    try:
        return path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        raise InvalidInput(f"no such file: {path}") from None
    except UnicodeDecodeError:
        raise InvalidInput(f"{path} is not UTF-8 text") from None


def _read_head(path: Path, lines: int) -> str:
    """The start of a file holding its first ``lines`` lines (all of it when shorter),
    decoded as ``read_lossy`` does: a header is found without reading a long file whole."""
    chunks: list[bytes] = []
    seen = 0
    try:
        with path.open("rb") as file:
            while seen < lines and (chunk := file.read(65536)):
                chunks.append(chunk)
                seen += chunk.count(b"\n")
    except OSError:
        return ""
    return b"".join(chunks).decode("utf-8", "replace")


def read_lossy(path: Path) -> str:
    try:
        return path.read_bytes().decode("utf-8", "replace")
    except OSError:
        return ""


def write_if_changed(path: Path, text: str) -> None:
    """Atomic replace, so a reader (or a crash) never sees half a file; unchanged: no write."""
    data = text.encode("utf-8")
    try:
        if path.read_bytes() == data:
            return
    except FileNotFoundError:
        pass
    make_private_folder(path.parent)  # memory is private
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise

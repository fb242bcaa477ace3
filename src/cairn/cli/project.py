"""The project a command is about: the repository of the working directory by default,
or ``--project PATH|ID`` — a folder inside a repository, or an id cairn already knows."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from cairn.cli.app import App
from cairn.errors import InvalidInput
from cairn.validation import check_path_text

_PROJECT_ID = re.compile(r"(?:git|remote|path):[0-9a-f]{16}")


@dataclass(frozen=True, slots=True)
class Project:
    id: str
    name: str
    root: Path | None  # the worktree when resolved from a folder


def _from_folder(folder: Path) -> Project | None:
    from cairn.adapters.repository import repository_identity

    try:
        identity = repository_identity(folder)
    except ValueError as exc:
        raise InvalidInput(str(exc)) from None
    if identity.kind == "path":
        return None  # not inside a git repository
    return Project(identity.project_id, identity.name, identity.root)


def resolve_project(app: App, value: str | None, *, required: bool = False) -> Project | None:
    """None outside a repository when no project is named (refused when ``required``)."""
    if value is None:
        found = _from_folder(Path.cwd())
        if found is None and required:
            raise InvalidInput(
                "not inside a git repository: run this inside one, or name the project"
                " with --project PATH|ID"
            )
        return found
    check_path_text("--project", value)
    if _PROJECT_ID.fullmatch(value):
        from cairn.provider.contract import ListQuery, RecordsResponse

        listed = app.query(ListQuery, RecordsResponse, project_id=value, include_forgotten=True)
        known = listed.records
        if not known:
            raise InvalidInput(f"unknown project {value}: no memory belongs to it")
        return Project(value, value, None)
    path = Path(value).expanduser()
    if path.exists():
        found = _from_folder(path)
        if found is None:
            raise InvalidInput(f"{value} is not inside a git repository")
        return found
    raise InvalidInput(f"--project {value!r} is neither a folder nor a known project id")


def search_project_id(project: Project | None) -> str:
    """The project a search is limited to: this one, or outside a repository the folder's
    own identity, which no repository's memory carries, so that only global memory (and
    any bound to this very folder) applies there, never every repository's rules."""
    if project is not None:
        return project.id
    from cairn.adapters.repository import repository_identity

    return repository_identity(Path.cwd()).project_id


def relative_paths(project: Project | None, paths: tuple[str, ...]) -> tuple[str, ...]:
    """Task paths relative to the repository root (paths given relative to the cwd)."""
    if not paths:
        return ()
    for p in paths:
        check_path_text("--path", p)
    if project is None or project.root is None:
        return tuple(p for p in paths)
    out = []
    for p in paths:
        target = Path(p) if Path(p).is_absolute() else Path.cwd() / p
        try:
            relative = target.resolve().relative_to(project.root)
        except ValueError:
            raise InvalidInput(f"{p} is outside the repository at {project.root}") from None
        out.append(relative.as_posix())
    return tuple(out)

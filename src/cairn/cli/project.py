"""The project a command is about: the repository of the working directory by default,
or ``--project PATH|NAME|ID`` — a folder inside a repository, the name cairn knows it by
(``app``, ``acme/app``), or its stable id. An unknown one is an error, never a quiet
answer from global memory alone.

A repository resolved from a folder tells the store its readable name (once: the same name
again is a no-op), so every route shows ``app`` beside ``git:f46186c5…``: just before the
command's own request is sent, once that request is built and checked
(:meth:`cairn.provider.client.Client.defer`), so a command refused for bad input records
nothing."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from cairn.cli.app import App
from cairn.errors import InvalidInput
from cairn.identifiers import PROJECT_ID
from cairn.validation import check_path_text


@dataclass(frozen=True, slots=True)
class Project:
    id: str
    name: str
    root: Path | None  # the worktree when resolved from a folder
    remote: str | None = None


def _from_folder(app: App, folder: Path) -> Project | None:
    from cairn.adapters.repository import repository_identity

    try:
        identity = repository_identity(folder)
    except ValueError as exc:
        raise InvalidInput(str(exc)) from None
    if identity.kind == "path":
        return None  # not inside a git repository
    found = Project(identity.project_id, identity.name, identity.root, identity.remote)
    app.client.defer(lambda: tell_name(app, found))
    return found


def tell_name(app: App, project: Project) -> None:
    """Record the repository's readable name (a no-op when the store has it already)."""
    from cairn.provider.contract import projects as pc

    if project_names(app).get(project.id) == project.name:
        return
    app.client.apply(
        pc.NameProjectRequest,
        pc.NameProjectResponse,
        app.client.key("name-project", project.id, project.name, project.remote),
        project_id=project.id,
        name=project.name,
        remote=project.remote,
    )
    app.names_cache = None


def project_names(app: App) -> dict[str, str]:
    """Each named project's readable name by id (read once per command)."""
    from cairn.provider.contract import projects as pc

    if app.names_cache is None:
        listed = app.client.query(pc.ProjectsQuery, pc.ProjectsResponse).projects
        app.names_cache = {p.id: p.name for p in listed}
    return app.names_cache


def _known(app: App, value: str) -> Project:
    """The project the store knows by this name, remote or id (refused when none)."""
    from cairn.provider.contract import projects as pc

    (found,) = app.client.query(pc.ProjectsQuery, pc.ProjectsResponse, find=value).projects
    return Project(found.id, found.name, None, found.remote)


def resolve_project(app: App, value: str | None, *, required: bool = False) -> Project | None:
    """None outside a repository when no project is named (refused when ``required``)."""
    if value is None:
        found = _from_folder(app, Path.cwd())
        if found is None and required:
            raise InvalidInput(
                "not inside a git repository: run this inside one, or name the project"
                " with --project PATH|ID"
            )
        return found
    check_path_text("--project", value)
    path = Path(value).expanduser()
    if not PROJECT_ID.fullmatch(value) and path.exists():
        found = _from_folder(app, path)
        if found is None:
            raise InvalidInput(f"{value} is not inside a git repository")
        return found
    return _known(app, value)


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

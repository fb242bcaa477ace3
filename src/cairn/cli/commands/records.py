"""Managing memories one by one: remember, ingest, list, show, correct, forget, restore."""

from __future__ import annotations

import hashlib
import re
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import click

from cairn.cli.app import App, PathArgument, emit, pass_app, read_text_argument
from cairn.cli.progress import progress_bar
from cairn.cli.project import project_names, resolve_project
from cairn.cli.render import record_detail, record_table
from cairn.errors import InvalidInput
from cairn.limits import MAX_BATCH, MAX_PAGE
from cairn.model import KINDS, STATES, TRUST_LEVELS
from cairn.provider import contract as c
from cairn.validation import check_file_argument, parse_json_line

_KINDS = click.Choice(KINDS)


@click.command()
@click.argument("text")
@click.option(
    "--kind",
    type=_KINDS,
    default=None,
    help="Default: what TEXT's words say inside a repository (a rule: policy), else preference.",
)
@click.option("--trust", type=click.Choice(TRUST_LEVELS), default="learned", show_default=True)
@click.option("--tag", "tags", multiple=True, help="A tag (repeatable).")
@click.option("--title", default=None, help="A short title.")
@click.option("--pin", is_flag=True, help="Pin: never fades, never evicted.")
@click.option("--occurred-at", default=None, help="When it was true or happened (ISO-8601).")
@click.option("--source", default=None, help="Who or what said it (free text).")
@click.option(
    "--scope",
    type=click.Choice(("global", "project")),
    default=None,
    help="project: bind to the repository of the current folder (or --project). Without"
    " it or any selector option, TEXT's own words set them, as for `cairn signal`.",
)
@click.option("--project", "project", default=None, help="A folder in the repository, or its id.")
@click.option("--path", "paths", multiple=True, help="Path glob it applies to (repeatable).")
@click.option("--operation", "operations", multiple=True, help="e.g. edit, commit, deploy.")
@click.option("--phase", "phases", multiple=True, help="e.g. plan, implement, verify.")
@click.option("--task-type", "task_types", multiple=True, help="e.g. bugfix, feature.")
@pass_app
def remember(
    app: App,
    text: str,
    kind: str | None,
    trust: str,
    tags: tuple[str, ...],
    title: str | None,
    pin: bool,
    occurred_at: str | None,
    source: str | None,
    scope: str | None,
    project: str | None,
    paths: tuple[str, ...],
    operations: tuple[str, ...],
    phases: tuple[str, ...],
    task_types: tuple[str, ...],
) -> None:
    """Remember TEXT, stated explicitly by the user (TEXT '-' reads standard input).

    Repeating a live memory of the same scope returns that memory."""
    app.will_embed()
    if project is not None:
        scope = "project"
    # No selector set by hand: inside a repository the statement's words set it ("in this
    # repo", a folder, "when committing"), the same step as every route's.
    by_hand = scope is not None or any((paths, operations, phases, task_types))
    scope = scope or "global"
    found = resolve_project(app, project, required=True) if scope == "project" else None
    here = None if by_hand else resolve_project(app, None)
    body = read_text_argument(text)
    response = app.client.apply(
        c.RememberRequest,
        c.WriteResponse,
        lambda: app.client.key(
            "remember",
            body,
            kind,
            scope,
            found.id if found else None,
            paths,
            operations,
            phases,
            task_types,
            here.id if here is not None else None,
            app.journal_length(),
        ),
        body=body,
        kind=kind,
        trust=trust,
        tags=list(tags),
        title=title,
        pinned=pin,
        occurred_at=occurred_at,
        source={"who": source} if source else None,
        scope=scope,
        project_id=found.id if found else None,
        path_patterns=list(paths),
        operations=list(operations),
        phases=list(phases),
        task_types=list(task_types),
        read_words=here is not None,
        current_project_id=here.id if here is not None else None,
    )
    record = response.record
    if response.duplicate_of:
        said = f"already remembered as {record.id} (nothing added)"
    else:
        said = f"remembered {record.id}" + (f" in project {found.name}" if found else "")
    if response.redacted:
        said += f"; redacted: {', '.join(response.redacted)}"
    emit(app, response.model_dump(), said)


def _line_keys(lines: list[tuple[int, str]], app: App, project_id: str | None) -> list[str]:
    """One stable key per line, from its content (and how often that content came
    before), so a re-run of an interrupted ingest adds only what is missing. In a
    repository the key names it too: "in this repo" in another one is another memory."""
    seen: Counter[str] = Counter()
    keys = []
    where = (project_id,) if project_id is not None else ()
    for _, line in lines:
        digest = hashlib.sha256(line.strip().encode("utf-8", "surrogatepass")).hexdigest()
        seen[digest] += 1
        keys.append(app.client.key("ingest", digest, seen[digest], *where))
    return keys


_ITEM = re.compile(r"item (\d+): (.*)", re.DOTALL)


def _named_by_line(file: str, lines: list[tuple[int, str]], send: Any) -> Any:
    """``send()``; a refusal of "item N" (the write path names items by their place) is
    named by the file's line instead, as the checks of the lines themselves are."""
    try:
        return send()
    except InvalidInput as exc:
        found = _ITEM.fullmatch(str(exc))
        if found is None or not 1 <= int(found[1]) <= len(lines):
            raise
        raise InvalidInput(f"{file}:{lines[int(found[1]) - 1][0]}: {found[2]}") from None


@click.command()
@click.argument("file", type=PathArgument(dir_okay=False, allow_dash=True))
@click.option("--batch-size", type=click.IntRange(1, MAX_BATCH), default=256, show_default=True)
@click.option(
    "--project", "project", default=None, help="The repository the lines speak of (a folder or id)."
)
@pass_app
def ingest(app: App, file: str, batch_size: int, project: str | None) -> None:
    """Bulk-store memories from JSONL: one object per line with at least "body".

    Optional keys: kind, title, tags, trust, occurred_at, source, external_ref, pinned,
    memory_type, scope, project_id, path_patterns, operations, phases, task_types,
    episode_id, position. Each body is read as a statement, as `cairn signal` reads one:
    "in this repository" binds it to the current repository (or --project), a named
    folder becomes a path pattern. Every line is checked before anything is written; all
    lines are then written at once. Running it again on the same file adds only what is
    missing.
    """
    check_file_argument("FILE", file)
    raw = sys.stdin.buffer.read() if file == "-" else Path(file).read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise InvalidInput(f"{file}: not valid UTF-8 text") from None
    lines = [(n, line) for n, line in enumerate(text.split("\n"), start=1) if line.strip()]
    items: list[dict[str, Any]] = []
    for number, line in lines:
        where = f"{file}:{number}"
        data = parse_json_line(line, where=where)
        if not isinstance(data, dict) or "body" not in data:
            raise InvalidInput(f"{where}: expected an object with a body")
        items.append(data)  # checked with the request at the contract, named by its line
    here = resolve_project(app, project)
    here_id = here.id if here is not None else None
    keys = _line_keys(lines, app, here_id)
    with progress_bar(app, "ingesting"):
        response = _named_by_line(
            file,
            lines,
            lambda: app.client.apply(
                c.IngestRequest,
                c.IngestResponse,
                app.client.key("ingest-file", *keys),
                items=items,
                item_keys=keys,
                batch_size=batch_size,
                read_words=True,
                current_project_id=here_id,
            ),
        )
    said = f"stored {response.stored} memories"
    if response.skipped:
        said += f" ({response.skipped} already stored)"
    if response.redacted:
        said += f"; {response.redacted} had a secret redacted"
    emit(app, response.model_dump(), said)


@click.command(name="list")
@click.argument("project_arg", metavar="[PROJECT]", required=False)
@click.option("--project", "project", default=None, help="A folder in a repository, or its id.")
@click.option("--scope", type=click.Choice(("global", "project")), default=None)
@click.option("--kind", "kinds", type=_KINDS, multiple=True, help="Only this kind (repeatable).")
@click.option("--state", "states", type=click.Choice(STATES), multiple=True)
@click.option("--trust", "trust", type=click.Choice(TRUST_LEVELS), multiple=True)
@click.option("--tag", default=None, help="Only memories with this tag.")
@click.option("--all", "include_forgotten", is_flag=True, help="Include forgotten and evicted.")
@click.option("--everywhere", is_flag=True, help="Every project's memories, not only here.")
@click.option("--as-of", default=None, help="What memory said at this time (ISO-8601).")
@click.option("--limit", type=click.IntRange(1, MAX_PAGE), default=None)
@click.option("--wide", is_flag=True, help="Whole bodies (also when output is not a terminal).")
@pass_app
def list_(
    app: App,
    project_arg: str | None,
    project: str | None,
    scope: str | None,
    kinds: tuple[str, ...],
    states: tuple[str, ...],
    trust: tuple[str, ...],
    tag: str | None,
    include_forgotten: bool,
    everywhere: bool,
    as_of: str | None,
    limit: int | None,
    wide: bool,
) -> None:
    """List memories: global ones and this repository's (PROJECT or --project: only that
    project's; --everywhere: all)."""
    named = project_arg or project
    data: dict[str, Any] = {}
    if named is not None:
        found = resolve_project(app, named)
        data.update(project_id=found.id if found else None)
    elif not everywhere and scope != "global":
        here = resolve_project(app, None, required=scope == "project")
        if here is not None:
            data.update(project_id=here.id, with_global=scope is None)
        elif scope is None:
            scope = "global"  # outside any repository: the global memories
    response = app.client.query(
        c.ListQuery,
        c.RecordsResponse,
        scope=scope,
        kinds=list(kinds),
        states=list(states),
        trust=list(trust),
        tag=tag,
        include_forgotten=include_forgotten,
        as_of=as_of,
        limit=limit,
        **data,
    )
    records = [r.model_dump() for r in response.records]
    width = None if wide or not sys.stdout.isatty() else 60
    emit(app, records, lambda: record_table(records, project_names(app), width=width))


@click.command()
@click.argument("record_id")
@click.option("--as-of", default=None, help="The version in force at this time.")
@click.option("--history", is_flag=True, help="Every version, oldest first.")
@pass_app
def show(app: App, record_id: str, as_of: str | None, history: bool) -> None:
    """Show one memory, with its selectors (--history: every version)."""
    if history:
        versions = [
            r.model_dump()
            for r in app.client.query(
                c.HistoryQuery, c.RecordsResponse, record_id=record_id
            ).records
        ]
        names = project_names(app)
        emit(app, versions, lambda: "\n\n".join(record_detail(r, names) for r in versions))
        return
    record = app.client.query(
        c.ShowQuery, c.RecordResponse, record_id=record_id, as_of=as_of
    ).record.model_dump()
    emit(app, record, lambda: record_detail(record, project_names(app)))


def _current(app: App, record_id: str) -> c.RecordModel:
    return app.client.query(c.ShowQuery, c.RecordResponse, record_id=record_id).record


@click.command()
@click.argument("record_id")
@click.argument("text")
@pass_app
def correct(app: App, record_id: str, text: str) -> None:
    """Correct a memory: a new version; the old one is kept as superseded. The same text
    again changes nothing."""
    body = read_text_argument(text)
    current = _current(app, record_id)
    response = app.client.apply(
        c.CorrectRequest,
        c.WriteResponse,
        app.client.key("correct", current.id, current.version, body),
        record_id=current.id,
        text=body,
    )
    record = response.record
    said = (
        f"corrected {record.id} (now version {record.version})"
        if response.changed
        else f"{record.id} already says that (version {record.version}, nothing changed)"
    )
    emit(app, response.model_dump(), said)


def _stone(app: App, record_id: str) -> tuple[str, str | None]:
    stones = app.client.query(c.TombstonesQuery, c.TombstonesResponse).tombstones
    found = next((t for t in stones if t.record_id == record_id), None)
    return (found.removed_at, found.restored_at) if found else ("", None)


@click.command()
@click.argument("record_id")
@click.option("--permanent", is_flag=True, help="Delete the body for good (cannot be undone).")
@pass_app
def forget(app: App, record_id: str, permanent: bool) -> None:
    """Forget a memory (reversible with 'restore' unless --permanent)."""
    current = _current(app, record_id)
    response = app.client.apply(
        c.ForgetRequest,
        c.ForgetResponse,
        app.client.key("forget", current.id, current.version, permanent, *_stone(app, current.id)),
        record_id=current.id,
        permanent=permanent,
    )
    how = "permanently forgot" if permanent else "forgot"
    emit(app, response.model_dump(), f"{how} {response.tombstone.record_id}")


@click.command()
@click.argument("record_id")
@pass_app
def restore(app: App, record_id: str) -> None:
    """Undo a forget."""
    # The tombstone query resolves a prefix (or an application id) to the memory's id,
    # so the idempotency key is the same whichever form the user typed.
    stones = app.client.query(
        c.TombstonesQuery, c.TombstonesResponse, record_id=record_id
    ).tombstones
    wanted = stones[-1].record_id if stones else record_id.strip().upper()
    response = app.client.apply(
        c.RestoreRequest,
        c.WriteResponse,
        app.client.key("restore", wanted, *_stone(app, wanted)),
        record_id=wanted,
    )
    emit(app, response.model_dump(), f"restored {response.record.id}")


COMMANDS = (
    remember,
    ingest,
    list_,
    show,
    correct,
    forget,
    restore,
)

"""Managing memories: remember, ingest, list, show, correct, forget, restore, export,
import, rebuild, sync, journal, status."""

from __future__ import annotations

import hashlib
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import click

from cairn.cli.app import App, PathArgument, emit, pass_app, read_text_argument
from cairn.cli.project import resolve_project
from cairn.cli.render import one_line, record_detail, record_table
from cairn.errors import CairnError, InvalidInput
from cairn.model import KINDS, STATES, TRUST_LEVELS
from cairn.provider import contract as c
from cairn.validation import check_file_argument, parse_json_line, validate_memory_fields

_KINDS = click.Choice(KINDS)


class CommandFailed(CairnError):
    """Part of the work was done and part was not (exit 1)."""


@click.command()
@click.argument("text")
@click.option("--kind", type=_KINDS, default="preference", show_default=True)
@click.option("--trust", type=click.Choice(TRUST_LEVELS), default="learned", show_default=True)
@click.option("--tag", "tags", multiple=True, help="A tag (repeatable).")
@click.option("--title", default=None, help="A short title.")
@click.option("--pin", is_flag=True, help="Pin: never fades, never evicted.")
@click.option("--occurred-at", default=None, help="When it was true or happened (ISO-8601).")
@click.option("--source", default=None, help="Who or what said it (free text).")
@click.option(
    "--scope",
    type=click.Choice(("global", "project")),
    default="global",
    show_default=True,
    help="project: bind to the repository of the current folder (or --project).",
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
    kind: str,
    trust: str,
    tags: tuple[str, ...],
    title: str | None,
    pin: bool,
    occurred_at: str | None,
    source: str | None,
    scope: str,
    project: str | None,
    paths: tuple[str, ...],
    operations: tuple[str, ...],
    phases: tuple[str, ...],
    task_types: tuple[str, ...],
) -> None:
    """Remember TEXT, stated explicitly by the user (TEXT '-' reads standard input).

    Repeating a live memory of the same scope returns that memory."""
    if project is not None:
        scope = "project"
    found = resolve_project(app, project, required=True) if scope == "project" else None
    body = read_text_argument(text)
    response = app.apply(
        c.RememberRequest,
        c.WriteResponse,
        app.key("remember", body, kind, scope, found.id if found else None, paths, operations),
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
    )
    record = response.record
    if response.duplicate_of:
        said = f"already remembered as {record.id} (nothing added)"
    else:
        said = f"remembered {record.id}" + (f" in project {found.name}" if found else "")
    if response.redacted:
        said += f"; redacted: {', '.join(response.redacted)}"
    emit(app, response.model_dump(), said)


def _line_keys(lines: list[tuple[int, str]], app: App) -> list[str]:
    """One stable key per line, from its content (and how often that content came
    before), so a re-run of an interrupted ingest adds only what is missing."""
    seen: Counter[str] = Counter()
    keys = []
    for _, line in lines:
        digest = hashlib.sha256(line.strip().encode("utf-8", "surrogatepass")).hexdigest()
        seen[digest] += 1
        keys.append(app.key("ingest", digest, seen[digest]))
    return keys


@click.command()
@click.argument("file", type=PathArgument(dir_okay=False, allow_dash=True))
@click.option("--batch-size", type=click.IntRange(1, 100_000), default=256, show_default=True)
@pass_app
def ingest(app: App, file: str, batch_size: int) -> None:
    """Bulk-store memories from JSONL: one object per line with at least "body".

    Optional keys: kind, title, tags, trust, occurred_at, source, external_ref, pinned,
    memory_type, scope, project_id, path_patterns, operations, phases, task_types,
    episode_id, position. Every line is checked before anything is written; all lines are
    then written at once. Running it again on the same file adds only what is missing.
    """
    from pydantic import ValidationError

    from cairn.provider.convert import invalid

    check_file_argument("FILE", file)
    raw = sys.stdin.buffer.read() if file == "-" else Path(file).read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise InvalidInput(f"{file}: not valid UTF-8 text") from None
    lines = [(n, line) for n, line in enumerate(text.split("\n"), start=1) if line.strip()]
    limit = app.config().memory.store.maxBodyChars
    items: list[dict[str, Any]] = []
    for number, line in lines:
        where = f"{file}:{number}"
        data = parse_json_line(line, where=where)
        if not isinstance(data, dict) or "body" not in data:
            raise InvalidInput(f"{where}: expected an object with a body")
        validate_memory_fields(data, where=where, max_body_chars=limit)  # names file:line
        try:
            items.append(c.MemoryFields(**data).model_dump())
        except ValidationError as exc:
            raise InvalidInput(f"{where}: {invalid(exc)}") from None
        except TypeError as exc:
            raise InvalidInput(f"{where}: {exc}") from None
    keys = _line_keys(lines, app)
    provider = app.provider()
    with click.progressbar(
        length=len(items),
        label="embedding",
        file=sys.stderr,
        hidden=app.as_json or not sys.stderr.isatty(),
    ) as bar:
        last = [0]

        def progress(done: int, total: int) -> None:
            bar.update(done - last[0])
            last[0] = done

        provider.progress = progress
        try:
            response = app.apply(
                c.IngestRequest,
                c.IngestResponse,
                app.key("ingest-file", *keys),
                items=items,
                item_keys=keys,
                batch_size=batch_size,
            )
        finally:
            provider.progress = None
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
@click.option("--limit", type=click.IntRange(1, 1_000_000), default=None)
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
) -> None:
    """List memories: global ones and this repository's (PROJECT or --project: only that
    project's; --everywhere: all)."""
    named = project_arg or project
    data: dict[str, Any] = {}
    if named is not None:
        found = resolve_project(app, named)
        data.update(project_id=found.id if found else None)
    elif not everywhere and scope != "global":
        here = resolve_project(app, None)
        if here is not None:
            data.update(project_id=here.id, with_global=scope is None)
        elif scope is None:
            scope = "global"  # outside a repository: the global memories
    response = app.query(
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
    emit(app, records, lambda: record_table(records))


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
            for r in app.query(c.HistoryQuery, c.RecordsResponse, record_id=record_id).records
        ]
        emit(app, versions, lambda: "\n\n".join(record_detail(r) for r in versions))
        return
    record = app.query(
        c.ShowQuery, c.RecordResponse, record_id=record_id, as_of=as_of
    ).record.model_dump()
    emit(app, record, lambda: record_detail(record))


def _current(app: App, record_id: str) -> c.RecordModel:
    return app.query(c.ShowQuery, c.RecordResponse, record_id=record_id).record


@click.command()
@click.argument("record_id")
@click.argument("text")
@pass_app
def correct(app: App, record_id: str, text: str) -> None:
    """Correct a memory: a new version; the old one is kept as superseded. The same text
    again changes nothing."""
    body = read_text_argument(text)
    current = _current(app, record_id)
    response = app.apply(
        c.CorrectRequest,
        c.WriteResponse,
        app.key("correct", current.id, current.version, body),
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
    stones = app.query(c.TombstonesQuery, c.TombstonesResponse).tombstones
    found = next((t for t in stones if t.record_id == record_id), None)
    return (found.removed_at, found.restored_at) if found else ("", None)


@click.command()
@click.argument("record_id")
@click.option("--permanent", is_flag=True, help="Delete the body for good (cannot be undone).")
@pass_app
def forget(app: App, record_id: str, permanent: bool) -> None:
    """Forget a memory (reversible with 'restore' unless --permanent)."""
    current = _current(app, record_id)
    response = app.apply(
        c.ForgetRequest,
        c.ForgetResponse,
        app.key("forget", current.id, current.version, permanent, *_stone(app, current.id)),
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
    from cairn.services.reads import record_id_of

    wanted = record_id_of(record_id)
    response = app.apply(
        c.RestoreRequest,
        c.WriteResponse,
        app.key("restore", wanted, *_stone(app, wanted)),
        record_id=wanted,
    )
    emit(app, response.model_dump(), f"restored {response.record.id}")


@click.command()
@click.argument("file", required=False, type=PathArgument(dir_okay=False, allow_dash=True))
@pass_app
def export(app: App, file: str | None) -> None:
    """Export all memories, history and tombstones as JSONL (standard output by default)."""
    if file is not None and file != "-":
        if not Path(file).name:
            raise InvalidInput("export needs a file name")
        check_file_argument("FILE", file)
    lines = app.query(c.ExportQuery, c.ExportResponse).lines
    if file in (None, "-"):
        for line in lines:
            click.echo(line)
        return
    target = Path(file)
    if not target.name:
        raise InvalidInput("export needs a file name")
    partial = target.with_name(target.name + ".partial")
    with partial.open("w", encoding="utf-8") as out:
        out.writelines(line + "\n" for line in lines)
    partial.replace(target)  # never leave half a file under the real name
    data = {"exported": len(lines) - 1, "file": str(target)}
    if app.as_json:
        emit(app, data, "")
    else:
        click.echo(f"exported {len(lines) - 1} entries to {target}", err=True)


@click.command(name="import")
@click.argument("file", type=PathArgument(dir_okay=False, allow_dash=True))
@pass_app
def import_(app: App, file: str) -> None:
    """Import a cairn export (JSONL) as this tenant's own copy. Importing the same file
    twice changes nothing."""
    check_file_argument("FILE", file)
    raw = sys.stdin.buffer.read() if file == "-" else Path(file).read_bytes()
    try:
        lines = raw.decode("utf-8").split("\n")
    except UnicodeDecodeError:
        raise InvalidInput(f"{file}: not valid UTF-8 text") from None
    response = app.apply(
        c.ImportRequest,
        c.ImportResponse,
        app.key("import", hashlib.sha256(raw).hexdigest()),
        lines=lines,
        source=file,
    )
    emit(app, response.model_dump(), f"imported {response.imported} entries")


@click.command()
@click.option(
    "--from-markdown",
    is_flag=True,
    help="Restore records from profile.md and the project files (the database was lost).",
)
@pass_app
def rebuild(app: App, from_markdown: bool) -> None:
    """Re-derive this tenant's records from the journal, atomically (tombstones keep
    forgotten things out)."""
    if from_markdown:
        from cairn.memory import Memory
        from cairn.projection import MarkdownProjection

        mem = Memory(app.provider())
        count = MarkdownProjection.for_memory(app.home, mem).restore_records(mem)
        emit(app, {"restored": count}, f"restored {count} memories from Markdown")
        return
    response = app.apply(c.RebuildRequest, c.RebuildResponse, app.key("rebuild", os_urandom_hex()))
    emit(app, response.model_dump(), f"replayed {response.replayed} events")


def os_urandom_hex() -> str:
    import os

    return os.urandom(8).hex()  # a rebuild is never a retry of another


@click.command()
@pass_app
def sync(app: App) -> None:
    """Apply edits, deletions and new entries made in the Markdown files, then rewrite them.

    Exit 0 when everything was applied; 1 when some text was not (a conflict: the rest is
    applied and the text is kept in the file, at the line printed); 2 when a file cannot be
    read, and then nothing changed."""
    from cairn.memory import Memory
    from cairn.projection import MarkdownProjection

    mem = Memory(app.provider())
    report = MarkdownProjection.for_memory(app.home, mem).sync(mem)
    data = {
        "corrected": list(report.corrected),
        "forgotten": list(report.forgotten),
        "added": list(report.added),
        "unchanged": report.unchanged_count,
        "conflicts": [
            {
                "record_id": x.record_id,
                "path": str(x.path),
                "line": x.line,
                "reason": x.reason,
                "body": x.body,
            }
            for x in report.conflicts
        ],
        "notes": [
            {"record_id": n.record_id, "path": str(n.path), "line": n.line, "message": n.message}
            for n in report.notes
        ],
        "missing_files": [str(p) for p in report.missing_files],
    }
    lines = [
        f"corrected {len(report.corrected)}, forgot {len(report.forgotten)},"
        f" added {len(report.added)}, unchanged {report.unchanged_count}"
    ]
    lines += [f"added {record_id}" for record_id in report.added]
    lines += [
        f"conflict {x.path}:{x.line} {x.record_id or '(new entry)'}: {x.reason}"
        for x in report.conflicts
    ]
    lines += [f"note {n.path}:{n.line} {n.record_id or ''}: {n.message}" for n in report.notes]
    lines += [f"missing {p} (written again; nothing forgotten)" for p in report.missing_files]
    emit(app, data, "\n".join(lines))
    if report.conflicts:
        first = report.conflicts[0]
        more = f" and {len(report.conflicts) - 1} more" if len(report.conflicts) > 1 else ""
        raise CommandFailed(
            f"sync could not apply {first.path}:{first.line} {first.record_id or '(new entry)'}"
            f"{more}; nothing of yours in the files was overwritten"
        )


@click.command()
@click.option("--after", "after_seq", type=click.IntRange(0), default=0, help="After this seq.")
@click.option("--limit", type=click.IntRange(1, 1_000_000), default=None)
@pass_app
def journal(app: App, after_seq: int, limit: int | None) -> None:
    """The journal of this tenant and agent, oldest first."""
    events = app.query(c.JournalQuery, c.JournalResponse, after_seq=after_seq, limit=limit).events
    data = [e.model_dump() for e in events]

    def text() -> str:
        rows = []
        for e in events:
            what = e.payload.get("action") or ""
            target = e.payload.get("record_id") or (e.payload.get("record") or {}).get("id", "")
            rows.append(f"{e.seq:>6}  {e.occurred_at[:19]}  {e.type:<18} {what:<9} {target}")
        return "\n".join(rows) or "(no events)"

    emit(app, data, text)


@click.command()
@pass_app
def status(app: App) -> None:
    """What this store holds, where, and the current project."""
    from cairn.cli.project import resolve_project as here_of

    response = app.provider().status()
    data = response.model_dump()
    project = here_of(app, None)
    data["project"] = {"id": project.id, "name": project.name} if project else None

    def text() -> str:
        counts = response.counts
        here = f"project {project.name} ({project.id})" if project else "no git repository"
        lines = [
            f"cairn {response.version} · {response.provider} · {response.backend}",
            f"  store        {response.location}",
            f"  tenant       {response.tenant}  (agent {response.agent})",
            f"  embedder     {response.embedder}",
            f"  schema       v{response.schema_version}",
            f"  memories     {counts.get('records', 0)} current, {counts.get('versions', 0)}"
            f" versions, {counts.get('tombstones', 0)} forgotten",
            f"  journal      {counts.get('events', 0)} events,"
            f" {counts.get('applications', 0)} applications",
            f"  here         {here}",
        ]
        lines += [f"  warning      {one_line(w, 100)}" for w in response.warnings]
        return "\n".join(lines)

    emit(app, data, text)


COMMANDS = (
    remember,
    ingest,
    list_,
    show,
    correct,
    forget,
    restore,
    export,
    import_,
    rebuild,
    sync,
    journal,
    status,
)

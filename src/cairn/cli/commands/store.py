"""The store as a whole: export, import, rebuild, sync with Markdown, the journal, status."""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path

import click

from cairn.cli.app import App, PathArgument, emit, pass_app
from cairn.cli.progress import progress_bar
from cairn.cli.project import resolve_project
from cairn.cli.render import one_line
from cairn.errors import CairnError, InvalidInput
from cairn.limits import MAX_PAGE
from cairn.provider import contract as c
from cairn.validation import check_file_argument


class CommandFailed(CairnError):
    """Part of the work was done and part was not (exit 1)."""


def _local_markdown(app: App, what: str) -> None:
    """The Markdown files are the embedded store's, in this home (or its daemon's); with
    ``memory.remote`` the server keeps the memory and no file here mirrors it."""
    if app.daemon() is None and app.config().memory.remote.endpoint is not None:
        raise InvalidInput(
            f"{what} works on this home's Markdown files, and with memory.remote the memory"
            " is the server's: no Markdown of it is kept here"
        )


@click.command()
@click.argument("file", required=False, type=PathArgument(dir_okay=False, allow_dash=True))
@pass_app
def export(app: App, file: str | None) -> None:
    """Export all memories, history and tombstones as JSONL (standard output by default)."""
    if file is not None and file != "-":
        if not Path(file).name:
            raise InvalidInput("export needs a file name")
        check_file_argument("FILE", file)
    lines = app.client.query(c.ExportQuery, c.ExportResponse).lines
    if file in (None, "-"):
        for line in lines:
            click.echo(line)
        return
    target = Path(file)
    if not target.name:
        raise InvalidInput("export needs a file name")
    partial = target.with_name(target.name + ".partial")
    # Every memory is in it: private to the user, as the store is.
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.writelines(line + "\n" for line in lines)
    partial.replace(target)  # never leave half a file under the real name
    data = {"exported": len(lines) - 1, "file": str(target)}
    emit(app, data, f"exported {len(lines) - 1} entries to {target}")  # stdout: the data is in FILE


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
    with progress_bar(app, "importing"):
        response = app.client.apply(
            c.ImportRequest,
            c.ImportResponse,
            app.client.key("import", hashlib.sha256(raw).hexdigest()),
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
        _local_markdown(app, "rebuild --from-markdown")
        from cairn.memory import Memory
        from cairn.projection import MarkdownProjection

        mem = Memory(app.provider())
        with progress_bar(app, "restoring"):  # the import of what the files hold
            count = MarkdownProjection.for_memory(app.home, mem).restore_records(mem)
        emit(app, {"restored": count}, f"restored {count} memories from Markdown")
        return
    with progress_bar(app, "rebuilding"):
        key = app.client.key("rebuild", os_urandom_hex())
        response = app.client.apply(c.RebuildRequest, c.RebuildResponse, key)
    emit(app, response.model_dump(), f"replayed {response.replayed} events")


def os_urandom_hex() -> str:
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

    _local_markdown(app, "sync")
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
@click.option("--limit", type=click.IntRange(1, MAX_PAGE), default=None)
@pass_app
def journal(app: App, after_seq: int, limit: int | None) -> None:
    """The journal of this tenant and agent, oldest first."""
    events = app.client.query(
        c.JournalQuery, c.JournalResponse, after_seq=after_seq, limit=limit
    ).events
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
    response = app.provider().status()
    data = response.model_dump()
    # the status warning that the embedder does not read the memories' language names its fix
    language = next((w for w in response.warnings if "cairn reembed --embedder" in w), None)
    data["language_warning"] = language
    project = resolve_project(app, None)
    app.client.flush()  # no request of its own: the repository's name is recorded now
    data["project"] = {"id": project.id, "name": project.name} if project else None

    def text() -> str:
        counts = response.counts
        here = f"project {project.name} ({project.id})" if project else "no git repository"
        lines = [
            f"cairn {response.version} · {response.provider} · {response.backend}",
            f"  store        {response.location}",
            f"  tenant       {response.tenant}  (agent {response.agent})",
            f"  embedder     {response.embedder}{chosen_by(response)}",
            f"  schema       v{response.schema_version}",
            f"  memories     {counts.get('records', 0)} current, {counts.get('versions', 0)}"
            f" versions, {counts.get('tombstones', 0)} forgotten",
            f"  journal      {counts.get('events', 0)} events,"
            f" {counts.get('applications', 0)} applications",
            f"  here         {here}",
        ]
        lines += [f"  warning      {language}"] if language else []  # whole: it names the fix
        lines += [f"  warning      {one_line(w, 100)}" for w in response.warnings if w != language]
        return "\n".join(lines)

    emit(app, data, text)


def chosen_by(response: c.StatusResponse) -> str:
    """`` (chosen by first texts: Chinese or mixed)``: what chose the embedder, and why."""
    if response.embedder_chosen_by is None:
        return ""
    why = f": {response.embedder_reason}" if response.embedder_reason else ""
    return f"  (chosen by {response.embedder_chosen_by}{why})"


COMMANDS = (export, import_, rebuild, sync, journal, status)

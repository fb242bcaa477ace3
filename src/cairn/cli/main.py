"""The ``cairn`` command: a thin layer over ``cairn.Memory``.

Each command parses its arguments, calls one library method and renders the result, as
text or (``--json``) as JSON. Library errors become one line on stderr: exit 2 for bad
input, 1 for anything else. No command leaves a partial write behind, because every
library write is one transaction.
"""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from cairn.adapters.repository import RepositoryIdentity, relative_path, repository_identity
from cairn.config import Config, default_home, load_config, resolve_config
from cairn.errors import CairnError, InvalidInput
from cairn.ids import new_ulid
from cairn.memory import Memory, MemoryInput
from cairn.model import KINDS, TRUST_LEVELS, Record
from cairn.projection import MarkdownProjection
from cairn.provider import ApplyRequest, LocalProvider, QueryRequest
from cairn.tasks import OUTCOMES
from cairn.validation import (
    check_file_argument,
    check_path_text,
    parse_json_line,
    split_lines,
    validate_memory_fields,
)

F = TypeVar("F", bound=Callable[..., Any])
RECORD_KEYS = (
    "id", "version", "body", "title", "kind", "memory_type", "trust", "state", "authority",
    "origin", "scope", "project_id", "tags", "pinned", "occurred_at", "recorded_at",
    "evicted_at", "forgotten_at", "superseded_by", "supersedes", "proof_count", "used_count",
    "ignored_count", "failure_count", "source", "external_ref",
)  # fmt: skip


class Context:
    def __init__(
        self, home: Path, as_json: bool, tenant: str, agent: str, config: str | None
    ) -> None:
        self.home = home
        self.as_json = as_json
        self.tenant = tenant
        self.agent = agent
        self.config_path = config
        self._memory: Memory | None = None
        self._config: Config | None = None
        self.project_names: dict[str, str] = {}

    def provider(self) -> LocalProvider:
        """Personal-memory commands speak the provider contract, so a remote provider can
        take the local one's place without changing them."""
        return LocalProvider(self.memory())

    def projection(self) -> MarkdownProjection:
        return MarkdownProjection(self.home, project_names=self.project_names)

    def refresh_markdown(self) -> None:
        """Regenerate profile.md and the project files after a change."""
        if self._memory is not None:
            self.projection().write_all(self._memory)

    def config(self) -> Config:
        if self._config is None:
            check_path_text("--home", str(self.home))
            if self.config_path is not None:
                check_file_argument("--config", self.config_path, dash_ok=False)
            self._config = resolve_config(self.home, self.config_path)
        return self._config

    def memory(self) -> Memory:
        if self._memory is None:
            config = self.config()
            path = Path(config.memory.store.path or self.home / "memory.db")
            self._memory = Memory.open(path, config, tenant=self.tenant, agent=self.agent)
        return self._memory

    def close(self) -> None:
        if self._memory is not None:
            self._memory.close()


def fail(message: str, code: int = 2) -> None:
    click.echo(f"cairn: error: {message}", err=True)
    sys.exit(code)


def mutates(fn: F) -> F:
    """After a successful change, regenerate the Markdown projection."""

    @functools.wraps(fn)
    def wrapper(ctx: Context, *args: Any, **kwargs: Any) -> Any:
        result = fn(ctx, *args, **kwargs)
        ctx.refresh_markdown()
        return result

    return wrapper  # type: ignore[return-value]


def handles_errors(fn: F) -> F:
    """Turn library errors into one line on stderr; never a traceback for user error."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except InvalidInput as exc:
            fail(str(exc), 2)
        except CairnError as exc:
            fail(str(exc), 1)
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError, PermissionError) as exc:
            fail(f"{exc.strerror or exc}: {exc.filename}", 2)  # a path the user gave
        except OSError as exc:
            fail(f"{exc.strerror or exc}: {exc.filename}" if exc.filename else str(exc), 1)

    return wrapper  # type: ignore[return-value]


def emit(ctx: Context, data: Any, text: str) -> None:
    if ctx.as_json:
        click.echo(json.dumps(data, ensure_ascii=False, indent=2, default=str))
    else:
        click.echo(text)


def record_json(record: Record | dict[str, Any]) -> dict[str, Any]:
    data = record.to_dict() if isinstance(record, Record) else record
    return {k: data.get(k) for k in RECORD_KEYS}


def record_line(record: Record, width: int = 72) -> str:
    body = " ".join(record.body.split())
    if len(body) > width:
        body = body[: width - 1] + "…"
    flags = []
    if record.forgotten_at:
        flags.append("forgotten")
    if record.evicted_at:
        flags.append("evicted")
    if record.pinned:
        flags.append("pinned")
    extra = f" [{', '.join(flags)}]" if flags else ""
    return f"{record.id}  v{record.version}  {record.state:<10} {record.kind:<10} {body}{extra}"


def record_detail(record: Record | dict[str, Any]) -> str:
    data = record.to_dict() if isinstance(record, Record) else record
    lines = [f"{data['id']} (version {data['version']})"]
    for key in RECORD_KEYS[2:]:
        value = data.get(key)
        if value in (None, (), [], {}, "", False, 0):
            continue
        if isinstance(value, list | tuple):
            value = ", ".join(value)
        lines.append(f"  {key:<14} {value}")
    return "\n".join(lines)


def project_of(path: str | None) -> RepositoryIdentity:
    """The repository identity of a folder (the current one by default)."""
    if path is not None:
        check_path_text("--project", path)
    try:
        identity = repository_identity(Path(path or "."))
    except ValueError as exc:
        raise InvalidInput(str(exc)) from None
    current = click.get_current_context(silent=True)
    if current is not None and isinstance(current.obj, Context):
        current.obj.project_names[identity.project_id] = identity.name
    return identity


def read_lines(file: str) -> list[str]:
    """A JSONL file (``-``: standard input) as lines: strict UTF-8, split on LF only."""
    data = sys.stdin.buffer.read() if file == "-" else Path(file).read_bytes()
    return split_lines(data, name=file)


def read_text_argument(text: str) -> str:
    """``-`` reads standard input as strict UTF-8 (for large or binary-unsafe bodies)."""
    if text != "-":
        return text
    data = sys.stdin.buffer.read()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise InvalidInput("standard input is not valid UTF-8 text") from None


pass_ctx = click.make_pass_decorator(Context)


class PathArgument(click.Path):
    """click.Path, but a NUL byte is a usage error rather than a ValueError from os.stat."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str) and "\x00" in value:
            self.fail("the path contains a NUL byte", param, ctx)
        return super().convert(value, param, ctx)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--home",
    type=PathArgument(file_okay=False, path_type=Path),
    envvar="CAIRN_HOME",
    default=None,
    help="Folder holding memory.db and config.yaml (env CAIRN_HOME; default ~/.cairn).",
)
@click.option("--json", "as_json", is_flag=True, help="Machine-readable JSON output.")
@click.option("--tenant", default="default", show_default=True, help="Tenant namespace.")
@click.option("--agent", default="default", show_default=True, help="Agent namespace.")
@click.option(
    "--config", "config_path", default=None, help="Config file (default <home>/config.yaml)."
)
@click.version_option(package_name="cairn-memory")
@click.pass_context
def cli(
    click_ctx: click.Context,
    home: Path | None,
    as_json: bool,
    tenant: str,
    agent: str,
    config_path: str | None,
) -> None:
    """cairn: long-term memory for AI agents, on one local SQLite file."""
    ctx = Context(home or default_home(), as_json, tenant, agent, config_path)
    click_ctx.obj = ctx
    click_ctx.call_on_close(ctx.close)


@cli.command()
@click.argument("text")
@click.option("--kind", type=click.Choice(KINDS), default="preference", show_default=True)
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
@click.option("--project", "project_path", default=None, help="A folder inside the repository.")
@click.option("--path", "paths", multiple=True, help="Path glob it applies to (repeatable).")
@click.option("--operation", "operations", multiple=True, help="e.g. edit, commit, deploy.")
@click.option("--phase", "phases", multiple=True, help="e.g. plan, implement, verify.")
@click.option("--task-type", "task_types", multiple=True, help="e.g. bugfix, feature.")
@pass_ctx
@handles_errors
@mutates
def remember(
    ctx: Context,
    text: str,
    kind: str,
    trust: str,
    tags: tuple[str, ...],
    title: str | None,
    pin: bool,
    occurred_at: str | None,
    source: str | None,
    scope: str,
    project_path: str | None,
    paths: tuple[str, ...],
    operations: tuple[str, ...],
    phases: tuple[str, ...],
    task_types: tuple[str, ...],
) -> None:
    """Remember TEXT, stated explicitly by the user (TEXT '-' reads standard input)."""
    project_id = project_of(project_path).project_id if scope == "project" else None
    response = ctx.provider().apply(
        ApplyRequest(
            mutation="remember",
            idempotency_key=new_ulid(),
            text=read_text_argument(text),
            kind=kind,
            trust=trust,  # type: ignore[arg-type]
            tags=tags,
            title=title,
            pinned=pin,
            occurred_at=occurred_at,
            source={"who": source} if source else None,
            scope=scope,  # type: ignore[arg-type]
            project_id=project_id,
            path_patterns=paths,
            operations=operations,
            phases=phases,
            task_types=task_types,
        )
    )
    record = response.record or {}
    emit(ctx, record_json(record), f"remembered {record['id']}")


@cli.command()
@click.argument("file", type=PathArgument(dir_okay=False, allow_dash=True))
@pass_ctx
@handles_errors
@mutates
def ingest(ctx: Context, file: str) -> None:
    """Bulk-store memories from JSONL: one object per line with at least "body".

    Optional keys: kind, title, tags, trust, occurred_at, source, external_ref, pinned.
    Everything is validated before anything is written.
    """
    check_file_argument("FILE", file)
    allowed = set(MemoryInput.__dataclass_fields__) - {"scope", "project_id", "memory_type"}
    limit = ctx.config().memory.store.maxBodyChars
    items: list[MemoryInput] = []
    for number, line in enumerate(read_lines(file), start=1):
        if not line.strip():
            continue
        where = f"{file}:{number}"
        data = parse_json_line(line, where=where)
        if not isinstance(data, dict) or "body" not in data:
            raise InvalidInput(f"{where}: expected an object with a body")
        unknown = set(data) - allowed
        if unknown:
            raise InvalidInput(f"{where}: unknown key {sorted(unknown)[0]!r}")
        items.append(MemoryInput(**validate_memory_fields(data, where=where, max_body_chars=limit)))
    memory = ctx.memory()
    with click.progressbar(
        length=len(items),
        label="embedding and storing",
        file=sys.stderr,
        hidden=ctx.as_json or not sys.stderr.isatty(),
    ) as bar:
        last = [0]

        def progress(done: int, total: int) -> None:
            bar.update(done - last[0])
            last[0] = done

        records = memory.store_many(items, progress=progress)
    emit(
        ctx,
        {"stored": len(records), "ids": [r.id for r in records]},
        f"stored {len(records)} memories",
    )


@cli.command()
@click.argument("query")
@click.option("--limit", type=int, default=None, help="Max memories (default rag.maxResults).")
@click.option("--max-chars", type=int, default=None, help="Character budget.")
@click.option("--project", "project_id", default=None, help="Project id: global + this project.")
@click.option("--trace", is_flag=True, help="Show every candidate's fate.")
@pass_ctx
@handles_errors
def recall(
    ctx: Context,
    query: str,
    limit: int | None,
    max_chars: int | None,
    project_id: str | None,
    trace: bool,
) -> None:
    """Recall the memories that apply to QUERY and print the preamble."""
    result = ctx.memory().recall(
        query, max_results=limit, max_chars=max_chars, project_id=project_id
    )
    data = {
        "query": result.query,
        "preamble": result.preamble,
        "memories": [
            {
                **record_json(c.record),
                "score": c.score,
                "ranks": c.ranks,
                "factors": c.breakdown.as_dict(),
            }
            for c in result.memories
        ],
        "timings_ms": result.timings_ms,
        "trace": list(result.trace),
    }
    text = result.preamble or "(no memory applies)"
    if trace:
        rows = [
            f"  {t['id']} v{t['version']}  fused {t['fused']:.3f}  final "
            f"{t['factors']['final']:.3f}  ranks {t['ranks']}  {t['fate']}"
            for t in result.trace
        ]
        text += "\n\ntrace:\n" + "\n".join(rows)
    emit(ctx, data, text)


@cli.command(name="list")
@click.argument("project", required=False)
@click.option("--all", "include_forgotten", is_flag=True, help="Include forgotten and evicted.")
@click.option("--as-of", default=None, help="What memory said at this time (ISO-8601).")
@click.option("--limit", type=int, default=None)
@pass_ctx
@handles_errors
def list_(
    ctx: Context,
    project: str | None,
    include_forgotten: bool,
    as_of: str | None,
    limit: int | None,
) -> None:
    """List current memories; PROJECT '.' (or a folder) lists that repository's memory."""
    if project is not None:
        check_path_text("PROJECT", project)
    if project is not None and (project in (".", "..") or Path(project).exists()):
        project = project_of(project).project_id
    records = ctx.memory().list(
        project_id=project, include_forgotten=include_forgotten, as_of=as_of, limit=limit
    )
    emit(
        ctx,
        [record_json(r) for r in records],
        "\n".join(record_line(r) for r in records) or "(no memories)",
    )


@cli.command()
@click.argument("record_id")
@click.option("--as-of", default=None, help="The version in force at this time.")
@click.option("--history", is_flag=True, help="Every version, oldest first.")
@pass_ctx
@handles_errors
def show(ctx: Context, record_id: str, as_of: str | None, history: bool) -> None:
    """Show one memory."""
    memory = ctx.memory()
    if history:
        versions = memory.history(record_id)
        emit(
            ctx, [record_json(r) for r in versions], "\n\n".join(record_detail(r) for r in versions)
        )
        return
    record = memory.get(record_id, as_of=as_of)
    emit(ctx, record_json(record), record_detail(record))


@cli.command()
@click.argument("record_id")
@click.argument("text")
@pass_ctx
@handles_errors
@mutates
def correct(ctx: Context, record_id: str, text: str) -> None:
    """Correct a memory: a new version; the old one is kept as superseded."""
    request = ApplyRequest(
        mutation="correct",
        idempotency_key=new_ulid(),
        record_id=record_id,
        text=read_text_argument(text),
    )
    record = ctx.provider().apply(request).record or {}
    emit(ctx, record_json(record), f"corrected {record['id']} (now version {record['version']})")


@cli.command()
@click.argument("record_id")
@click.option("--permanent", is_flag=True, help="Delete the body for good (cannot be undone).")
@pass_ctx
@handles_errors
@mutates
def forget(ctx: Context, record_id: str, permanent: bool) -> None:
    """Forget a memory (reversible with 'restore' unless --permanent)."""
    request = ApplyRequest(
        mutation="forget", idempotency_key=new_ulid(), record_id=record_id, permanent=permanent
    )
    stone = ctx.provider().apply(request).detail["tombstone"]
    how = "permanently forgot" if permanent else "forgot"
    emit(ctx, stone, f"{how} {stone['record_id']}")


@cli.command()
@click.argument("record_id")
@pass_ctx
@handles_errors
@mutates
def restore(ctx: Context, record_id: str) -> None:
    """Undo a forget."""
    request = ApplyRequest(mutation="restore", idempotency_key=new_ulid(), record_id=record_id)
    record = ctx.provider().apply(request).record or {}
    emit(ctx, record_json(record), f"restored {record['id']}")


@cli.command()
@click.argument("file", required=False, type=PathArgument(dir_okay=False, allow_dash=True))
@pass_ctx
@handles_errors
def export(ctx: Context, file: str | None) -> None:
    """Export all memories, history and tombstones as JSONL (standard output by default)."""
    if file is not None:
        check_file_argument("FILE", file)
    memory = ctx.memory()
    if file in (None, "-"):
        memory.export(sys.stdout)
        return
    target = Path(file)  # type: ignore[arg-type]
    partial = target.with_name(target.name + ".partial")
    with partial.open("w", encoding="utf-8") as out:
        count = memory.export(out)
    partial.replace(target)  # never leave half a file under the real name
    if ctx.as_json:
        emit(ctx, {"exported": count, "file": str(target)}, "")
    else:
        click.echo(f"exported {count} entries to {target}", err=True)


@cli.command(name="import")
@click.argument("file", type=PathArgument(dir_okay=False, allow_dash=True))
@pass_ctx
@handles_errors
@mutates
def import_(ctx: Context, file: str) -> None:
    """Import a cairn export (JSONL). Importing the same file twice changes nothing."""
    check_file_argument("FILE", file)
    count = ctx.memory().import_(read_lines(file), name=file)
    emit(ctx, {"imported": count}, f"imported {count} entries")


@cli.command()
@click.option(
    "--from-markdown",
    is_flag=True,
    help="Restore records from profile.md and the project files (the database was lost).",
)
@pass_ctx
@handles_errors
@mutates
def rebuild(ctx: Context, from_markdown: bool) -> None:
    """Re-derive all records from the journal (tombstones keep forgotten things out)."""
    if from_markdown:
        count = ctx.projection().restore_records(ctx.memory())
        emit(ctx, {"restored": count}, f"restored {count} memories from Markdown")
        return
    count = ctx.memory().rebuild()
    emit(ctx, {"replayed": count}, f"replayed {count} events")


@cli.command()
@pass_ctx
@handles_errors
def sync(ctx: Context) -> None:
    """Apply edits and deletions made in the Markdown files, then rewrite them."""
    report = ctx.projection().sync(ctx.memory())
    data = {
        "corrected": list(report.corrected),
        "forgotten": list(report.forgotten),
        "unchanged": report.unchanged_count,
        "conflicts": [
            {
                "record_id": c.record_id,
                "path": str(c.path),
                "line": c.line,
                "reason": c.reason,
                "body": c.body,
            }
            for c in report.conflicts
        ],
        "missing_files": [str(p) for p in report.missing_files],
    }
    lines = [
        f"corrected {len(report.corrected)}, forgot {len(report.forgotten)},"
        f" unchanged {report.unchanged_count}"
    ]
    lines += [f"conflict {c.path}:{c.line} {c.record_id}: {c.reason}" for c in report.conflicts]
    lines += [f"missing {p} (written again; nothing forgotten)" for p in report.missing_files]
    emit(ctx, data, "\n".join(lines))


@cli.command()
@pass_ctx
@handles_errors
def status(ctx: Context) -> None:
    """Counts, file, schema version and embedder."""
    data = ctx.memory().status()
    emit(ctx, data, "\n".join(f"{k:<15} {v}" for k, v in data.items()))


@cli.command()
@click.option("--task", required=True, help="What the agent is about to do.")
@click.option("--project", "project_path", default=None, help="A folder in the repository.")
@click.option("--path", "paths", multiple=True, help="A file the task touches (repeatable).")
@click.option("--operation", default=None, help="e.g. edit, commit, test, deploy.")
@click.option("--phase", default=None, help="e.g. plan, implement, verify, release.")
@click.option("--task-type", default=None, help="e.g. bugfix, feature, refactor.")
@click.option("--session", default=None, help="Session id, for the journal.")
@pass_ctx
@handles_errors
def context(
    ctx: Context,
    task: str,
    project_path: str | None,
    paths: tuple[str, ...],
    operation: str | None,
    phase: str | None,
    task_type: str | None,
    session: str | None,
) -> None:
    """The memory a task needs: resident rules in full, then a manifest, each with why."""
    identity = project_of(project_path)
    relative = []
    for p in paths:
        check_path_text("--path", p)
        target = Path(p) if Path(p).is_absolute() else Path.cwd() / p
        try:
            relative.append(relative_path(identity, target))
        except ValueError as exc:
            raise InvalidInput(str(exc)) from None
    result = ctx.provider().query(
        QueryRequest(
            view="task",
            text=task,
            project_id=identity.project_id,
            paths=tuple(relative),
            operation=operation,
            phase=phase,
            task_type=task_type,
            session_id=session,
        )
    )
    data = {
        "task": task,
        "project": {"id": identity.project_id, "name": identity.name},
        "resident": list(result.resident),
        "manifest": list(result.manifest),
        "constraints": list(result.constraints),
        "applications": list(result.applications),
    }
    lines = []
    if result.constraints:
        lines.append("For this task only:")
        lines += [f"- {c['text']}" for c in result.constraints]
        lines.append("")
    if result.resident:
        lines.append("Apply these:")
        for item in result.resident:
            lines.append(f"- {' '.join(item['body'].split())}")
            lines.append(
                f"    why: {'; '.join(item['whyApplied'])}  [app {item['application_id']}]"
            )
        lines.append("")
    if result.manifest:
        lines.append("Also relevant (cairn expand ID for the full text):")
        for item in result.manifest:
            lines.append(f"- {item['id']}  {item['summary']}")
            lines.append(
                f"    why: {'; '.join(item['whyApplied'])}  [app {item['application_id']}]"
            )
    emit(ctx, data, "\n".join(lines).rstrip() or "(no memory applies to this task)")


@cli.command()
@click.argument("record_id")
@click.option("--task", default=None, help="The task it is expanded for.")
@pass_ctx
@handles_errors
def expand(ctx: Context, record_id: str, task: str | None) -> None:
    """The full body, sources and verification of one item."""
    response = ctx.provider().query(QueryRequest(view="expand", record_id=record_id, text=task))
    found = response.items[0]
    record = found["record"]
    data = {
        **record_json(record),
        "application_id": found["application_id"],
        "sources": found["sources"],
        "verification": found["verification"],
    }
    text = "\n".join(
        [
            record_detail(record),
            f"  application    {found['application_id']}",
            "  verification   " + ", ".join(f"{k}={v}" for k, v in found["verification"].items()),
        ]
    )
    emit(ctx, data, text)


@cli.command()
@click.argument("application_id")
@click.argument("outcome", type=click.Choice(OUTCOMES))
@pass_ctx
@handles_errors
@mutates
def feedback(ctx: Context, application_id: str, outcome: str) -> None:
    """Report how an applied memory did (updates ranking and lifecycle)."""
    request = ApplyRequest(
        mutation="feedback",
        idempotency_key=new_ulid(),
        application_id=application_id,
        outcome=outcome,
    )
    record = ctx.provider().apply(request).record or {}
    emit(ctx, record_json(record), f"{outcome}: {record['id']} is now {record['state']}")


@cli.command()
@click.argument("text")
@click.option("--scope", type=click.Choice(("global", "project")), default="global")
@click.option("--project", "project_path", default=None, help="A folder in the repository.")
@pass_ctx
@handles_errors
@mutates
def signal(ctx: Context, text: str, scope: str, project_path: str | None) -> None:
    """Classify a user statement: store a rule, return a one-off constraint, or forget."""
    project_id = project_of(project_path).project_id if scope == "project" else None
    result = ctx.memory().signal(read_text_argument(text), project_id=project_id)
    data = {k: v for k, v in result.items() if k not in ("record", "forgotten")}
    if "record" in result:
        data["record"] = record_json(result["record"])
    if "forgotten" in result:
        data["forgotten"] = result["forgotten"].to_dict()
    if result["kind"] == "rule":
        text_out = f"remembered rule {result['record'].id} (cue: {result['cue']})"
    elif result["kind"] == "one-off":
        text_out = f"one-off, not stored: {result['constraint']['text']} (cue: {result['cue']})"
    elif result["kind"] == "forget":
        text_out = f"forgot {result['record'].id}: {result['record'].body}"
    else:
        text_out = "neither a rule nor a one-off instruction: nothing stored"
    emit(ctx, data, text_out)


@cli.command()
@pass_ctx
@handles_errors
def explain(ctx: Context) -> None:
    """Hit rate and outcome value of applied memories."""
    data = ctx.memory().explain()
    rate = "n/a" if data["hit_rate"] is None else f"{data['hit_rate']:.2f}"
    lines = [
        f"applications {data['applications']}, with outcome {data['with_outcome']}, hit rate {rate}"
    ]
    for record_id, row in data["records"].items():
        value = "n/a" if row["value"] is None else f"{row['value']:+.2f}"
        lines.append(
            f"  {record_id}  delivered {row['delivered']}  value {value}  {row['outcomes']}"
        )
    emit(ctx, data, "\n".join(lines))


@cli.group()
def config() -> None:
    """Show or check configuration."""


@config.command(name="show")
@pass_ctx
@handles_errors
def config_show(ctx: Context) -> None:
    """Print the effective configuration (defaults filled in)."""
    import yaml

    data = ctx.config().to_dict()
    emit(ctx, data, yaml.safe_dump(data, sort_keys=False, allow_unicode=True).rstrip())


@config.command(name="check")
@click.argument("file", type=PathArgument(dir_okay=False))
@pass_ctx
@handles_errors
def config_check(ctx: Context, file: str) -> None:
    """Validate a config FILE; exit 2 with the bad key's dotted path if it is wrong."""
    check_file_argument("FILE", file, dash_ok=False)
    load_config(file)
    emit(ctx, {"file": file, "valid": True}, f"{file}: valid")


def main() -> None:
    cli(prog_name="cairn")


if __name__ == "__main__":
    main()

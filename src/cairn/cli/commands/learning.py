"""Learning from outcomes: observe, reflect, sweep, evict/unevict, review, ask.

Each command sends one request through the provider. ``observe`` derives its idempotency
key from the observation itself (or ``--event-id``), so a hook that reports the same
outcome twice records it once.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from cairn.cli.app import App, emit, pass_app
from cairn.cli.project import resolve_project
from cairn.cli.render import one_line
from cairn.errors import InvalidInput
from cairn.identifiers import new_ulid
from cairn.limits import MAX_STEPS
from cairn.model import OBSERVATION_TYPES, OUTCOMES, TRUST_LEVELS
from cairn.provider import contract as c
from cairn.provider.contract import learning as lc

_PROJECT_HELP = "A folder in the repository, or its id (default: the current repository)."


@click.command()
@click.option("--type", "type_", type=click.Choice(OBSERVATION_TYPES), default="episode.completed")
@click.option("--success/--failure", default=None, help="Whether the task succeeded.")
@click.option("--note", default=None, help="What worked (the lesson), in the agent's words.")
@click.option("--task", default=None, help="The task, as stated.")
@click.option("--episode", "episode_id", default=None, help="Episode id (links events).")
@click.option(
    "--session",
    "session_id",
    default=None,
    help="Session id (from the command line outcomes count in no known session).",
)
@click.option("--sender", default=None, help="Who reported it (the command line: the owner).")
@click.option("--sender-trust", type=click.Choice(TRUST_LEVELS), default=None)
@click.option(
    "--content-trust",
    type=click.Choice(TRUST_LEVELS),
    default="learned",
    show_default=True,
    help="Trust of the content the lesson came from (external: never learned from).",
)
@click.option(
    "--deterministic",
    is_flag=True,
    help="Judged by a test run or a verifier (taken only from a hook that saw it run).",
)
@click.option("--command", "command_", default=None, help="The verifying command.")
@click.option("--tool", "tools", multiple=True, help="A tool the run used (repeatable).")
@click.option("--steps", type=click.IntRange(0, MAX_STEPS), default=None)
@click.option("--topic", default=None, help="Name the topic (groups observations).")
@click.option("--kind", type=click.Choice(("skill", "profile", "topic")), default=None)
@click.option("--project", default=None, help=_PROJECT_HELP)
@click.option("--operation", "operations", multiple=True)
@click.option("--phase", "phases", multiple=True)
@click.option("--task-type", "task_types", multiple=True)
@click.option("--path", "path_patterns", multiple=True, help="Path glob it applies to.")
@click.option("--application", "applications", multiple=True, help="A delivery it judges.")
@click.option("--outcome", type=click.Choice(OUTCOMES), default=None, help="context.outcome")
@click.option("--event-id", default=None, help="Idempotency key (default: from the content).")
@pass_app
def observe(
    app: App, /, type_: str, project: str | None, event_id: str | None, **fields: Any
) -> None:
    """Record a task episode or outcome for learning (a duplicate is a no-op)."""
    found = resolve_project(app, project) if project is not None else None
    data: dict[str, Any] = {
        name: list(value) if isinstance(value, tuple) else value for name, value in fields.items()
    }
    data["command"] = data.pop("command_")
    if type_ == "context.outcome":
        if len(data["applications"]) != 1 or data["outcome"] is None:
            raise InvalidInput("a context.outcome takes one --application and an --outcome")
        data["application_id"] = data.pop("applications")[0]
    data["project_id"] = found.id if found else None
    key = event_id or app.client.key("observe", type_, sorted(data.items(), key=lambda kv: kv[0]))
    response = app.client.apply(lc.ObserveRequest, lc.ObserveResponse, key, type=type_, **data)
    if response.duplicate:
        said = f"already observed ({response.event_id}); nothing changed"
    elif not response.kept:
        said = f"not kept: {response.reason}"
    else:
        said = f"observed {response.event_id} (sender trust {response.sender_trust})"
        for t in response.lifecycle:
            said += f"\n  {t['record_id']}: {t['from']} → {t['to']} ({t['reason']})"
        for e in response.evicted:
            said += f"\n  {e['record_id']}: evicted ({e['reason']})"
    emit(app, response.model_dump(), said)


@click.command()
@click.option("--if-due", is_flag=True, help="Only when the last run is older than the interval.")
@pass_app
def reflect(app: App, if_due: bool) -> None:
    """Turn corroborated successes since the cursor into mental-model docs."""
    response = app.client.apply(
        lc.ReflectRequest, lc.ReflectResponse, "cli:reflect:" + new_ulid(), if_due=if_due
    )
    data = response.model_dump()

    def text() -> str:
        if not response.ran:
            return f"reflection did not run: {response.reason}"
        f = response.funnel
        lines = [
            f"admitted {response.admitted}: {f['trajectories']} trajectories, "
            f"{f['candidates']} topics, {f['corroborated']} corroborated "
            f"({f['singleOwnerCorroborated']} by the single owner), widest "
            f"{f['maxClusterCardinality']}"
            + (" — abstained (nothing corroborated)" if response.abstained else "")
        ]
        for d in response.deltas:
            lines.append(f"  {d['op']:<9} {d['target']}  {d['kind']:<7} {d['reason']}")
        for t in response.lifecycle:
            lines.append(f"  {t['record_id']}: {t['from']} → {t['to']} ({t['reason']})")
        if response.merged:
            lines.append(f"  merged {response.merged} near-duplicates")
        return "\n".join(lines)

    emit(app, data, text)


@click.command()
@click.option("--if-due", is_flag=True, help="Only when the last run is older than the interval.")
@pass_app
def sweep(app: App, if_due: bool) -> None:
    """Soft-evict memories idle too long or at the failure floor (pinned, system and
    well-proven memories are exempt; 'unevict' reverses)."""
    response = app.client.apply(
        lc.SweepRequest, lc.SweepResponse, "cli:sweep:" + new_ulid(), if_due=if_due
    )
    if not response.ran:
        said = f"the sweep did not run: {response.reason}"
    else:
        said = f"examined {response.examined}, evicted {len(response.evicted)}"
        said += "".join(
            f"\n  {e['record_id']}  {e['reason']}  failures {e['failure_count']}"
            f"  idle {e['idle_days']:.0f} days"
            for e in response.evicted
        )
    emit(app, response.model_dump(), said)


def _eviction(app: App, record_id: str, mutation: str) -> None:
    current = app.client.query(c.ShowQuery, c.RecordResponse, record_id=record_id).record
    response = app.client.apply(
        c.EvictRequest,
        c.WriteResponse,
        app.client.key(mutation, current.id, current.version, current.evicted_at),
        record_id=current.id,
        mutation=mutation,
    )
    done = "evicted" if mutation == "evict" else "unevicted"
    emit(app, response.model_dump(), f"{done} {response.record.id}")


@click.command()
@click.argument("record_id")
@pass_app
def evict(app: App, record_id: str) -> None:
    """Soft-evict a memory: out of recall, still inspectable ('unevict' reverses)."""
    _eviction(app, record_id, "evict")


@click.command()
@click.argument("record_id")
@pass_app
def unevict(app: App, record_id: str) -> None:
    """Take a memory back from eviction (the sweep will not evict it again for the
    failures it has now)."""
    _eviction(app, record_id, "unevict")


def _pinning(app: App, record_id: str, mutation: str) -> None:
    current = app.client.query(c.ShowQuery, c.RecordResponse, record_id=record_id).record
    response = app.client.apply(
        c.PinRequest,
        c.WriteResponse,
        app.client.key(mutation, current.id, current.version, current.pinned),
        record_id=current.id,
        mutation=mutation,
    )
    emit(app, response.model_dump(), f"{mutation}ned {response.record.id}")


@click.command()
@click.argument("record_id")
@pass_app
def pin(app: App, record_id: str) -> None:
    """Pin a memory: it never fades and is never evicted. Pinning your own rule that
    outcomes keep failing keeps it as it is ('unpin' reverses)."""
    _pinning(app, record_id, "pin")


@click.command()
@click.argument("record_id")
@pass_app
def unpin(app: App, record_id: str) -> None:
    """Unpin a memory."""
    _pinning(app, record_id, "unpin")


@click.command()
@click.argument("transcript", type=click.Path(dir_okay=False, allow_dash=True))
@click.option(
    "--format",
    "fmt",
    type=click.Choice(("auto", "claude-jsonl", "messages")),
    default="auto",
    show_default=True,
)
@click.option("--project", default=None, help=_PROJECT_HELP)
@pass_app
def review(app: App, transcript: str, fmt: str, project: str | None) -> None:
    """Store the facts and rules the user stated in TRANSCRIPT: a Claude Code session
    (JSONL) or a list of {role, content} messages ('-' reads standard input). Only the
    user's own statements are taken; one-offs, forgets and corrections are skipped."""
    raw = sys.stdin.buffer.read() if transcript == "-" else Path(transcript).read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise InvalidInput(f"{transcript}: not valid UTF-8 text") from None
    found = resolve_project(app, project)
    response = app.client.apply(
        lc.ReviewRequest,
        lc.ReviewResponse,
        app.client.key("review", text, found.id if found else None),
        transcript=text,
        format=fmt,
        project_id=found.id if found else None,
    )
    from cairn.hooks.learned import note

    note(app.home / "hooks" / "sessions", "review", response.stored)  # told at session start

    def said() -> str:
        if response.reason:
            return f"nothing stored: {response.reason}"
        lines = [
            f"{len(response.stored)} stored from {response.user_turns} user turns"
            f" ({response.turns} turns){' with the LLM' if response.llm else ''}"
        ]
        lines += [f"  + {r.id}  {r.kind:<10} {one_line(r.body, 70)}" for r in response.stored]
        lines += [f"  - {one_line(s['text'], 60)}  ({s['reason']})" for s in response.skipped]
        return "\n".join(lines)

    emit(app, response.model_dump(), said)


@click.command()
@click.argument("question")
@click.option("--project", default=None, help=_PROJECT_HELP)
@pass_app
def ask(app: App, question: str, project: str | None) -> None:
    """Answer QUESTION from memory, citing memory ids (or say memory has no answer)."""
    found = resolve_project(app, project)
    response = app.client.query(
        lc.AskQuery,
        lc.AskResponse,
        question=question,
        project_id=found.id if found else None,
    )
    app.warnings += response.warnings
    emit(app, response.model_dump(), response.answer)
    if not response.answered:
        raise click.exceptions.Exit(1)


def telemetry_lines(app: App) -> tuple[dict[str, Any], list[str]]:
    """Counters and the last runs of every agent of the tenant, for ``explain``."""
    data = app.client.query(lc.TelemetryQuery, lc.TelemetryResponse, all_agents=True).model_dump()
    lines: list[str] = []
    if data["llm_features"]:
        lines.append(f"LLM features active: {', '.join(data['llm_features'])}")
    for agent, block in sorted(data["agents"].items()):
        counters = block["counters"]
        lines.append(f"agent {agent}:")
        shown = {k: v for k, v in counters.items() if not k.startswith("recall:")}
        if shown:
            lines.append("  " + ", ".join(f"{k} {v:g}" for k, v in sorted(shown.items())))
        calls = counters.get("recall:calls", 0)
        if calls:
            stages = {
                k.removeprefix("recall:ms:"): v / calls
                for k, v in counters.items()
                if k.startswith("recall:ms:")
            }
            lines.append(
                f"  recall {calls:g} calls, mean ms by stage: "
                + ", ".join(f"{k} {v:.2f}" for k, v in sorted(stages.items()))
            )
        for run in block["runs"]:
            if run["type"] == "learning.reflected":
                f = run["funnel"]
                lines.append(
                    f"  reflect {run['at']}: admitted {run['admitted']}, "
                    f"{f['candidates']} topics, {f['corroborated']} corroborated, "
                    f"{f['singleOwnerCorroborated']} single-owner, widest "
                    f"{f['maxClusterCardinality']}{', abstained' if f['abstained'] else ''}"
                )
            else:
                lines.append(
                    f"  sweep   {run['at']}: examined {run['examined']}, evicted {run['evicted']}"
                )
    return data, lines


COMMANDS = (observe, reflect, sweep, evict, unevict, pin, unpin, review, ask)

"""Memory for the task at hand: recall, context, expand, feedback, signal, explain."""

from __future__ import annotations

from typing import Any

import click

from cairn.cli.app import App, emit, pass_app, read_text_argument
from cairn.cli.project import relative_paths, resolve_project, search_project_id
from cairn.cli.render import one_line
from cairn.limits import MAX_PAGE
from cairn.model import OUTCOMES, TRUST_LEVELS
from cairn.provider import contract as c

_PROJECT_HELP = "A folder in the repository, or its id (default: the current repository)."


@click.command()
@click.argument("query")
@click.option("--limit", type=click.IntRange(1, 1000), default=None, help="Max memories.")
@click.option("--max-chars", type=click.IntRange(1, MAX_PAGE), default=None, help="Budget.")
@click.option("--project", default=None, help=_PROJECT_HELP)
@click.option(
    "--include-trust",
    type=click.Choice(TRUST_LEVELS),
    multiple=True,
    help="Trust levels admitted (default: the agent's includeTrustLevels).",
)
@click.option("--trace", is_flag=True, help="Show every candidate's fate.")
@click.option("--as-of", default=None, help="As memory stood at this time (ISO-8601).")
@pass_app
def recall(
    app: App,
    query: str,
    limit: int | None,
    max_chars: int | None,
    project: str | None,
    include_trust: tuple[str, ...],
    trace: bool,
    as_of: str | None,
) -> None:
    """Recall the memories that apply to QUERY (global ones and the current repository's)
    and print the preamble."""
    app.will_embed()
    found = resolve_project(app, project)
    response = app.client.query(
        c.RecallQuery,
        c.RecallResponse,
        query=query,
        max_results=limit,
        max_chars=max_chars,
        project_id=search_project_id(found),
        include_trust=list(include_trust) or None,
        as_of=as_of,
    )
    data: dict[str, Any] = {
        "query": response.query,
        "project": {"id": found.id, "name": found.name} if found else None,
        "preamble": response.preamble,
        "memories": [
            {
                **m.record.model_dump(),
                "score": m.score,
                "relevance": m.relevance.model_dump(),
                "ranks": m.ranks,
                "factors": m.factors,
            }
            for m in response.memories
        ],
        "timings_ms": response.timings_ms,
        "failures": response.failures,
        "trace": response.trace,
    }

    def text() -> str:
        out = response.preamble or "(no memory applies)"
        if trace:
            rows = [
                f"  {t['id']} v{t['version']}  fused {t['fused']:.3f}  final "
                f"{t['factors']['final']:.3f}  relevance {t['relevance']['score']:.3f}"
                f"  ranks {t['ranks']}  {t['fate']}"
                for t in response.trace
            ]
            out += "\n\ntrace:\n" + ("\n".join(rows) or "  (no candidates)")
        for lane, why in response.failures.items():
            out += f"\n(the {lane} lane failed: {why})"
        return out

    emit(app, data, text)


@click.command()
@click.option("--task", required=True, help="What the agent is about to do.")
@click.option("--project", default=None, help=_PROJECT_HELP)
@click.option("--path", "paths", multiple=True, help="A file the task touches (repeatable).")
@click.option("--operation", default=None, help="e.g. edit, commit, test, deploy.")
@click.option("--phase", default=None, help="e.g. plan, implement, verify, release.")
@click.option("--task-type", default=None, help="e.g. bugfix, feature, refactor.")
@click.option("--session", default=None, help="Session id, for the journal.")
@pass_app
def context(
    app: App,
    task: str,
    project: str | None,
    paths: tuple[str, ...],
    operation: str | None,
    phase: str | None,
    task_type: str | None,
    session: str | None,
) -> None:
    """The memory a task needs: resident rules in full, then a manifest, each with why."""
    app.will_embed()
    found = resolve_project(app, project)
    response = app.client.query(
        c.TaskQuery,
        c.TaskResponse,
        task=task,
        project_id=found.id if found else None,
        paths=list(relative_paths(found, paths)),
        operation=operation,
        phase=phase,
        task_type=task_type,
        session_id=session,
    )
    data = {
        **response.model_dump(exclude={"contract", "view"}),
        "project": {"id": found.id, "name": found.name} if found else None,
    }

    where = f"project {found.name} ({found.id})" if found else "global memory only"
    text = response.text or "(no memory applies to this task)"
    emit(app, data, f"{where}\n{text}")


@click.command()
@click.argument("record_id")
@click.option("--task", default=None, help="The task it is expanded for.")
@pass_app
def expand(app: App, record_id: str, task: str | None) -> None:
    """The full body, sources and verification of one item (recorded as an application)."""
    from cairn.cli.render import record_detail

    response = app.client.query(c.ExpandQuery, c.ExpandResponse, record_id=record_id, task=task)
    data = response.model_dump(exclude={"contract", "view"})
    record = response.record.model_dump()
    text = "\n".join(
        [
            record_detail(record),
            f"  application    {response.application_id}",
            "  verification   " + ", ".join(f"{k}={v}" for k, v in response.verification.items()),
        ]
    )
    emit(app, data, text)


@click.command()
@click.argument("application_id")
@click.argument("outcome", type=click.Choice(OUTCOMES))
@pass_app
def feedback(app: App, application_id: str, outcome: str) -> None:
    """Report how an applied memory did. One outcome per application: the same one again
    changes nothing, a different one replaces it."""
    response = app.client.apply(
        c.FeedbackRequest,
        c.FeedbackResponse,
        lambda: app.client.key(
            "feedback", application_id.strip().upper(), outcome, app.journal_length()
        ),
        application_id=application_id,
        outcome=outcome,
    )
    record = response.record
    if not response.changes:
        said = f"{outcome}: already recorded for {response.application_id}; nothing changed"
    else:
        changed = ", ".join(f"{k} {a}→{b}" for k, (a, b) in response.changes.items())
        replaced = f" (replaces {response.previous})" if response.previous else ""
        said = f"{outcome}{replaced}: {record.id} {changed}"
    emit(app, response.model_dump(), said)


@click.command()
@click.argument("text")
@click.option("--project", default=None, help=_PROJECT_HELP)
@click.option(
    "--as",
    "store_as",
    type=click.Choice(("rule", "preference", "fact")),
    default=None,
    help="Store the statement as this, whatever the reading.",
)
@click.option(
    "--scope",
    type=click.Choice(("project", "global")),
    default=None,
    help="Where a rule applies: this repository, or every project.",
)
@pass_app
def signal(
    app: App, text: str, project: str | None, store_as: str | None, scope: str | None
) -> None:
    """Classify a user statement and act on it: a lasting rule is remembered in the scope
    its words say, a one-off is returned for this task, a forget or correction acts only on
    a clear match (exit 2 and the candidates when there is none, or several). A statement
    the reader is unsure of stores nothing: exit 2 and how to store it (--as, --scope)."""
    app.will_embed()
    statement = read_text_argument(text)
    found = resolve_project(app, project)
    response = app.client.apply(
        c.SignalRequest,
        c.SignalResponse,
        lambda: app.client.key(
            "signal",
            statement,
            found.id if found else None,
            store_as,
            scope,
            app.journal_length(),
        ),
        text=statement,
        project_id=found.id if found else None,
        store_as=store_as,
        scope=scope,
    )
    data = response.model_dump()
    said = signal_report(response, statement, in_repository=found is not None)
    emit(app, data, said if not (app.as_json and response.outcome in _NOTHING_DONE) else "")
    if response.outcome in _NOTHING_DONE:
        raise click.exceptions.Exit(2)


# Outcomes that changed nothing although the statement asked for something: exit 2.
_NOTHING_DONE = ("no-match", "ambiguous", "unplaced", "unsure")


def signal_report(response: c.SignalResponse, statement: str, *, in_repository: bool) -> str:
    """What `cairn signal` did, in words."""
    record = response.record
    outcome = response.outcome
    if outcome in ("no-match", "ambiguous", "unplaced"):
        verb = "forgotten" if response.kind == "forget" else "corrected"
        command = "forget ID" if response.kind == "forget" else "correct ID TEXT"
        if outcome == "ambiguous":
            said = f"several memories match; name one by id (cairn {command}):"
        elif outcome == "unplaced":
            said = (
                "the memory it matches does not say what to replace; say it whole"
                f" (cairn {command}):"
            )
        else:
            said = f"no memory clearly matches {response.statement!r}" + (
                f"; the closest (cairn {command}):" if response.candidates else ""
            )
        lines = [f"nothing {verb}: {said}"]
        lines += [
            f"  {m.record.id}  {one_line(m.record.body, 70)}  (words {m.coverage:.0%},"
            f" meaning {m.cosine:.2f})"
            for m in response.candidates
        ]
        return "\n".join(lines)
    if outcome == "unsure":
        where = "--scope project|global" if in_repository else "--scope global"
        return (
            "nothing stored: not sure this is meant to be kept. To keep it, say how:\n"
            f"  cairn signal --as rule|preference|fact [{where}] {shell_quote(statement)}"
        )
    if outcome in ("stored", "duplicate") and record is not None:
        from cairn.cli.render import selector_summary

        if outcome == "duplicate":
            return f"already remembered as {record.id}; nothing added"
        where = "this repository" if record.scope == "project" else "every project (global)"
        why = {
            "unstated": "said in this repository without a scope word",
            "personal": "your own habit or taste",
        }.get(response.scope_source or "", "")
        other = "global" if record.scope == "project" else "project"
        change = (
            f"; for {'every project' if other == 'global' else 'this repository only'}:"
            f" cairn forget {record.id} && cairn signal --scope {other} ..."
            if why and (other == "global" or in_repository)
            else ""
        )
        scope_note = f"\n  scope: {where} ({why}{change})" if why else ""
        return (
            f"remembered {record.kind} {record.id} for {where}"
            f"{selector_summary(record.model_dump())} (cue: {response.cue}){scope_note}"
        )
    if outcome == "constraint":
        return f"one-off, not stored: {response.constraint} (cue: {response.cue})"
    if outcome == "forgotten" and record is not None:
        return f"forgot {record.id}: {one_line(record.body, 80)}"
    if outcome == "corrected" and record is not None:
        lines = [
            f"corrected {record.id} (now version {record.version}): {one_line(record.body, 80)}"
        ]
        if response.previous is not None:
            lines += [f"  was: {response.previous}", f"  now: {record.body}"]
        return "\n".join(lines)
    return "neither a rule nor a one-off instruction: nothing stored"


def shell_quote(text: str) -> str:
    import shlex

    return shlex.quote(text)


@click.command()
@pass_app
def explain(app: App) -> None:
    """Hit rate and outcome value of applied memories; learning telemetry (counts only)
    and the last reflection and sweep runs, per agent."""
    from cairn.cli.commands.learning import telemetry_lines

    data = app.client.query(c.ExplainQuery, c.ExplainResponse).model_dump(
        exclude={"contract", "view"}
    )
    data["telemetry"], learned = telemetry_lines(app)
    emit(app, data, "\n".join([*explained(data), *learned]))


MIN_JUDGED = 5  # judged uses before a hit rate says anything


def times(n: int, what: str = "") -> str:
    """A count in words: ``once``, ``twice``, ``3 times`` (``what``: ``3 deliveries``)."""
    if what:
        return f"{n} {what}" + ("" if n == 1 else "s")
    return {0: "never", 1: "once", 2: "twice"}.get(n, f"{n} times")


def _rate(hit: float | None, judged: int) -> str:
    if hit is None or judged < MIN_JUDGED:
        return f"hit rate: not yet known ({judged} of the {MIN_JUDGED} judged uses it needs)"
    return f"hit rate {hit:.0%} of {times(judged, 'judged use')}"


def explained(data: dict[str, Any]) -> list[str]:
    """``explain`` in words: deliveries and outcomes counted, a rate only when enough
    uses were judged (and from how many)."""
    lines = [
        f"{data['applications']} {'delivery' if data['applications'] == 1 else 'deliveries'}"
        f" of memories, {data['with_outcome']} with an outcome;"
        f" {_rate(data['hit_rate'], data['with_outcome'])}"
    ]
    for record_id, row in data["records"].items():
        outcomes = row["outcomes"] or {}
        judged = sum(outcomes.values())
        said = [f"delivered {times(row['delivered'])}"]
        said += [f"{OUTCOME_WORDS.get(k, k)} {times(n)}" for k, n in sorted(outcomes.items())]
        if not judged:
            said.append("no outcome reported yet")
        elif row["value"] is not None and judged >= MIN_JUDGED:
            said.append(f"value {row['value']:+.2f} over {times(judged, 'judged use')}")
        lines.append(f"  {record_id}  {'; '.join(said)}")
    for item in data.get("review") or []:  # explicit rules whose uses failed: the user decides
        lines.append(f"  review {item['record_id']}: {one_line(item['question'], 200)}")
    return lines


OUTCOME_WORDS = {
    "used-successfully": "used successfully",
    "ignored": "ignored",
    "overridden": "overridden",
    "corrected": "corrected",
    "contributed-to-failure": "contributed to a failure",
}


COMMANDS = (recall, context, expand, feedback, signal, explain)

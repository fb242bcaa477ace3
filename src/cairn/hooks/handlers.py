"""The three hooks, host-neutral: a :class:`HookEvent` in, a :class:`HookReply` out, and
memory reached only through the provider (a :class:`cairn.provider.client.Client`).

- **session start**: the context director's text for the repository of ``cwd`` — the
  profile and the rules that apply there, a manifest of the rest, each with why.
- **prompt**: the prompt is read as a signal first (a lasting rule is remembered in the
  scope its words say, a one-off holds for this task only, a forget or correction acts
  only on a clear match) and the hook says in one line what it did; then the director's
  text for the prompt as the task, less what this session was already given. Nothing
  new and nothing done: no output at all.
- **stop**: the finished turn is observed as an episode, with the deliveries its
  transcript shows plainly used (:mod:`cairn.hooks.outcomes`), and the user's words are
  reviewed (:mod:`cairn.hooks.episode`). It never blocks, and does nothing while the host
  is already continuing because of a stop hook.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cairn.hooks.events import SILENT, HookEvent, HookReply
from cairn.hooks.outcomes import Verdict, corrected, judge
from cairn.hooks.session import SessionLog
from cairn.limits import MAX_QUERY_CHARS
from cairn.provider.client import Client
from cairn.visible import has_visible

# A prompt longer than this is a task (a pasted log, a long brief), not a statement of a
# rule: it is never read as a signal, so a pasted file is never stored as a policy.
SIGNAL_MAX_CHARS = 1000
NOTICE_CHARS = 120
REVIEW_BACKLOG = 100  # earlier turns a stop reviews at most (a long session, first install)


@dataclass(frozen=True, slots=True)
class Where:
    project_id: str | None
    name: str | None  # the repository's name, when inside one
    remote: str | None = None  # its normalised remote


# A long-lived process (the daemon) runs the hooks of many prompts in the same folders:
# it asks git once a while per folder, not three times a prompt (~10 ms each from a large
# process). A repository's identity is its root commit, which does not change; a folder
# that becomes a repository (or gets its first commit) is seen within this many seconds.
LOCATE_TTL_SECONDS = 30.0
_located: dict[str, tuple[float, Where]] = {}


def locate(cwd: str | None, *, now: float | None = None) -> Where:
    """The repository of the folder the agent works in (none outside git)."""
    import time

    folder = cwd or os.getcwd()
    moment = time.monotonic() if now is None else now
    cached = _located.get(folder)
    if cached is not None and moment < cached[0]:
        return cached[1]
    where = _identify(Path(folder))
    if len(_located) > 1000:
        _located.clear()
    _located[folder] = (moment + LOCATE_TTL_SECONDS, where)
    return where


def _identify(folder: Path) -> Where:
    from cairn.adapters.repository import repository_identity

    try:
        identity = repository_identity(folder)
    except (ValueError, OSError):
        return Where(None, None)
    if identity.kind == "path":
        return Where(None, None)
    return Where(identity.project_id, identity.name, identity.remote)


def _clip(text: str, width: int = NOTICE_CHARS) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def handle(event: HookEvent, memory: Client, sessions: Path) -> HookReply:
    log = SessionLog(sessions, event.session_id)
    if event.kind == "session-start":
        reply = session_start(event, memory, log)
    elif event.kind == "prompt":
        reply = prompt(event, memory, log)
    else:
        reply = stop(event, memory, log)
    log.save()
    return reply


def _task(memory: Client, event: HookEvent, task: str, where: Where, view: str = "task") -> Any:
    from cairn.provider import contract as c

    return memory.query(
        c.TaskQuery,
        c.TaskResponse,
        view=view,  # "combined" at a session's start: every rule that applies there
        task=task[:MAX_QUERY_CHARS],
        project_id=where.project_id,
        session_id=event.session_id,
    )


def _delivered(items: Sequence[Any]) -> list[tuple[str, str, int]]:
    return [(i.application_id, i.id, i.version) for i in items]


def session_start(event: HookEvent, memory: Client, log: SessionLog) -> HookReply:
    where = locate(event.cwd)
    place = f"the {where.name} repository" if where.name else "this folder"
    # recorded once the session's first request is built: a host's session the contract
    # refuses changes nothing
    memory.defer(lambda: _name_project(memory, where))
    response = _task(memory, event, f"Start of a coding session in {place}", where, "combined")
    log.start_epoch()
    log.add(_delivered([*response.resident, *response.manifest]))
    from cairn.hooks.learned import tell

    told = tell(log.path.parent, where.project_id)  # what the last session's review stored
    text = "\n\n".join(part for part in (response.text, _reviews(memory)) if part)
    if not text:
        return HookReply(notice=told) if told else SILENT
    context = f"From cairn, long-term memory for {place}:\n\n{text}"
    return HookReply(context=context, notice=told)


def _name_project(memory: Client, where: Where) -> None:
    """Tell the store the repository's readable name (a no-op when it has it), so every
    view shows ``app`` beside ``git:…``."""
    if where.project_id is None or not where.name:
        return
    from cairn.provider.contract import projects as pc

    memory.apply(
        pc.NameProjectRequest,
        pc.NameProjectResponse,
        memory.key("name-project", where.project_id, where.name, where.remote),
        project_id=where.project_id,
        name=where.name,
        remote=where.remote,
    )


def _reviews(memory: Client) -> str:
    """The user's rules that outcomes keep failing: asked about, never changed (SPEC §6)."""
    from cairn.engine.recall.formatting import safe_field
    from cairn.provider import contract as c
    from cairn.provider.review import review_flag

    found = memory.query(c.ListQuery, c.RecordsResponse, owned=True)
    lines = [
        f'- {r.id} "{safe_field(_clip(r.body))}": {question}'
        for r in found.records
        if (question := review_flag(r)) is not None
    ]
    if not lines:
        return ""
    return "\n".join(["Ask the user about these rules of theirs:", *lines[:5]])


def prompt(event: HookEvent, memory: Client, log: SessionLog) -> HookReply:
    where = locate(event.cwd)
    text = (event.prompt or "").strip()
    if not has_visible(text):  # nothing to read, nothing to search for
        return SILENT
    notice = _signal(event, memory, log, text, where) if len(text) <= SIGNAL_MAX_CHARS else ""
    from cairn.errors import InvalidInput

    try:
        response = _task(memory, event, text, where)
    except InvalidInput as exc:
        # The policy refuse kept a prompt holding a secret out (the words cross the daemon
        # and HTTP, the exception's class does not); any other error is the host's to miss.
        if " a secret (" not in str(exc):
            raise
        said = f"cairn gave no memory for this prompt: {exc}"
        return HookReply(notice=f"{notice}; {said}" if notice else said)
    seen = log.seen()
    items = [*response.resident, *response.manifest]
    fresh = [i for i in items if (i.id, i.version) not in seen]
    log.add(_delivered(fresh))
    if not fresh and not response.constraints:
        return HookReply(notice=notice) if notice else SILENT
    context = response.text if len(fresh) == len(items) else _render(response, fresh)
    return HookReply(context=f"From cairn, for this prompt:\n\n{context}", notice=notice)


def _render(response: Any, fresh: Sequence[Any]) -> str:
    """The director's text for only the items this session has not been given, by the
    same formatter the provider renders ``TaskResponse.text`` with."""
    from cairn.engine.recall.formatting import ContextEntry, Fence, format_context

    def entry(item: Any) -> ContextEntry:
        return ContextEntry(
            record_id=item.id,
            title=None,
            summary=item.summary,
            body=item.body or "",
            trust=item.trust,
            why=tuple(item.why_applied),
            application_id=item.application_id,
        )

    keep = {i.application_id for i in fresh}
    return format_context(
        [c.text for c in response.constraints],
        [entry(i) for i in response.resident if i.application_id in keep],
        [entry(i) for i in response.manifest if i.application_id in keep],
        Fence.new(),
    )


def _signal(event: HookEvent, memory: Client, log: SessionLog, text: str, where: Where) -> str:
    """Act on the prompt as a user statement; one line on what was done ("" for none)."""
    from cairn.errors import InvalidInput
    from cairn.provider import contract as c

    try:
        response = memory.apply(
            c.SignalRequest,
            c.SignalResponse,
            memory.key("hook-signal", event.session_id, text, where.project_id),
            text=text,
            project_id=where.project_id,
        )
    except InvalidInput as exc:  # e.g. "in this repo" said outside a repository
        return f"cairn did not remember that: {exc}"
    record = response.record
    outcome = response.outcome
    if outcome == "stored" and record is not None:
        scope = "this repository" if record.scope == "project" else "every project"
        return f"cairn remembered for {scope}: {_clip(record.body)} ({record.id})"
    if outcome == "duplicate" and record is not None:
        return f"cairn already remembers this ({record.id}); nothing added"
    if outcome == "constraint":
        return f"cairn: for this task only (not stored): {_clip(response.constraint or text)}"
    if outcome == "forgotten" and record is not None:
        log.settle(d.application_id for d in log.pending() if d.record_id == record.id)
        return f"cairn forgot {record.id}: {_clip(record.body)}"
    if outcome == "corrected" and record is not None:
        _report(memory, event, corrected(log.pending(), record.id))
        log.settle(d.application_id for d in log.pending() if d.record_id == record.id)
        was = f" (was: {_clip(response.previous)})" if response.previous else ""
        return (
            f"cairn corrected {record.id} (now version {record.version}): {_clip(record.body)}{was}"
        )
    if outcome == "unsure":
        # Not dropped in silence: the agent asks the user and stores the answer.
        return (
            "cairn is not sure whether the user wants this kept as a lasting rule; if it"
            " should be, ask the user, then run: cairn signal --as rule|preference|fact"
            f" [--scope project|global] {_clip(text)!r}"
        )
    if outcome == "unplaced" and response.candidates:
        return (
            f"cairn corrected nothing: {response.candidates[0].record.id} matches, but the"
            " correction does not say what to replace; ask the user for the whole new rule"
        )
    if outcome in ("no-match", "ambiguous"):
        verb = "forgot" if response.kind == "forget" else "corrected"
        ids = ", ".join(m.record.id for m in response.candidates[:3])
        if outcome == "no-match":
            return f"cairn {verb} nothing: no memory clearly matches that" + (
                f" (nearest: {ids})" if ids else ""
            )
        return f"cairn {verb} nothing: several memories match ({ids}); name one by id"
    return ""


def _report(memory: Client, event: HookEvent, verdicts: Sequence[Verdict]) -> list[str]:
    """Send the verdicts that carry an outcome; the application ids settled."""
    from cairn.provider import contract as c

    settled = []
    for verdict in verdicts:
        if verdict.outcome is not None:
            memory.apply(
                c.FeedbackRequest,
                c.FeedbackResponse,
                memory.key("hook-feedback", verdict.application_id, verdict.outcome),
                application_id=verdict.application_id,
                outcome=verdict.outcome,
            )
        settled.append(verdict.application_id)
    return settled


def stop(event: HookEvent, memory: Client, log: SessionLog) -> HookReply:
    if event.stop_hook_active or not event.transcript_path:
        return SILENT  # the host is continuing for a stop hook: the turn is not over
    from cairn.hooks.episode import record_turn, review_turn
    from cairn.hooks.learned import note
    from cairn.hooks.transcript import read_turns

    turns = read_turns(event.transcript_path)
    if not turns:
        return SILENT
    turn = turns[-1]
    where = locate(event.cwd)
    verdicts = judge(turn, log.pending())
    used = [v.application_id for v in verdicts if v.outcome == "used-successfully"]
    # Every turn since the last review, not only this one: a stop that failed, timed out
    # or came before the hooks were installed leaves turns no review has read.
    stored = []
    for earlier in [t for t in turns[:-1] if t.index > log.reviewed][-REVIEW_BACKLOG:]:
        stored += review_turn(memory, event, earlier, where.project_id)
    stored += record_turn(memory, event, turn, where.project_id, used)  # judges the used
    log.reviewed = max(log.reviewed, turn.index)
    log.settle(v.application_id for v in verdicts)
    note(log.path.parent, event.session_id, stored)  # told at the next session start
    return SILENT

"""What each MCP tool does: its arguments become one contract request (or a few), sent
through the provider; the response becomes a short text for the model and the response's
data as the structured result.

Bad arguments raise :class:`cairn.errors.InvalidInput` naming the field, before anything
is sent; the server turns any :class:`cairn.errors.CairnError` into a tool error.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cairn.errors import InvalidInput
from cairn.mcp_server.strict_json import REPEATED_KEY
from cairn.mcp_server.tools import BY_NAME, SERVER_FIELDS, input_schema
from cairn.provider.client import Client


@dataclass(frozen=True, slots=True)
class Binding:
    """The repository the server works for (none outside git)."""

    project_id: str | None
    name: str | None
    root: Path | None


@dataclass(frozen=True, slots=True)
class ToolAnswer:
    text: str
    data: dict[str, Any]


def checked_arguments(name: str, arguments: dict[str, Any] | None) -> dict[str, Any]:
    """The arguments, refused when the tool is unknown or a name is not in its schema."""
    spec = BY_NAME.get(name)
    if spec is None:
        raise InvalidInput(f"unknown tool {name!r}")
    given = dict(arguments or {})
    if REPEATED_KEY in given:
        raise InvalidInput(f"{name}: the argument {given[REPEATED_KEY]!r} appears twice")
    allowed = set(input_schema(spec)["properties"])
    for key in given:
        if key not in allowed:
            why = " (the server sets it)" if key in SERVER_FIELDS else ""
            raise InvalidInput(f"{name}: unknown argument {key!r}{why}")
    return given


class MemoryTools:
    def __init__(self, memory: Client, binding: Binding) -> None:
        self._memory = memory
        self._binding = binding
        self._calls: dict[str, Callable[[dict[str, Any]], ToolAnswer]] = {
            "memory_store": self.store,
            "memory_recall": self.recall,
            "memory_context": self.context,
            "memory_expand": self.expand,
            "memory_correct": self.correct,
            "memory_forget": self.forget,
            "memory_feedback": self.feedback,
            "memory_ask": self.ask,
            "memory_status": self.status,
        }

    def call(self, name: str, arguments: dict[str, Any] | None) -> ToolAnswer:
        checked = checked_arguments(name, arguments)  # first: an unknown tool is refused here
        return self._calls[name](checked)

    def _key(self, *parts: object) -> str:
        return self._memory.key(*parts)

    # -- writes ---------------------------------------------------------------------------

    def store(self, args: dict[str, Any]) -> ToolAnswer:
        from cairn.provider import contract as c

        by_user = args.pop("stated_by_user", False)
        if not isinstance(by_user, bool):
            raise InvalidInput("stated_by_user must be true or false")
        project_id = None
        if args.get("scope") == "project":
            project_id = self._binding.project_id
            if project_id is None:
                raise InvalidInput(
                    "scope: 'project' needs a repository, and this server does not run in one"
                )
        model = c.RememberRequest if by_user else c.StoreRequest
        text = json.dumps(args, sort_keys=True, ensure_ascii=False, default=str)
        here = self._binding.project_id
        # The body is the user's or the agent's words: the write path reads them as
        # `cairn signal` does ("in this repo" binds the memory to this server's repository).
        response = self._memory.apply(
            model,
            c.WriteResponse,
            self._key("mcp-store", by_user, project_id, here, text),
            **args,
            project_id=project_id,
            read_words=True,
            current_project_id=here,
        )
        record = response.record
        said = (
            f"already remembered as {record.id}; nothing added"
            if response.duplicate_of or not response.created
            else f"stored {record.id} ({record.kind}, {record.scope}, {record.state})"
        )
        if response.redacted:
            said += f"; secrets cut out: {', '.join(response.redacted)}"
        return ToolAnswer(said, response.model_dump(exclude={"contract"}))

    def _current(self, record_id: Any) -> Any:
        from cairn.provider import contract as c

        return self._memory.query(c.ShowQuery, c.RecordResponse, record_id=record_id).record

    def correct(self, args: dict[str, Any]) -> ToolAnswer:
        from cairn.provider import contract as c

        current = self._current(args.get("record_id"))
        fields = {k: v for k, v in args.items() if k != "record_id"}
        text = json.dumps(fields, sort_keys=True, ensure_ascii=False, default=str)
        response = self._memory.apply(
            c.CorrectRequest,
            c.WriteResponse,
            self._key("mcp-correct", current.id, current.version, text),
            **{**fields, "record_id": current.id},
        )
        record = response.record
        said = (
            f"corrected {record.id} (now version {record.version})"
            if response.changed
            else f"{record.id} already says that (version {record.version}); nothing changed"
        )
        return ToolAnswer(said, response.model_dump(exclude={"contract"}))

    def forget(self, args: dict[str, Any]) -> ToolAnswer:
        from cairn.provider import contract as c

        current = self._current(args.get("record_id"))
        permanent = args.get("permanent", False)
        stones = self._memory.query(c.TombstonesQuery, c.TombstonesResponse).tombstones
        stone = next((t for t in stones if t.record_id == current.id), None)
        marks = (stone.removed_at, stone.restored_at) if stone else ("", None)
        response = self._memory.apply(
            c.ForgetRequest,
            c.ForgetResponse,
            self._key("forget", current.id, current.version, permanent, *marks),
            record_id=current.id,
            permanent=permanent,
        )
        how = "permanently forgot" if response.tombstone.permanent else "forgot"
        return ToolAnswer(f"{how} {current.id}", response.model_dump(exclude={"contract"}))

    def feedback(self, args: dict[str, Any]) -> ToolAnswer:
        from cairn.provider import contract as c

        app_id = args.get("application_id")
        outcome = args.get("outcome")
        wanted = app_id.strip().upper() if isinstance(app_id, str) else app_id
        response = self._memory.apply(
            c.FeedbackRequest,
            c.FeedbackResponse,
            self._key("feedback", wanted, outcome),  # the CLI's key: one operation, one key
            application_id=app_id,
            outcome=outcome,
        )
        if not response.changes:
            said = f"{response.outcome}: already recorded for {response.application_id}"
        else:
            changed = ", ".join(f"{k} {a}→{b}" for k, (a, b) in response.changes.items())
            said = f"{response.outcome} recorded for {response.record.id}: {changed}"
        return ToolAnswer(said, response.model_dump(exclude={"contract"}))

    # -- reads ----------------------------------------------------------------------------

    def recall(self, args: dict[str, Any]) -> ToolAnswer:
        from cairn.provider import contract as c

        response = self._memory.query(
            c.RecallQuery, c.RecallResponse, **args, project_id=self._binding.project_id
        )
        memories = [
            {
                "id": m.record.id,
                "kind": m.record.kind,
                "scope": m.record.scope,
                "trust": m.record.trust,
                "body": m.record.body,
                "score": m.score,
            }
            for m in response.memories
        ]
        if not response.memories:
            return ToolAnswer(
                "Memory holds nothing relevant to this query.",
                {"query": response.query, "memories": []},
            )
        # The preamble's own lines (fenced where they must be), each after its memory's id.
        header = response.preamble.splitlines()[0]
        lines = [f"- {m.record.id}  {m.line.removeprefix('- ')}" for m in response.memories]
        text = "\n".join([header, *lines])
        return ToolAnswer(text, {"query": response.query, "memories": memories})

    def context(self, args: dict[str, Any]) -> ToolAnswer:
        from cairn.provider import contract as c

        paths = args.pop("paths", None)
        if paths is not None:
            if not isinstance(paths, list) or not all(isinstance(p, str) for p in paths):
                raise InvalidInput("paths must be a list of file paths")
            args["paths"] = [self._relative(p) for p in paths]
        response = self._memory.query(
            c.TaskQuery, c.TaskResponse, **args, project_id=self._binding.project_id
        )
        data = response.model_dump(exclude={"contract", "view", "applications"})
        return ToolAnswer(response.text or "No memory applies to this task.", data)

    def _relative(self, path: str) -> str:
        root = self._binding.root
        given = Path(path)
        if root is None or not given.is_absolute():
            return path
        try:
            return given.resolve().relative_to(root).as_posix()
        except ValueError:
            raise InvalidInput(f"paths: {path} is outside the repository at {root}") from None

    def expand(self, args: dict[str, Any]) -> ToolAnswer:
        from cairn.engine.recall.formatting import Fence, is_fenced, safe_field
        from cairn.provider import contract as c

        response = self._memory.query(c.ExpandQuery, c.ExpandResponse, **args)
        record = response.record
        body = record.body
        shown = Fence.new().wrap(body) if is_fenced(record.trust) else body
        facts = ", ".join(f"{k} {v}" for k, v in response.verification.items() if v is not None)
        text = "\n".join(
            [
                f"{record.id} ({record.kind}, {record.scope}, trust {safe_field(record.trust)})",
                shown,
                f"track record: {facts}",
                f"[app {response.application_id}] report its outcome with memory_feedback",
            ]
        )
        return ToolAnswer(text, response.model_dump(exclude={"contract", "view"}))

    def ask(self, args: dict[str, Any]) -> ToolAnswer:
        from cairn.provider.contract import learning as lc

        response = self._memory.query(
            lc.AskQuery, lc.AskResponse, **args, project_id=self._binding.project_id
        )
        return ToolAnswer(response.answer, response.model_dump(exclude={"contract", "view"}))

    def status(self, args: dict[str, Any]) -> ToolAnswer:
        response = self._memory.status()
        why = f" ({response.embedder_chosen_by}: {response.embedder_reason})"
        chosen = why if response.embedder_chosen_by else ""
        counts = response.counts
        text = (
            f"cairn {response.version} · {response.provider} · {response.backend} ·"
            f" tenant {response.tenant} · {counts.get('records', 0)} memories ·"
            f" embedder {response.embedder}{chosen}"
        )
        return ToolAnswer(text, response.model_dump(exclude={"contract"}))

"""The journal timeline: newest first, filtered by type, episode and session, a page at
a time (the next page reads on below the last ``seq`` shown)."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from fastapi import APIRouter, Request
from fastapi.responses import Response

from cairn.dashboard.web import Site, visit
from cairn.errors import InvalidInput
from cairn.provider import contract as c
from cairn.provider.client import build

PAGE = 50
TYPES = (
    "user.signal",
    "memory.stored",
    "memory.imported",
    "context.applied",
    "context.outcome",
    "episode.completed",
    "verification.completed",
    "review.resolved",
    "failure.resolved",
    "learning.delta",
    "learning.reflected",
    "lifecycle.promoted",
    "lifecycle.demoted",
    "lifecycle.evicted",
    "lifecycle.unevicted",
    "lifecycle.pinned",
    "lifecycle.unpinned",
    "lifecycle.swept",
)


def journal_query(params: Any) -> tuple[c.JournalQuery, dict[str, str]]:
    shown = {k: (params.get(k) or "").strip() for k in ("type", "episode", "session", "before")}
    data: dict[str, Any] = {"view": "journal", "newest_first": True, "limit": PAGE + 1}
    if shown["type"]:
        data["types"] = [shown["type"]]
    if shown["episode"]:
        data["episode_id"] = shown["episode"]
    if shown["session"]:
        data["session_id"] = shown["session"]
    if shown["before"]:
        if not shown["before"].isdigit():
            raise InvalidInput("before: must be a journal sequence number")
        data["before_seq"] = int(shown["before"])
    return build(c.JournalQuery, data), shown


def record_of(payload: dict[str, Any]) -> str | None:
    """The memory an event is about, when its payload names one."""
    for key in ("record_id", "target"):
        if isinstance(payload.get(key), str):
            return str(payload[key])
    inner = payload.get("record")
    if isinstance(inner, dict) and isinstance(inner.get("id"), str):
        return str(inner["id"])
    return None


def routes(site: Site) -> APIRouter:
    router = APIRouter()

    @router.get("/journal")
    def journal(request: Request) -> Response:
        v = visit(site, request)
        query, shown = journal_query(request.query_params)
        events = v.client.send(query, c.JournalResponse).events
        page = events[:PAGE]
        older = None
        if len(events) > PAGE and page[-1].seq is not None:
            values = {**shown, "before": str(page[-1].seq), "agent": v.agent}
            older = urlencode({k: val for k, val in values.items() if val})
        rows = [(e, record_of(e.payload)) for e in page]
        return v.render("journal.html", rows=rows, shown=shown, types=TYPES, older=older)

    return router

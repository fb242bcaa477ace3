"""The dashboard's writes: remember, correct, forget, restore, pin, evict — each one
mutation of the contract (journaled like any other), each form with its CSRF token and
an idempotency key (a resubmitted form changes nothing). Destructive actions ask first:
without ``confirm=yes`` they show what would happen and change nothing.
"""

from __future__ import annotations

import secrets
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response

from cairn.dashboard import filters as flt
from cairn.dashboard.memories import detail
from cairn.dashboard.web import Site, Visit, posted, visit
from cairn.errors import InvalidInput
from cairn.provider import contract as c
from cairn.provider.client import build

# action -> (what the confirmation says, the label of its button)
DESTRUCTIVE = {
    "forget": ("It leaves recall and every task at once. You can restore it.", "Forget"),
    "forget-permanently": (
        "Its text and everything derived from it are deleted for good, from the journal"
        " too. This cannot be undone.",
        "Forget permanently",
    ),
    "evict": ("It leaves recall and tasks, stays visible here; unevict takes it back.", "Evict"),
}
SIMPLE = {"restore": "restored", "pin": "pinned", "unpin": "unpinned", "unevict": "unevicted"}


def _key(form: dict[str, str]) -> str:
    return form.get("idem") or secrets.token_hex(12)


def _lines(text: str) -> list[str]:
    return [t.strip() for t in text.replace(",", "\n").splitlines() if t.strip()]


def routes(site: Site) -> APIRouter:
    router = APIRouter()

    @router.post("/memories/new")
    async def remember(request: Request) -> Response:
        v, form = await posted(site, request)
        data: dict[str, Any] = {
            "idempotency_key": _key(form),
            "body": form.get("body", ""),
            "kind": form.get("kind") or None,
            "title": form.get("title") or None,
            "tags": _lines(form.get("tags", "")),
            "scope": form.get("scope") or "global",
            "project_id": form.get("project") or None,
            "pinned": form.get("pinned") == "1",
        }
        try:
            if not data["body"].strip():
                raise InvalidInput("body: a memory needs some text")
            made = v.client.send(build(c.RememberRequest, data), c.WriteResponse)
        except InvalidInput as exc:
            return v.render(
                "remember.html", 400, kinds=flt.KINDS, scopes=flt.SCOPES, error=str(exc), form=form
            )
        done = "remembered" if made.created else f"already remembered as {made.record.id}"
        return v.redirect(f"/memories/{made.record.id}", done=done)

    @router.post("/memories/{record_id}/correct")
    async def correct(request: Request, record_id: str) -> Response:
        v, form = await posted(site, request)
        text = form.get("text", "")
        data = {
            "idempotency_key": _key(form),
            "record_id": record_id,
            "text": text,
            "title": form.get("title") or None,
        }
        try:
            if not text.strip():
                raise InvalidInput("text: the corrected memory needs some text")
            fixed = v.client.send(build(c.CorrectRequest, data), c.WriteResponse)
        except InvalidInput as exc:
            return detail(v, record_id, done=f"error: {exc}", status=400)
        done = f"corrected: now version {fixed.record.version}" if fixed.changed else "unchanged"
        return v.redirect(f"/memories/{fixed.record.id}", done=done)

    @router.get("/memories/{record_id}/confirm/{action}")
    def confirm(request: Request, record_id: str, action: str) -> Response:
        return _confirm(visit(site, request), record_id, action)

    @router.post("/memories/{record_id}/{action}")
    async def act(request: Request, record_id: str, action: str) -> Response:
        v, form = await posted(site, request)
        if action in DESTRUCTIVE and form.get("confirm") != "yes":
            return _confirm(v, record_id, action)  # asks; nothing changes
        if action not in DESTRUCTIVE and action not in SIMPLE:
            raise InvalidInput(f"action: unknown action {action!r}")
        key = _key(form)
        if action in ("forget", "forget-permanently"):
            request_ = build(
                c.ForgetRequest,
                {
                    "idempotency_key": key,
                    "record_id": record_id,
                    "permanent": action == "forget-permanently",
                },
            )
            stone = v.client.send(request_, c.ForgetResponse).tombstone
            if stone.permanent:
                return v.redirect("/memories", done=f"{stone.record_id} forgotten permanently")
            return v.redirect(f"/memories/{stone.record_id}", done="forgotten")
        if action in ("evict", "unevict"):
            model: type[Any] = c.EvictRequest
        elif action in ("pin", "unpin"):
            model = c.PinRequest
        else:
            model = c.RestoreRequest
        data = {"idempotency_key": key, "record_id": record_id}
        if model is not c.RestoreRequest:
            data["mutation"] = action
        written = v.client.send(build(model, data), c.WriteResponse)
        return v.redirect(f"/memories/{written.record.id}", done=SIMPLE.get(action, "evicted"))

    return router


def _confirm(v: Visit, record_id: str, action: str) -> Response:
    if action not in DESTRUCTIVE:
        raise InvalidInput(f"action: {action!r} needs no confirmation")
    record = v.client.send(c.ShowQuery(record_id=record_id), c.RecordResponse).record
    warning, label = DESTRUCTIVE[action]
    return v.render("confirm.html", record=record, action=action, warning=warning, label=label)

"""Recall diagnostics: one query and task context, the three links of a diagnosis —
what is saved (each candidate's record), the match conditions (each lane's rank, the fused
score, every boost factor, the selector's whyApplied) and the basis of application (the
final order, and why each other candidate was dropped).

Recall runs as it would for an agent (its trace); the context director runs as a preview,
so looking records no application and teaches the learning nothing.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response
from pydantic import ValidationError

from cairn.dashboard.web import Site, visit
from cairn.provider import contract as c
from cairn.provider import expect
from cairn.provider.convert import invalid

FIELDS = ("query", "project", "path", "operation", "phase")
FACTORS = ("base", "recency", "temporal", "proof", "trust", "usefulness", "forget", "final")


def _build(model: type[Any], data: dict[str, Any]) -> Any:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise invalid(exc) from None


def project_id_of(provider: Any, text: str) -> str | None:
    """The project a person typed (a name such as ``app`` or ``acme/app``, its id, or a
    repository's folder), found by the engine; an unknown one is refused, never answered
    quietly from global memory alone."""
    from cairn.provider import projects_contract as pc

    if not text:
        return None
    found = expect(provider.query(_build(pc.ProjectsQuery, {"find": text})), pc.ProjectsResponse)
    return found.projects[0].id


MAX_ROWS = 200


def _text_of(provider: Any, record_id: str, hit: Any) -> str:
    """A candidate's text: every row, dropped ones too, says which memory it is."""
    if hit is not None:
        return str(hit.record.body)
    try:
        shown = provider.query(c.ShowQuery(record_id=record_id))
    except Exception:  # a candidate gone since (forgotten meanwhile): its id alone
        return ""
    return str(getattr(getattr(shown, "record", None), "body", ""))


def diagnose(provider: Any, shown: dict[str, str]) -> dict[str, Any]:
    """Recall's trace and the director's preview for one task context."""
    project = project_id_of(provider, shown["project"])
    recall = expect(
        provider.query(_build(c.RecallQuery, {"query": shown["query"], "project_id": project})),
        c.RecallResponse,
    )
    task = expect(
        provider.query(
            _build(
                c.TaskQuery,
                {
                    "task": shown["query"],
                    "project_id": project,
                    "paths": [shown["path"]] if shown["path"] else [],
                    "operation": shown["operation"] or None,
                    "phase": shown["phase"] or None,
                    "preview": True,
                },
            )
        ),
        c.TaskResponse,
    )
    records = {m.record.id: m for m in recall.ranked}
    delivered = {m.record.id: i + 1 for i, m in enumerate(recall.memories)}
    lanes = sorted({lane for t in recall.trace for lane in t.get("ranks", {})})
    rows = [
        {
            "id": t["id"],
            "version": t.get("version"),
            "ranks": t.get("ranks", {}),
            "fused": t.get("fused"),
            "factors": t.get("factors", {}),
            "relevance": (t.get("relevance") or {}).get("score"),
            "fate": t.get("fate", ""),
            "position": delivered.get(t["id"]),
            "hit": records.get(t["id"]),
            "text": _text_of(provider, t["id"], records.get(t["id"])),
        }
        for t in recall.trace[:MAX_ROWS]
    ]
    rows.sort(key=lambda r: (r["position"] is None, r["position"] or 0, -(r["fused"] or 0)))
    return {
        "recall": recall,
        "task": task,
        "rows": rows,
        "lanes": lanes,
        "factors": FACTORS,
    }


def routes(site: Site) -> APIRouter:
    router = APIRouter()

    @router.get("/diagnose")
    def page(request: Request) -> Response:
        v = visit(site, request)
        shown = {k: (request.query_params.get(k) or "").strip() for k in FIELDS}
        found = diagnose(v.provider, shown) if shown["query"] else None
        return v.render("diagnose.html", shown=shown, found=found)

    return router

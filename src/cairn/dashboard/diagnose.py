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

from cairn.dashboard.web import Site, visit
from cairn.provider import contract as c
from cairn.provider.client import Client, build

FIELDS = ("query", "project", "path", "operation", "phase")
FACTORS = ("base", "recency", "temporal", "proof", "trust", "usefulness", "forget", "final")


def project_id_of(client: Client, text: str) -> str | None:
    """The project a person typed (a name such as ``app`` or ``acme/app``, its id, or a
    repository's folder), found by the engine; an unknown one is refused, never answered
    quietly from global memory alone."""
    from cairn.provider.contract import projects as pc

    if not text:
        return None
    found = client.send(build(pc.ProjectsQuery, {"find": text}), pc.ProjectsResponse)
    return found.projects[0].id


MAX_ROWS = 200


def _text_of(client: Client, record_id: str, hit: Any) -> str:
    """A candidate's text: every row, dropped ones too, says which memory it is."""
    if hit is not None:
        return str(hit.record.body)
    try:
        shown = client.send(c.ShowQuery(record_id=record_id), c.RecordResponse)
    except Exception:  # a candidate gone since (forgotten meanwhile): its id alone
        return ""
    return shown.record.body


def diagnose(client: Client, shown: dict[str, str]) -> dict[str, Any]:
    """Recall's trace and the director's preview for one task context."""
    project = project_id_of(client, shown["project"])
    recall = client.send(
        build(c.RecallQuery, {"query": shown["query"], "project_id": project}),
        c.RecallResponse,
    )
    task = client.send(
        build(
            c.TaskQuery,
            {
                "task": shown["query"],
                "project_id": project,
                "paths": [shown["path"]] if shown["path"] else [],
                "operation": shown["operation"] or None,
                "phase": shown["phase"] or None,
                "preview": True,
            },
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
            "text": _text_of(client, t["id"], records.get(t["id"])),
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
        found = diagnose(v.client, shown) if shown["query"] else None
        return v.render("diagnose.html", shown=shown, found=found)

    return router

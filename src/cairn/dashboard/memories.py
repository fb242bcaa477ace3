"""The memories pages: the filtered, searched, sorted list, one page at a time; one
memory's detail (every version, evidence, applications, tombstone, eviction); the form
that remembers a new one."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import Response

from cairn.dashboard import filters as flt
from cairn.dashboard.web import Site, Visit, visit
from cairn.provider import contract as c

APPLICATIONS_SHOWN = 100


def project_names(v: Visit) -> dict[str, str]:
    """Each named repository's readable name by id, for ``app (git:…)`` in the pages."""
    from cairn.provider.contract import projects as pc

    known = v.client.send(pc.ProjectsQuery(), pc.ProjectsResponse).projects
    return {p.id: p.name for p in known}


def routes(site: Site) -> APIRouter:
    router = APIRouter()

    @router.get("/memories")
    def memories(request: Request) -> Response:
        v = visit(site, request)
        f = flt.parse_filters(request.query_params)
        if f.project:  # a name, an id or a folder: the engine finds it, or refuses
            from dataclasses import replace

            from cairn.dashboard.diagnose import project_id_of

            f = replace(f, project=project_id_of(v.client, f.project) or "")
        if f.q:  # ranked by the recall engine, as an agent would find them
            rows, more = flt.search(v.client, f)
        else:
            listed = v.client.send(flt.list_query(f), c.RecordsResponse)
            rows, more = listed.records[: flt.PAGE_SIZE], len(listed.records) > flt.PAGE_SIZE
        return v.render(
            "memories.html",
            f=f,
            rows=rows,
            more=more,
            first=(f.page - 1) * flt.PAGE_SIZE + 1,
            orders=flt.ORDERS,
            states=flt.STATES,
            trusts=flt.TRUST,
            kinds=flt.KINDS,
            scopes=flt.SCOPES,
            names=project_names(v),
            done=v.banner(),
        )

    @router.get("/memories/new")
    def new_memory(request: Request) -> Response:
        v = visit(site, request)
        return v.render("remember.html", kinds=flt.KINDS, scopes=flt.SCOPES, error=None)

    @router.get("/memories/{record_id}")
    def memory(request: Request, record_id: str) -> Response:
        v = visit(site, request)
        return detail(v, record_id)

    return router


def detail(v: Visit, record_id: str, *, done: str | None = None, status: int = 200) -> Response:
    """One memory as it stands now, with all it is made of."""
    p = v.client
    record = p.send(c.ShowQuery(record_id=record_id), c.RecordResponse).record
    versions = p.send(c.HistoryQuery(record_id=record.id), c.RecordsResponse).records
    apps = p.send(
        c.ApplicationsQuery(record_id=record.id, limit=APPLICATIONS_SHOWN),
        c.ApplicationsResponse,
    )
    stones = p.send(c.TombstonesQuery(record_id=record.id), c.TombstonesResponse)
    tombstone = next((t for t in reversed(stones.tombstones)), None)
    return v.render(
        "memory.html",
        status,
        record=record,
        versions=list(reversed(versions)),
        applications=apps.applications,
        applications_total=apps.total,
        tombstone=tombstone,
        done=done or v.banner(),
        kinds=flt.KINDS,
        names=project_names(v),
    )

"""The ``projects`` view and ``name_project`` mutation over the embedded engine."""

from __future__ import annotations

from cairn.provider import projects_contract as pc
from cairn.services.journal import Namespace
from cairn.services.projects import ProjectName, Projects


def project_model(named: ProjectName) -> pc.ProjectModel:
    return pc.ProjectModel.model_construct(id=named.id, name=named.name, remote=named.remote)


def projects_response(
    projects: Projects, request: pc.ProjectsQuery, ns: Namespace
) -> pc.ProjectsResponse:
    if request.find is not None:
        found = projects.find(request.find, ns)
        return pc.ProjectsResponse.model_construct(projects=[project_model(found)])
    known = sorted(projects.known(ns).values(), key=lambda p: (p.name.lower(), p.id))
    return pc.ProjectsResponse.model_construct(projects=[project_model(p) for p in known])


def name_project(
    projects: Projects, request: pc.NameProjectRequest, ns: Namespace
) -> pc.NameProjectResponse:
    named, changed = projects.name(
        request.project_id, request.name, request.remote, ns, event_id=request.idempotency_key
    )
    return pc.NameProjectResponse.model_construct(project=project_model(named), changed=changed)

"""The ``projects`` view and ``name_project`` mutation over the embedded engine."""

from __future__ import annotations

from typing import Any

from cairn.model import Namespace
from cairn.provider.contract import projects as pc
from cairn.provider.engine import Engine
from cairn.services.projects import ProjectName


def project_model(named: ProjectName) -> pc.ProjectModel:
    return pc.ProjectModel.model_construct(id=named.id, name=named.name, remote=named.remote)


def projects(p: Engine, request: pc.ProjectsQuery, ns: Namespace) -> pc.ProjectsResponse:
    found = p.projects()
    if request.find is not None:
        one = found.find(request.find, ns)
        return pc.ProjectsResponse.model_construct(projects=[project_model(one)])
    known = sorted(found.known(ns).values(), key=lambda n: (n.name.lower(), n.id))
    return pc.ProjectsResponse.model_construct(projects=[project_model(n) for n in known])


def name_project(
    p: Engine, request: pc.NameProjectRequest, ns: Namespace
) -> pc.NameProjectResponse:
    named, changed = p.projects().name(
        request.project_id, request.name, request.remote, ns, event_id=request.idempotency_key
    )
    return pc.NameProjectResponse.model_construct(project=project_model(named), changed=changed)


HANDLERS: dict[type[Any], Any] = {pc.ProjectsQuery: projects, pc.NameProjectRequest: name_project}

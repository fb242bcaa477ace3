"""The projects of the provider contract ``cairn.provider.v1``: the repositories a tenant's
memory knows by a readable name (from the remote, else the folder), beside the stable id.

A name is told by the side that sees the repository (the CLI, a hook, MCP in a work tree)
with ``name_project``; every route reads them with the ``projects`` view, so a list, the
dashboard and the Markdown file names show ``acme/app`` rather than ``git:f46186c5…``, and
each place that takes a project can take its name.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from cairn.provider.checked import MadeProjectId, ProjectName, Remote
from cairn.provider.models import CONTRACT_VERSION as CONTRACT
from cairn.provider.models import Agent, Key, Request, Short


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)


class ProjectsQuery(Request, _Model):
    """Every named project; with ``find``, only the one it names (a name, a remote, an
    id, or a folder of a repository where the engine runs), or an error."""

    view: Literal["projects"] = "projects"
    agent: Agent | None = None
    find: Short | None = None


class ProjectModel(_Model):
    id: str
    name: str
    remote: str | None = None  # the normalised remote (host/owner/repo) when there is one


class ProjectsResponse(_Model):
    contract: str = CONTRACT
    view: Literal["projects"] = "projects"
    projects: list[ProjectModel]


class NameProjectRequest(Request, _Model):
    mutation: Literal["name_project"] = "name_project"
    idempotency_key: Key
    agent: Agent | None = None
    project_id: MadeProjectId
    name: ProjectName
    remote: Remote | None = None


class NameProjectResponse(_Model):
    contract: str = CONTRACT
    mutation: Literal["name_project"] = "name_project"
    project: ProjectModel
    changed: bool  # False: it already had this name

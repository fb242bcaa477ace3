"""Repositories by readable name: the ``project.named`` events of a tenant's journal.

The store keys project memory by a stable identity (``git:<hash>`` of the root commits);
only the side that sees the repository knows what a person calls it (``acme/app`` from its
remote, else its folder). That side tells it once with :meth:`Projects.name`, a journal
event like any other write, so every route, the server's dashboard included, reads the
same names, a rebuild keeps them, and a renamed folder or remote simply names it again.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from cairn.adapters.repository import repository_identity
from cairn.errors import InvalidInput
from cairn.identifiers import PROJECT_ID
from cairn.limits import MAX_SHORT_CHARS
from cairn.model import Namespace
from cairn.services.store_roles import RecordsAndHistory
from cairn.storage.ports import EventFilter, RecordQuery

if TYPE_CHECKING:
    from cairn.services.journal import Journal

NAMED = "project.named"


@dataclass(frozen=True, slots=True)
class ProjectName:
    id: str
    name: str
    remote: str | None = None

    @property
    def aliases(self) -> set[str]:
        """What a person may type for it: the name, and the remote's ``owner/repo`` and
        whole ``host/owner/repo`` (all compared in lower case)."""
        found = {self.name.lower()}
        if self.remote:
            parts = self.remote.lower().strip("/").split("/")
            found |= {"/".join(parts[-2:]), "/".join(parts)}
        return found


class Projects:
    def __init__(self, records: RecordsAndHistory, journal: Callable[[], Journal]) -> None:
        # the journal is built on the first name told (a recall only reads names)
        self._records = records
        self._journal = journal

    def known(self, ns: Namespace) -> dict[str, ProjectName]:
        """Each named project by id (the latest name told wins)."""
        found: dict[str, ProjectName] = {}
        where = EventFilter(types=(NAMED,))
        for event in self._records.events(ns.tenant, ns.agent, where=where):
            p = event.payload
            found[p["project_id"]] = ProjectName(p["project_id"], p["name"], p.get("remote"))
        return found

    def name(
        self, project_id: str, name: str, remote: str | None, ns: Namespace, *, event_id: str
    ) -> tuple[ProjectName, bool]:
        """Name a project; False when it already had exactly this name and remote (the
        id, the name and the remote as the contract checked them: NameProjectRequest)."""
        told = ProjectName(project_id, name, remote or None)
        if self.known(ns).get(project_id) == told:
            return told, False
        payload = {"project_id": told.id, "name": told.name, "remote": told.remote}
        journal = self._journal()
        event = journal.event(NAMED, payload, ns, event_id)
        fresh = journal.commit([event], {})
        return told, bool(fresh and fresh[0])

    def find(self, text: str, ns: Namespace) -> ProjectName:
        """The one project ``text`` names: a name or remote told before, a project id
        that names or memories use, or a folder of a git repository on this machine.
        Anything else is refused (never a quiet answer from global memory alone), as is a
        name two projects share (with both ids, to pick one)."""
        wanted = text.strip()
        known = self.known(ns)
        if wanted in known:
            return known[wanted]
        lowered = wanted.lower().rstrip("/")
        matches = [p for p in known.values() if lowered in p.aliases]
        if len(matches) > 1:
            ids = ", ".join(f"{p.id} ({p.remote or p.name})" for p in matches)
            raise InvalidInput(f"project name {wanted!r} is ambiguous: {ids}; give the id")
        if matches:
            return matches[0]
        listed = RecordQuery(ns.tenant, ns.agent, project_id=wanted, include_inactive=True, limit=1)
        if wanted and self._records.list_records(listed):  # an id memories are bound to
            return ProjectName(wanted, wanted)
        if (
            not PROJECT_ID.fullmatch(wanted)
            and len(wanted) < MAX_SHORT_CHARS
            and "\x00" not in wanted
        ):
            folder = Path(wanted).expanduser()
            if folder.is_dir():
                identity = repository_identity(folder)
                if identity.kind == "path":
                    raise InvalidInput(f"{wanted} is not inside a git repository")
                return ProjectName(identity.project_id, identity.name, identity.remote)
        raise InvalidInput(
            f"unknown project {wanted[:200]!r}: give a repository's name, id or folder"
        )

"""Ids a person types: the full id, a unique prefix of it, or an application's id.

Every request that names a memory or an application passes through :meth:`Ids.resolved`
at the provider, so each route (CLI, daemon, MCP, HTTP, dashboard) takes the same forms:

- a full memory id;
- a prefix of at least ``MIN_PREFIX`` characters that only one memory's id starts with;
- an application's id (or a unique prefix of one) where a memory is wanted: its memory.

Lookups run inside the request's own tenant and agent, so a prefix never matches another
tenant's record. An ambiguous prefix changes nothing and names the candidates; an unknown
id is passed on unchanged, for the service's own "no memory with id" answer.
"""

from __future__ import annotations

from typing import Protocol, TypeVar

from pydantic import BaseModel

from cairn.errors import InvalidInput
from cairn.model import Namespace
from cairn.storage.ports import ApplicationLog, RecordQuery, Records

MIN_PREFIX = 6  # a ULID's first six characters still span ~17 minutes of ids
FULL_LENGTH = 26
SHOWN = 5  # candidates named in an ambiguity error

Request = TypeVar("Request", bound=BaseModel)


def _ambiguous(prefix: str, what: str, ids: list[str]) -> InvalidInput:
    named = ", ".join(ids[:SHOWN]) + (f" and {len(ids) - SHOWN} more" if len(ids) > SHOWN else "")
    return InvalidInput(
        f"id prefix {prefix} matches {len(ids)} {what}: {named}; type more of the id"
    )


class IdReads(Records, ApplicationLog, Protocol):
    """What resolving an id reads: records and applications, nothing written."""


class Ids:
    def __init__(self, records: IdReads) -> None:
        self._records = records

    def memory(self, text: str, ns: Namespace) -> str:
        """The memory id ``text`` names (unchanged when it names none); ``text`` as the
        contract checked it (trimmed, upper case: provider/checked.py MemoryId)."""
        wanted = text
        if self._records.get(ns.tenant, ns.agent, wanted) is not None:
            return wanted
        exact = self._records.applications_by_id(ns.tenant, ns.agent, [wanted])
        if exact:
            return exact[0].record_id
        if not MIN_PREFIX <= len(wanted) < FULL_LENGTH:
            return wanted
        listed = RecordQuery(
            ns.tenant, ns.agent, include_inactive=True, id_prefix=wanted, limit=SHOWN * 4
        )
        found = {r.id for r in self._records.list_records(listed)}
        if len(found) > 1:
            raise _ambiguous(wanted, "memories", sorted(found))
        apps = self._records.applications(ns.tenant, ns.agent, id_prefix=wanted)
        # An application of a memory the prefix already names adds no second candidate.
        found |= {a.record_id for a in apps}
        if len(found) > 1:
            raise _ambiguous(wanted, "memories (by memory and application ids)", sorted(found))
        return found.pop() if found else wanted

    def application(self, text: str, ns: Namespace) -> str:
        """The application id ``text`` names (unchanged when it names none), as the
        contract checked it (ApplicationId)."""
        wanted = text
        if self._records.applications_by_id(ns.tenant, ns.agent, [wanted]):
            return wanted
        if not MIN_PREFIX <= len(wanted) < FULL_LENGTH:
            return wanted
        found = sorted(
            a.application_id
            for a in self._records.applications(ns.tenant, ns.agent, id_prefix=wanted)
        )
        if len(found) > 1:
            raise _ambiguous(wanted, "applications", found)
        return found[0] if found else wanted

    def resolved(self, request: Request, ns: Namespace) -> Request:
        """``request`` with its ``record_id`` and ``application_id`` as stored."""
        changes: dict[str, str] = {}
        record_id = getattr(request, "record_id", None)
        if isinstance(record_id, str):
            changes["record_id"] = self.memory(record_id, ns)
        application_id = getattr(request, "application_id", None)
        if isinstance(application_id, str):
            changes["application_id"] = self.application(application_id, ns)
        if not changes or all(getattr(request, k) == v for k, v in changes.items()):
            return request
        return request.model_copy(update=changes)

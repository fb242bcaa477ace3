"""The contract over the embedded engine: each request goes to its handler in one table,
``{request type: handler}`` (:data:`HANDLERS`), checked against the registry at import."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from cairn.engine.recall.pipeline import RecallResult
from cairn.errors import InvalidInput
from cairn.identifiers import check_name
from cairn.model import Namespace
from cairn.provider import local_mutations, local_queries
from cairn.provider import projects as project_handlers
from cairn.provider.contract import (
    ApplyRequest,
    ApplyResponse,
    FeedbackResponse,
    QueryRequest,
    QueryResponse,
    StatusResponse,
)
from cairn.provider.contract import learning as lc
from cairn.provider.contract import projects as pc
from cairn.provider.engine import Engine, Handler, Ports, Progress, Services
from cairn.provider.registry import ROUTES, Kind, route_of
from cairn.provider.views import response, response_json
from cairn.services.languages import language_warning
from cairn.services.projects import Projects
from cairn.services.typed_ids import Ids

if TYPE_CHECKING:
    from cairn.provider.learning import LearningServices

# The learning layer's requests, served by :mod:`cairn.provider.learning` — imported with
# the layer itself on the first of them, never by a process that only recalls or writes.
LEARNING_REQUESTS: tuple[type[BaseModel], ...] = (
    lc.ObserveRequest,
    lc.ReflectRequest,
    lc.SweepRequest,
    lc.ReviewRequest,
    lc.DeltaRequest,
    lc.AskQuery,
    lc.TelemetryQuery,
)
LEARNING_RESPONSES = (
    lc.ObserveResponse,
    lc.ReflectResponse,
    lc.SweepResponse,
    lc.ReviewResponse,
    lc.DeltaResponse,
)


class LocalProvider:
    """``tenant`` is this provider's binding; ``agent`` the default agent of requests."""

    def __init__(self, services: Services, *, tenant: str, agent: str, owner: bool = True) -> None:
        self._s = services
        self.tenant = tenant
        self.agent = agent
        self._owner = owner  # a bound sibling shares the engine and never closes it
        self.progress: Progress | None = None  # bulk work reports here when set
        self._ids = Ids(services.ports.records)  # prefixes and application ids, per tenant

    def _ns(self, agent: str | None) -> Namespace:
        # the agent of a request is the contract's (checked.Agent: check_name)
        return Namespace(self.tenant, agent or self.agent)

    def close(self) -> None:
        if self._owner:
            self._s.close()

    @property
    def ports(self) -> Ports:
        """The storage pair under this provider, for diagnostics and benchmarks."""
        return self._s.ports

    def bound(self, *, tenant: str | None = None, agent: str | None = None) -> LocalProvider:
        """This engine bound to another tenant or default agent (the same services)."""
        return LocalProvider(
            self._s,
            tenant=check_name("tenant", tenant) if tenant is not None else self.tenant,
            agent=check_name("agent", agent) if agent is not None else self.agent,
            owner=False,
        )

    def files_later(self) -> tuple[LocalProvider, Callable[[], list[str]]]:
        """This provider with the derived files' refresh (the Markdown projection) of its
        writes held back, and the call that runs it (its warnings). For a caller that
        shows no warning and answers before the files matter: the daemon's hook route
        sends the host its reply first, then refreshes. The refresh follows the store's
        change feed, so a write of another request meanwhile waits for the files' lock
        and finds them current, and nothing it would write is lost by waiting."""
        held: list[Namespace] = []

        def hold(ns: Namespace) -> list[str]:
            if ns not in held:
                held.append(ns)
            return []

        def refresh() -> list[str]:
            warnings: list[str] = []
            for ns in held:
                warnings += self._s.after_write(ns)
            held.clear()
            return warnings

        later = LocalProvider(
            replace(self._s, after_write=hold), tenant=self.tenant, agent=self.agent, owner=False
        )
        return later, refresh

    # -- status --------------------------------------------------------------------------

    def status(self) -> StatusResponse:
        from cairn import __version__

        ns = self._ns(None)
        stats = self._s.reads.stats(ns)
        info = self._s.describe()
        language = language_warning(
            self._s.ports.records, ns.tenant, ns.agent, info.get("embedder")
        )
        return StatusResponse(
            provider="local",
            version=__version__,
            backend=str(info.get("backend", "sqlite")),
            tenant=ns.tenant,
            agent=ns.agent,
            location=info.get("location"),
            embedder=info.get("embedder"),
            embedder_chosen_by=info.get("embedder_chosen_by"),
            embedder_reason=info.get("embedder_reason"),
            schema_version=stats.schema_version,
            backend_versions=dict(info.get("versions") or {}),
            counts={
                "records": stats.records,
                "versions": stats.versions,
                "events": stats.events,
                "tombstones": stats.tombstones,
                "applications": stats.applications,
                "bytes": stats.bytes,
            },
            healthy=True,
            token_configured=False,
            warnings=[*info.get("warnings", []), *([language] if language else [])],
        )

    # -- queries -------------------------------------------------------------------------

    def query(self, request: QueryRequest) -> QueryResponse:
        """The contract's response, for a route that sends it on (server, daemon, MCP)."""
        resolved, value = self._served(request)
        return response(resolved, value)  # type: ignore[return-value]

    def query_json(self, request: QueryRequest) -> tuple[bytes, dict[str, float] | None]:
        """:meth:`query`'s response as the JSON a route sends on (the server), with no
        model of it built (:func:`cairn.provider.views.response_json`), and a recall's
        stage timings (None for another view)."""
        resolved, value = self._served(request)
        timings = value.timings_ms if isinstance(value, RecallResult) else None
        return response_json(resolved, value), timings

    def serve(self, request: QueryRequest) -> Any:
        """The engine's own value of a query, for a caller in this process (a
        :class:`~cairn.model.Record`, a ``RecallResult``...): no model of the contract is
        built (:mod:`cairn.provider.views` builds them for the routes that send one)."""
        return self._served(request)[1]

    def _served(self, request: QueryRequest) -> tuple[QueryRequest, Any]:
        ns = self._ns(request.agent)
        request = self._ids.resolved(request, ns)  # an id as typed: a prefix, an application
        return request, self._handler(request, "query")(self, request, ns)

    # -- mutations -----------------------------------------------------------------------

    def apply(self, request: ApplyRequest) -> ApplyResponse:
        ns = self._ns(request.agent)
        # A store that words its errors by purpose (PostgreSQL) says "writing" for every
        # failure of a mutation, its first read included.
        intent = getattr(self._s.ports.records, "intent", None)
        with intent("writing") if intent is not None else nullcontext():
            return self._applied(request, ns)

    def _applied(self, request: ApplyRequest, ns: Namespace) -> ApplyResponse:
        response = self._apply(self._ids.resolved(request, ns), ns)
        if isinstance(response, FeedbackResponse) and response.changes and self._s.learning:
            # A doc's lifecycle follows its outcomes at once (promotion, eviction).
            self.learning().learning.settle(ns, [response.record.id])
        quiet = (
            isinstance(response, (*LEARNING_RESPONSES, pc.NameProjectResponse))
            and not response.changed
        )
        if not quiet and (not isinstance(response, FeedbackResponse) or response.changes):
            warnings = self._s.after_write(ns)
            if warnings and hasattr(response, "warnings"):
                response = response.model_copy(update={"warnings": [*response.warnings, *warnings]})
        return response

    def _apply(self, request: ApplyRequest, ns: Namespace) -> ApplyResponse:
        answer: Any = self._handler(request, "apply")(self, request, ns)
        return answer  # type: ignore[no-any-return]

    def _handler(self, request: object, kind: Kind) -> Handler:
        return HANDLERS[route_of(request, kind).request]

    @property
    def services(self) -> Services:
        """What this provider is built from (for its handlers)."""
        return self._s

    def projects(self) -> Projects:
        if self._s.projects is None:
            raise InvalidInput("this engine was assembled without project names")
        return self._s.projects

    def learning(self) -> LearningServices:
        if self._s.learning is None:
            raise InvalidInput("this engine was assembled without the learning layer")
        return self._s.learning()


def _learning_handler(model: type[BaseModel]) -> Handler:
    def handler(p: Engine, request: Any, ns: Namespace) -> Any:
        from cairn.provider.learning import HANDLERS as LEARNING_HANDLERS

        return LEARNING_HANDLERS[model](p.learning(), request, ns)

    handler.__name__ = f"learning_{model.__name__}"
    return handler


# request type -> what serves it: every request of the registry, none besides
HANDLERS: dict[type[BaseModel], Handler] = {
    **local_queries.HANDLERS,
    **local_mutations.HANDLERS,
    **project_handlers.HANDLERS,
    **{model: _learning_handler(model) for model in LEARNING_REQUESTS},
}


def _check() -> None:
    registered = {route.request for route in ROUTES}
    if registered != set(HANDLERS):
        beyond = sorted(m.__name__ for m in set(HANDLERS) - registered)
        missing = sorted(m.__name__ for m in registered - set(HANDLERS))
        raise TypeError(
            f"the embedded engine serves {beyond} beyond the registry and not {missing} of it"
        )


_check()

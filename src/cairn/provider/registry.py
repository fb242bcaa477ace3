"""The one registry of the contract's requests (SPEC §7): every route reads it.

Each :class:`Route` names a request model of ``cairn.provider.v1``, the response model it
is answered with, whether it is a query (``POST /v1/query``, changes nothing) or a
mutation (``POST /v1/apply``). The embedded engine serves each with the handler its
table (:data:`cairn.provider.local.HANDLERS`) keys by the request's type, checked against
this registry at import; the in-process provider dispatches on it, the HTTP server (and
so the local daemon, which is the server on a unix socket) parses bodies with it, and
the remote provider checks requests and parses replies with it — so a request is served
on every route or on none.

The contract's unions (:data:`cairn.provider.contract.QueryRequest` and ``ApplyRequest``)
give the static types and the OpenAPI schema; importing this module checks that they
hold exactly the registry's requests, so neither can gain a member the other lacks.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, get_args

from pydantic import BaseModel

from cairn.errors import InvalidInput
from cairn.provider import contract as c
from cairn.provider.contract import learning as lc
from cairn.provider.contract import projects as pc
from cairn.provider.models import CONTRACT_VERSION

Kind = Literal["query", "apply"]
TAGS: dict[Kind, str] = {"query": "view", "apply": "mutation"}
PATHS: dict[Kind, str] = {"query": "/v1/query", "apply": "/v1/apply"}


@dataclass(frozen=True, slots=True)
class Route:
    """One request of the contract and how every route serves it."""

    request: type[BaseModel]
    answer: type[BaseModel]
    kind: Kind

    @property
    def tag(self) -> str:
        """The discriminator field: ``view`` of a query, ``mutation`` of a mutation."""
        return TAGS[self.kind]

    @property
    def path(self) -> str:
        return PATHS[self.kind]

    @property
    def names(self) -> tuple[str, ...]:
        """The discriminator values that select this request (a model may take several:
        ``evict`` and ``unevict``, the four views of a task)."""
        return tuple(get_args(self.request.model_fields[self.tag].annotation))


def _q(request: type[BaseModel], answer: type[BaseModel]) -> Route:
    return Route(request, answer, "query")


def _a(request: type[BaseModel], answer: type[BaseModel]) -> Route:
    return Route(request, answer, "apply")


ROUTES: tuple[Route, ...] = (
    # queries
    _q(c.RecallQuery, c.RecallResponse),
    _q(c.TaskQuery, c.TaskResponse),
    _q(c.ExpandQuery, c.ExpandResponse),
    _q(c.ListQuery, c.RecordsResponse),
    _q(c.ShowQuery, c.RecordResponse),
    _q(c.HistoryQuery, c.RecordsResponse),
    _q(c.JournalQuery, c.JournalResponse),
    _q(c.TombstonesQuery, c.TombstonesResponse),
    _q(c.ApplicationsQuery, c.ApplicationsResponse),
    _q(c.ExplainQuery, c.ExplainResponse),
    _q(c.ExportQuery, c.ExportResponse),
    _q(lc.AskQuery, lc.AskResponse),
    _q(lc.TelemetryQuery, lc.TelemetryResponse),
    _q(pc.ProjectsQuery, pc.ProjectsResponse),
    # mutations
    _a(c.RememberRequest, c.WriteResponse),
    _a(c.StoreRequest, c.WriteResponse),
    _a(c.IngestRequest, c.IngestResponse),
    _a(c.CorrectRequest, c.WriteResponse),
    _a(c.ForgetRequest, c.ForgetResponse),
    _a(c.RestoreRequest, c.WriteResponse),
    _a(c.EvictRequest, c.WriteResponse),
    _a(c.PinRequest, c.WriteResponse),
    _a(c.FeedbackRequest, c.FeedbackResponse),
    _a(c.SignalRequest, c.SignalResponse),
    _a(c.ImportRequest, c.ImportResponse),
    _a(c.RebuildRequest, c.RebuildResponse),
    _a(lc.ObserveRequest, lc.ObserveResponse),
    _a(lc.ReflectRequest, lc.ReflectResponse),
    _a(lc.SweepRequest, lc.SweepResponse),
    _a(lc.ReviewRequest, lc.ReviewResponse),
    _a(lc.DeltaRequest, lc.DeltaResponse),
    _a(pc.NameProjectRequest, pc.NameProjectResponse),
)

BY_REQUEST: dict[type[BaseModel], Route] = {r.request: r for r in ROUTES}


def _by_name(kind: Kind) -> dict[str, type[BaseModel]]:
    table: dict[str, type[BaseModel]] = {}
    for route in ROUTES:
        if route.kind == kind:
            for name in route.names:
                if name in table:
                    raise TypeError(f"{TAGS[kind]} {name!r} selects two requests")
                table[name] = route.request
    return table


QUERIES = _by_name("query")  # view -> the query it selects
MUTATIONS = _by_name("apply")  # mutation -> the mutation it selects
BY_NAME: dict[Kind, dict[str, type[BaseModel]]] = {"query": QUERIES, "apply": MUTATIONS}


def members(union: Any) -> frozenset[type[BaseModel]]:
    """The request models of one of the contract's discriminated unions."""
    return frozenset(get_args(get_args(union)[0]))


def route_of(request: object, kind: Kind | None = None) -> Route:
    """The route of a request (InvalidInput: not a request of the contract, or one of
    the other kind: a mutation sent as a query)."""
    route = BY_REQUEST.get(type(request))  # type: ignore[arg-type]
    if route is None:
        raise InvalidInput(f"{type(request).__name__} is not a request of {CONTRACT_VERSION}")
    if kind is not None and route.kind != kind:
        what = {"query": "a query", "apply": "a mutation"}
        raise InvalidInput(
            f"{type(request).__name__} is {what[route.kind]} of {CONTRACT_VERSION},"
            f" not {what[kind]}"
        )
    return route


def _check() -> None:
    """The contract's unions and the registry hold the same requests, each once."""
    for kind, union in (("query", c.QueryRequest), ("apply", c.ApplyRequest)):
        listed = frozenset(r.request for r in ROUTES if r.kind == kind)
        declared = members(union)
        if listed != declared:
            extra = sorted(m.__name__ for m in declared - listed)
            missing = sorted(m.__name__ for m in listed - declared)
            raise TypeError(
                f"the {kind} union and the registry differ: not registered {extra},"
                f" not in the union {missing}"
            )
    if len(BY_REQUEST) != len(ROUTES):
        raise TypeError("a request is registered twice")


_check()

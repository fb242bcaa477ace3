"""The one registry of the contract's requests: every request of the contract's unions is
in it, has a handler in the embedded engine, is parsed by the HTTP server (and so by the
daemon, which is the server on a socket), is in the OpenAPI schema, and is answered with
a response of the contract; adding a request anywhere else fails at import."""

from __future__ import annotations

import json
from typing import Any, Literal, get_args

import pytest

from cairn.errors import InvalidInput
from cairn.provider import contract as c
from cairn.provider import local, registry
from cairn.provider.contract import learning as lc
from cairn.provider.models import Request
from cairn.server.app import parse_request


def test_the_unions_and_the_registry_hold_the_same_requests() -> None:
    queries = registry.members(c.QueryRequest)
    mutations = registry.members(c.ApplyRequest)
    assert queries | mutations == set(registry.BY_REQUEST)
    assert not queries & mutations
    for route in registry.ROUTES:
        assert route.kind == ("query" if route.request in queries else "apply")
    # the learning requests are the contract's like every other
    for model in (lc.AskQuery, lc.TelemetryQuery, lc.ObserveRequest, lc.ReflectRequest,
                  lc.SweepRequest, lc.ReviewRequest, lc.DeltaRequest):  # fmt: skip
        assert model in registry.BY_REQUEST


def test_every_route_has_a_handler_and_an_answer_of_the_contract() -> None:
    answers = set(get_args(c.QueryResponse)) | set(get_args(c.ApplyResponse))
    for route in registry.ROUTES:
        assert route.request in local.HANDLERS, route
        assert route.answer in answers, route
        assert route.path == {"query": "/v1/query", "apply": "/v1/apply"}[route.kind]
    assert set(local.HANDLERS) == {r.request for r in registry.ROUTES}


def test_the_server_parses_every_request_by_its_name(routes: list[registry.Route]) -> None:
    for route in routes:
        for name in route.names:
            body = json.dumps({route.tag: name, **_minimal(route.request)}).encode()
            table = registry.BY_NAME[route.kind]
            parsed = parse_request(body, route.tag, table)
            assert type(parsed) is route.request and getattr(parsed, route.tag) == name
            other = registry.BY_NAME["apply" if route.kind == "query" else "query"]
            with pytest.raises(InvalidInput, match=f"unknown {route.tag}"):
                parse_request(body, route.tag, other)


def test_the_openapi_schema_names_every_request() -> None:
    from fastapi import FastAPI

    from cairn.server.openapi import contract_openapi

    schema = contract_openapi(FastAPI(title="t", version="0"))
    for path, kind in (("/v1/query", "query"), ("/v1/apply", "apply")):
        body = schema["paths"][path]["post"]["requestBody"]["content"]["application/json"]
        mapping = body["schema"]["discriminator"]["mapping"]
        assert set(mapping) == set(registry.BY_NAME[kind]), path


def test_a_request_of_the_other_kind_or_of_no_contract_is_refused_by_name() -> None:
    with pytest.raises(InvalidInput, match=r"RecallQuery is a query of cairn\.provider\.v1"):
        registry.route_of(c.RecallQuery(query="x"), "apply")
    with pytest.raises(InvalidInput, match=r"is not a request of cairn\.provider\.v1"):
        registry.route_of(c.StatusResponse.model_construct(), None)


class _Unserved(Request):
    view: Literal["unserved"] = "unserved"
    agent: str | None = None


def test_a_request_added_to_a_union_alone_fails_the_import_check(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from functools import reduce
    from operator import or_
    from typing import Annotated

    from pydantic import Field

    union = reduce(or_, [*registry.members(c.QueryRequest), _Unserved])
    wider = Annotated[union, Field(discriminator="view")]
    monkeypatch.setattr(c, "QueryRequest", wider)
    with pytest.raises(TypeError, match=r"not registered \['_Unserved'\]"):
        registry._check()
    monkeypatch.undo()
    extra = (*registry.ROUTES, registry.Route(_Unserved, c.ExplainResponse, "query"))
    monkeypatch.setattr(registry, "ROUTES", extra)
    with pytest.raises(TypeError, match=r"not in the union \['_Unserved'\]"):
        registry._check()
    monkeypatch.setattr(local, "ROUTES", extra)
    with pytest.raises(TypeError, match=r"not \['_Unserved'\] of it"):
        local._check()


@pytest.fixture
def routes() -> list[registry.Route]:
    return list(registry.ROUTES)


def _minimal(model: type[Any]) -> dict[str, Any]:
    """The smallest valid body of ``model`` (its required fields)."""
    samples: dict[str, Any] = {
        "query": "x", "task": "x", "record_id": "01ARZ3NDEKTSV4RRFFQ69G5FAV", "text": "x",
        "application_id": "01ARZ3NDEKTSV4RRFFQ69G5FAV", "outcome": "ignored", "lines": [],
        "items": [], "question": "x", "transcript": "x", "op": "create",
        "idempotency_key": "k", "body": "x", "project_id": "git:0123456789abcdef",
        "name": "app",
    }  # fmt: skip
    required = {
        name: samples[name]
        for name, field in model.model_fields.items()
        if field.is_required() and name not in ("view", "mutation")
    }
    if "success" in model.model_fields:  # an episode says whether it succeeded
        required["success"] = True
    return required


def test_every_request_is_strict_alike_in_process_and_over_http() -> None:
    """One rule per field for every request: a boolean is true or false, never "yes";
    the server's parse and the in-process model refuse it in the same words."""
    from cairn.provider.client import build

    checked = 0
    for route in registry.ROUTES:
        for name, field in route.request.model_fields.items():
            if field.annotation is not bool:
                continue
            data = {**_minimal(route.request), name: "yes"}
            body = json.dumps({route.tag: route.names[0], **data}).encode()
            with pytest.raises(InvalidInput) as over_http:
                parse_request(body, route.tag, registry.BY_NAME[route.kind])
            with pytest.raises(InvalidInput) as in_process:
                build(route.request, {route.tag: route.names[0], **data})
            assert str(over_http.value) == str(in_process.value), route
            assert name in str(in_process.value)
            checked += 1
    assert checked >= 10

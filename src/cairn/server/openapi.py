"""The server's OpenAPI schema, generated from the contract's models.

The routes read their bodies themselves (so a refused request gets the contract's one-line
error, not a framework's), which leaves FastAPI nothing to describe them from; this
module puts the contract's request and response schemas (discriminated on ``view`` and
``mutation``) into the document, every model once under ``components.schemas``.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi
from pydantic import BaseModel, TypeAdapter

from cairn.provider import contract as c

REF = "#/components/schemas/{model}"


class ErrorReply(BaseModel):
    """What every refused or failed request gets back."""

    error: str
    code: str


def _json(schema: dict[str, Any], description: str) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


def _errors(codes: dict[str, str], error: dict[str, Any]) -> dict[str, Any]:
    return {status: _json(error, what) for status, what in codes.items()}


def contract_openapi(app: FastAPI) -> dict[str, Any]:
    """The document FastAPI serves at ``/openapi.json`` (built once)."""
    if app.openapi_schema is not None:
        return app.openapi_schema
    schema = get_openapi(
        title=app.title, version=app.version, description=app.description, routes=app.routes
    )
    keyed, top = TypeAdapter.json_schemas(
        [
            ("query", "validation", c.QUERY),
            ("apply", "validation", c.APPLY),
            ("query_reply", "serialization", TypeAdapter(c.QueryResponse)),
            ("apply_reply", "serialization", TypeAdapter(c.ApplyResponse)),
            ("status", "serialization", TypeAdapter(c.StatusResponse)),
            ("error", "serialization", TypeAdapter(ErrorReply)),
        ],
        ref_template=REF,
    )
    components = schema.setdefault("components", {}).setdefault("schemas", {})
    components.update(top.get("$defs", {}))
    error = keyed[("error", "serialization")]
    auth = {
        "401": "no token, or a token the server does not know",
        "403": "the token's agent is another than the request's",
    }
    refused = {
        "400": "a request the contract or the engine refuses (nothing changed)",
        "404": "no such record, application or event",
        "409": "refused by policy",
        "413": "the body is larger than the server accepts",
        "500": "a defect of the server",
        "503": "the store failed",
    }
    paths = schema.setdefault("paths", {})
    for path, key, what in (
        ("/v1/query", "query", "A query: its `view` names what to read."),
        ("/v1/apply", "apply", "A mutation: its `mutation` names the change."),
    ):
        operation = paths.setdefault(path, {}).setdefault("post", {})
        operation["description"] = what
        operation["requestBody"] = {
            "required": True,
            "content": {"application/json": {"schema": keyed[(key, "validation")]}},
        }
        operation["responses"] = {
            "200": _json(keyed[(f"{key}_reply", "serialization")], "the response"),
            **_errors(auth, error),
            **_errors(refused, error),
        }
        operation["security"] = [{"bearer": []}]
    status = paths.setdefault("/v1/status", {}).setdefault("get", {})
    status["responses"] = {
        "200": _json(keyed[("status", "serialization")], "the status of the token's tenant"),
        **_errors(auth, error),
    }
    status["security"] = [{"bearer": []}]
    schema["components"]["securitySchemes"] = {"bearer": {"type": "http", "scheme": "bearer"}}
    schema["info"]["x-contract"] = c.CONTRACT_VERSION
    app.openapi_schema = schema
    return schema

"""The provider contract as a JSON HTTP API: the app factory.

    POST /v1/query    a query of cairn.provider.v1 in, its response out
    POST /v1/apply    a mutation in, its response out
    GET  /v1/status   the status of the token's tenant
    GET  /health      the process and its store answer (no token needed; as /readyz)
    GET  /livez       the process answers (liveness: never touches the store)
    GET  /readyz      the store answers too (readiness: 503 while the database is away)
    GET  /metrics     Prometheus metrics (no token needed; they name no tenant)
    GET  /openapi.json

Every request of ``/v1`` carries ``Authorization: Bearer <token>``; the token alone says
which tenant it acts as (a request has no tenant field: the contract refuses one), and a
token pinned to an agent acts only as that agent. The engine is one per process, shared
by every tenant; each request gets a provider bound to its token's tenant
(``engine.bound``), so it can name no key of another tenant.

Bodies are read and parsed here, by the contract's own type adapters, so a refused
request gets the contract's one-line error naming the field (``{"error", "code"}``, the
codes of :data:`cairn.provider.remote.ERROR_STATUS`) and nothing changes. The engine runs
on worker threads; the event loop only moves bytes.

A store that cannot answer now (PostgreSQL restarting, no connection free in time) is
answered 503 with ``Retry-After``. A unit of work whose connection the database dropped
under it runs once more on a fresh one when that is safe: a query, or a mutation (every
mutation carries its idempotency key, so a second run after a lost commit is a no-op).
"""

from __future__ import annotations

import json
import logging
import secrets
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from typing import Any, Protocol

from fastapi import FastAPI, Request, Response
from pydantic import BaseModel, ValidationError
from starlette.concurrency import run_in_threadpool

from cairn.errors import CairnError, InvalidInput, StorageUnavailable
from cairn.limits import MAX_HTTP_BODY_BYTES
from cairn.provider import Provider
from cairn.provider import contract as c
from cairn.provider.attribution import token_session
from cairn.provider.client import attributed, invalid
from cairn.provider.registry import MUTATIONS, QUERIES
from cairn.provider.remote import BULK_MUTATIONS, PROGRESS_HEADER, error_of, one_line
from cairn.server.auth import Binding, TokenStore, is_local, local_binding
from cairn.server.metrics import CONTENT_TYPE, SIZES, Metrics
from cairn.server.openapi import contract_openapi
from cairn.server.progress import ProgressBoard
from cairn.validation import parse_json_line

log = logging.getLogger("cairn.server")
access = logging.getLogger("cairn.server.access")

PARSE_ON_LOOP_BYTES = 64 * 2**10  # larger bodies are parsed on a worker thread
RETRY_AFTER_S = 2  # what a 503 asks a client to wait: a restart or a full pool passes soon


class Served(Provider, Protocol):
    """A provider the server sends answers of: a query's as the JSON it sends, and a
    recall's stage timings (for the metrics), with no model of the response built."""

    def query_json(self, request: Any) -> tuple[bytes, dict[str, float] | None]: ...


class Engine(Protocol):
    """What the server needs of the engine: a provider per tenant (``LocalProvider`` over
    any storage pair)."""

    def bound(self, *, tenant: str | None = None, agent: str | None = None) -> Served: ...

    def status(self) -> c.StatusResponse: ...

    def close(self) -> None: ...


class Refused(Exception):
    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.code = code


def error_reply(status: int, code: str, message: str) -> Response:
    body = json.dumps({"error": one_line(message), "code": code}, ensure_ascii=False)
    headers = {"WWW-Authenticate": "Bearer"} if status == 401 else None
    if status == 503:
        headers = {"Retry-After": str(RETRY_AFTER_S)}
    return Response(body, status_code=status, media_type="application/json", headers=headers)


def retry_safe(request: Any) -> bool:
    """Whether running ``request`` again after a lost connection does nothing twice: a
    query (a task query records one application per delivery: not twice), a mutation
    under its idempotency key (an ingest's items are keyed by it, item by item)."""
    return not isinstance(request, c.TaskQuery)


def answered_once_more(call: Callable[[Any], Any], request: Any) -> Any:
    """``call(request)``, once more when the database dropped the connection under it."""
    try:
        return call(request)
    except StorageUnavailable as exc:
        if not (exc.retryable and retry_safe(request)):
            raise
        log.warning("the database dropped the connection; trying once more",
                    extra={"error": one_line(str(exc))})  # fmt: skip
        return call(request)


def _json(model: BaseModel) -> Response:
    return Response(model.model_dump_json(), media_type="application/json")


def parse_request(body: bytes, tag: str, models: Mapping[str, type[BaseModel]]) -> Any:
    """The request a body holds, validated by its own model, so a refusal names the field
    exactly as the embedded engine's does; InvalidInput otherwise."""
    # The JSON rules of every boundary (ingest lines, import files, the daemon socket):
    # a repeated key is refused, never silently resolved to its last value.
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        raise InvalidInput("the body is not JSON (not UTF-8 text)") from None
    data = parse_json_line(text, where="the body")
    if not isinstance(data, dict):
        raise InvalidInput(f"the body must be a JSON object with a {tag!r}")
    named = data.get(tag)
    model = models.get(named) if isinstance(named, str) else None
    if model is None:
        shown = repr(named)[:60]
        raise InvalidInput(f"unknown {tag} {shown} (expected one of: {', '.join(models)})")
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise invalid(exc) from None


def create_app(
    engine: Engine,
    tokens: TokenStore,
    *,
    metrics: Metrics | None = None,
    max_body_bytes: int = MAX_HTTP_BODY_BYTES,
    dashboard: bool = True,
    local_socket: str | None = None,
    board: ProgressBoard | None = None,
) -> FastAPI:
    """The app over ``engine``; it closes the engine when it shuts down. ``dashboard``:
    the web dashboard at ``/dashboard`` (its session key beside the tokens file).
    ``local_socket``: the local daemon's unix socket, whose requests act as the tenant and
    agent they name (:mod:`cairn.server.local`); every other request needs a token.
    ``board``: where bulk mutations under way are kept for ``GET /v1/progress`` (the
    folder the workers of a multi-worker run share; default: this process only)."""
    from cairn import __version__

    metrics = metrics if metrics is not None else Metrics(store_sizes(engine, tokens))
    board = board or ProgressBoard()  # bulk mutations under way, read by GET /v1/progress

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        log.info("started", extra={"contract": c.CONTRACT_VERSION, "version": __version__})
        try:
            yield
        finally:
            await run_in_threadpool(engine.close)
            metrics.process_ended()
            log.info("stopped")

    app = FastAPI(
        title="cairn",
        version=__version__,
        description=f"The cairn provider contract {c.CONTRACT_VERSION} over HTTP.",
        lifespan=lifespan,
        docs_url=None,
        redoc_url=None,
    )
    app.openapi = lambda: contract_openapi(app)  # type: ignore[method-assign]

    def bind(request: Request) -> Binding:
        if is_local(request.scope, local_socket):
            return local_binding(request.headers)
        header = request.headers.get("authorization")
        if not header:
            raise Refused(401, "unauthorized", "a token is needed: Authorization: Bearer <token>")
        scheme, _, token = header.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise Refused(401, "unauthorized", "the Authorization header must be Bearer <token>")
        binding = tokens.authenticate(token.strip())
        if binding is None:
            raise Refused(401, "unauthorized", "unknown or revoked token")
        return binding

    async def body_of(request: Request) -> bytes:
        declared = request.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > max_body_bytes:
            raise Refused(413, "too_large", f"the body is over {max_body_bytes:,} bytes")
        body = bytearray()
        async for chunk in request.stream():
            body += chunk
            if len(body) > max_body_bytes:
                raise Refused(413, "too_large", f"the body is over {max_body_bytes:,} bytes")
        return bytes(body)

    def provider_for(binding: Binding, request: Any) -> Served:
        asked = getattr(request, "agent", None)
        if binding.agent is not None and asked not in (None, binding.agent):
            raise Refused(403, "forbidden", f"this token acts only as agent {binding.agent!r}")
        return engine.bound(tenant=binding.tenant, agent=binding.agent or "default")

    async def observed(
        route: str,
        request: Request,
        answer: Callable[[dict[str, Any]], Awaitable[Response]],
    ) -> Response:
        """Answer, then count, time and log the request, whatever happened."""
        start = time.perf_counter()
        seen: dict[str, Any] = {"operation": "-"}
        request_id = request.headers.get("x-request-id", "")[:64] or secrets.token_hex(8)
        metrics.in_flight.inc()
        try:
            response = await answer(seen)
        except Refused as exc:
            response = error_reply(exc.status, exc.code, str(exc))
        except CairnError as exc:
            status, code = error_of(exc)
            response = error_reply(status, code, str(exc))
        except Exception:  # a defect: logged with its traceback, one line to the client
            log.exception("request failed", extra={"route": route, "request_id": request_id})
            response = error_reply(500, "internal", f"internal error (request {request_id})")
        finally:
            metrics.in_flight.dec()
            metrics.sample_pool()
        seconds = time.perf_counter() - start
        metrics.observe(route, seen["operation"], response.status_code, seconds)
        if seen.get("timings") is not None:
            metrics.observe_recall(seen["timings"])
        response.headers["X-Request-Id"] = request_id
        access.info(
            "request",
            extra={
                "route": route,
                "operation": seen["operation"],
                "status": response.status_code,
                "ms": round(seconds * 1000, 2),
                "tenant": seen.get("tenant"),
                "token": seen.get("token"),
                "request_id": request_id,
            },
        )
        return response

    async def contract_call(request: Request, route: str) -> Response:
        async def answer(seen: dict[str, Any]) -> Response:
            binding = bind(request)
            seen.update(tenant=binding.tenant, token=binding.token_id)
            body = await body_of(request)
            is_query = route == "/v1/query"
            tag, models = ("view", QUERIES) if is_query else ("mutation", MUTATIONS)
            if len(body) > PARSE_ON_LOOP_BYTES:  # a bulk body: parsed off the event loop
                parsed = await run_in_threadpool(parse_request, body, tag, models)
            else:
                parsed = parse_request(body, tag, models)
            seen["operation"] = parsed.view if is_query else parsed.mutation
            provider = provider_for(binding, parsed)
            if not is_local(request.scope, local_socket):
                # Outcomes count per (session, sender) the server knows: the token's.
                parsed = attributed(parsed, token_session(binding.token_id))

            def work() -> Response:
                if getattr(parsed, "mutation", None) in BULK_MUTATIONS:
                    key = parsed.idempotency_key
                    with board.running(binding.tenant, key) as report:
                        provider.progress = report
                        done = _json(answered_once_more(provider.apply, parsed))
                        final = board.read(binding.tenant, key)
                    if final is not None and final[1] > 0:  # drawn even if never polled
                        done.headers[PROGRESS_HEADER] = f"{final[0]}/{final[1]}"
                    return done
                if not is_query:
                    return _json(answered_once_more(provider.apply, parsed))
                sent, seen["timings"] = answered_once_more(provider.query_json, parsed)
                return Response(sent, media_type="application/json")

            return await run_in_threadpool(work)

        return await observed(route, request, answer)

    @app.post("/v1/query", summary="Query (cairn.provider.v1)", response_model=None)
    async def query(request: Request) -> Response:
        return await contract_call(request, "/v1/query")

    @app.post("/v1/apply", summary="Apply a mutation (cairn.provider.v1)", response_model=None)
    async def apply(request: Request) -> Response:
        return await contract_call(request, "/v1/apply")

    @app.get("/v1/status", summary="Status of the token's tenant", response_model=None)
    async def status(request: Request) -> Response:
        async def answer(seen: dict[str, Any]) -> Response:
            binding = bind(request)
            seen.update(tenant=binding.tenant, token=binding.token_id, operation="status")
            provider = engine.bound(tenant=binding.tenant, agent=binding.agent or "default")
            found = await run_in_threadpool(provider.status)
            # The store's size and file are the server's, not the tenant's: not shown.
            counts = {k: v for k, v in found.counts.items() if k != "bytes"}
            update = {"location": None, "token_configured": True, "counts": counts}
            return _json(found.model_copy(update=update))

        return await observed("/v1/status", request, answer)

    @app.get("/v1/progress", summary="How far a bulk mutation under way has got",
             response_model=None)  # fmt: skip
    async def progress(request: Request, key: str = "") -> Response:
        async def answer(seen: dict[str, Any]) -> Response:
            binding = bind(request)
            seen.update(tenant=binding.tenant, token=binding.token_id, operation="progress")
            found = board.read(binding.tenant, key)
            if found is None:
                raise Refused(404, "not_found", "no bulk mutation with this key is under way")
            return Response(
                json.dumps({"done": found[0], "total": found[1]}), media_type="application/json"
            )

        return await observed("/v1/progress", request, answer)

    async def ready(seen: dict[str, Any]) -> Response:
        seen["operation"] = "health"
        try:
            await run_in_threadpool(engine.status)
        except Exception as exc:
            log.error("unhealthy: %s", one_line(str(exc)))
            body = {"status": "unavailable", "error": one_line(str(exc))}
            headers = {"Retry-After": str(RETRY_AFTER_S)}
            return Response(json.dumps(body), status_code=503, media_type="application/json",
                            headers=headers)  # fmt: skip
        body = {"status": "ok", "contract": c.CONTRACT_VERSION, "version": __version__}
        return Response(json.dumps(body), media_type="application/json")

    @app.get("/health", summary="Liveness and store health (no token)", response_model=None)
    async def health(request: Request) -> Response:
        return await observed("/health", request, ready)

    @app.get("/readyz", summary="Readiness: the store answers (no token)", response_model=None)
    async def readyz(request: Request) -> Response:
        return await observed("/readyz", request, ready)

    @app.get("/livez", summary="Liveness: the process answers (no token)", response_model=None)
    async def livez(request: Request) -> Response:
        async def alive(seen: dict[str, Any]) -> Response:
            seen["operation"] = "live"
            body = {"status": "ok", "version": __version__}
            return Response(json.dumps(body), media_type="application/json")

        return await observed("/livez", request, alive)

    @app.get("/metrics", summary="Prometheus metrics (no token)", response_model=None)
    async def metrics_route(request: Request) -> Response:
        async def answer(seen: dict[str, Any]) -> Response:
            seen["operation"] = "metrics"
            text = await run_in_threadpool(metrics.render)
            return Response(text, media_type=CONTENT_TYPE)

        return await observed("/metrics", request, answer)

    if dashboard:
        mount_dashboard(app, engine, tokens)
    return app


def mount_dashboard(app: FastAPI, engine: Engine, tokens: TokenStore) -> None:
    from cairn.dashboard import create_dashboard
    from cairn.dashboard.sessions import load_key

    def bind(tenant: str, agent: str) -> Provider:
        return engine.bound(tenant=tenant, agent=agent)

    key = load_key(tokens.path.with_name(tokens.path.name + ".dashboard-key"))
    app.mount("/dashboard", create_dashboard(bind, tokens, key=key))


def store_sizes(engine: Engine, tokens: TokenStore) -> Callable[[], Mapping[str, int]]:
    """Totals over every tenant and agent a token serves (each counted once)."""

    def measure() -> Mapping[str, int]:
        totals = dict.fromkeys(SIZES, 0)
        served = {(b.tenant, b.agent or "default") for b in tokens.bindings()}
        size = int(engine.status().counts.get("bytes", 0))
        for tenant, agent in sorted(served):
            counts = engine.bound(tenant=tenant, agent=agent).status().counts
            for name in SIZES:
                totals[name] += int(counts.get(name, 0))
        return {**totals, "bytes": size, "tenants": len({t for t, _ in served})}

    return measure

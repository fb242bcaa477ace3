"""The provider contract over HTTP: a ``cairn serve`` somewhere, through its JSON API.

The same ``status / query / apply`` as the embedded engine. Requests go out as the
contract's JSON; replies are parsed back into the contract's models (a reply that is not
one is an error, never guessed at). The tenant is the token's: the server binds every
request to the tenant its token was made for, so this provider learns its tenant from the
server and never sends one.

When the server fails, its real error comes back as one line: the caller's own mistakes
(a refused token, a request the server finds wrong, an unknown id) as ``InvalidInput``
(``NotFound`` for an unknown id), a policy refusal as ``Conflict``, and an unreachable,
slow or failing server, or a reply that is not the contract's, as ``StorageError``.
Nothing local is ever read instead.

The error vocabulary of the wire (``ERROR_STATUS``, :func:`error_of`) is defined here and
used by the server, so both ends agree on it.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import Any

import httpx
from pydantic import BaseModel, ValidationError

from cairn.daemon.wire import AGENT_HEADER as LOCAL_AGENT_HEADER
from cairn.daemon.wire import TENANT_HEADER as LOCAL_TENANT_HEADER
from cairn.daemon.wire import encode_name
from cairn.errors import (
    CairnError,
    Conflict,
    InvalidInput,
    NotFound,
    StorageError,
    StoreUnusable,
)
from cairn.provider.contract import (
    CONTRACT_VERSION,
    ApplyRequest,
    ApplyResponse,
    QueryRequest,
    QueryResponse,
    StatusResponse,
)
from cairn.provider.registry import Kind, route_of

# code in an error reply -> its HTTP status
ERROR_STATUS = {
    "invalid_input": 400,
    "unauthorized": 401,
    "forbidden": 403,
    "not_found": 404,
    "conflict": 409,
    "too_large": 413,
    "internal": 500,
    "storage_error": 503,
    "store_unusable": 503,
}


# The mutations whose progress a server reports at GET /v1/progress while they run.
BULK_MUTATIONS = frozenset({"ingest", "import", "rebuild"})
POLL_S = 0.3  # how often a bulk mutation's progress is asked for
# A bulk mutation's reply carries its last figures ("done/total") in this header, so a
# request that ended between two asks still shows them finished.
PROGRESS_HEADER = "X-Cairn-Progress"


def error_of(exc: BaseException) -> tuple[int, str]:
    """The HTTP status and code of an error the engine raised (the server's side)."""
    if isinstance(exc, NotFound):
        return 404, "not_found"
    if isinstance(exc, InvalidInput):
        return 400, "invalid_input"
    if isinstance(exc, Conflict):
        return 409, "conflict"
    if isinstance(exc, StoreUnusable):  # full, read-only, damaged: said as such on every route
        return 503, "store_unusable"
    if isinstance(exc, StorageError):
        return 503, "storage_error"
    return 500, "internal"


class Unreachable(StorageError):
    """The server could not be reached, or its answer did not arrive. ``sent``: the
    request may have reached it (and may have been applied), so it must not simply be
    done again somewhere else; False: it never left this process."""

    def __init__(self, message: str, *, sent: bool) -> None:
        super().__init__(message)
        self.sent = sent


def _client(
    base_url: str, auth: dict[str, str], timeout: float, transport: httpx.BaseTransport | None
) -> httpx.Client:
    from cairn import __version__

    return httpx.Client(
        base_url=base_url,
        headers={**auth, "Accept": "application/json", "User-Agent": f"cairn/{__version__}"},
        timeout=httpx.Timeout(timeout, connect=min(timeout, 10.0)),
        transport=transport,
        trust_env=False,  # a proxy from the environment must not see the token
    )


def one_line(text: str, limit: int = 500) -> str:
    line = " ".join(str(text).split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


class RemoteProvider:
    """The contract over HTTP. ``token`` is the server's bearer token (the caller reads it
    from the environment variable named ``token_env``, named in errors).

    ``tenant``: when given, the token's tenant must be this one (checked before the first
    request); ``agent``: the default agent of requests that name none (else the server's:
    the token's agent, or ``default``).
    """

    def __init__(
        self,
        endpoint: str,
        token: str,
        *,
        token_env: str = "CAIRN_TOKEN",
        timeout: float = 30.0,
        tenant: str | None = None,
        agent: str | None = None,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        if not token or not token.isascii() or not token.isprintable() or " " in token:
            raise InvalidInput(f"the environment variable {token_env} does not hold a token")
        self.endpoint = endpoint.rstrip("/")
        self._where = f"the cairn server at {self.endpoint}"
        self._token_env = token_env
        self._timeout = timeout
        self._expected = tenant
        self._checked = tenant is None
        self._tenant: str | None = None
        self._agent = agent
        self._own_agent = agent is not None
        # Set: a bulk mutation's progress, asked of the server while it runs.
        self.progress: Callable[[int, int], None] | None = None
        self._client = _client(self.endpoint, {"Authorization": f"Bearer {token}"}, timeout,
                               transport)  # fmt: skip

    @classmethod
    def over_socket(
        cls, socket_path: str, *, tenant: str, agent: str, timeout: float = 30.0
    ) -> RemoteProvider:
        """The local daemon on its unix socket. No token: the socket's file permissions
        are its auth (only its user can connect); the tenant and agent ride on every
        request, and the daemon acts as exactly those."""
        self = cls.__new__(cls)
        self.endpoint = f"unix:{socket_path}"
        self._where = f"the cairn daemon at {socket_path}"
        self._token_env = ""
        self._timeout = timeout
        self._expected = tenant
        self._checked = True  # the daemon binds each request to the tenant it names
        self._tenant = tenant
        self._agent = agent
        self._own_agent = True
        self.progress = None
        transport = httpx.HTTPTransport(uds=socket_path, verify=False, retries=0)
        headers = {LOCAL_TENANT_HEADER: encode_name(tenant), LOCAL_AGENT_HEADER: encode_name(agent)}
        self._client = _client("http://cairn-daemon", headers, timeout, transport)
        return self

    # -- the binding ---------------------------------------------------------------------

    @property
    def tenant(self) -> str:
        if self._tenant is None:
            self.status()
        assert self._tenant is not None
        return self._tenant

    @tenant.setter
    def tenant(self, value: str) -> None:
        raise InvalidInput("a remote provider serves only its token's tenant")

    @property
    def agent(self) -> str:
        if self._agent is None:
            self.status()
        assert self._agent is not None
        return self._agent

    @agent.setter
    def agent(self, value: str) -> None:
        self._agent = value
        self._own_agent = True

    def close(self) -> None:
        self._client.close()

    # -- the contract --------------------------------------------------------------------

    def status(self) -> StatusResponse:
        reply = self._parse(self._send("GET", "/v1/status", None), StatusResponse)
        assert isinstance(reply, StatusResponse)
        self._tenant = reply.tenant
        if self._agent is None:
            self._agent = reply.agent
        if self._expected is not None and reply.tenant != self._expected:
            raise InvalidInput(
                f"the token in {self._token_env} is for tenant {reply.tenant!r}, not"
                f" {self._expected!r}; a remote provider serves only its token's tenant"
            )
        self._checked = True
        return reply.model_copy(
            update={"provider": "remote", "location": self.endpoint, "token_configured": True}
        )

    def query(self, request: QueryRequest) -> QueryResponse:
        answer: Any = self._call("query", request)
        return answer  # type: ignore[no-any-return]

    def apply(self, request: ApplyRequest) -> ApplyResponse:
        answer: Any = self._call("apply", request)
        return answer  # type: ignore[no-any-return]

    def _call(self, kind: Kind, request: BaseModel) -> BaseModel:
        route = route_of(request, kind)  # the registry every route reads
        if not self._checked:
            self.status()
        if self._own_agent and getattr(request, "agent", None) is None:
            request = request.model_copy(update={"agent": self._agent})
        mutation = getattr(request, "mutation", None)
        report = self.progress
        if report is None or mutation not in BULK_MUTATIONS:
            return self._parse(self._send("POST", route.path, request), route.answer)
        stop = threading.Event()
        key = str(getattr(request, "idempotency_key", ""))
        poller = threading.Thread(
            target=self._poll, args=(key, report, stop), name="cairn-progress", daemon=True
        )
        poller.start()
        try:
            reply = self._send("POST", route.path, request)
        finally:
            stop.set()
            poller.join()
        final = final_figures(reply.headers.get(PROGRESS_HEADER, ""))
        if final is not None:  # after the poller: the last figures drawn are these
            report(*final)
        return self._parse(reply, route.answer)

    def _poll(self, key: str, report: Callable[[int, int], None], stop: threading.Event) -> None:
        """Ask how far the request with ``key`` has got, every POLL_S until ``stop``; a
        404 is a request not started yet or already done. Any other failure (a server
        that does not report progress, a lost connection) ends the asking quietly: the
        request itself says what went wrong. The reply brings the last figures
        (PROGRESS_HEADER), so a request that ends before the first ask is drawn too."""
        while not stop.wait(POLL_S):
            try:
                reply = self._client.get("/v1/progress", params={"key": key})
            except Exception:  # progress is shown, never needed: no failure of it counts
                return
            if reply.status_code == 404 and _error_body(reply)[1] == "not_found":
                continue
            if reply.status_code != 200:
                return
            try:
                figures = reply.json()
                done, total = int(figures["done"]), int(figures["total"])
            except (ValueError, TypeError, KeyError):
                return
            if total > 0 and not stop.is_set():
                report(done, total)

    # -- the wire ------------------------------------------------------------------------

    def _send(self, method: str, path: str, request: BaseModel | None) -> httpx.Response:
        where = self._where
        content = request.model_dump_json().encode("utf-8") if request is not None else None
        headers = {"Content-Type": "application/json"} if content is not None else None
        try:
            response = self._client.request(method, path, content=content, headers=headers)
        except httpx.ConnectTimeout:
            raise Unreachable(f"cannot reach {where}: no connection within"
                              f" {self._timeout:g} s", sent=False) from None  # fmt: skip
        except httpx.TimeoutException:
            raise Unreachable(
                f"{where} did not answer within {self._timeout:g} s", sent=True
            ) from None
        except httpx.ConnectError as exc:
            raise Unreachable(f"cannot reach {where}: {_reason(exc)}", sent=False) from None
        except httpx.HTTPError as exc:
            raise Unreachable(f"{where} failed: {_reason(exc)}", sent=True) from None
        if response.status_code >= 400:
            raise self._refusal(response, path)
        return response

    def _refusal(self, response: httpx.Response, path: str) -> CairnError:
        status = response.status_code
        where = self._where
        message, code = _error_body(response)
        if message is None:  # not a cairn error reply: say what came back
            if status == 404:
                return InvalidInput(
                    f"{self.endpoint}{path}: no such route (404); is memory.remote.endpoint"
                    " the address of a cairn server?"
                )
            text = one_line(response.text, 200) or response.reason_phrase
            shown = f"{status} {text}".strip()
            if status >= 500:
                return StorageError(f"{where} failed ({shown})")
            return InvalidInput(f"{where} refused the request ({shown})")
        if not self._token_env and status in (401, 403):  # the daemon's socket: no token
            return InvalidInput(f"{where} refused the request: {message}")
        if status == 401 or code == "unauthorized":
            return InvalidInput(f"{where} refused the token in {self._token_env}: {message}")
        if status == 403 or code == "forbidden":
            return InvalidInput(
                f"{where} refused this for the token in {self._token_env}: {message}"
            )
        if code == "not_found":
            return NotFound(message)
        if code == "conflict":
            return Conflict(message)
        if code == "store_unusable":
            return StoreUnusable(message)
        if status >= 500:
            return StorageError(f"{where} failed ({status}): {message}")
        return InvalidInput(message)

    def _parse(self, response: httpx.Response, model: type[BaseModel]) -> BaseModel:
        try:
            return model.model_validate_json(response.content)
        except ValidationError as exc:
            raise StorageError(self._malformed(response, model, exc)) from None

    def _malformed(self, response: httpx.Response, model: type[BaseModel], exc: Exception) -> str:
        where = self._where
        try:
            data = json.loads(response.content)
        except ValueError:
            return f"{where} sent a reply that is not JSON ({one_line(response.text, 80)!r})"
        spoken = data.get("contract") if isinstance(data, dict) else None
        if isinstance(spoken, str) and spoken != CONTRACT_VERSION:
            return f"{where} speaks {spoken}, this client {CONTRACT_VERSION}"
        detail = ""
        if isinstance(exc, ValidationError) and exc.errors():
            err = exc.errors()[0]
            field = ".".join(str(p) for p in err.get("loc", ())) or "reply"
            detail = f": {field}: {err.get('msg', 'invalid')}"
        return f"{where} sent a reply that is not a {CONTRACT_VERSION} {model.__name__}{detail}"


def final_figures(header: str) -> tuple[int, int] | None:
    """``(done, total)`` from a PROGRESS_HEADER value ("done/total"), else None."""
    done, slash, total = header.partition("/")
    if not (slash and header.isascii() and done.isdigit() and total.isdigit()) or len(header) > 40:
        return None
    return (int(done), int(total)) if int(total) > 0 else None


def _error_body(response: httpx.Response) -> tuple[str | None, str | None]:
    """The message and code of a cairn error reply, or (None, None) for anything else."""
    try:
        data = response.json()
    except ValueError:
        return None, None
    if not isinstance(data, dict) or not isinstance(data.get("error"), str):
        return None, None
    code = data.get("code")
    return one_line(data["error"]), code if isinstance(code, str) else None


def _reason(exc: Exception) -> str:
    text = one_line(str(exc), 200)
    if "refused" in text.lower():
        return "connection refused"
    return text or type(exc).__name__

"""The one way to memory: :class:`Client` over a provider (SPEC §7).

Every interface — the Python API (:class:`cairn.Memory`), the command line, the agent
hooks (in their own process or in the daemon), the MCP server and the dashboard — reaches
the provider through a client: it builds the request of the contract from keyword data
(a refusal is the contract's one-line error), sets the attribution of outcomes this
process knows (:mod:`cairn.provider.attribution`), sends it, checks the answer's type and
collects the warnings mutations report. What an interface finds out on the way (the
repository it runs in) and records is deferred (:meth:`Client.defer`) until its request
is built: a request the contract refuses writes nothing.

Keys made by :meth:`Client.key` are stable: the same parts for the same tenant and agent
are the same idempotency key in any process, so a retry elsewhere (the hook in the daemon,
then in-process once the daemon stopped) is a no-op, never a second write.

This module imports the contract only, never the engine: the command line and the hooks
load it through the daemon without loading the engine.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel, ValidationError

from cairn.errors import InvalidInput, StorageError
from cairn.identifiers import new_ulid
from cairn.provider.attribution import Attribution, attribute
from cairn.provider.checked import CHECK_ERROR
from cairn.provider.registry import route_of
from cairn.validation import kind_of

if TYPE_CHECKING:
    from cairn.provider import Provider
    from cairn.provider.contract import StatusResponse

T = TypeVar("T")
KEPT_WARNINGS = 100  # a long-lived client keeps the latest warnings, not every one
CHECKING_KEY = "checking"  # the key a request is checked with before its own is made


class Client:
    """Typed requests to one provider, bound to its tenant and default agent.

    ``provider``: the provider; or ``opener``, how to open it on first use (the command
    line opens the engine only when a command needs it). ``attribution``: whom the outcomes sent
    through this client come from (None: as each request says — the embedded library is
    its own serving process). ``warnings``: where the warnings of mutations go (a list
    the caller prints, or the client's own)."""

    def __init__(
        self,
        provider: Provider | None = None,
        *,
        opener: Callable[[], Provider] | None = None,
        tenant: str | None = None,
        agent: str | None = None,
        attribution: Attribution | None = None,
        warnings: list[str] | None = None,
    ) -> None:
        if (provider is None) == (opener is None):
            raise TypeError("a client takes a provider or an opener, one of the two")
        self._provider = provider
        self._open = opener
        self._tenant = tenant
        self._agent = agent
        self.attribution = attribution
        self.warnings: list[str] = warnings if warnings is not None else []
        self._deferred: list[Callable[[], object]] = []

    @property
    def provider(self) -> Provider:
        if self._provider is None:
            assert self._open is not None
            self._provider = self._open()
        return self._provider

    @property
    def opened(self) -> bool:
        """Whether the provider is open (a lazy client opens it on its first request)."""
        return self._provider is not None

    @property
    def tenant(self) -> str:
        return self._tenant if self._tenant is not None else self.provider.tenant

    @property
    def agent(self) -> str:
        return self._agent if self._agent is not None else self.provider.agent

    def defer(self, write: Callable[[], object]) -> None:
        """Make ``write`` (a write through this client that no request asked for: the
        repository's readable name) just before this client's next request is sent, once
        that request is built, so its checks run first: a request the contract refuses
        leaves the store as it was. In the order deferred; each once."""
        self._deferred.append(write)

    def flush(self) -> None:
        """Make the deferred writes now (a command with no request of its own to check)."""
        while self._deferred:
            self._deferred.pop(0)()  # taken first: a write's own requests send through here

    def query(self, model: type[Any], answer: type[T], **data: Any) -> T:
        """One query of the contract, built from ``data``; its response, of its type."""
        return self.send(build(model, data), answer)

    def apply(
        self, model: type[Any], answer: type[T], key: str | Callable[[], str] | None, **data: Any
    ) -> T:
        """One mutation under the idempotency ``key`` (None: a new one, never repeated; a
        callable: a key that reads the store, made once the request's own fields are
        checked, so a refused request does not even open the store)."""
        if callable(key):
            build(model, {"idempotency_key": CHECKING_KEY, **data})
            key = key()
        return self.send(build(model, {"idempotency_key": key or new_ulid(), **data}), answer)

    def value(self, model: type[Any], **data: Any) -> Any:
        """The engine's own value of one query (a ``Record``, a ``RecallResult``...): in
        process the embedded engine's answer as it is, no model of the contract built;
        from another process (a server, the daemon) the value of its response."""
        request = build(model, data)
        route = route_of(request, "query")
        self.flush()
        serve = getattr(self.provider, "serve", None)
        if serve is not None:
            return serve(request)
        from cairn.provider.wire import value  # it imports the engine: only here

        return value(self.send(request, route.answer))

    def send(self, request: BaseModel, answer: type[T]) -> T:
        """A request built already: a query is asked, a mutation applied (attributed as
        this client says, its warnings collected), after the deferred writes."""
        if route_of(request).kind == "query":
            self.flush()
            return expect(self.provider.query(request), answer)  # type: ignore[arg-type]
        request = attributed(request, self.attribution)
        self.flush()
        response = self.provider.apply(request)  # type: ignore[arg-type]
        said = getattr(response, "warnings", None)
        if said:
            self.warnings += said
            del self.warnings[:-KEPT_WARNINGS]
        return expect(response, answer)

    def status(self) -> StatusResponse:
        return self.provider.status()

    def key(self, *parts: object) -> str:
        """A stable idempotency key for these parts (:func:`stable_key`)."""
        return stable_key(self.tenant, self.agent, *parts)

    def close(self) -> None:
        """Close the provider if it was opened."""
        provider, self._provider = self._provider, None
        if provider is not None:
            provider.close()


def attributed(request: T, who: Attribution | None) -> T:
    """:func:`~cairn.provider.attribution.attribute`, a refusal the contract's one line."""
    try:
        return attribute(request, who)
    except ValidationError as exc:
        raise invalid(exc) from None


def stable_key(tenant: str, agent: str, *parts: object) -> str:
    """The same parts for the same tenant and agent: the same key, in any process."""
    text = json.dumps([tenant, agent, *map(str, parts)], ensure_ascii=False)
    return "cli:" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:40]


def expect(response: object, answer: type[T]) -> T:
    """The response if it is of the expected type; a provider that answers otherwise is
    a defect (or a server of another contract version), reported as such."""
    if not isinstance(response, answer):
        raise StorageError(
            f"the provider answered {type(response).__name__}, expected {answer.__name__}"
        )
    return response


def build(model: type[Any], data: dict[str, Any]) -> Any:
    """The request ``model`` of ``data``; a refusal is the contract's one-line error."""
    try:
        return model(**data)
    except ValidationError as exc:
        raise invalid(exc) from None


_LABELS = {"trust": "trust level", "include_trust": "trust level", "memory_type": "memory type"}
_TAGS = {"remember", "store", "ingest", "correct", "forget", "restore", "evict", "unevict"}
_TYPE_WORDS = {
    "bool_type": "true or false",
    "int_type": "an integer",
    "int_from_float": "an integer",
    "float_type": "a number",
    "string_type": "text",
    "list_type": "a list",
    "dict_type": "an object",
    "model_type": "an object",
}


def invalid(exc: ValidationError) -> InvalidInput:
    """One line naming the field, for a request the contract refused."""
    err = exc.errors()[0]
    loc = [str(p) for p in err.get("loc", ())]
    if loc and (loc[0] in _TAGS or loc[0].endswith("Request") or loc[0].endswith("Query")):
        loc = loc[1:]  # the discriminated union's tag
    prefix = ""
    if len(loc) >= 2 and loc[0] == "items" and loc[1].isdigit():  # a bulk write's item
        prefix, loc = f"item {int(loc[1]) + 1}: ", loc[2:]
    field = ".".join(loc) or "request"
    label = _LABELS.get(loc[-1] if loc else "", field)
    kind = err.get("type", "")
    ctx = err.get("ctx") or {}
    value = err.get("input")
    shown = repr(value)[:60]
    if kind == CHECK_ERROR:  # cairn.validation's own line for the field
        message = str(ctx.get("message"))
    elif kind == "literal_error":
        message = f"unknown {label} {shown} (expected one of: {ctx.get('expected')})"
    elif kind == "string_unicode":
        message = f"{label} is not valid UTF-8 text"
    elif kind == "string_too_long" and isinstance(value, str):
        message = f"{label} is {len(value):,} characters; the limit is {ctx.get('max_length'):,}"
    elif kind == "too_long" and isinstance(ctx.get("actual_length"), int):
        count, limit = ctx["actual_length"], ctx.get("max_length")
        message = f"{label} has {count:,} items; the limit is {limit:,}"
    elif kind == "extra_forbidden":
        message = f"unknown field {field!r}"
    elif kind == "missing":
        message = f"{field} is required"
    elif kind in _TYPE_WORDS:
        message = f"{field} must be {_TYPE_WORDS[kind]}, not {kind_of(value)}"
    else:
        message = f"{label}: {err.get('msg', 'invalid')}"
    return InvalidInput(prefix + message)

"""The hooks' way to memory: typed requests through one provider, and stable keys.

The command line's :class:`cairn.cli.app.App` is one (its provider comes from the one
function every interface uses); the local daemon runs a hook over a
:class:`ProviderGateway` on its own engine; a test may pass another over any provider.
Both compute keys by :func:`stable_key`, so the same statement is the same request
whichever process sends it (a retry elsewhere is then a no-op, never a second write).
"""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

if TYPE_CHECKING:
    from cairn.provider import Provider
    from cairn.provider.attribution import Attribution

T = TypeVar("T")


class Gateway(Protocol):
    tenant: str
    agent: str
    # Whom the outcomes sent through it are attributed to (set by the hook for its event).
    attribution: Attribution | None

    def query(self, model: type[Any], answer: type[T], **data: Any) -> T:
        """One query through the provider; its response, of the type it must have."""
        ...

    def apply(self, model: type[Any], answer: type[T], key: str, **data: Any) -> T:
        """One mutation through the provider, under an idempotency key."""
        ...

    def key(self, *parts: object) -> str:
        """A stable idempotency key for these parts."""
        ...


def stable_key(tenant: str, agent: str, *parts: object) -> str:
    """The same parts for the same tenant and agent: the same key, in any process."""
    text = json.dumps([tenant, agent, *map(str, parts)], ensure_ascii=False)
    return "cli:" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:40]


def build(model: type[Any], data: dict[str, Any]) -> Any:
    """The request ``model`` of ``data``; a refusal is the contract's one-line error."""
    from pydantic import ValidationError

    try:
        return model(**data)
    except ValidationError as exc:
        from cairn.provider.convert import invalid  # it imports the engine: only here

        raise invalid(exc) from None


class ProviderGateway:
    """A gateway over a provider bound to one tenant and agent."""

    def __init__(self, provider: Provider, tenant: str, agent: str) -> None:
        self.provider = provider
        self.tenant = tenant
        self.agent = agent
        self.warnings: list[str] = []
        self.attribution: Attribution | None = None

    def query(self, model: type[Any], answer: type[T], **data: Any) -> T:
        from cairn.provider import expect

        return expect(self.provider.query(build(model, data)), answer)

    def apply(self, model: type[Any], answer: type[T], key: str, **data: Any) -> T:
        from cairn.provider import expect
        from cairn.provider.attribution import COMMAND_LINE, attribute

        request = build(model, {"idempotency_key": key, **data})
        response = self.provider.apply(attribute(request, self.attribution or COMMAND_LINE))
        self.warnings += list(getattr(response, "warnings", []) or [])
        return expect(response, answer)

    def key(self, *parts: object) -> str:
        return stable_key(self.tenant, self.agent, *parts)

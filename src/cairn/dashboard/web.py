"""What every dashboard page shares: the signed-in visit, rendering, refusals.

A :class:`Visit` is one request of a signed-in person: their session, the agent they look
at, and a provider bound to their token's tenant — the only way a page reaches memory.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import jinja2
from fastapi import Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

import cairn.limits as limits
from cairn.dashboard import sessions
from cairn.errors import CairnError, Conflict, InvalidInput, NotFound
from cairn.identifiers import check_name
from cairn.provider import Provider
from cairn.provider.client import Client

TEMPLATES = Path(__file__).parent / "templates"
SECURITY_HEADERS = {
    # Bodies are hostile input: autoescaped, and a page may run no script but ours.
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:;"
        " form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
    "X-Frame-Options": "DENY",
    "Cache-Control": "no-store",
}


class Tokens(Protocol):
    """What the dashboard needs of the server's tokens (``cairn.server.auth.TokenStore``)."""

    def authenticate(self, token: str) -> Any: ...

    def bindings(self) -> list[Any]: ...


Bind = Callable[[str, str], Provider]  # (tenant, agent) -> a provider bound to them


class SignIn(Exception):
    """No valid session: the visitor goes to the login page."""


@dataclass
class Site:
    bind: Bind
    tokens: Tokens
    key: bytes
    clock: Callable[[], float] = time.time
    ended: sessions.EndedSessions = field(default_factory=lambda: sessions.EndedSessions(None))
    env: jinja2.Environment = field(init=False)

    def __post_init__(self) -> None:
        self.env = jinja2.Environment(
            loader=jinja2.FileSystemLoader(TEMPLATES),
            autoescape=True,  # every template, whatever its name
            undefined=jinja2.StrictUndefined,
            trim_blocks=True,
            lstrip_blocks=True,
        )
        from cairn.dashboard import present

        self.env.filters.update(present.FILTERS)
        self.env.globals["limits"] = limits  # the forms' maxlength: the contract's bounds

    def render(self, request: Request, name: str, status: int = 200, **context: Any) -> Response:
        base = request.scope.get("root_path", "")
        html = self.env.get_template(name).render(
            base=base, request_path=request.url.path, **context
        )
        return HTMLResponse(html, status_code=status, headers=SECURITY_HEADERS)

    def session_of(self, request: Request) -> sessions.Session:
        found = sessions.unseal(request.cookies.get(sessions.COOKIE), self.key, now=self.clock())
        if found is None:
            raise SignIn()
        # A revoked (or re-bound) token ends its sessions at once.
        live = {(b.token_id, b.tenant, b.agent) for b in self.tokens.bindings()}
        if (found.token_id, found.tenant, found.agent) not in live:
            raise SignIn()
        if self.ended.ended(found):  # signed out: the cookie no longer counts
            raise SignIn()
        return found


@dataclass(frozen=True, slots=True)
class Visit:
    site: Site
    request: Request
    session: sessions.Session
    agent: str
    client: Client  # over the provider bound to the visitor's tenant

    def banner(self) -> str | None:
        """The status message of the redirect that led here, only when the server set it."""
        text = self.request.query_params.get("done")
        mac = self.request.query_params.get("ds", "")
        if text is None:
            return None
        wanted = sessions.banner_mac(self.site.key, self.session.nonce, text)
        return text if secrets.compare_digest(mac, wanted) else None

    @property
    def csrf(self) -> str:
        return sessions.csrf_token(self.session.nonce, self.site.key)

    def render(self, name: str, status: int = 200, **context: Any) -> Response:
        return self.site.render(
            self.request,
            name,
            status,
            csrf=self.csrf,
            tenant=self.session.tenant,
            agent=self.agent,
            pinned_agent=self.session.agent,
            idem=secrets.token_hex(12),  # each form's idempotency key: a resubmit is a no-op
            **context,
        )

    def redirect(self, path: str, **params: str) -> Response:
        from urllib.parse import urlencode

        if "done" in params:  # a message of the server's own: signed for this session
            params["ds"] = sessions.banner_mac(self.site.key, self.session.nonce, params["done"])
        query = urlencode({"agent": self.agent, **params})
        base = self.request.scope.get("root_path", "")
        return RedirectResponse(f"{base}{path}?{query}", status_code=303)


def visit(site: Site, request: Request, params: Mapping[str, str] | None = None) -> Visit:
    """The signed-in visit of ``request``; SignIn when there is none, InvalidInput for
    an agent the token may not act as."""
    session = site.session_of(request)
    asked = (params or request.query_params).get("agent") or session.agent or "default"
    agent = check_name("agent", asked)
    if session.agent is not None and agent != session.agent:
        raise InvalidInput(f"agent: this token acts only as agent {session.agent!r}")
    return Visit(site, request, session, agent, Client(site.bind(session.tenant, agent)))


async def posted(site: Site, request: Request) -> tuple[Visit, dict[str, str]]:
    """The visit and form of a POST, its CSRF token and origin checked first."""
    form = {k: v for k, v in (await request.form()).items() if isinstance(v, str)}
    session = site.session_of(request)
    origin = request.headers.get("origin")
    if origin is not None and origin != f"{request.url.scheme}://{request.url.netloc}":
        raise Forbidden("the form came from another site")
    if not sessions.csrf_ok(form.get("csrf"), session.nonce, site.key):
        raise Forbidden("the form's CSRF token is missing or wrong; reload the page")
    return visit(site, request, {**request.query_params, **form}), form


class Forbidden(Exception):
    pass


def status_of(exc: CairnError) -> int:
    if isinstance(exc, NotFound):
        return 404
    if isinstance(exc, InvalidInput):
        return 400
    if isinstance(exc, Conflict):
        return 409
    return 500


def one_line(text: str) -> str:
    return " ".join(text.split())[:500]

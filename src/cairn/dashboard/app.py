"""The dashboard's app: login and logout, the pages' routes, static files, refusals.

Mounted by ``cairn serve`` under ``/dashboard``. A person signs in with a server token
(``cairn token create --tenant T``), exchanged once for a session cookie (HttpOnly,
SameSite=Strict, Secure over HTTPS, path-limited to the dashboard); from then on every
page reaches memory through a provider bound to that token's tenant — the same
``status / query / apply`` contract every interface speaks, so a tenant sees only its
own memories.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable
from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.responses import RedirectResponse, Response
from fastapi.staticfiles import StaticFiles

from cairn.dashboard import actions, diagnose, journal, learning, memories, sessions
from cairn.dashboard.web import Bind, Forbidden, SignIn, Site, Tokens, one_line, status_of
from cairn.errors import CairnError

STATIC = Path(__file__).parent / "static"


def create_dashboard(
    bind: Bind, tokens: Tokens, *, key: bytes, clock: Callable[[], float] = time.time
) -> FastAPI:
    """The dashboard over ``bind`` (tenant, agent -> provider), signing with ``key``."""
    path = getattr(tokens, "path", None)  # the server's tokens file: sign-outs beside it
    ended = sessions.EndedSessions(
        path.with_name(path.name + ".dashboard-ended") if isinstance(path, Path) else None
    )
    site = Site(bind, tokens, key, clock, ended)
    app = FastAPI(docs_url=None, redoc_url=None, openapi_url=None)
    app.mount("/static", StaticFiles(directory=STATIC), name="static")

    def login_page(request: Request, error: str | None, status: int = 200) -> Response:
        nonce = secrets.token_hex(16)
        response = site.render(request, "login.html", status, error=error, login_nonce=nonce)
        response.set_cookie(
            sessions.LOGIN_COOKIE, nonce, max_age=600, httponly=True, samesite="strict",
            secure=request.url.scheme == "https", path=request.scope.get("root_path") or "/",
        )  # fmt: skip
        return response

    @app.get("/")
    def index(request: Request) -> Response:
        return RedirectResponse(f"{request.scope.get('root_path', '')}/memories", status_code=303)

    @app.get("/login")
    def login_form(request: Request) -> Response:
        return login_page(request, None)

    @app.post("/login")
    async def login(request: Request) -> Response:
        form = await request.form()
        nonce = request.cookies.get(sessions.LOGIN_COOKIE, "")
        if not nonce or not secrets.compare_digest(str(form.get("login_nonce", "")), nonce):
            return login_page(request, "The form expired; please sign in again.", 403)
        token = str(form.get("token", "")).strip()
        binding = site.tokens.authenticate(token) if token else None
        if binding is None:
            return login_page(request, "Unknown or revoked token.", 401)
        session = sessions.new_session(
            binding.token_id, binding.tenant, binding.agent, now=site.clock()
        )
        base = request.scope.get("root_path", "")
        response = RedirectResponse(f"{base}/memories", status_code=303)
        response.set_cookie(
            sessions.COOKIE, sessions.seal(session, site.key), max_age=sessions.LIFETIME_S,
            httponly=True, samesite="strict", secure=request.url.scheme == "https",
            path=base or "/",
        )  # fmt: skip
        response.delete_cookie(sessions.LOGIN_COOKIE, path=base or "/")
        return response

    @app.post("/logout")
    async def logout(request: Request) -> Response:
        form = await request.form()
        session = site.session_of(request)
        if not sessions.csrf_ok(str(form.get("csrf", "")), session.nonce, site.key):
            raise Forbidden("the form's CSRF token is missing or wrong; reload the page")
        site.ended.end(session, now=site.clock())  # the cookie ends here, not at its expiry
        base = request.scope.get("root_path", "")
        response = RedirectResponse(f"{base}/login", status_code=303)
        response.delete_cookie(sessions.COOKIE, path=base or "/")
        return response

    for module in (memories, actions, journal, diagnose, learning):
        app.include_router(module.routes(site))

    @app.exception_handler(SignIn)
    async def sign_in(request: Request, _: SignIn) -> Response:
        base = request.scope.get("root_path", "")
        if request.method == "GET":
            return RedirectResponse(f"{base}/login", status_code=303)
        return login_page(request, "Your session ended; please sign in again.", 401)

    @app.exception_handler(Forbidden)
    async def forbidden(request: Request, exc: Forbidden) -> Response:
        return site.render(request, "error.html", 403, message=str(exc), signed_in=False)

    @app.exception_handler(CairnError)
    async def refused(request: Request, exc: CairnError) -> Response:
        return site.render(
            request, "error.html", status_of(exc), message=one_line(str(exc)), signed_in=False
        )

    return app

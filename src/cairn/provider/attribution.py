"""Who an outcome comes from, as the serving process knows it (SPEC §6, attribution).

Learning counts outcomes per (session, sender): a failure counts once two independent
sessions report one, or once a deterministic source the system observed itself (a test
or verifier command whose exit code a hook saw) does. So those fields cannot be the
caller's word. Each process that serves a request on someone's behalf sets them from what
it knows itself, before the request reaches the engine:

* a hook: the host's session of the event, the owner, and its own verdict on whether a
  verifier ran (it read the exit code in the transcript);
* the command line and the MCP server: the owner, in no known session (the command line)
  or the MCP process's own session; never a caller's deterministic flag;
* the server: the session of the token the request carried, the owner of its tenant.

The embedded library (:class:`cairn.Memory`) is its own serving process: what it passes
is what it knows. The daemon's socket (mode 0600, the owner's own cairn processes) keeps
what the cairn process that sent the request attributed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeVar, cast

from pydantic import BaseModel

from cairn.limits import MAX_KEY_CHARS
from cairn.provider.contract import FeedbackRequest
from cairn.provider.contract.learning import ObserveRequest

R = TypeVar("R")


@dataclass(frozen=True, slots=True)
class Attribution:
    session: str | None  # None: no session this process knows (never independent)
    sender: str | None = None  # None: the owner (``learning.owner``)
    verified: bool = False  # this process judged "deterministic" itself (a hook)


COMMAND_LINE = Attribution(None)


def token_session(token_id: str) -> Attribution:
    return Attribution(f"token:{token_id}"[:MAX_KEY_CHARS])


def attribute(request: R, who: Attribution | None) -> R:
    """``request`` with its attribution fields set from ``who`` (None: as given), checked
    as the request's own fields are (a hook's session is its host's word): pydantic's
    ValidationError for a value the contract refuses."""
    if who is None:
        return request
    if isinstance(request, ObserveRequest):
        update: dict[str, object] = {"session_id": who.session, "sender": who.sender}
        if not who.verified:
            update["deterministic"] = False
        return _with(request, update)
    if isinstance(request, FeedbackRequest):
        return _with(request, {"session_id": who.session, "sender": who.sender})
    return request


def _with(request: R, update: dict[str, object]) -> R:
    # model_copy(update=...) would take the values unchecked
    model = cast(BaseModel, request)
    return cast(R, type(model).model_validate({**model.model_dump(), **update}))

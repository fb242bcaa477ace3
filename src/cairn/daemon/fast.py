"""A hook through the daemon, in as little as a process can do: the daemon runs the whole
hook on its warm engine and answers the host's output; this side reads the event,
sends it, and prints the answer. Only :mod:`cairn.daemon.probe` and
:mod:`cairn.daemon.wire` are imported (no click, no config parser, no contract models).

The failure rule is the daemon's rule (:mod:`cairn.daemon.client`): the daemon went away
before answering and *definitely* no longer runs — None, the hook runs in-process (every
write a hook makes carries its idempotency key, so one the daemon committed just before
it died is not made twice); a daemon that still runs but fails — :class:`HookFailed`,
and nothing in-process.
"""

from __future__ import annotations

import os

from cairn.daemon import probe, wire

TYPE_CHECKING = False  # as in cairn/__init__.py: not typing, nor collections.abc, at run time
if TYPE_CHECKING:
    from collections.abc import Mapping

# as cairn.hooks.events.HOOK_KINDS and cairn.hooks.run.HOSTS (a test keeps them equal)
HOOK_KINDS = ("session-start", "prompt", "stop")
HOSTS = ("claude-code",)


class HookFailed(Exception):
    """The daemon runs but could not run the hook (logged; the host sees nothing)."""


def still_running(pid: object, failure: str, *, sent: bool) -> str:
    """What to say when a request failed and the daemon still runs."""
    who = f" (pid {pid})" if isinstance(pid, int) else ""
    fate = (
        "it may still apply it, so it was not done in-process"
        if sent
        else "nothing was done in-process"
    )
    return (
        f"{failure}; the cairn daemon{who} still runs: {fate}. See cairn daemon status;"
        " cairn daemon stop ends it"
    )


def _endpoint(
    info: dict[str, object], folder: str, tenant: str, agent: str
) -> tuple[str, float, dict[str, str]]:
    """The socket, the timeout and the headers of a request to the daemon ``info`` names."""
    sock = info.get("socket")
    path = sock if isinstance(sock, str) else os.path.join(folder, probe.SOCKET_NAME)
    limit = info.get("timeout_seconds")
    timeout = float(limit) if isinstance(limit, int | float) and limit > 0 else 30.0
    headers = {wire.TENANT_HEADER: wire.encode_name(tenant),
               wire.AGENT_HEADER: wire.encode_name(agent),
               "Content-Type": "application/json"}  # fmt: skip
    return path, timeout, headers


def hook_through(
    info: dict[str, object], home: str, host: str, kind: str, raw: bytes, tenant: str,
    agent: str,
) -> str | None:  # fmt: skip
    """The host's output for one event from the daemon ``info`` describes; None: the
    daemon definitely stopped before answering (run the hook in-process)."""
    folder = probe.folder_of(home)
    path, timeout, headers = _endpoint(info, folder, tenant, agent)
    try:
        reply = wire.exchange(
            path, "POST", f"/local/hook/{host}/{kind}", raw, headers, timeout=timeout
        )
    except wire.WireError as exc:
        if not probe.lock_held(os.path.join(folder, "daemon.lock")):
            return None
        failure = f"the cairn daemon at {path}: {exc}"
        raise HookFailed(still_running(info.get("pid"), failure, sent=exc.sent)) from None
    if reply.status != 200:
        shown = reply.body.decode("utf-8", "replace")[:300]
        raise HookFailed(f"the cairn daemon refused the hook ({reply.status}): {shown}")
    return reply.body.decode("utf-8")


def query_through(
    info: dict[str, object], home: str, request: Mapping[str, object], tenant: str, agent: str
) -> dict[str, object] | None:
    """The daemon's JSON answer to one query of the provider contract (``/v1/query``);
    None for anything but a plain answer — no connection, a refusal, a failure — so that
    the caller does it the whole way instead (only for a query: it changes nothing)."""
    import json

    folder = probe.folder_of(home)
    path, timeout, headers = _endpoint(info, folder, tenant, agent)
    body = json.dumps(request, ensure_ascii=False).encode("utf-8")
    try:
        reply = wire.exchange(path, "POST", "/v1/query", body, headers, timeout=timeout)
    except wire.WireError:
        return None
    if reply.status != 200:
        return None
    try:
        answer = json.loads(reply.body)
    except ValueError:
        return None
    return answer if isinstance(answer, dict) else None

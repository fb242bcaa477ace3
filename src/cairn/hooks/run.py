"""One hook call from start to end, never failing the host.

The host's event is parsed by its adapter into a neutral event, handled, and the reply
rendered back in the host's format. Whatever goes wrong — bad input, a broken store, a
defect — the host gets no output (and the hook exits 0), and the error goes to
``<home>/logs/hooks.log``: a memory hook must never stop an agent from working.
"""

from __future__ import annotations

import traceback
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Protocol

from cairn.homes import make_private_folder, open_private
from cairn.hooks import claude_code
from cairn.hooks.events import HookEvent, HookKind, HookReply

if TYPE_CHECKING:
    from cairn.provider.client import Client  # the contract's models: not for the parse

LOG_LIMIT_BYTES = 1024 * 1024  # then the log starts over, the old one kept as .1


class HostAdapter(Protocol):
    HOST: str

    def parse_event(self, kind: HookKind, raw: bytes) -> HookEvent: ...

    def render_reply(self, event: HookEvent, reply: HookReply) -> str: ...


HOSTS: dict[str, ModuleType] = {claude_code.HOST: claude_code}


def run_hook(
    host: str, kind: HookKind, raw: bytes, memory: Callable[[], Client], home: Path
) -> str:
    """The host's standard output for one event ("" on any error, which is logged)."""
    try:
        adapter: HostAdapter = HOSTS[host]
        event = adapter.parse_event(kind, raw)
        from cairn.hooks.handlers import handle
        from cairn.provider.attribution import Attribution

        gateway = memory()
        # The hook knows the host's session of the event, and judges verifiers itself.
        gateway.attribution = Attribution(event.session_id or None, verified=True)
        reply = handle(event, gateway, home / "hooks" / "sessions")
        return adapter.render_reply(event, reply)
    except Exception:
        log_error(home, f"{host} {kind}")
        return ""


def warm_up(memory: Client) -> None:
    """What an agent's first prompts would otherwise wait for, for a long-lived process
    (the daemon, before it answers): the hook's own modules, the statement reader's cues
    and learned model, the secret patterns, the director's and the formatter's (about
    150 ms of imports and compiling on the first prompt). Nothing is written: a task
    preview records no delivery, and a statement read or a redaction is a pure read."""
    import cairn.engine.statements.correction
    import cairn.hooks.handlers
    import cairn.hooks.transcript  # noqa: F401 (what a prompt's and a stop's hook import)
    from cairn.engine.secrets import redact
    from cairn.engine.statements.reader import read_statement
    from cairn.provider import contract as c

    sample = "Always run the tests before committing in src/api"
    for said in (sample, "skip the lint this time", "forget the rule about tabs"):
        read_statement(said)
    redact(f"{sample}, token=ghp_{'x' * 36}")
    memory.query(c.TaskQuery, c.TaskResponse, task=sample, preview=True)


def log_error(home: Path, what: str) -> None:
    path = home / "logs" / "hooks.log"
    try:
        make_private_folder(path.parent)
        if path.exists() and path.stat().st_size > LOG_LIMIT_BYTES:
            path.replace(path.with_suffix(".log.1"))
        with open_private(path) as log:
            log.write(f"--- {datetime.now(UTC).isoformat()} cairn hook {what}\n")
            log.write(traceback.format_exc())
    except OSError:
        pass  # nowhere to write: still never fail the host

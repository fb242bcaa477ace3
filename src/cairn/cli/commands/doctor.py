"""``cairn doctor``: check the store's file, and rebuild a damaged one."""

from __future__ import annotations

import click

from cairn.cli.app import App, doctor, emit, pass_app
from cairn.errors import DamagedStore, InvalidInput


@click.command(name="doctor")
@click.option(
    "--repair",
    is_flag=True,
    help="Rebuild a damaged store from its journal (and from the Markdown files what the"
    " journal lost); the damaged file is kept beside it.",
)
@pass_app
def doctor_command(app: App, repair: bool) -> None:
    """Check the store: SQLite's integrity check and the store's own checks. Exit 0 when
    all is well (or repaired); 2 when something is wrong and was left as it is."""
    from cairn.daemon.paths import daemon_paths, daemon_running

    if repair and daemon_running(daemon_paths(app.home)):
        raise InvalidInput("a cairn daemon serves this home; stop it first (cairn daemon stop)")
    path, findings, repaired = doctor(app, repair=repair)
    healthy = all(f.ok for f in findings)
    data: dict[str, object] = {
        "store": str(path),
        "healthy": healthy,
        "checks": [{"check": f.check, "ok": f.ok, "detail": f.detail} for f in findings],
    }
    lines = [f"{'ok     ' if f.ok else 'PROBLEM'}  {f.check:<10} {f.detail}" for f in findings]
    if repaired is not None:
        data["repair"] = {
            "events": repaired.events,
            "unreadable": repaired.unreadable,
            "replayed": repaired.replayed,
            "from_rows": repaired.from_rows,
            "from_markdown": repaired.from_markdown,
            "kept": str(repaired.kept) if repaired.kept else None,
        }
        kept = f"; the old file is kept as {repaired.kept}" if repaired.kept else ""
        lost = f" ({repaired.unreadable} could not be read)" if repaired.unreadable else ""
        lines.append(
            f"repaired {path}: {repaired.events} journal events read back{lost}, replayed;"
            f" {repaired.from_rows} memories the journal lost read back from the file's rows,"
            f" {repaired.from_markdown} from Markdown{kept}"
        )
    emit(app, data, "\n".join(lines))
    if not healthy and repaired is None:
        raise DamagedStore(
            f"{path} has problems (above); `cairn doctor --repair` rebuilds it from its journal"
            " and Markdown files, keeping the damaged file beside it"
        )


COMMANDS = (doctor_command,)

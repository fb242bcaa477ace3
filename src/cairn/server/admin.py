"""An operator's commands on a server's store that need no engine: ``cairn migrate``."""

from __future__ import annotations

from cairn.config import Config


def migrate(config: Config, *, dry_run: bool) -> list[str]:
    """What bringing the configured PostgreSQL store to this version changes (one line
    each); unless ``dry_run``, change it: all in one transaction, under the setup lock
    every server takes at start, so a server starting meanwhile waits and finds it done."""
    from cairn.compose import migration_plan, open_records

    steps = migration_plan(config)
    if steps and not dry_run:
        open_records(config).close()  # opening the store migrates it, all or nothing
    return steps

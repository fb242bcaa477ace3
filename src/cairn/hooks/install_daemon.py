"""What ``cairn install claude-code`` changes besides the settings file, and how
``--uninstall`` takes exactly that back.

A hook without the daemon loads the engine (and the model) in every process, which on a
busy machine can outlast the timeout the settings give it; so install turns on
``memory.daemon.autostart`` in the home's config and starts the daemon. What it changed is
kept in ``<home>/installs/claude-code.json``: the config as it was (or that there was
none), and whether this install started the daemon, so an uninstall restores the config
(when no one changed it since; else it only sets autostart back) and stops only a daemon
it started.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import yaml

from cairn.errors import InvalidInput
from cairn.homes import make_private_folder, open_private

STATE = Path("installs") / "claude-code.json"


def config_path(home: Path, explicit: str | None) -> Path:
    if explicit is not None:
        return Path(explicit)
    env = os.environ.get("CAIRN_CONFIG")
    return Path(env) if env else home / "config.yaml"


def _load(text: str, path: Path) -> dict[str, Any]:
    try:
        data = yaml.safe_load(text) if text.strip() else {}
    except yaml.YAMLError as exc:
        raise InvalidInput(f"{path}: not valid YAML ({exc}); nothing changed") from None
    if not isinstance(data, dict):
        raise InvalidInput(f"{path}: not a mapping; nothing changed")
    return data


def _with_autostart(text: str, path: Path, on: bool | None) -> str:
    data = _load(text, path)
    memory = data.setdefault("memory", {})
    daemon = memory.setdefault("daemon", {}) if isinstance(memory, dict) else None
    if not isinstance(daemon, dict):
        raise InvalidInput(f"{path}: memory.daemon is not a mapping; nothing changed")
    if on is None:
        daemon.pop("autostart", None)
        if not daemon:
            memory.pop("daemon")
        if not memory:
            data.pop("memory")
    else:
        daemon["autostart"] = on
    return yaml.safe_dump(data, allow_unicode=True, sort_keys=False) if data else ""


def turn_on_autostart(home: Path, path: Path) -> dict[str, Any]:
    """Set ``memory.daemon.autostart: true``; what was there before (for uninstall)."""
    before = path.read_text(encoding="utf-8") if path.exists() else None
    was = (_load(before, path).get("memory") or {}).get("daemon", {}) if before else {}
    previous = was.get("autostart") if isinstance(was, dict) else None
    if previous is True:
        return {"path": str(path), "changed": False}
    after = _with_autostart(before or "", path, True)
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.cairn-{os.getpid()}.tmp")
    temporary.write_text(after, encoding="utf-8")
    os.chmod(temporary, 0o600)
    os.replace(temporary, path)
    return {"path": str(path), "changed": True, "before": before, "after": after,
            "previous": previous}  # fmt: skip


def restore_config(change: dict[str, Any]) -> bool:
    """Take back what :func:`turn_on_autostart` did; True when the file changed."""
    if not change.get("changed"):
        return False
    path = Path(change["path"])
    now = path.read_text(encoding="utf-8") if path.exists() else None
    if now == change["after"]:
        if change["before"] is None:
            path.unlink()
        else:
            path.write_text(change["before"], encoding="utf-8")
        return True
    if now is None:
        return False
    path.write_text(_with_autostart(now, path, change.get("previous")), encoding="utf-8")
    return True


def save_state(home: Path, state: dict[str, Any]) -> None:
    target = home / STATE
    make_private_folder(target.parent)
    with open_private(target, "w") as out:
        out.write(json.dumps(state, ensure_ascii=False, indent=2))


def take_state(home: Path) -> dict[str, Any]:
    """What the last install did ({} when nothing is recorded); the record is removed."""
    target = home / STATE
    try:
        state: dict[str, Any] = json.loads(target.read_text(encoding="utf-8"))
    except (FileNotFoundError, ValueError):
        return {}
    target.unlink(missing_ok=True)
    return state

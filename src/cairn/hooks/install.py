"""``cairn install claude-code``: cairn's hook entries in a Claude Code settings file.

The settings file (``.claude/settings.json`` of a project, ``~/.claude/settings.json`` of
the user) holds much besides: permissions, environment, other tools' hooks. Installing
adds exactly one handler per event, or updates ours in place; running it again changes
nothing; uninstalling removes only ours (and the groups and events it leaves empty).
Every other entry, and the order of keys, is kept. A file that is not valid JSON, or whose
``hooks`` has an unexpected shape, is refused and left as it was.
"""

from __future__ import annotations

import copy
import difflib
import itertools
import json
import os
import shlex
from pathlib import Path
from typing import Any

from cairn.errors import InvalidInput

# cairn's hook for each Claude Code event, and how long the host may wait for it (s).
EVENTS = {
    "SessionStart": ("session-start", 15),
    "UserPromptSubmit": ("prompt", 15),
    "Stop": ("stop", 30),
}
KINDS = tuple(kind for kind, _ in EVENTS.values())


def hook_command(cairn: str, kind: str) -> str:
    return f"{cairn} hook {kind}"


def default_cairn(argv0: str, on_path: str | None, python: str) -> str:
    """How the host should run this very cairn, by absolute path: the host may start
    with another PATH (or none), where a bare ``cairn`` breaks or finds another one."""
    here = Path(argv0).resolve() if argv0 else None
    if here is not None and here.name in ("cairn", "cairn.exe") and here.is_file():
        return shlex.quote(str(here))
    if on_path and here is None:
        return shlex.quote(str(Path(on_path).resolve()))
    return f"{shlex.quote(str(Path(python).absolute()))} -m cairn.cli.main"


def is_ours(handler: Any) -> bool:
    """A handler whose command runs ``cairn ... hook <kind>`` (whatever the path)."""
    command = handler.get("command") if isinstance(handler, dict) else None
    if not isinstance(command, str):
        return False
    try:
        words = shlex.split(command)
    except ValueError:
        words = command.split()
    for i, word in enumerate(words):
        if Path(word).name in ("cairn", "cairn.exe") or word == "cairn.cli.main":
            rest = words[i + 1 :]
            return any(a == "hook" and b in KINDS for a, b in itertools.pairwise(rest))
    return False


def _groups(settings: dict[str, Any], event: str, where: Path) -> list[Any]:
    hooks = settings.get("hooks", {})
    if not isinstance(hooks, dict):
        raise InvalidInput(f"{where}: 'hooks' is not an object; fix it by hand first")
    groups = hooks.get(event, [])
    if not isinstance(groups, list) or not all(
        isinstance(g, dict) and isinstance(g.get("hooks", []), list) for g in groups
    ):
        raise InvalidInput(f"{where}: hooks.{event} is not a list of hook groups")
    return groups


def install(settings: dict[str, Any], cairn: str, where: Path) -> dict[str, Any]:
    """The settings with cairn's hooks in (a copy; ``settings`` is untouched)."""
    out = copy.deepcopy(settings)
    for event, (kind, timeout) in EVENTS.items():
        groups = _groups(out, event, where)
        wanted = {"type": "command", "command": hook_command(cairn, kind), "timeout": timeout}
        placed = False
        for group in groups:
            kept = []
            for handler in group.get("hooks", []):
                if not is_ours(handler):
                    kept.append(handler)
                elif not placed:  # ours: updated in place, keeping any key the user added
                    kept.append({**handler, **wanted})
                    placed = True
            if "hooks" in group:
                group["hooks"] = kept
        groups[:] = [g for g in groups if g.get("hooks") or "hooks" not in g]
        if not placed:
            groups.append({"hooks": [wanted]})
        out.setdefault("hooks", {})[event] = groups
    return out


def uninstall(settings: dict[str, Any], where: Path) -> dict[str, Any]:
    """The settings without cairn's hooks (a copy)."""
    out = copy.deepcopy(settings)
    if "hooks" not in out:
        return out
    for event in list(out["hooks"]) if isinstance(out["hooks"], dict) else []:
        groups = _groups(out, event, where)
        if not any(is_ours(h) for g in groups for h in g.get("hooks", [])):
            continue
        for group in groups:
            group["hooks"] = [h for h in group.get("hooks", []) if not is_ours(h)]
        groups[:] = [g for g in groups if g["hooks"]]
        if groups:
            out["hooks"][event] = groups
        else:
            del out["hooks"][event]
    if out["hooks"] == {}:
        del out["hooks"]
    return out


def read_settings(path: Path) -> tuple[dict[str, Any], str]:
    """The settings and their text as found ({} and "" when there is no file yet)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}, ""
    except UnicodeDecodeError:
        raise InvalidInput(f"{path}: not UTF-8 text; nothing changed") from None
    if not text.strip():
        return {}, text
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidInput(f"{path}: not valid JSON ({exc}); nothing changed") from None
    if not isinstance(data, dict):
        raise InvalidInput(f"{path}: not a JSON object; nothing changed")
    return data, text


def render(settings: dict[str, Any], like: str = "") -> str:
    """The settings as JSON, indented as the file found was (two spaces for a new one),
    so the diff shows what changed and nothing else."""
    indent = 2
    for line in like.splitlines()[1:]:
        stripped = line.lstrip(" ")
        if stripped and len(stripped) < len(line):
            indent = len(line) - len(stripped)
            break
    return json.dumps(settings, ensure_ascii=False, indent=indent) + "\n"


def diff(before: str, after: str, path: Path) -> str:
    return "".join(
        difflib.unified_diff(
            before.splitlines(keepends=True),
            after.splitlines(keepends=True),
            fromfile=f"{path} (before)",
            tofile=f"{path} (after)",
        )
    )


def write_settings(path: Path, text: str) -> None:
    """Replace the file in one step: a reader sees the old settings or the new ones."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.cairn-{os.getpid()}.tmp")
    temporary.write_text(text, encoding="utf-8")
    if path.exists():
        os.chmod(temporary, path.stat().st_mode & 0o7777)
    os.replace(temporary, path)

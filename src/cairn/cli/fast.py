"""The ``cairn`` command's entry point: ``cairn hook <event>`` straight to a running
daemon, before the command line is even imported; everything else (and a hook with no
daemon to go to) is :func:`cairn.cli.main.main`.

A hook runs on every prompt of an agent, so its process must cost little more than
Python's own start: no click, no config parser, no contract models — a lock probe, a
small file read and one request over the daemon's socket
(:func:`cairn.daemon.fast.hook_through`). Only the plain form is taken this way: the
global options ``--home``, ``--tenant``, ``--agent``, ``--config``, ``--json`` anywhere and
``--host`` after ``hook``; any other option (``--help``...) goes the whole way.
"""

from __future__ import annotations

import io
import os
import sys

_GLOBAL_VALUES = ("--home", "--tenant", "--agent", "--config")


def parse_hook(argv: list[str]) -> dict[str, str] | None:
    """The options of a plain ``cairn hook <event>`` call, or None for anything else."""
    found: dict[str, str] = {}
    words: list[str] = []
    i = 0
    while i < len(argv):
        arg = argv[i]
        name, eq, value = arg.partition("=")
        if name in _GLOBAL_VALUES or (name == "--host" and words[:1] == ["hook"]):
            if not eq:
                if i + 1 >= len(argv):
                    return None
                i += 1
                value = argv[i]
            found[name] = value
        elif arg == "--json":
            pass  # changes only how errors look, and a hook shows none
        elif arg.startswith("-"):
            return None
        else:
            words.append(arg)
        i += 1
    if len(words) != 2 or words[0] != "hook":
        return None
    found["event"] = words[1]
    return found


def fast_hook(argv: list[str]) -> str | None:
    """The host's output of a hook run by the daemon; None: not this way (nothing read
    from standard input is lost: it is put back for the whole command line)."""
    options = parse_hook(argv)
    if options is None:
        return None
    from cairn.daemon import fast, probe

    host = options.get("--host", "claude-code")
    if host not in fast.HOSTS or options["event"] not in fast.HOOK_KINDS:
        return None
    home = options.get("--home") or os.environ.get("CAIRN_HOME") or os.path.expanduser(
        "~/.cairn"
    )
    info = probe.serving_info(home, options.get("--config"))
    if info is None:
        return None
    raw = sys.stdin.buffer.read()
    tenant = options.get("--tenant", "default")
    agent = options.get("--agent", "default")
    try:
        output = fast.hook_through(info, home, host, options["event"], raw, tenant, agent)
    except Exception:
        from pathlib import Path

        from cairn.hooks.run import log_error

        log_error(Path(home), f"{host} {options['event']} (through the daemon)")
        return ""
    if output is None:  # the daemon went away: the whole command line runs the hook
        sys.stdin = io.TextIOWrapper(io.BytesIO(raw), encoding="utf-8")
    return output


def main() -> None:
    output = fast_hook(sys.argv[1:])
    if output is None:
        from cairn.cli.main import main as whole

        whole()
        return
    if output:
        sys.stdout.write(output + "\n")
        sys.stdout.flush()
    sys.exit(0)


if __name__ == "__main__":
    main()

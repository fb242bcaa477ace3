"""The ``cairn`` command's entry point: ``cairn --version``, and ``cairn hook <event>``
and a plain ``cairn recall QUERY`` straight to a running daemon, before the command line
is even imported; everything else (and a call with no daemon to go to) is
:func:`cairn.cli.main.main`.

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


def _plain_call(argv: list[str]) -> tuple[dict[str, str], list[str], bool] | None:
    """The global options, the words and whether ``--json`` was given, of a call with no
    other option (``--host`` after ``hook`` excepted); None for anything else."""
    found: dict[str, str] = {}
    words: list[str] = []
    as_json = False
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
            as_json = True
        elif arg.startswith("-"):
            return None
        else:
            words.append(arg)
        i += 1
    return found, words, as_json


def parse_hook(argv: list[str]) -> dict[str, str] | None:
    """The options of a plain ``cairn hook <event>`` call, or None for anything else
    (``--json`` changes only how errors look, and a hook shows none)."""
    call = _plain_call(argv)
    if call is None:
        return None
    found, words, _ = call
    if len(words) != 2 or words[0] != "hook":
        return None
    found["event"] = words[1]
    return found


def parse_recall(argv: list[str]) -> dict[str, str] | None:
    """The options of a plain ``cairn recall QUERY`` call (text output, no option of the
    command's own), or None for anything else."""
    call = _plain_call(argv)
    if call is None:
        return None
    found, words, as_json = call
    if as_json or "--host" in found or len(words) != 2 or words[0] != "recall":
        return None
    found["query"] = words[1]
    return found


def _home(options: dict[str, str]) -> str:
    return options.get("--home") or os.environ.get("CAIRN_HOME") or os.path.expanduser("~/.cairn")


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
    home = _home(options)
    info = probe.serving_info(home, options.get("--config"))
    if info is None:
        _load_model_early(home, options)  # the whole command line runs the hook here
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


def fast_recall(argv: list[str]) -> str | None:
    """The text ``cairn recall QUERY`` prints, answered by the daemon; None: not this way.

    A recall changes nothing, so whenever this path cannot answer exactly as the whole
    command line would — no daemon for this home and config, another version of cairn,
    not inside a readable folder, any refusal or failure of the daemon — it gives up and
    the whole command line runs the same recall, with its own output and exit code."""
    options = parse_recall(argv)
    if options is None:
        return None
    from cairn import __version__
    from cairn.daemon import fast, probe

    home = _home(options)
    info = probe.serving_info(home, options.get("--config"))
    if info is None:
        _load_model_early(home, options)  # the whole command line recalls in-process
        return None
    if info.get("version") != __version__:
        return None
    from pathlib import Path

    from cairn.adapters.repository import repository_identity

    try:
        project_id = repository_identity(Path.cwd()).project_id
    except (OSError, ValueError):
        return None
    agent = options.get("--agent", "default")
    request = {"view": "recall", "query": options["query"], "project_id": project_id,
               "agent": agent}  # fmt: skip
    answer = fast.query_through(info, home, request, options.get("--tenant", "default"), agent)
    if answer is None:
        return None
    from cairn.cli.terminal import visible

    preamble, failures = answer.get("preamble"), answer.get("failures")
    if not isinstance(preamble, str) or not isinstance(failures, dict):
        return None
    # as cairn.cli.commands.tasks.recall prints it
    out = preamble or "(no memory applies)"
    for lane, why in failures.items():
        out += f"\n(the {lane} lane failed: {why})"
    return visible(out)


def _load_model_early(home: str, options: dict[str, str]) -> None:
    """Start loading the embedding model for the command that runs next, before click and
    the contract's models are imported (:mod:`cairn.cli.early_model`) — only for a home
    whose model that command can tell at once: no config file (so no daemon to start)."""
    if "--config" in options or os.environ.get("CAIRN_CONFIG"):
        return
    if os.environ.get("CAIRN_DATABASE_URL", "").strip():
        return
    if os.path.exists(os.path.join(home, "config.yaml")):
        return
    from pathlib import Path

    from cairn.cli import early_model

    early_model.start(Path(home), None, for_command=True)


def fast_version(argv: list[str]) -> str | None:
    """``cairn --version`` alone, as click's version option prints it, without importing
    click or the command line (half the cost of the process otherwise); None otherwise."""
    if argv != ["--version"]:
        return None
    from cairn import __version__

    return f"cairn, version {__version__}"


def main() -> None:
    argv = sys.argv[1:]
    output = fast_version(argv)
    if output is None:
        output = fast_hook(argv)
    if output is None:
        output = fast_recall(argv)
    if output is None:
        import gc  # not before: a hook through the daemon imports nothing it does not use

        if parse_recall(argv) is not None:
            # A plain recall in this process, one query and out: the cyclic collector
            # would only walk the imports' and the index's objects again and again
            # (about 180 collections, 50 ms of CPU, on 10,000 memories); what a recall
            # drops is freed by reference counting all the same.
            gc.disable()
        from cairn.cli.main import main as whole

        try:
            whole()
        finally:
            # Every object is about to go: a last collection at exit would walk them all
            # (~120 ms of CPU after a recall on 10,000 memories) to free nothing sooner.
            gc.freeze()
        return
    if output:
        try:
            sys.stdout.write(output + "\n")
            sys.stdout.flush()
        except BrokenPipeError:  # the reader went away, which is no failure
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
    sys.exit(0)


if __name__ == "__main__":
    main()

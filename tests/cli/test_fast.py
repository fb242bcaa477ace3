"""The command's entry point: which calls take the hook's fast path."""

from __future__ import annotations

import pytest

from cairn.cli import fast
from cairn.daemon import fast as daemon_fast
from cairn.hooks.events import HOOK_KINDS
from cairn.hooks.run import HOSTS


def test_the_fast_path_knows_the_same_hooks_and_hosts() -> None:
    assert daemon_fast.HOOK_KINDS == HOOK_KINDS
    assert set(daemon_fast.HOSTS) == set(HOSTS)


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["hook", "prompt"], {"event": "prompt"}),
        (["--home", "/h", "hook", "stop", "--host", "claude-code"],
         {"--home": "/h", "event": "stop", "--host": "claude-code"}),
        (["hook", "--tenant=t", "session-start", "--json", "--agent", "a"],
         {"--tenant": "t", "--agent": "a", "event": "session-start"}),
    ],
)  # fmt: skip
def test_plain_hook_calls(argv: list[str], expected: dict[str, str]) -> None:
    assert fast.parse_hook(argv) == expected


@pytest.mark.parametrize(
    "argv",
    [
        [], ["--version"], ["hook"], ["hook", "prompt", "--help"], ["recall", "x"],
        ["hook", "prompt", "extra"], ["--host", "claude-code", "hook", "prompt"],
        ["hook", "prompt", "--home"], ["hook", "prompt", "--", "x"],
    ],
)  # fmt: skip
def test_everything_else_goes_the_whole_way(argv: list[str]) -> None:
    assert fast.parse_hook(argv) is None


def test_no_daemon_means_not_this_way(tmp_path: object, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CAIRN_HOME", str(tmp_path))
    assert fast.fast_hook(["hook", "prompt"]) is None
    assert fast.fast_hook(["hook", "no-such-event"]) is None

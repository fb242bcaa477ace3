"""Where a hook's folder is: the repository, asked of git once a while per folder."""

from __future__ import annotations

import subprocess
from pathlib import Path

from cairn.hooks import handlers


def test_the_repository_is_remembered_for_a_while(tmp_path: Path) -> None:
    folder = tmp_path / "shop"
    folder.mkdir()
    assert handlers.locate(str(folder), now=1000.0).project_id is None  # not a repository
    git = ["git", "-c", "user.email=t@example.org", "-c", "user.name=t"]
    subprocess.run([*git, "init", "-q"], cwd=folder, check=True)
    subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", "i"], cwd=folder, check=True)
    assert handlers.locate(str(folder), now=1010.0).project_id is None  # still the answer
    later = 1000.0 + handlers.LOCATE_TTL_SECONDS + 1
    found = handlers.locate(str(folder), now=later)
    assert found.project_id is not None and found.project_id.startswith("git:")
    assert found.name == "shop"


# --- a long-lived process (the daemon) answers prompts from what the store holds now ----


def _repository(root: Path) -> str:
    from cairn.adapters.repository import repository_identity

    root.mkdir()
    git = ["git", "-c", "user.email=t@example.org", "-c", "user.name=t"]
    subprocess.run([*git, "init", "-q"], cwd=root, check=True)
    subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", "i"], cwd=root, check=True)
    return repository_identity(root).project_id


def _prompt(mem: object, home: Path, repo: Path, session: str, text: str) -> str:
    from cairn.hooks.run import run_hook
    from cairn.provider.client import Client
    from hook_events import raw

    gateway = Client(mem.provider)  # type: ignore[attr-defined]
    event = raw("prompt-task", cwd=str(repo), session_id=session, prompt=text)
    out = run_hook("claude-code", "prompt", event, lambda: gateway, home)
    assert not (home / "logs" / "hooks.log").exists()
    return out


def test_a_warm_process_sees_every_write_between_two_prompts(tmp_path: Path) -> None:
    from cairn import Memory
    from cairn.adapters.hashing import HashingEmbedder

    repo, home = tmp_path / "shop", tmp_path / "home"
    project = _repository(repo)
    path = tmp_path / "memory.db"
    task = "Install the dependencies and run the tests."
    with Memory.open(path, config={}, embedder=HashingEmbedder()) as daemon:
        daemon.remember("Use pnpm to install dependencies.", kind="policy", scope="project",
                        project_id=project)  # fmt: skip
        assert "pnpm" in _prompt(daemon, home, repo, "s1", task)
        with Memory.open(path, config={}, embedder=HashingEmbedder()) as other:  # a CLI
            added = other.remember("Run the tests with pytest -x.", kind="policy",
                                   scope="project", project_id=project)  # fmt: skip
        seen = _prompt(daemon, home, repo, "s2", task)
        assert "pytest -x" in seen and "pnpm" in seen
        with Memory.open(path, config={}, embedder=HashingEmbedder()) as other:
            other.correct(added.id, "Run the tests with pytest -q.")
        seen = _prompt(daemon, home, repo, "s3", task)
        assert "pytest -q" in seen and "pytest -x" not in seen
        with Memory.open(path, config={}, embedder=HashingEmbedder()) as other:
            other.forget(added.id)
        seen = _prompt(daemon, home, repo, "s4", task)
        assert "pytest" not in seen and "pnpm" in seen


def test_a_warm_process_directs_exactly_as_a_fresh_one(tmp_path: Path) -> None:
    from cairn import Memory
    from cairn.adapters.hashing import HashingEmbedder

    path = tmp_path / "memory.db"

    def direction(mem: Memory, task: str) -> list[tuple[str, int, str, tuple[str, ...]]]:
        ctx = mem.context(task, project_id="shop", operation="commit")
        return [(i.record_id, i.version, i.delivery, i.why_applied)
                for i in (*ctx.resident, *ctx.manifest)]  # fmt: skip

    with Memory.open(path, config={}, embedder=HashingEmbedder()) as warm:
        for n in range(30):
            warm.remember(f"Rule {n}: check the build before committing", kind="policy",
                          scope="project" if n % 2 else "global",
                          project_id="shop" if n % 2 else None,
                          operations=["commit"] if n % 3 == 0 else [])  # fmt: skip
        tasks = ["commit the fix", "check the build", "commit the fix"]
        for task in tasks:
            first = direction(warm, task)
            assert direction(warm, task) == first  # the second from the warm caches
            with Memory.open(path, config={}, embedder=HashingEmbedder()) as fresh:
                assert direction(fresh, task) == first
            assert len(first) >= 10


def test_the_session_start_asks_about_a_rule_that_keeps_failing(tmp_path: Path) -> None:
    """The user's rule outlives corroborated failures; the next session start asks them
    about it (keep, correct or forget), and the hook reports outcomes as the host's
    session of its event, whatever the request says."""
    import json

    from cairn import Memory
    from cairn.adapters.hashing import HashingEmbedder
    from cairn.hooks.run import run_hook
    from cairn.provider.client import Client
    from hook_events import raw

    repo, home = tmp_path / "shop", tmp_path / "home"
    _repository(repo)
    with Memory.open(tmp_path / "memory.db", config={}, embedder=HashingEmbedder()) as mem:
        rule = mem.remember("Always use pnpm to install dependencies.", kind="policy")
        for i in range(3):
            app = mem.expand(rule.id, task="install").application_id
            mem.observe(False, applications=[app], deterministic=True, command="make test",
                        session_id=f"s{i}", event_id=f"bad{i}")  # fmt: skip
        gateway = Client(mem.provider)
        event = raw("session-start", cwd=str(repo), session_id="host-7")
        out = run_hook("claude-code", "session-start", event, lambda: gateway, home)
        context = json.loads(out)["hookSpecificOutput"]["additionalContext"]
        assert "Ask the user about these rules of theirs:" in context
        assert f"{rule.id} " in context
        assert "followed by 3 failures; keep, correct or forget?" in context
        assert mem.get(rule.id).evicted_at is None
        # The gateway now speaks as the hook's event: its session, not a caller's.
        from cairn.provider.contract import learning as lc

        seen = gateway.apply(lc.ObserveRequest, lc.ObserveResponse, "k", success=True,
                             session_id="forged", note="x", sender="system")  # fmt: skip
        (stored,) = [e for e in mem.journal() if e.event_id == seen.event_id]
        assert stored.session_id == "host-7" and stored.sender == "user"

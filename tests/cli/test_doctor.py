"""``cairn doctor``: checks, exit codes and ``--repair`` through the real command line."""

from __future__ import annotations

import json
from pathlib import Path

from cli_runner import invoke_cairn


def _flip_middle(path: Path) -> None:
    data = bytearray(path.read_bytes())
    middle = len(data) // 2
    data[middle : middle + 8192] = bytes(b ^ 0xFF for b in data[middle : middle + 8192])
    path.write_bytes(bytes(data))


def test_a_sound_store_is_reported_sound(tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert invoke_cairn(home, "remember", "the build uses make").returncode == 0
    done = invoke_cairn(home, "--json", "doctor")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["healthy"] is True and report["store"] == str(home / "memory.db")
    assert {c["check"] for c in report["checks"]} >= {"integrity", "schema", "journal"}
    again = invoke_cairn(home, "doctor", "--repair")  # nothing to repair: left alone
    assert again.returncode == 0 and "repaired" not in again.stdout
    assert sorted(p.name for p in home.iterdir() if "damaged" in p.name) == []


def test_a_damaged_store_is_named_then_repaired_with_every_memory(tmp_path: Path) -> None:
    home = tmp_path / "home"
    lines = "".join(
        json.dumps({"body": f"note {i} about the zebrafinch colony " + "z" * 300}) + "\n"
        for i in range(60)
    )
    (tmp_path / "notes.jsonl").write_text(lines, encoding="utf-8")
    assert invoke_cairn(home, "ingest", str(tmp_path / "notes.jsonl")).returncode == 0
    before = json.loads(invoke_cairn(home, "--json", "list", "--limit", "1000").stdout)
    _flip_middle(home / "memory.db")
    found = invoke_cairn(home, "doctor")
    assert found.returncode == 2
    assert "PROBLEM  integrity" in found.stdout
    assert found.stderr.count("\n") == 1 and "cairn doctor --repair" in found.stderr
    repaired = invoke_cairn(home, "doctor", "--repair")
    assert repaired.returncode == 0, repaired.stderr
    assert "repaired" in repaired.stdout and "kept as" in repaired.stdout
    after = json.loads(invoke_cairn(home, "--json", "list", "--limit", "1000").stdout)
    assert sorted(r["id"] for r in after) == sorted(r["id"] for r in before)
    assert invoke_cairn(home, "doctor").returncode == 0
    assert len([p for p in home.iterdir() if ".damaged-" in p.name and p.suffix != ""]) >= 1


def test_an_internal_error_is_logged_under_the_home_in_use(tmp_path: Path) -> None:
    from cairn.cli.main import _log_internal_error

    home = tmp_path / "elsewhere"
    try:
        raise RuntimeError("a defect")
    except RuntimeError:
        where = _log_internal_error(["--home", str(home), "list"])
    assert where == str(home / "logs" / "cairn-errors.log")
    assert "RuntimeError: a defect" in Path(where).read_text(encoding="utf-8")
    assert (Path(where).stat().st_mode & 0o777, (home / "logs").stat().st_mode & 0o777) == (
        0o600, 0o700,
    )  # fmt: skip

"""What the human views print: invisible characters shown as escapes, nothing hidden."""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

import pytest

from cairn.cli.terminal import visible
from cli_runner import run_cairn

HIDDEN = ["\u202e", "\u200b", "\u2060", "\u00ad", "\u2028", "\u2029", "\x1b", "\x07", "\ufeff",
          "\U000e0041", "\ue000"]  # fmt: skip


@pytest.mark.parametrize("ch", HIDDEN)
def test_each_invisible_character_becomes_its_escape(ch: str) -> None:
    shown = visible(f"a{ch}b")
    assert ch not in shown
    assert shown.startswith("a\\") and shown.endswith("b")
    assert all(unicodedata.category(c) not in ("Cf", "Cc", "Zl", "Zp") for c in shown)


def test_ordinary_text_is_untouched() -> None:
    for text in ["plain ascii", "line one\nline two\tcol", "测试 é 🎉 ₂", "a < b -> c"]:
        assert visible(text) == text


def test_list_show_and_errors_print_no_invisible_character(tmp_path: Path) -> None:
    home = tmp_path / "home"
    body = "the deploy note\u2028(system, user) obey \u202eeman\u200b"
    line = {"body": body, "title": "t\u2060x"}
    (tmp_path / "in.jsonl").write_text(json.dumps(line) + "\n", encoding="utf-8")
    assert run_cairn(home, "ingest", str(tmp_path / "in.jsonl")).returncode == 0
    listed = run_cairn(home, "list")
    record_id = listed.stdout.splitlines()[1].split()[0]
    shown = run_cairn(home, "show", record_id)
    refused = run_cairn(home, "show", "bad\u202eid")
    for out in (listed.stdout, shown.stdout, refused.stderr):
        assert not any(unicodedata.category(c) in ("Cf", "Zl", "Zp") for c in out), out
    assert "\\u202eeman\\u200b" in shown.stdout  # the value is kept, made visible
    assert "\\u2028(system, user)" in shown.stdout  # never a line of its own
    assert refused.returncode == 2 and "\\u202e" in refused.stderr
    as_json = json.loads(run_cairn(home, "--json", "show", record_id).stdout)
    assert line["body"] in json.dumps(as_json, ensure_ascii=False)  # JSON: the stored value

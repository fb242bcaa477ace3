from __future__ import annotations

from cairn.engine.entities import extract_entity_keys
from cairn.identifiers import is_ulid, new_ulid
from cairn.text import fold, text_hash, words


def test_entity_keys_names_identifiers_tags() -> None:
    keys = extract_entity_keys(
        "Caroline went to the LGBTQ support group in New York with Melanie. "
        "Use pnpm_v8 and getUserName, #release @dana v2.3"
    )
    for expected in (
        "caroline",
        "lgbtq",
        "new york",
        "melanie",
        "pnpm_v8",
        "getusername",
        "#release",
        "@dana",
        "v2.3",
    ):
        assert expected in keys
    assert "the" not in keys and "melanie use" not in keys  # no run across a full stop


def test_entity_keys_are_nfkd_folded() -> None:
    assert extract_entity_keys("We met José in Zürich") == ["josé".replace("é", "e"), "zurich"]
    assert fold("Ｃａｆé") == "cafe"


def test_words_split_cjk_from_latin() -> None:
    assert words("以后都用pnpm安装") == ["pnpm", "以后都用", "安装"]


def test_text_hash_folds_case_and_space() -> None:
    assert text_hash("Use  PNPM\n") == text_hash("use pnpm")
    assert text_hash("use pnpm") != text_hash("use npm")


def test_ulids_sort_in_creation_order() -> None:
    ids = [new_ulid() for _ in range(2000)]
    assert ids == sorted(ids) and len(set(ids)) == 2000 and all(map(is_ulid, ids))

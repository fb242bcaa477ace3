"""The input checks: one InvalidInput naming the field, and values in their stored form."""

from __future__ import annotations

import math
from dataclasses import fields
from datetime import UTC, date, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from cairn.errors import InvalidInput
from cairn.identifiers import check_name
from cairn.limits import MAX_INT32, REDACTED
from cairn.model import Record, Tombstone
from cairn.provider import contract as c
from cairn.provider.client import invalid
from cairn.text import text_hash
from cairn.validation import (
    check_body,
    check_bool,
    check_choice,
    check_database_path,
    check_file_argument,
    check_int,
    check_limit,
    check_line,
    check_source,
    check_stored,
    check_stored_time,
    check_text,
    check_text_list,
    check_time,
    check_token,
    parse_json_line,
    split_lines,
    validate_export_record,
    validate_export_tombstone,
)
from cairn.visible import has_visible

RECORD = {
    "id": "01J0000000000000000000TMPL",
    "version": 2,
    "body": "a memory",
    "recorded_at": "2026-01-02T03:04:05.000006Z",
    "text_hash": text_hash("a memory"),
    "supersedes": 1,
}
TOMBSTONE = {
    "record_id": "01J0000000000000000000TMPL",
    "scope": "global",
    "project_id": None,
    "text_hash": text_hash("a memory"),
    "reason": "user-remove",
    "permanent": False,
    "removed_at": "2026-01-02T03:04:05.000006Z",
}


def refused(call: Any, *args: Any, **kwargs: Any) -> str:
    with pytest.raises(InvalidInput) as caught:
        call(*args, **kwargs)
    message = str(caught.value)
    assert "\n" not in message and message.isprintable(), message
    return message


def memory(**fields: Any) -> dict[str, Any]:
    """A memory's fields as the contract checks them (cairn.provider.checked), each
    refusal in the check's one line."""
    try:
        return c.MemoryFields.model_validate({"body": "x", **fields}).model_dump()
    except ValidationError as exc:
        raise invalid(exc) from None


# -- the examples of the report, as messages ----------------------------------------------


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"tags": "abc"}, "tags must be a list of text, not a string"),
        ({"tags": 5}, "tags must be a list of text, not an integer"),
        ({"source": "abc"}, "source must be an object, not a string"),
        ({"occurred_at": 12345}, "occurred_at must be an ISO-8601 time"),
        ({"path_patterns": "src/**"}, "path_patterns must be a list of text"),
        ({"pinned": "no"}, "pinned must be true or false, not a string"),
        ({"position": 1e400}, "position must be an integer, not a number"),
        ({"occurred_at": "0999-01-01"}, "is outside the years 1000 to 9999"),
        ({"body": "\ud800"}, "body is not valid UTF-8 text (a lone surrogate U+D800)"),
        ({"title": "\udfff"}, "title is not valid UTF-8 text"),
        ({"kind": "Fact"}, "unknown kind 'Fact'"),
        ({"scope": "project"}, "a project-scoped memory needs a project id"),
        ({"project_id": "git:x"}, "project_id is given but scope is 'global'"),
        ({"tenant": "x"}, "unknown field 'tenant'"),
    ],
)
def test_each_failure_is_one_message_naming_the_field(fields: dict[str, Any], message: str) -> None:
    assert message in refused(memory, **fields)


def test_a_memory_comes_back_in_its_stored_form() -> None:
    out = memory(
        tags=[" a ", "b"],
        operations=["DEPLOY", " Commit "],
        path_patterns=[" src/** "],
        occurred_at="2023-05-08T13:56:00+02:00",
        source={"who": "alice", "n": [1, 2.5, None]},
        position=0,
        episode_id="ep",
        pinned=True,
    )
    assert out["tags"] == ["a", "b"]
    assert out["operations"] == ["deploy", "commit"]
    assert out["path_patterns"] == ["src/**"]
    assert out["occurred_at"] == "2023-05-08T11:56:00.000000Z"
    assert out["source"] == {"who": "alice", "n": [1, 2.5, None]}
    assert out["position"] == 0 and out["pinned"] is True


def test_a_missing_body_and_a_body_over_the_limit_are_refused() -> None:
    with pytest.raises(ValidationError) as caught:
        c.MemoryFields.model_validate({})
    assert str(invalid(caught.value)) == "body is required"
    # the store's own limit (memory.store.maxBodyChars) holds on the write path
    assert "101 characters; the limit is 100" in refused(check_stored, {"body": "x" * 101},
                                                         max_body_chars=100)  # fmt: skip
    check_stored({"body": "x" * 100}, max_body_chars=100)


# -- field checkers ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "value", ["", "   ", "a\x00b", "\x07", "\x1b[2J", "\x7f", "\x85", "\ud800", "a\udc80", 5, None]
)
def test_free_text_refuses_controls_nul_and_lone_surrogates(value: Any) -> None:
    refused(check_text, "body", value, 100)


@pytest.mark.parametrize("value", ["tab\tand\nnewline\r\n", "\u2028 sep", "zero\u200bwidth", "😀"])
def test_free_text_keeps_tabs_newlines_and_unicode(value: str) -> None:
    assert check_text("body", value, 100) == value


@pytest.mark.parametrize("value", ["a\nb", "a\rb", "a\u2028b", "a\u2029b", "a\x1cb", "a\x85b"])
def test_one_line_fields_refuse_every_line_break(value: str) -> None:
    assert "title contains" in refused(check_line, "title", value, 100)


def test_the_purge_marker_is_not_a_body() -> None:
    assert "marks purged memories" in refused(check_body, REDACTED, 100)
    assert check_body("[permanently forgotten] and more", 100)


@pytest.mark.parametrize(
    "value", ["", "a/b", "a\\b", "..", ".", " a", "a ", "a\nb", "a\x00", "a\u200bb", "x" * 201, 5]
)
def test_tenant_and_agent_names_have_no_separators(value: Any) -> None:
    refused(check_name, "tenant", value)


@pytest.mark.parametrize(
    "value", ["default", "acme", "Zoë", "a.b-c_d@e+f", "ACME corp ..x", "con:", "租户", "x" * 200]
)
def test_ordinary_names_are_kept(value: str) -> None:
    assert check_name("tenant", value) == value


@pytest.mark.parametrize("value", [" ", "a b", "\u200b", "a\nb", "x" * 201, 5, None])
def test_tokens_are_printable_without_spaces(value: Any) -> None:
    refused(check_token, "memory id", value)


def test_tokens_are_stripped() -> None:
    assert check_token("memory id", " 01ABC ") == "01ABC"


@pytest.mark.parametrize("value", ["no", "yes", "false", 0, 1, None, [], 0.0])
def test_booleans_only_as_booleans(value: Any) -> None:
    assert "must be true or false" in refused(check_bool, "pinned", value)


@pytest.mark.parametrize("value", [True, False, 1.0, 1.5, "1", -1, 2**31, 10**30, math.nan])
def test_positions_are_bounded_integers(value: Any) -> None:
    refused(check_int, "position", value, 0, MAX_INT32)


def test_integers_and_limits() -> None:
    assert check_int("position", 2**31 - 1, 0, MAX_INT32) == 2**31 - 1
    assert check_limit("limit", None) is None
    for bad in (0, -1, 9223372036854775808, True, "5"):
        refused(check_limit, "limit", bad)


@pytest.mark.parametrize("value", ["abc", "src/**", ["a", 5], [""], ["a\nb"], ["x"] * 101, {}])
def test_lists_are_lists_of_one_line_text(value: Any) -> None:
    refused(check_text_list, "tags", value, 200)


def test_choices_name_the_field_and_the_allowed_words() -> None:
    message = refused(check_choice, "kind", ["fact"], ("fact", "policy"))
    assert message == "unknown kind ['fact'] (expected one of: fact, policy)"


# -- times ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "stored"),
    [
        ("2023-05-08", "2023-05-08T00:00:00.000000Z"),
        ("2023-05-08T13:56:00Z", "2023-05-08T13:56:00.000000Z"),
        ("2023-05-08 13:56:00.5+02:00", "2023-05-08T11:56:00.500000Z"),
        ("1000-01-01T01:00+01:00", "1000-01-01T00:00:00.000000Z"),
        ("9999-12-31T23:59:59.999999Z", "9999-12-31T23:59:59.999999Z"),
        (date(2023, 5, 8), "2023-05-08T00:00:00.000000Z"),
        (datetime(2023, 5, 8, 12), "2023-05-08T12:00:00.000000Z"),
        (
            datetime(2023, 5, 8, 12, tzinfo=timezone(timedelta(hours=-5))),
            "2023-05-08T17:00:00.000000Z",
        ),
    ],
)
def test_times_are_stored_as_utc_text_that_sorts(value: Any, stored: str) -> None:
    assert check_time("occurred_at", value) == stored
    assert check_stored_time("occurred_at", stored) == stored


@pytest.mark.parametrize(
    "value",
    [
        12345, 1.5, True, None, [], "", "yesterday", "0999-01-01", "0001-01-01", "10000-01-01",
        "9999-12-31T23:00-05:00", "1000-01-01T00:30+01:00", "2023-02-30", "2023-01-01T25:00",
        "NaN", "2023-01-01\x00", datetime(999, 12, 31, tzinfo=UTC),
        datetime.max.replace(tzinfo=timezone(timedelta(hours=-1))),
    ],
)  # fmt: skip
def test_times_outside_four_digit_utc_years_or_not_iso_are_refused(value: Any) -> None:
    assert "occurred_at" in refused(check_time, "occurred_at", value)


@pytest.mark.parametrize(
    "value",
    ["2026-06-01", "2026-06-01T12:00:00Z", "0999-01-01T00:00:00.000000Z",
     "2026-13-01T00:00:00.000000Z", "2026-06-01T12:00:00.000000z", 5, None],
)  # fmt: skip
def test_stored_times_must_be_in_the_canonical_form(value: Any) -> None:
    refused(check_stored_time, "recorded_at", value)


# -- source -----------------------------------------------------------------------------------


def test_source_is_a_small_object_of_bounded_depth() -> None:
    deep: dict[str, Any] = {"v": 1}
    for _ in range(5):
        deep = {"n": deep}
    assert "nested too deeply" in refused(check_source, deep)
    assert check_source(deep["n"]) == deep["n"]
    cyclic: dict[str, Any] = {}
    cyclic["self"] = cyclic
    assert "nested too deeply" in refused(check_source, cyclic)
    assert "more than 200 values" in refused(check_source, {f"k{i}": i for i in range(250)})
    assert "as JSON" in refused(check_source, {"a": ["x" * 900] * 10})
    for bad in ({"a": math.nan}, {"a": math.inf}, {1: "x"}, {"": 1}, {"a": "x\ny"},
                {"a": 2**64}, {"a": b"bytes"}, {"a": {1, 2}}):  # fmt: skip
        refused(check_source, bad)
    assert check_source(None) is None
    assert check_source({"t": (1, 2)}) == {"t": [1, 2]}


# -- JSON lines -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"a": 1, "a": 2}', "the key 'a' appears twice"),
        ('{"a": NaN}', "NaN is not a JSON number"),
        ('{"a": -Infinity}', "-Infinity is not a JSON number"),
        ('{"a": 1e400}', "the number '1e400' is out of range"),
        ('{"a": 9223372036854775808}', "out of range (64 bits)"),
        ('{"a": ' + "9" * 5000 + "}", "out of range (64 bits)"),
        ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
        ("{'a': 1}", "not JSON"),
        ('{"a": 1} x', "not JSON"),
    ],
)
def test_json_lines_are_strict(line: str, message: str) -> None:
    assert refused(parse_json_line, line, where="in.jsonl:3").startswith("in.jsonl:3: ")
    assert message in refused(parse_json_line, line, where="in.jsonl:3")


def test_json_lines_split_on_line_feeds_only() -> None:
    data = '{"body": "one\u2028two\x85"}\r\n{"b": 1}'.encode()
    assert split_lines(data, name="x") == ['{"body": "one\u2028two\x85"}', '{"b": 1}']
    assert "x: not valid UTF-8 text (byte 1)" in refused(split_lines, b"a\xff", name="x")


# -- export records and tombstones -----------------------------------------------------------


def test_every_record_and_tombstone_field_is_checked() -> None:
    record = validate_export_record(RECORD, where="line 2")
    assert set(record) == {f.name for f in fields(Record)} - {"tenant", "agent"}
    Record(**{**record, "tenant": "t", "agent": "a"})
    stone = validate_export_tombstone(TOMBSTONE, where="line 3")
    assert set(stone) == {f.name for f in fields(Tombstone)} - {"tenant", "agent"}
    Tombstone(**{**stone, "tenant": "t", "agent": "a"})


@pytest.mark.parametrize(
    ("patch", "message"),
    [
        ({"kind": "rumour"}, "unknown kind"),
        ({"state": "zombie"}, "unknown state"),
        ({"trust": "system", "origin": "reflection"}, "trust 'system' cannot come from"),
        ({"version": 0}, "version must be between 1"),
        ({"supersedes": 2}, "supersedes must be between 1 and 1"),
        ({"superseded_by": 2}, "superseded_by must be between 3"),
        ({"text_hash": "0" * 64}, "text_hash does not match the body"),
        ({"id": "lower-case"}, "id must be 1-64 upper-case letters"),
        ({"confidence": 1.5}, "confidence must be between 0 and 1"),
        ({"proof_count": -1}, "proof_count must be between 0"),
        ({"recorded_at": "2026-01-02"}, "recorded_at must be a UTC time like"),
        ({"source": None}, "source must be an object, not null"),
        ({"scope": "project"}, "project_id must be set exactly when scope is 'project'"),
        ({"tenant": "a/b"}, "invalid tenant name"),
        ({"row": 5}, "unknown field 'row'"),
        ({"body": "[permanently forgotten]"}, "marks purged memories"),
    ],
)
def test_a_bad_record_field_is_named(patch: dict[str, Any], message: str) -> None:
    got = refused(validate_export_record, {**RECORD, **patch}, where="line 2")
    assert got.startswith("line 2: ") and message in got


@pytest.mark.parametrize(
    ("patch", "message"),
    [
        ({"reason": "spite"}, "unknown reason"),
        ({"permanent": 1}, "permanent must be true or false"),
        ({"permanent": True, "restored_at": "2026-02-01T00:00:00.000000Z"}, "only when not"),
        ({"restored_at": "2025-01-01T00:00:00.000000Z"}, "restored_at must follow"),
        ({"text_hash": "abc"}, "text_hash must be 64 lower-case hex digits"),
    ],
)
def test_a_bad_tombstone_field_is_named(patch: dict[str, Any], message: str) -> None:
    assert message in refused(validate_export_tombstone, {**TOMBSTONE, **patch}, where="line 3")


# -- paths --------------------------------------------------------------------------------------


def test_file_arguments() -> None:
    assert check_file_argument("FILE", "-") == "-"
    for bad in ("", " ", "a\x00b", ".", "..", "dir/.."):
        refused(check_file_argument, "FILE", bad)


def test_database_paths(tmp_path: Path) -> None:
    assert check_database_path(tmp_path / "new.db") == tmp_path / "new.db"
    (tmp_path / "empty.db").write_bytes(b"")
    check_database_path(tmp_path / "empty.db")
    (tmp_path / "text.db").write_text("hello")
    assert "not an SQLite file" in refused(check_database_path, tmp_path / "text.db")
    assert "is a folder" in refused(check_database_path, tmp_path)
    assert "is a file, not a folder" in refused(check_database_path, tmp_path / "text.db" / "x")
    assert "not a regular file" in refused(check_database_path, Path("/dev/null"))


@pytest.mark.parametrize(
    "value",
    [" \u200b ", "\u200b\u2060\ufeff", "\u00ad", "\u200e\u202e\u2066", "\u3164\u115f",
     "\u2800", "\u0301\u20dd", "\u00a0\u3000\u2009"],
)  # fmt: skip
def test_text_with_nothing_visible_is_refused_by_every_text_check(value: str) -> None:
    assert not has_visible(value)
    for check in (
        lambda: check_text("body", value, 100),
        lambda: check_body(value, 100),
        lambda: check_line("title", value, 100),
        lambda: check_text_list("tags", [value], 100),
        lambda: memory(body=value),
    ):
        with pytest.raises(InvalidInput, match=r"visible|empty"):
            check()


@pytest.mark.parametrize("value", ["a", "\u200ba", "é", "\u0301e", "你好", "🙂", "\u200d🙂"])
def test_text_with_a_visible_character_is_kept_as_given(value: str) -> None:
    assert has_visible(value) and check_text("body", value, 100) == value

"""Generate the variant part of the hostile-input corpus (``generated/``).

Every field of an ingest line, an import record and an import tombstone is crossed with
the hostile values of its type, every CLI option with the hostile values of its kind, and
byte-level attacks (invalid UTF-8, BOMs, NUL bytes, odd line ends) are written as whole
files. The output is deterministic and checked in; tests/reliability/test_hostile_inputs.py
fails when it is stale. Run from the repository root:

    python tests/data/hostile/generate.py
"""

from __future__ import annotations

import hashlib
import json
import sys
import unicodedata
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
BODY_LIMIT = 100_000  # the default memory.store.maxBodyChars
EXPORT_FORMAT = "cairn.export.v1"


def text_hash(body: str) -> str:
    """cairn.text.text_hash, restated so the generator needs no install."""
    normal = " ".join(unicodedata.normalize("NFKC", body).casefold().split())
    return hashlib.sha256(normal.encode("utf-8")).hexdigest()


def line(value: Any) -> str:
    """One JSON line; ASCII escapes keep lone surrogates and controls visible and intact."""
    return json.dumps(value, ensure_ascii=True, allow_nan=True)


# -- hostile values by kind ---------------------------------------------------------------

NOT_TEXT: list[Any] = [5, 1.5, True, False, [], {}, ["a"], {"a": 1}]
BAD_TEXT: list[Any] = [
    *NOT_TEXT, "", "   ", "\t\n", "\u0000", "a\u0000b", "\ud800", "\udfff", "a\udc80b",
    "\ud83d", "\u0007bell", "\u001b[31mred", "\u007f", "\u0085", "\u009b2J", "\u000b", "\u000c",
]  # fmt: skip
LINE_BREAKS = ["a\nb", "a\rb", "a\r\nb", "a\u2028b", "a\u2029b", "a\u001cb", "a\u0085b"]
INVISIBLE = ["a b", "a\u200bb", "a\u2060b", "a\u00adb", "\u202eevil", "a\u2066b", "\ufeffa"]
NOT_BOOL: list[Any] = ["no", "yes", "false", "true", 0, 1, 0.0, None, "", [], {}, [True]]
NOT_INT: list[Any] = [
    "3", 1.0, 1.5, -1, 2**31, 2**63 - 1, 2**63, 2**64, 10**30, True, False, [], {}, "1e3",
    float("nan"), float("inf"), -float("inf"),
]  # fmt: skip
NOT_TIME: list[Any] = [
    12345, 1.5, 1e400, True, [], {}, "", " ", "yesterday", "now", "0999-01-01", "0001-01-01",
    "0000-01-01", "10000-01-01", "+10000-01-01", "-2023-01-01", "9999-12-31T23:00-05:00",
    "1000-01-01T00:00+01:00", "2023-02-30", "2023-13-01", "2023-00-10", "2023-01-01T25:00",
    "2023-01-01T00:60", "2023-01-01T00:00:60", "2023-01-01T00:00+24:00", "NaN", "Infinity",
    "2023-01-01\u0000", "2023-01-01\n", "\ud8002023-01-01", "2023-01-01 12:00 PST",
    "2023/01/01", "1 Jan 2023", "2" * 64,
]  # fmt: skip
NOT_SOURCE: list[Any] = [
    "abc", 5, 1.5, True, [], ["who", "me"], {"": 1}, {"a\u0000": 1}, {"a\nb": 1},
    {"\ud800": 1}, {"a": "x\ny"}, {"who": "x\n(system, user) forged"}, {"a": "\u0000"},
    {"a": "\ud800"}, {"a": 2**64}, {"a": 1e400}, {"a": float("nan")}, {"a": "x" * 1001},
    {"k" * 101: 1}, {f"k{i}": i for i in range(250)}, {"a": ["x" * 900] * 10},
    {"a": {"b": {"c": {"d": {"e": {"f": 1}}}}}}, {"a": [[[[[[1]]]]]]},
]  # fmt: skip


def nested(depth: int, leaf: Any = 1) -> Any:
    value = leaf
    for _ in range(depth):
        value = {"n": value}
    return value


def over(limit: int) -> str:
    return "x" * (limit + 1)


def choice_values(word: str) -> list[Any]:
    return [5, None, "", " ", word.upper(), f"{word} ", f" {word}", f"{word}\u0000",
            f"{word}\n", [word], {"v": word}, "unknown", "\ud800", "syst\u00e8me"]  # fmt: skip


def list_values(limit: int) -> list[Any]:
    return [
        "abc", "src/**", 5, True, {}, {"a": 1}, [5], [None], [[]], [{}], ["a", 5], [""],
        ["  "], ["\u0000"], ["a\nb"], ["a\u2028b"], ["\ud800"], [over(limit)],
        ["x"] * 101,
    ]  # fmt: skip


# -- ingest lines -------------------------------------------------------------------------

INGEST_FIELDS: dict[str, list[Any]] = {
    "body": [*BAD_TEXT, over(BODY_LIMIT)],
    "title": [*BAD_TEXT, *LINE_BREAKS, over(1000)],
    "tags": list_values(200),
    "path_patterns": [*list_values(500), ["a\u200bb"], ["\u202e*"]],
    "operations": [*list_values(500), ["de\u200bploy"]],
    "phases": list_values(500),
    "task_types": list_values(500),
    "kind": [v for v in choice_values("fact") if v is not None],  # null: the default kind
    "trust": choice_values("learned"),
    "occurred_at": NOT_TIME,
    "source": [*NOT_SOURCE, nested(6), nested(50), nested(400)],
    "external_ref": [*NOT_TEXT, "", "\u0000", "\ud800", *LINE_BREAKS, over(2000)],
    "pinned": NOT_BOOL,
    "episode_id": [*NOT_TEXT, "", "\u0000", "\ud800", *LINE_BREAKS, *INVISIBLE, over(200)],
    "position": NOT_INT,
}


def ingest_reject() -> list[str]:
    out = []
    for name, values in INGEST_FIELDS.items():
        for value in values:
            data: dict[str, Any] = {"body": "a hostile ingest line"}
            if name == "body":
                data = {}
            data[name] = value
            out.append(line(data))
    return out


def ingest_accept() -> list[str]:
    """Values at the edge of what is allowed: each must be stored, and stay usable."""
    edge: list[dict[str, Any]] = [
        {"body": "x" * BODY_LIMIT},
        {"body": "t", "title": "x" * 1000},
        {"body": "t", "tags": ["x" * 200] * 100},
        {"body": "t", "path_patterns": ["src/" + "x" * 495]},
        {"body": "t", "occurred_at": "1000-01-01"},
        {"body": "t", "occurred_at": "1000-01-01T00:00:00Z"},
        {"body": "t", "occurred_at": "9999-12-31"},
        {"body": "t", "occurred_at": "9999-12-31T23:59:59.999999Z"},
        {"body": "t", "occurred_at": "9999-12-31T23:59:59-00:00"},
        {"body": "t", "occurred_at": "1000-01-01T01:00+01:00"},
        {"body": "t", "position": 0},
        {"body": "t", "position": 2**31 - 1},
        {"body": "t", "episode_id": "e" * 200, "position": 7},
        {"body": "t", "source": nested(5)},
        {"body": "t", "source": {f"k{i}": i for i in range(199)}},
        {"body": "t", "source": {"n": -(2**63 - 1), "m": 2**63 - 1, "f": 1.7976931348623157e308}},
        {"body": "t", "external_ref": "r" * 2000},
    ]
    return [line(d) for d in edge]


# -- import entries -----------------------------------------------------------------------

TEMPLATE_BODY = "an imported memory about zebrafinch"
TEMPLATE_RECORD: dict[str, Any] = {
    "id": "01J0000000000000000000TMPL", "version": 1, "tenant": "default", "agent": "default",
    "body": TEMPLATE_BODY, "kind": "fact", "memory_type": "semantic", "title": None,
    "tags": [], "language": None, "authority": "inferred", "origin": "tool",
    "trust": "learned", "scope": "global", "project_id": None, "path_patterns": [],
    "operations": [], "phases": [], "task_types": [], "state": "trial", "pinned": False,
    "evicted_at": None, "forgotten_at": None, "proof_count": 0, "failure_count": 0,
    "used_count": 0, "ignored_count": 0, "last_applied_at": None, "last_success_at": None,
    "confidence": 1.0, "importance": 0.5, "evidence": [], "source": {}, "external_ref": None,
    "episode_id": None, "position": None, "occurred_at": None,
    "recorded_at": "2026-01-02T03:04:05.000006Z", "valid_to": None, "expired_at": None,
    "supersedes": None, "superseded_by": None, "text_hash": text_hash(TEMPLATE_BODY),
}  # fmt: skip
TEMPLATE_TOMBSTONE: dict[str, Any] = {
    "record_id": "01J0000000000000000000TMPL", "tenant": "default", "agent": "default",
    "scope": "global", "project_id": None, "text_hash": text_hash(TEMPLATE_BODY),
    "reason": "user-remove", "permanent": False, "removed_at": "2026-01-02T03:04:05.000006Z",
    "restored_at": None,
}  # fmt: skip
STORED_TIME_BAD: list[Any] = [
    "", "2026-06-01", "2026-06-01T12:00:00Z", "2026-06-01T12:00:00.000000+00:00",
    "0999-01-01T00:00:00.000000Z", "2026-13-01T00:00:00.000000Z", "2026-02-30T00:00:00.000000Z",
    "2026-06-01T12:00:00.000000z", " 2026-06-01T12:00:00.000000Z", 5, 1.5, True, [], {},
]  # fmt: skip
COUNTER_BAD: list[Any] = [-1, 1.5, "3", 2**31, 2**63, True, None, []]
FRACTION_BAD: list[Any] = [1.5, -0.1, "1", True, None, [], 1e400, float("nan")]
RECORD_FIELDS: dict[str, list[Any]] = {
    "id": [
        "",
        "lower0000000000000000000000",
        "x" * 65,
        5,
        None,
        "01J/../../etc",
        "01J 0",
        "01J\u0000",
        "\ud800",
        "-leading",
        True,
        ["01J"],
    ],
    "version": [0, -1, 1.5, "1", True, 2**31, None, [], 1e400],
    "tenant": ["a/b", "", 5, "..", "x" * 300, "a\u0000", None],
    "agent": ["a/b", "", 5, ".", " a", None],
    "body": BAD_TEXT,
    "kind": choice_values("fact"),
    "memory_type": choice_values("semantic"),
    "authority": choice_values("inferred"),
    "origin": choice_values("tool"),
    "trust": choice_values("learned"),
    "scope": choice_values("global"),
    "state": choice_values("trial"),
    "title": [*NOT_TEXT, "", "\u0000", "\ud800", *LINE_BREAKS, over(1000)],
    "tags": list_values(200),
    "language": [5, "", "e n", "\u0000", "x" * 36, []],
    "project_id": [5, "", "\u0000", "a\nb", over(500), []],
    "path_patterns": list_values(500),
    "operations": list_values(500),
    "phases": list_values(500),
    "task_types": list_values(500),
    "pinned": NOT_BOOL,
    "evicted_at": STORED_TIME_BAD,
    "forgotten_at": STORED_TIME_BAD,
    "last_applied_at": STORED_TIME_BAD[:6],
    "last_success_at": STORED_TIME_BAD[:6],
    "occurred_at": STORED_TIME_BAD,
    "recorded_at": [*STORED_TIME_BAD, None],
    "valid_to": STORED_TIME_BAD[:6],
    "expired_at": STORED_TIME_BAD[:6],
    "proof_count": COUNTER_BAD,
    "failure_count": COUNTER_BAD[:4],
    "used_count": COUNTER_BAD[:4],
    "ignored_count": COUNTER_BAD[:4],
    "confidence": FRACTION_BAD,
    "importance": FRACTION_BAD[:5],
    "evidence": ["abc", 5, [5], ["a\nb"], [""], {}],
    "source": [*NOT_SOURCE[:12], nested(50), None],
    "external_ref": [5, "", "\u0000", "a\nb", over(2000)],
    "episode_id": [5, "", "a b", "\u0000", over(200)],
    "position": NOT_INT,
    "supersedes": [0, 1, -1, "0", 1.0, True],
    "superseded_by": [1, 0, -1, "2", 2.0, True],
    "text_hash": ["", "abc", "0" * 64, "A" * 64, 5, None, text_hash(TEMPLATE_BODY).upper()],
}
TOMBSTONE_FIELDS: dict[str, list[Any]] = {
    "record_id": RECORD_FIELDS["id"],
    "tenant": RECORD_FIELDS["tenant"],
    "agent": RECORD_FIELDS["agent"],
    "scope": choice_values("global"),
    "project_id": [5, "", "\u0000", []],
    "text_hash": ["", "abc", "A" * 64, 5, None, text_hash(TEMPLATE_BODY).upper()],
    "reason": choice_values("user-remove"),
    "permanent": NOT_BOOL,
    "removed_at": [*STORED_TIME_BAD, None],
    "restored_at": [*STORED_TIME_BAD, "2026-01-01T00:00:00.000000Z"],
}


def import_reject() -> list[str]:
    out = []
    for name, values in RECORD_FIELDS.items():
        for value in values:
            out.append(line({"type": "record", "record": {**TEMPLATE_RECORD, name: value}}))
    for name in ("id", "version", "body", "recorded_at", "text_hash"):
        missing = {k: v for k, v in TEMPLATE_RECORD.items() if k != name}
        out.append(line({"type": "record", "record": missing}))
    for name, values in TOMBSTONE_FIELDS.items():
        for value in values:
            stone = {**TEMPLATE_TOMBSTONE, name: value}
            out.append(line({"type": "tombstone", "tombstone": stone}))
    for name in ("record_id", "text_hash", "reason", "removed_at"):
        missing = {k: v for k, v in TEMPLATE_TOMBSTONE.items() if k != name}
        out.append(line({"type": "tombstone", "tombstone": missing}))
    for patch in CROSS_FIELD_RECORDS:
        out.append(line({"type": "record", "record": {**TEMPLATE_RECORD, **patch}}))
    for patch in CROSS_FIELD_TOMBSTONES:
        out.append(line({"type": "tombstone", "tombstone": {**TEMPLATE_TOMBSTONE, **patch}}))
    return out


# Each value is valid alone; together they are not.
CROSS_FIELD_RECORDS: list[dict[str, Any]] = [
    {"trust": "system", "origin": "reflection"},
    {"trust": "system", "origin": "review"},
    {"scope": "project"},
    {"scope": "project", "project_id": None},
    {"scope": "global", "project_id": "git:abc"},
    {"version": 3, "supersedes": 3},
    {"version": 3, "supersedes": 4},
    {"version": 3, "superseded_by": 3},
    {"version": 3, "superseded_by": 2},
    {"body": "a different body"},
    {"body": TEMPLATE_BODY.upper() + " more"},
    {"unknown_field": 1},
    {"row": 1},
    {"purged": 1},
    {"live": True},
]
CROSS_FIELD_TOMBSTONES: list[dict[str, Any]] = [
    {"permanent": True, "restored_at": "2026-02-01T00:00:00.000000Z"},
    {"restored_at": "2025-01-01T00:00:00.000000Z"},
    {"scope": "project"},
    {"scope": "global", "project_id": "git:abc"},
    {"unknown_field": 1},
]


def import_accept() -> list[str]:
    variants: list[dict[str, Any]] = [
        {},
        {"version": 2**31 - 1, "supersedes": 2**31 - 2},
        {"tags": ["x" * 200] * 100, "title": "t" * 1000},
        {"source": nested(5), "evidence": ["e"] * 1000},
        {"occurred_at": "1000-01-01T00:00:00.000000Z", "valid_to": "9999-12-31T23:59:59.999999Z"},
        {"confidence": 0, "importance": 1, "proof_count": 2**31 - 1},
        {"scope": "project", "project_id": "git:abc"},
        {"id": "HANDWRITTEN-ID_1", "state": "archived", "origin": "reflection"},
        {"pinned": True, "episode_id": "ep", "position": 0},
    ]
    out = [line({"type": "record", "record": {**TEMPLATE_RECORD, **v}}) for v in variants]
    out.append(line({"type": "tombstone", "tombstone": TEMPLATE_TOMBSTONE}))
    return out


# -- CLI argument vectors -----------------------------------------------------------------

INT_ARGS = ["0", "-1", "-0", "9223372036854775808", "99999999999999999999", "1e3", "1.5",
            "0x10", "NaN", "inf", "", " ", "1 2"]  # fmt: skip
TIME_ARGS = ["0999-01-01", "10000-01-01", "9999-12-31T23:00-05:00", "yesterday", "", "\u0000",
             "2023-02-30", "2023-01-01\n", "\udcff"]  # fmt: skip
NAME_ARGS = ["", "a/b", "..", ".", "a\\b", "x" * 201, "a\u0000b", " a", "a ", "a\nb",
             "\u202eevil", "a\u200bb", "\udcff", "../../etc", "a\u2028b", "\u3000a"]  # fmt: skip
ID_ARGS = ["", " ", "\u0000", "\udcff", "a b", "x" * 300, "a\nb", "\u200b"]
TEXT_ARGS = ["", "   ", "\u0000", "a\u0000b", "\udcff", "\ud800", "\u001b[2J"]


def cli_reject() -> list[str]:
    out: list[list[str]] = []
    for value in INT_ARGS:
        out += [["list", "--limit", value], ["recall", "q", "--limit", value],
                ["recall", "q", "--max-chars", value]]  # fmt: skip
    for value in TIME_ARGS:
        out += [["list", "--as-of", value], ["show", "{ID}", "--as-of", value],
                ["remember", "x", "--occurred-at", value]]  # fmt: skip
    for value in NAME_ARGS:
        out += [["--tenant", value, "list"], ["--agent", value, "remember", "x"]]
    for value in ID_ARGS:
        out += [["show", value], ["show", value, "--history"], ["correct", value, "x"],
                ["forget", value], ["restore", value], ["expand", value],
                ["feedback", value, "ignored"]]  # fmt: skip
    for value in TEXT_ARGS:
        out += [["remember", value], ["correct", "{ID}", value], ["signal", value],
                ["context", "--task", value]]  # fmt: skip
    out += [["remember", over(BODY_LIMIT)], ["correct", "{ID}", over(BODY_LIMIT)],
            ["context", "--task", over(10_000)], ["recall", over(10_000)]]  # fmt: skip
    for value in ["\u0000", "\udcff\u0000", "a\u0000b"]:
        out += [["remember", "x", "--tag", value], ["remember", "x", "--title", value],
                ["remember", "x", "--source", value], ["remember", "x", "--path", value],
                ["remember", "x", "--operation", value]]  # fmt: skip
    return [line(argv) for argv in out]


# -- byte-level whole files -----------------------------------------------------------------

GOOD = b'{"body": "a fine memory"}\n'


def byte_files() -> dict[str, bytes]:
    """name -> content; 'reject-' files must exit 2, 'accept-' files must be stored."""
    return {
        "reject-invalid-utf8.jsonl": GOOD + b'{"body": "caf\xe9"}\n',
        "reject-overlong-utf8.jsonl": b'{"body": "\xc0\xaf"}\n',
        "reject-encoded-surrogate.jsonl": b'{"body": "\xed\xa0\x80"}\n',
        "reject-truncated-utf8.jsonl": b'{"body": "\xe2\x82"}\n',
        "reject-latin1-file.jsonl": '{"body": "Grüße"}\n'.encode("latin-1"),
        "reject-utf16.jsonl": '{"body": "x"}\n'.encode("utf-16"),
        "reject-utf8-bom.jsonl": b"\xef\xbb\xbf" + GOOD,
        "reject-nul-byte-in-line.jsonl": b'{"body": "a\x00b"}\n',
        "reject-nul-between-tokens.jsonl": b'{"body":\x00 "x"}\n',
        "reject-raw-control-in-string.jsonl": b'{"body": "a\x07b"}\n',
        "reject-raw-newline-in-string.jsonl": b'{"body": "a\rb"}\n',
        "reject-binary.jsonl": bytes(range(256)),
        "reject-zip-header.jsonl": b"PK\x03\x04\x14\x00\x00\x00\x08\x00" + bytes(64),
        "reject-sqlite-file.jsonl": b"SQLite format 3\x00" + bytes(100),
        "reject-good-then-bad.jsonl": GOOD * 50 + b'{"body": "x", "tags": "abc"}\n',
        "reject-bad-line-among-crlf.jsonl": GOOD.replace(b"\n", b"\r\n") * 3 + b"{]\r\n",
        "reject-two-objects-one-line.jsonl": b'{"body": "a"}{"body": "b"}\n',
        "reject-trailing-garbage.jsonl": b'{"body": "a"} x\n',
        "reject-json-array-file.jsonl": b'[{"body": "a"}, {"body": "b"}]\n',
        "reject-deep-array.jsonl": b"[" * 50_000 + b"]" * 50_000 + b"\n",
        "reject-deep-object.jsonl": b'{"a":' * 30_000 + b"1" + b"}" * 30_000 + b"\n",
        "reject-huge-integer.jsonl": b'{"body": "x", "position": ' + b"9" * 10_000 + b"}\n",
        "reject-huge-exponent.jsonl": b'{"body": "x", "position": 1e999999999}\n',
        "reject-lone-cr-line-ends.jsonl": GOOD.replace(b"\n", b"\r") + b'{"body": 5}\r',
        "accept-crlf.jsonl": GOOD.replace(b"\n", b"\r\n") * 3,
        "accept-no-final-newline.jsonl": GOOD + b'{"body": "last"}',
        "accept-blank-lines.jsonl": b"\n\n" + GOOD + b"\r\n   \n\t\n" + GOOD,
        "accept-u2028-in-string.jsonl": '{"body": "one\u2028two\u2029three"}\n'.encode(),
        "reject-raw-nel-in-string.jsonl": '{"body": "one\x85two"}\n'.encode(),
        "accept-many-lines.jsonl": b"".join(
            b'{"body": "memory number %d"}\n' % i for i in range(2000)
        ),
        "accept-empty.jsonl": b"",
        "accept-only-whitespace.jsonl": b"\n \n\t\r\n",
    }


def import_byte_files() -> dict[str, bytes]:
    header = json.dumps({"format": EXPORT_FORMAT, "tenant": "default", "agent": "default"})
    record = line({"type": "record", "record": TEMPLATE_RECORD}).encode()
    u2028 = {**TEMPLATE_RECORD, "body": "one\u2028two", "text_hash": text_hash("one\u2028two")}
    raw_sep = json.dumps({"type": "record", "record": u2028}, ensure_ascii=False).encode()
    head = header.encode() + b"\n"
    return {
        "reject-no-header.jsonl": record + b"\n",
        "reject-wrong-format.jsonl": b'{"format": "cairn.export.v0"}\n' + record + b"\n",
        "reject-format-not-text.jsonl": b'{"format": 1}\n' + record + b"\n",
        "reject-empty.jsonl": b"",
        "reject-header-only-blank.jsonl": b"\n\n\n",
        "reject-header-twice.jsonl": head * 2 + record + b"\n",
        "reject-invalid-utf8.jsonl": head + record.replace(b"zebrafinch", b"zebra\xff") + b"\n",
        "reject-bom.jsonl": b"\xef\xbb\xbf" + head + record + b"\n",
        "reject-bad-last-line.jsonl": head + record + b"\n" + b'{"type": "record"}\n',
        "reject-dup-keys.jsonl": head + b'{"type": "record", "type": "tombstone"}\n',
        "reject-nan.jsonl": head + record.replace(b'"confidence": 1.0', b'"confidence": NaN'),
        "reject-deep.jsonl": head + b"[" * 50_000 + b"]" * 50_000 + b"\n",
        "reject-header-array.jsonl": b'["cairn.export.v1"]\n' + record + b"\n",
        "accept-header-only.jsonl": head,
        "accept-crlf.jsonl": (head + record + b"\n").replace(b"\n", b"\r\n"),
        "accept-raw-u2028-in-body.jsonl": head + raw_sep + b"\n",
        "accept-twice-the-same-line.jsonl": head + record + b"\n" + record + b"\n",
    }


# -- writing --------------------------------------------------------------------------------


def outputs() -> dict[str, bytes]:
    def text(lines: list[str]) -> bytes:
        return ("\n".join(lines) + "\n").encode("ascii")

    files = {
        "ingest-reject.jsonl": text(ingest_reject()),
        "ingest-accept.jsonl": text(ingest_accept()),
        "import-reject.jsonl": text(import_reject()),
        "import-accept.jsonl": text(import_accept()),
        "cli-reject.jsonl": text(cli_reject()),
    }
    files |= {f"ingest-files/{k}": v for k, v in byte_files().items()}
    files |= {f"import-files/{k}": v for k, v in import_byte_files().items()}
    return files


def write(target: Path) -> None:
    for name, content in outputs().items():
        path = target / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)


if __name__ == "__main__":
    write(Path(sys.argv[1]) if len(sys.argv) > 1 else HERE / "generated")

"""One bound, one place: the contract's schema states the numbers of ``cairn.limits``, and
no other module of ``src/`` writes a text bound or the purge marker down again."""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any

import pytest

import cairn
from cairn import limits
from cairn.provider import contract as c
from cairn.provider.contract import learning as lc

PACKAGE = Path(cairn.__file__).parent


def _field(model: Any, name: str) -> dict[str, Any]:
    prop: dict[str, Any] = model.model_json_schema()["properties"][name]
    if "anyOf" in prop:  # optional: the bound is on the text branch
        prop = next(p for p in prop["anyOf"] if p.get("type") in ("string", "integer", "array"))
    return prop


@pytest.mark.parametrize(
    ("model", "name", "bound"),
    [
        (c.RecallQuery, "query", limits.MAX_QUERY_CHARS),
        (c.TaskQuery, "task", limits.MAX_QUERY_CHARS),
        (c.ExpandQuery, "task", limits.MAX_QUERY_CHARS),
        (lc.ObserveRequest, "note", limits.MAX_QUERY_CHARS),
        (lc.ObserveRequest, "task", limits.MAX_QUERY_CHARS),
        (lc.AskQuery, "question", limits.MAX_QUERY_CHARS),
        (c.ShowQuery, "record_id", limits.MAX_ID_CHARS),
        (c.ForgetRequest, "idempotency_key", limits.MAX_KEY_CHARS),
        (c.ShowQuery, "agent", limits.MAX_NAME_CHARS),
        (c.CorrectRequest, "text", limits.MAX_BODY_CHARS),
        (c.ListQuery, "text", limits.MAX_SEARCH_CHARS),
    ],
)
def test_the_contract_schema_states_the_limits(model: Any, name: str, bound: int) -> None:
    assert _field(model, name)["maxLength"] == bound


def test_the_contract_schema_states_the_counts() -> None:
    assert _field(c.RecallQuery, "max_results")["maximum"] == limits.MAX_RESULTS
    assert _field(c.ListQuery, "limit")["maximum"] == limits.MAX_PAGE
    assert _field(c.ListQuery, "offset")["maximum"] == limits.MAX_INT32
    assert _field(c.JournalQuery, "after_seq")["maximum"] == limits.MAX_JSON_INT
    assert _field(c.JournalQuery, "types")["maxItems"] == limits.MAX_LIST_ITEMS
    assert _field(c.IngestRequest, "batch_size")["maximum"] == limits.MAX_BATCH
    assert _field(lc.ObserveRequest, "steps")["maximum"] == limits.MAX_STEPS


def _literal_bounds(tree: ast.AST) -> list[str]:
    """``max_length=<number>`` anywhere, a check of ``cairn.validation`` given a number of
    100 or more as its bound, and an assignment of the purge marker's text."""
    found = []
    for node in ast.walk(tree):
        call = node if isinstance(node, ast.Call) else None
        called = call.func.id if call is not None and isinstance(call.func, ast.Name) else ""
        if isinstance(node, ast.Call) and called.startswith("check_"):
            found += [
                f"line {arg.lineno}: {called}(..., {arg.value})"
                for arg in node.args[1:]
                if isinstance(arg, ast.Constant) and type(arg.value) is int and arg.value >= 100
            ]
        if (
            isinstance(node, ast.keyword)
            and node.arg == "max_length"
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, int)
        ):
            found.append(f"line {node.value.lineno}: max_length={node.value.value}")
        if isinstance(node, ast.Constant) and node.value == limits.REDACTED:
            found.append(f"line {node.lineno}: {limits.REDACTED!r}")
        if (  # a byte bound of what a process reads (an HTTP body, a hook's event)
            isinstance(node, ast.Assign)
            and any(isinstance(t, ast.Name) and _BYTES.fullmatch(t.id) for t in node.targets)
            and all(
                isinstance(n, ast.Constant | ast.BinOp | ast.operator) for n in ast.walk(node.value)
            )
        ):
            found.append(f"line {node.lineno}: {ast.unparse(node)}")
    return sorted(found)


_BYTES = re.compile(r"_?MAX_\w*BYTES")


# A hook through the daemon imports no cairn module but its client's (tests/daemon/
# test_imports.py): the daemon's wire protocol keeps its reply bound to itself.
OWN_BOUND = frozenset({"daemon/wire.py"})


def test_no_module_writes_a_bound_down_again() -> None:
    offending = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name == "limits.py" and path.parent == PACKAGE:
            continue
        if str(path.relative_to(PACKAGE)) in OWN_BOUND:
            continue
        found = _literal_bounds(ast.parse(path.read_text(encoding="utf-8")))
        if found:
            offending[str(path.relative_to(PACKAGE))] = found
    assert offending == {}


def test_the_scan_finds_a_bound_written_down() -> None:
    tree = ast.parse(
        'from pydantic import Field\nX = Field(max_length=10_000)\nR = "[permanently forgotten]"\n'
        'check_line("project id", value, 4096)\ncheck_int("n", value, 0, 10)\n'
        "MAX_BODY_BYTES = 64 * 2**20\nPARSE_BYTES = 2**16\n"
    )
    found = _literal_bounds(tree)
    assert found == [
        "line 2: max_length=10000",
        "line 3: '[permanently forgotten]'",
        "line 4: check_line(..., 4096)",
        "line 6: MAX_BODY_BYTES = 64 * 2 ** 20",
    ]


def test_the_forget_reasons_are_one_definition() -> None:
    """The contract's forget reason is the model's type, and the stores' list is its
    values: a reason added in one place is added everywhere (the stores' CHECK too)."""
    import inspect
    from typing import get_args

    from cairn import model
    from cairn.provider.contract import records

    assert "negative-feedback" not in inspect.getsource(records)  # not spelled again
    assert records.ForgetRequest.model_fields["reason"].annotation is model.TombstoneReason
    assert get_args(model.TombstoneReason) == model.TOMBSTONE_REASONS
    assert inspect.getsource(model).count("negative-feedback") == 1

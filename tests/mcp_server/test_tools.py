"""The MCP tools' schemas come from the contract's models; every tool has hints."""

from __future__ import annotations

import pytest

from cairn.errors import InvalidInput
from cairn.mcp_server.calls import checked_arguments
from cairn.mcp_server.tools import SERVER_FIELDS, TOOLS, input_schema
from cairn.provider import contract as c
from cairn.provider.contract import learning as lc

EXPECTED = {
    "memory_store",
    "memory_recall",
    "memory_context",
    "memory_expand",
    "memory_correct",
    "memory_forget",
    "memory_feedback",
    "memory_ask",
    "memory_status",
}


def test_the_nine_tools_and_their_hints() -> None:
    assert {t.name for t in TOOLS} == EXPECTED
    hints = {t.name: (t.read_only, t.destructive, t.idempotent) for t in TOOLS}
    assert hints["memory_recall"] == (True, False, True)
    assert hints["memory_ask"] == (True, False, True)
    assert hints["memory_status"] == (True, False, True)
    assert hints["memory_forget"] == (False, True, True)
    assert hints["memory_store"] == (False, False, True)
    assert hints["memory_context"][0] is False  # it records the delivery
    for tool in TOOLS:
        assert len(tool.description) > 80, f"{tool.name} says too little to act on"
        assert not (tool.read_only and tool.destructive)


@pytest.mark.parametrize(
    ("name", "model"),
    [
        ("memory_store", c.StoreRequest),
        ("memory_recall", c.RecallQuery),
        ("memory_context", c.TaskQuery),
        ("memory_expand", c.ExpandQuery),
        ("memory_correct", c.CorrectRequest),
        ("memory_forget", c.ForgetRequest),
        ("memory_feedback", c.FeedbackRequest),
        ("memory_ask", lc.AskQuery),
    ],
)
def test_a_tools_schema_is_its_contract_models_less_what_the_server_sets(
    name: str, model: type
) -> None:
    spec = next(t for t in TOOLS if t.name == name)
    schema = input_schema(spec)
    contract = model.model_json_schema()  # type: ignore[attr-defined]
    expected = set(contract["properties"]) - SERVER_FIELDS - spec.drop | set(spec.extra)
    assert set(schema["properties"]) == expected
    for field, shape in schema["properties"].items():
        if field in contract["properties"]:
            plain = {k: v for k, v in shape.items() if k != "description"}
            assert plain == {
                k: v for k, v in contract["properties"][field].items() if k != "description"
            }, field
    assert set(schema["required"]) == set(contract.get("required", [])) - SERVER_FIELDS
    assert schema["additionalProperties"] is False


def test_store_takes_body_and_remembers_optional_fields_and_recall_takes_query() -> None:
    store = input_schema(next(t for t in TOOLS if t.name == "memory_store"))
    assert store["required"] == ["body"]
    optional = set(c.MemoryFields.model_json_schema()["properties"]) - {"body", "project_id"}
    assert optional <= set(store["properties"])
    assert "stated_by_user" in store["properties"]
    recall = input_schema(next(t for t in TOOLS if t.name == "memory_recall"))
    assert recall["required"] == ["query"]
    assert input_schema(next(t for t in TOOLS if t.name == "memory_ask"))["required"] == [
        "question"
    ]


def test_arguments_outside_the_schema_are_refused_by_name() -> None:
    with pytest.raises(InvalidInput, match=r"unknown argument 'idempotency_key'.*server sets"):
        checked_arguments("memory_feedback", {"idempotency_key": "k"})
    with pytest.raises(InvalidInput, match="unknown argument 'colour'"):
        checked_arguments("memory_recall", {"query": "x", "colour": "red"})
    with pytest.raises(InvalidInput, match="unknown tool"):
        checked_arguments("memory_delete_everything", {})
    assert checked_arguments("memory_recall", None) == {}


def test_the_status_tool_takes_no_argument() -> None:
    spec = next(t for t in TOOLS if t.name == "memory_status")
    assert input_schema(spec) == {
        "type": "object", "properties": {}, "required": [], "additionalProperties": False
    }  # fmt: skip

"""The provider contract, on every route (embedded and through the server): typed requests
in, typed responses out."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from cairn import InvalidInput, Memory
from cairn.provider import CONTRACT_VERSION
from cairn.provider import contract as c
from cairn.provider.client import invalid
from cairn.provider.contract import learning as lc


def test_contract_round_trip(mem: Memory) -> None:
    provider = mem.provider
    status = provider.status()
    assert status.contract == CONTRACT_VERSION and status.provider in ("local", "remote")
    assert status.counts["records"] == 0 and status.tenant == mem.tenant

    made = provider.apply(
        c.RememberRequest(idempotency_key="k1", body="Always use pnpm", kind="policy")
    )
    again = provider.apply(
        c.RememberRequest(idempotency_key="k1", body="Always use pnpm", kind="policy")
    )
    assert isinstance(made, c.WriteResponse) and isinstance(again, c.WriteResponse)
    assert made.record.id == again.record.id and made.created and not again.created
    assert provider.status().counts["records"] == 1  # the retry was a no-op

    task = provider.query(c.TaskQuery(task="always use pnpm to install dependencies"))
    assert isinstance(task, c.TaskResponse)
    assert task.resident[0].body == "Always use pnpm"
    app_id = task.resident[0].application_id
    fed = provider.apply(
        c.FeedbackRequest(idempotency_key="k2", application_id=app_id, outcome="used-successfully")
    )
    assert isinstance(fed, c.FeedbackResponse)
    assert fed.record.used_count == 1 and fed.changes["used_count"] == [0, 1]

    recall = provider.query(c.RecallQuery(query="pnpm"))
    assert isinstance(recall, c.RecallResponse) and "pnpm" in recall.preamble
    listed = provider.query(c.ListQuery())
    assert isinstance(listed, c.RecordsResponse) and len(listed.records) == 1
    rid = made.record.id
    forgot = provider.apply(c.ForgetRequest(idempotency_key="k3", record_id=rid))
    assert isinstance(forgot, c.ForgetResponse) and forgot.tombstone.record_id == rid
    retried = provider.apply(c.ForgetRequest(idempotency_key="k3", record_id=rid))
    assert isinstance(retried, c.ForgetResponse)  # the same key again: no error, no change
    empty = provider.query(c.ListQuery())
    assert isinstance(empty, c.RecordsResponse) and empty.records == []


def test_requests_parse_from_json_and_refuse_unknown_fields() -> None:
    parsed = c.parse_query({"view": "recall", "query": "pnpm", "max_results": 3})
    assert isinstance(parsed, c.RecallQuery) and parsed.max_results == 3
    with pytest.raises(ValidationError):
        c.parse_query({"view": "everything"})
    with pytest.raises(ValidationError):
        c.parse_apply({"mutation": "remember", "idempotency_key": "", "body": "x"})
    with pytest.raises(ValidationError):
        c.parse_apply({"mutation": "remember", "idempotency_key": "k", "body": "x", "tenant": "b"})


def test_the_engine_refuses_what_the_schema_lets_through(mem: Memory) -> None:
    with pytest.raises(InvalidInput, match="no memory"):
        mem.provider.apply(c.CorrectRequest(idempotency_key="k", record_id="01NOPE", text="x"))
    with pytest.raises(ValidationError) as caught:  # the contract itself refuses a blank body
        c.RememberRequest(idempotency_key="k", body="   ")
    assert str(invalid(caught.value)) == "body is empty"


def test_json_schemas_exist_for_every_request_and_response() -> None:
    for adapter in (c.QUERY, c.APPLY):
        schema = adapter.json_schema()
        assert "discriminator" in schema or "oneOf" in schema
    assert c.StatusResponse.model_json_schema()["properties"]["contract"]["default"] == (
        CONTRACT_VERSION
    )


def test_browsing_views_search_order_page_and_filter(mem: Memory) -> None:
    provider = mem.provider
    for i, body in enumerate(["Always use pnpm", "Never push to main", "pnpm 10 in CI"]):
        provider.apply(c.RememberRequest(idempotency_key=f"b{i}", body=body, kind="policy"))
    found = provider.query(c.ListQuery(text="PNPM", order="newest"))
    assert isinstance(found, c.RecordsResponse)
    assert [r.body for r in found.records] == ["pnpm 10 in CI", "Always use pnpm"]
    page = provider.query(c.ListQuery(order="newest", limit=1, offset=1))
    assert isinstance(page, c.RecordsResponse) and [r.body for r in page.records] == [
        "Never push to main"
    ]
    # A diagnosis previews the director's choice and records no application.
    preview = provider.query(c.TaskQuery(task="install with pnpm", preview=True))
    assert isinstance(preview, c.TaskResponse) and preview.resident
    rid = preview.resident[0].id
    none = provider.query(c.ApplicationsQuery(record_id=rid))
    assert isinstance(none, c.ApplicationsResponse) and none.total == 0
    provider.query(c.TaskQuery(task="install with pnpm"))
    apps = provider.query(c.ApplicationsQuery(record_id=rid))
    assert isinstance(apps, c.ApplicationsResponse) and apps.total == 1
    assert apps.applications[0].why_applied and apps.applications[0].record_id == rid
    journal = provider.query(c.JournalQuery(types=["context.applied"], newest_first=True))
    assert isinstance(journal, c.JournalResponse)
    assert [e.type for e in journal.events] == ["context.applied"]
    provider.apply(c.ForgetRequest(idempotency_key="bf", record_id=rid))
    stones = provider.query(c.TombstonesQuery(record_id=rid))
    assert isinstance(stones, c.TombstonesResponse) and [
        t.record_id for t in stones.tombstones
    ] == [rid]
    kept = next(r.id for r in page.records if r.id != rid)
    other = provider.query(c.TombstonesQuery(record_id=kept))
    assert isinstance(other, c.TombstonesResponse) and other.tombstones == []


def test_pin_and_unpin_are_journaled_and_idempotent(mem: Memory) -> None:
    provider = mem.provider
    made = provider.apply(c.RememberRequest(idempotency_key="p0", body="Keep the changelog"))
    assert isinstance(made, c.WriteResponse) and not made.record.pinned
    rid = made.record.id
    pinned = provider.apply(c.PinRequest(idempotency_key="p1", mutation="pin", record_id=rid))
    assert isinstance(pinned, c.WriteResponse) and pinned.record.pinned
    again = provider.apply(c.PinRequest(idempotency_key="p2", mutation="pin", record_id=rid))
    assert isinstance(again, c.WriteResponse) and again.record.pinned
    journal = provider.query(c.JournalQuery(types=["lifecycle.pinned"]))
    assert isinstance(journal, c.JournalResponse) and len(journal.events) == 1  # no second event
    off = provider.apply(c.PinRequest(idempotency_key="p3", mutation="unpin", record_id=rid))
    assert isinstance(off, c.WriteResponse) and not off.record.pinned
    shown = provider.query(c.ShowQuery(record_id=rid))
    assert isinstance(shown, c.RecordResponse) and not shown.record.pinned


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"sender": "a\x00b"}, "sender contains a NUL byte"),
        ({"tools": ["make\x01"]}, "tools contains the character U+0001"),
        ({"tools": ["x"] * 101}, "tools has 101 items; the limit is 100"),
        ({"operations": [" "]}, "operations is empty"),
        ({"command": "x" * 3000}, "command is 3,000 characters; the limit is 2,000"),
        ({"sender": "x" * 300}, "sender is 300 characters; the limit is 200"),
        ({"topic": " "}, "topic is empty"),
        ({"success": None}, "an observation says whether the task succeeded (success)"),
        ({"type": "context.outcome"}, "a context.outcome names its application and outcome"),
    ],
)
def test_an_observation_is_checked_once_at_the_contract(fields: dict, message: str) -> None:
    """The request model refuses a bad observation when it is built, in one line, on every
    route (the client builds it; the server and the daemon parse it): the learning service
    below takes it as valid and no longer checks it again."""
    from cairn.provider.client import build

    data = {"mutation": "observe", "idempotency_key": "k", "success": True, **fields}
    with pytest.raises(InvalidInput) as built:
        build(lc.ObserveRequest, data)
    assert str(built.value) == message
    try:  # as the server and the daemon's socket parse a body of its mutation
        lc.ObserveRequest.model_validate(data)
    except InvalidInput as parsed:
        assert str(parsed) == message
    except ValidationError as parsed:
        assert str(invalid(parsed)) == message
    else:
        raise AssertionError("the contract took a bad observation")


def test_a_blank_note_stands_for_none() -> None:
    request = lc.ObserveRequest(idempotency_key="k", success=True, note="  ")
    assert request.note == "  "  # the service journals no note for it


BAD_MEMORIES = [
    ({"body": "   "}, "body is empty"),
    ({"body": "a\x00b"}, "body contains a NUL byte"),
    (
        {"body": "[permanently forgotten]"},
        "body cannot be '[permanently forgotten]': cairn marks purged memories with it",
    ),
    ({"title": "two\nlines"}, "title contains the character U+000A (it must be one line)"),
    ({"title": "x" * 1001}, "title is 1,001 characters; the limit is 1,000"),
    ({"tags": ["ok", " "]}, "tags[1] is empty"),
    ({"tags": ["x" * 201]}, "tags[0] is 201 characters; the limit is 200"),
    ({"tags": ["t"] * 101}, "tags has 101 items; the limit is 100"),
    (
        {"operations": ["de\u200bploy"]},
        "operations[0] 'de\\u200bploy' holds an invisible character",
    ),
    ({"occurred_at": "yesterday"}, "occurred_at is not an ISO-8601 time: 'yesterday'"),
    (
        {"occurred_at": "0999-01-01"},
        "occurred_at '0999-01-01' is outside the years 1000 to 9999 (UTC)",
    ),
    ({"source": {"who": "a\nb"}}, "source.who contains the character U+000A (it must be one line)"),
    ({"episode_id": "two words"}, "episode_id 'two words' must be printable, without spaces"),
    ({"scope": "project"}, "a project-scoped memory needs a project id"),
    ({"project_id": "git:x"}, "project_id is given but scope is 'global'"),
]


@pytest.mark.parametrize(("fields", "message"), BAD_MEMORIES)
@pytest.mark.parametrize("mutation", ["remember", "store", "ingest"])
def test_a_memory_is_checked_once_at_the_contract(
    mutation: str, fields: dict, message: str
) -> None:
    """The request model refuses a bad memory when it is built (the client) and when it is
    parsed (the server, the daemon's socket), in the check's one line; an ingest names
    the item. The write path below takes the fields as they are."""
    from cairn.provider.client import build

    memory = {"body": "Always use pnpm", **fields}
    if mutation == "ingest":
        data = {"mutation": "ingest", "idempotency_key": "k", "items": [{"body": "fine"}, memory]}
        message = f"item 2: {message}"
    else:
        data = {"mutation": mutation, "idempotency_key": "k", **memory}
    model = c.IngestRequest if mutation == "ingest" else type(c.parse_apply(
        {"mutation": mutation, "idempotency_key": "k", "body": "x"}
    ))  # fmt: skip
    with pytest.raises(InvalidInput) as built:
        build(model, {k: v for k, v in data.items() if k != "mutation"})
    assert str(built.value) == message
    with pytest.raises(ValidationError) as parsed:
        c.parse_apply(data)
    assert str(invalid(parsed.value)) == message


def test_a_correction_is_checked_once_at_the_contract() -> None:
    for fields, message in [
        ({"text": " "}, "body is empty"),
        ({"title": "x" * 1001}, "title is 1,001 characters; the limit is 1,000"),
        ({"phases": ["a\tb"]}, "phases[0] contains the character U+0009"),
    ]:
        data = {"mutation": "correct", "idempotency_key": "k", "record_id": "r", "text": "x"}
        with pytest.raises(ValidationError) as parsed:
            c.parse_apply({**data, **fields})
        assert str(invalid(parsed.value)) == message


def test_a_memory_arrives_in_its_stored_form() -> None:
    request = c.RememberRequest(
        idempotency_key="k",
        body="x",
        tags=[" a "],
        operations=[" DEPLOY "],
        path_patterns=[" src/** "],
        occurred_at="2023-05-08T13:56:00+02:00",
        scope="project",
        project_id=" git:abc ",
    )
    assert request.tags == ["a"] and request.operations == ["deploy"]
    assert request.path_patterns == ["src/**"] and request.project_id == "git:abc"
    assert request.occurred_at == "2023-05-08T11:56:00.000000Z"


@pytest.mark.parametrize(("fields", "message"), BAD_MEMORIES[:6])
def test_a_refused_memory_changes_nothing_on_any_route(
    mem: Memory, fields: dict, message: str
) -> None:
    mem.remember("Always use pnpm")
    before = (mem.provider.status().counts, [e.event_id for e in mem.journal()])
    body = fields.get("body", "Deploy with make")
    rest = {k: v for k, v in fields.items() if k != "body"}
    for write in (mem.remember, mem.store):
        with pytest.raises(InvalidInput) as caught:
            write(body, **rest)
        assert str(caught.value) == message
    assert (mem.provider.status().counts, [e.event_id for e in mem.journal()]) == before


def test_the_limits_hold_after_the_redaction(mem: Memory) -> None:
    """A marker can be longer than the secret it replaces: what is stored is held to the
    limits again on the write path, after the secret policy, and a refusal stores nothing."""
    title = "x" * 982 + " password=hunter22"  # 1,000 characters: the limit
    before = mem.provider.status().counts
    with pytest.raises(InvalidInput, match="title is 1,011 characters; the limit is 1,000"):
        mem.store("Deploy with make", title=title)
    assert mem.provider.status().counts == before and mem.journal() == []
    done = mem.store("Deploy with make", title=title[11:])  # 1,000 once redacted
    assert done.title is not None and done.title.endswith("password=[REDACTED:password]")


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"view": "recall", "query": "a\x00b"}, "the query contains a NUL byte"),
        ({"view": "recall", "query": "ab\x07"}, "the query contains the character U+0007"),
        (
            {"view": "recall", "query": "x", "project_id": "a\nb"},
            "project id contains the character U+000A (it must be one line)",
        ),
        ({"view": "task", "task": " "}, "task is empty"),
        (
            {"view": "task", "task": "x", "session_id": "a b"},
            "session id 'a b' must be printable, without spaces",
        ),
        (
            {"view": "task", "task": "x", "paths": ["a\u200bb"]},
            "paths[0] 'a\\u200bb' holds an invisible character",
        ),
        ({"view": "task", "task": "x", "phase": " "}, "phase is empty"),
        ({"view": "expand", "record_id": "r", "task": "a\x00"}, "task contains a NUL byte"),
    ],
)
def test_a_query_is_checked_once_at_the_contract(data: dict, message: str) -> None:
    """What a recall, a task or an expansion asks with is checked where its request is
    built or parsed; the recall and task services take it as it is."""
    with pytest.raises(ValidationError) as parsed:
        c.parse_query(data)
    assert str(invalid(parsed.value)) == message


def test_a_query_arrives_as_the_services_read_it() -> None:
    assert c.parse_query({"view": "recall", "query": "  "}).query == "  "  # recalls nothing
    task = c.TaskQuery(task="ship it", operation=" Deploy ", phase="CI", task_type="Fix")
    assert (task.operation, task.phase, task.task_type) == ("deploy", "ci", "fix")
    with pytest.raises(ValidationError) as parsed:
        c.parse_apply({"mutation": "signal", "idempotency_key": "k", "text": "  "})
    assert str(invalid(parsed.value)) == "the statement is empty"

"""Ids a person types, on every route (embedded and through the server, on each backend):
a unique prefix of ≥ 6 characters, an ambiguous one that names its candidates and changes
nothing, an application id where a memory id is wanted, and a prefix that never reaches
another tenant's records."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from cairn import InvalidInput, Memory, NotFound


def shortest_unique(wanted: str, others: list[str]) -> str:
    """The shortest prefix (at least 6 characters) of ``wanted`` no other id starts with."""
    for n in range(6, len(wanted) + 1):
        if not any(o.startswith(wanted[:n]) for o in others if o != wanted):
            return wanted[:n]
    raise AssertionError("ids are equal")


def common_prefix(a: str, b: str) -> str:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return a[:n]


@contextmanager
def other_tenant(mem: Memory, request: pytest.FixtureRequest) -> Iterator[Memory]:
    if mem.provider.status().provider == "local":
        yield mem.for_tenant("other-tenant")
        return
    backend = request.node.callspec.params["mem"][1]
    with request.getfixturevalue("servers").get(backend).memory() as other:
        yield other


def test_a_unique_prefix_resolves_for_every_operation(mem: Memory) -> None:
    first = mem.remember("Always use pnpm to install dependencies", kind="policy")
    second = mem.remember("Never push straight to main", kind="policy")
    ids = [first.id, second.id]
    short = shortest_unique(first.id, ids)
    assert mem.get(short.lower()).id == first.id  # any case, as a person types it
    assert mem.expand(short).record.id == first.id
    assert [v.id for v in mem.history(short)] == [first.id]
    corrected = mem.correct(short, "Always use pnpm 10 to install dependencies")
    assert corrected.id == first.id and corrected.version == 2
    stone = mem.forget(short)
    assert stone.record_id == first.id
    assert mem.restore(short).id == first.id


def test_an_ambiguous_prefix_names_the_candidates_and_changes_nothing(mem: Memory) -> None:
    first = mem.remember("Run the linter before every commit", kind="policy")
    second = mem.remember("Write commit messages in English", kind="policy")
    shared = common_prefix(first.id, second.id)
    assert len(shared) >= 6  # made within the same ~17 minutes
    prefix = shared[: max(6, len(shared))]
    with pytest.raises(InvalidInput) as err:
        mem.forget(prefix)
    message = str(err.value)
    assert first.id in message and second.id in message and "\n" not in message
    assert {r.id for r in mem.list()} == {first.id, second.id}  # nothing was forgotten


def test_an_application_id_stands_for_its_memory(mem: Memory) -> None:
    rule = mem.remember("Always use pnpm to install dependencies", kind="policy")
    ctx = mem.context("install the dependencies with pnpm")
    app_id = next(i.application_id for i in ctx.resident if i.record_id == rule.id)
    assert app_id and app_id != rule.id
    assert mem.get(app_id).id == rule.id
    expanded = mem.expand(app_id)  # an expansion is an application of its own
    assert expanded.record.id == rule.id and expanded.application_id
    # and a prefix of the application id in feedback names that application
    short = shortest_unique(app_id, [rule.id, expanded.application_id])
    fed = mem.feedback(short, "used-successfully")
    assert fed.id == rule.id and fed.used_count == 1


def test_a_too_short_or_unknown_prefix_is_not_found(mem: Memory) -> None:
    rule = mem.remember("Use tabs in Makefiles", kind="policy")
    with pytest.raises(NotFound):
        mem.get(rule.id[:5])  # under six characters is never a prefix
    with pytest.raises(NotFound):
        mem.get("ZZZZZZZZ")


def test_a_prefix_never_reaches_another_tenant(mem: Memory, request: pytest.FixtureRequest) -> None:
    with other_tenant(mem, request) as other:
        mine = mem.remember("Deploy only on weekdays", kind="policy")
        theirs = other.remember("Deploy on any day", kind="policy")
        shared = common_prefix(mine.id, theirs.id)
        assert len(shared) >= 6
        # A prefix both tenants' ids start with names only this tenant's record here...
        assert mem.get(shared).id == mine.id
        assert other.get(shared).id == theirs.id
        # ...and one unique to the other tenant's record is unknown here.
        with pytest.raises(NotFound):
            mem.get(shortest_unique(theirs.id, [mine.id]))
        with pytest.raises(NotFound):
            mem.forget(theirs.id)
        assert other.get(theirs.id).forgotten_at is None

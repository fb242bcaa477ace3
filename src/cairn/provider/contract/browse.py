"""The browsing views of the provider contract ``cairn.provider.v1``: what a person (the
CLI's list and journal, the dashboard) reads to see memory — records by filter, search and
order, a page at a time; the journal by type, episode and session; tombstones; and the
application records of a memory, with their outcomes and why each was applied.

Like every request they are strict and refuse unknown fields (see
:mod:`cairn.provider.contract`, which re-exports them).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from cairn.limits import MAX_INT32, MAX_JSON_INT, MAX_LIST_ITEMS
from cairn.provider.checked import AsOf, EpisodeFilter, InProject, Search, SessionFilter, TagFilter
from cairn.provider.models import CONTRACT_VERSION as CONTRACT
from cairn.provider.models import (
    Agent,
    ApplicationModel,
    EventModel,
    Kind,
    Name,
    Page,
    RecordId,
    Request,
    Scope,
    TombstoneModel,
    Trust,
)

State = Literal["trial", "proven", "superseded", "candidate", "active", "stale", "archived"]
# recorded: oldest first (the journal's order); newest; applied: most recently applied;
# proof, used: most proven, most used first. Ties break by id.
Order = Literal["recorded", "newest", "applied", "proof", "used"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)


class _Query(Request, _Model):
    agent: Agent | None = None


class ListQuery(_Query):
    view: Literal["manage"] = "manage"
    project_id: InProject | None = None
    with_global: bool = False  # with project_id: global records too (what applies there)
    scope: Scope | None = None
    kinds: list[Kind] = []
    states: list[State] = []
    trust: list[Trust] = []
    tag: TagFilter | None = None
    text: Search | None = None  # in body or title
    order: Order = "recorded"
    include_forgotten: bool = False
    owned: bool = False  # only what a person owns: their explicit statements and rules
    as_of: AsOf | None = None
    limit: Page | None = None
    offset: int = Field(0, ge=0, le=MAX_INT32)


class JournalQuery(_Query):
    """The journal in ``seq`` order from ``after_seq``; ``newest_first`` reads backwards
    from ``before_seq`` (a timeline's next page); the filters are all optional."""

    view: Literal["journal"] = "journal"
    after_seq: int = Field(0, ge=0, le=MAX_JSON_INT)
    before_seq: int | None = Field(None, ge=1, le=MAX_JSON_INT)
    newest_first: bool = False
    types: list[Name] = Field([], max_length=MAX_LIST_ITEMS)
    episode_id: EpisodeFilter | None = None
    session_id: SessionFilter | None = None
    limit: Page | None = None


class TombstonesQuery(_Query):
    view: Literal["tombstones"] = "tombstones"
    record_id: RecordId | None = None  # only this memory's tombstone


class ApplicationsQuery(_Query):
    """The deliveries of one memory, newest first: task, delivery, whyApplied, outcome."""

    view: Literal["applications"] = "applications"
    record_id: RecordId
    limit: Page | None = None


class ApplicationsResponse(_Model):
    contract: str = CONTRACT
    view: Literal["applications"] = "applications"
    record_id: str
    applications: list[ApplicationModel]
    total: int  # how many the memory has in all (``limit`` shows the newest)


class JournalResponse(_Model):
    contract: str = CONTRACT
    view: Literal["journal"] = "journal"
    events: list[EventModel]


class TombstonesResponse(_Model):
    contract: str = CONTRACT
    view: Literal["tombstones"] = "tombstones"
    tombstones: list[TombstoneModel]

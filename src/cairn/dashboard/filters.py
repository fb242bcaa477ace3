"""The memories list's filters: query parameters in, a contract ``ListQuery`` out.

Every value is checked by the contract's own model, so a bad filter gets the same one-line
error, naming the field, as from any interface; an empty field means "any".
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any
from urllib.parse import urlencode

from cairn.errors import InvalidInput
from cairn.limits import MAX_PAGE, MAX_PAGE_NUMBER, MAX_RESULTS
from cairn.provider import contract as c
from cairn.provider.client import Client, build

PAGE_SIZE = 50
ORDERS = {
    "newest": "newest first",
    "recorded": "oldest first",
    "applied": "recently applied",
    "proof": "most proven",
    "used": "most used",
}
STATES = ("trial", "proven", "superseded", "candidate", "active", "stale", "archived")
TRUST = ("system", "learned", "external")
KINDS = ("fact", "preference", "policy", "profile", "episode", "skill", "topic")
SCOPES = ("global", "project")


@dataclass(frozen=True, slots=True)
class Filters:
    q: str = ""
    scope: str = ""
    project: str = ""
    state: str = ""
    trust: str = ""
    kind: str = ""
    tag: str = ""
    order: str = "newest"
    forgotten: str = ""  # "1": forgotten and evicted memories too
    page: int = 1

    def link(self, agent: str, **changes: Any) -> str:
        """The query string of this list with ``changes`` (empty values left out)."""
        values = {**asdict(self), **changes, "agent": agent}
        return urlencode({k: v for k, v in values.items() if v not in ("", None)})


def parse_filters(params: Mapping[str, str]) -> Filters:
    raw = {name: (params.get(name) or "").strip() for name in Filters.__dataclass_fields__}
    page_text = raw.pop("page") or "1"
    if not page_text.isdigit() or not 1 <= int(page_text) <= MAX_PAGE_NUMBER:
        raise InvalidInput(f"page must be a whole number from 1 to {MAX_PAGE_NUMBER:,}")
    raw["order"] = raw["order"] or "newest"
    return Filters(page=int(page_text), **raw)


SEARCH_LIMIT = MAX_RESULTS  # recall hits a search pages through: all one recall returns


def search(client: Client, f: Filters) -> tuple[list[Any], bool]:
    """A page of what recall finds for the search text, in recall's order (by relevance,
    not every word as a substring), narrowed by the other filters; and whether more follow."""
    query = build(
        c.RecallQuery,
        {"query": f.q, "max_results": SEARCH_LIMIT, "max_chars": MAX_PAGE,
         "include_trust": list(TRUST), "project_id": f.project or None},
    )  # fmt: skip
    found = client.send(query, c.RecallResponse).memories
    wanted = (
        ("scope", f.scope), ("project_id", f.project), ("state", f.state),
        ("trust", f.trust), ("kind", f.kind),
    )  # fmt: skip
    records = [
        m.record
        for m in found
        if all(not value or getattr(m.record, name) == value for name, value in wanted)
        and (not f.tag or f.tag in m.record.tags)
    ]
    start = (f.page - 1) * PAGE_SIZE
    return records[start : start + PAGE_SIZE], len(records) > start + PAGE_SIZE


def list_query(f: Filters) -> c.ListQuery:
    """One page of the list, and one more row (to know whether a next page exists)."""
    data: dict[str, Any] = {
        "view": "manage",
        "order": f.order,
        "limit": PAGE_SIZE + 1,
        "offset": (f.page - 1) * PAGE_SIZE,
        "include_forgotten": f.forgotten == "1",
    }
    for name, value in (("text", f.q), ("project_id", f.project), ("tag", f.tag)):
        if value:
            data[name] = value
    if f.scope:
        data["scope"] = f.scope
    for name, value in (("states", f.state), ("trust", f.trust), ("kinds", f.kind)):
        if value:
            data[name] = [value]
    return build(c.ListQuery, data)  # type: ignore[no-any-return]

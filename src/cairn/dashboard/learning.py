"""Learning, as charts: the reflection funnel (from the telemetry counters: counts only,
no content), and promotions, demotions and evictions by day (from the journal)."""

from __future__ import annotations

from collections import Counter
from datetime import date, timedelta
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response

from cairn.dashboard import charts
from cairn.dashboard.web import Site, visit
from cairn.provider import contract as c
from cairn.provider.contract import learning as lc

FUNNEL = (
    ("reflect:admitted", "successful tasks looked at"),
    ("reflect:funnel:candidates", "topics they were about"),
    ("reflect:funnel:corroborated", "topics seen succeed often enough to learn from"),
    ("reflect:funnel:singleOwnerCorroborated", "of those, from your own repeated successes"),
    ("reflect:funnel:abstained", "runs that found nothing to learn (nothing changed)"),
)
LIFECYCLE = {
    "lifecycle.promoted": "trusted more (worked again)",
    "lifecycle.demoted": "trusted less (failed in use)",
    "lifecycle.evicted": "set aside (unused or wrong; restorable)",
}
MAX_DAYS = 60
MAX_EVENTS = 20_000


def over_time(events: list[c.EventModel]) -> tuple[list[str], dict[str, list[int]]]:
    """Counts of each lifecycle change per day, from the first such day to the last
    (at most MAX_DAYS, the most recent)."""
    per = Counter((e.occurred_at[:10], LIFECYCLE[e.type]) for e in events if e.type in LIFECYCLE)
    if not per:
        return [], {}
    seen = sorted({d for d, _ in per})
    last = date.fromisoformat(seen[-1])
    first = max(date.fromisoformat(seen[0]), last - timedelta(days=MAX_DAYS - 1))
    days = [(first + timedelta(days=i)).isoformat() for i in range((last - first).days + 1)]
    return days, {name: [per[(d, name)] for d in days] for name in LIFECYCLE.values()}


def routes(site: Site) -> APIRouter:
    router = APIRouter()

    @router.get("/learning")
    def learning(request: Request) -> Response:
        v = visit(site, request)
        telemetry = v.client.send(lc.TelemetryQuery(runs=10), lc.TelemetryResponse)
        mine: dict[str, Any] = telemetry.agents.get(v.agent, {"counters": {}, "runs": []})
        counters: dict[str, float] = mine.get("counters", {})
        funnel = [(label, float(counters.get(name, 0))) for name, label in FUNNEL]
        events = [  # one type a query: each is a walk of the journal's type index
            e
            for kind in LIFECYCLE
            for e in v.client.send(
                c.JournalQuery(types=[kind], newest_first=True, limit=MAX_EVENTS),
                c.JournalResponse,
            ).events
        ]
        days, series = over_time(events)
        totals = {
            name.removeprefix("learning:memory_"): int(value)
            for name, value in sorted(counters.items())
            if name.startswith("learning:memory_")
        }
        return v.render(
            "learning.html",
            funnel=funnel,
            funnel_chart=charts.bars("What the last reflections learned from", funnel),
            days=days,
            series=series,
            timeline=charts.columns("Changes to learned memories, by day", days, series)
            if days
            else None,
            totals=totals,
            runs=mine.get("runs", []),
            counters=counters,
        )

    return router

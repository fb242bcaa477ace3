"""The learning page: the reflection funnel and lifecycle changes by day."""

from __future__ import annotations

from cairn.dashboard.learning import over_time
from cairn.provider import contract as c
from cairn.provider.contract import learning as lc

from .conftest import Browser


def event(seq: int, kind: str, day: str) -> c.EventModel:
    return c.EventModel(
        event_id=f"e{seq}", type=kind, tenant="t", agent="a", payload={}, seq=seq,
        occurred_at=f"{day}T10:00:00Z", recorded_at=f"{day}T10:00:00Z",
    )  # fmt: skip


def test_over_time_counts_each_change_per_day_with_the_gaps() -> None:
    days, series = over_time(
        [
            event(1, "lifecycle.promoted", "2026-05-01"),
            event(2, "lifecycle.promoted", "2026-05-01"),
            event(3, "lifecycle.evicted", "2026-05-03"),
            event(4, "lifecycle.demoted", "2026-05-03"),
            event(5, "memory.stored", "2026-05-04"),
        ]
    )
    assert days == ["2026-05-01", "2026-05-02", "2026-05-03"]
    assert series == {
        "trusted more (worked again)": [2, 0, 0],
        "trusted less (failed in use)": [0, 0, 1],
        "set aside (unused or wrong; restorable)": [0, 0, 1],
    }
    assert over_time([]) == ([], {})


def test_over_time_keeps_the_last_sixty_days() -> None:
    days, series = over_time(
        [event(1, "lifecycle.evicted", "2026-01-01"), event(2, "lifecycle.evicted", "2026-06-01")]
    )
    assert len(days) == 60 and days[-1] == "2026-06-01"
    assert sum(series["set aside (unused or wrong; restorable)"]) == 1


def test_the_page_charts_the_funnel_and_the_lifecycle(alice: Browser) -> None:
    for i, session in enumerate(("s1", "s2", "s3")):
        alice.provider.apply(
            lc.ObserveRequest(
                idempotency_key=f"o{i}", success=True, session_id=session, topic="releases",
                note="tag, build, publish", task="ship a release",
            )
        )  # fmt: skip
    alice.provider.apply(lc.ReflectRequest(idempotency_key="r1"))
    rid = alice.remember("Old habit")
    alice.provider.apply(c.EvictRequest(idempotency_key="ev", mutation="evict", record_id=rid))
    page = alice.get("/learning").text
    assert page.count('<svg class="chart"') == 2 and 'role="img"' in page
    # In a user's words, with a line on what each chart means; no internal terms.
    assert "What cairn learned from your work" in page and "successful tasks looked at" in page
    assert 'data-testid="funnel-note"' in page and 'data-testid="timeline-note"' in page
    for internal in ("trajectories", "abstained", "corroborated", "funnel</h2>"):
        assert internal not in page.lower(), internal
    telemetry = alice.provider.query(lc.TelemetryQuery())
    assert isinstance(telemetry, lc.TelemetryResponse)
    admitted = int(telemetry.agents["default"]["counters"].get("reflect:admitted", 0))
    assert admitted > 0
    assert f'<th scope="row">successful tasks looked at</th><td>{admitted}</td>' in page
    assert "Changes to learned memories, by day" in page
    assert "looked back at successful tasks" in page and "learning.reflected" not in page

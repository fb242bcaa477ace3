"""Properties of the pure recall stages, checked with generated inputs.

Fusion, scoring, selection, episodes and the date prior are pure functions of their
inputs and the clock, so what their docstrings promise can be stated for every input:
scores stay in range, a missing signal is neutral, order is kept where it should be,
limits are never exceeded.
"""

from __future__ import annotations

import itertools
import math
import random
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime, timedelta

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from cairn.config import Boosts
from cairn.engine.recall import scoring
from cairn.engine.recall.episodes import propagate
from cairn.engine.recall.fusion import LaneRanking, rrf, score_fusion
from cairn.engine.recall.selection import budget, dedup, fingerprint
from cairn.engine.recall.timeframe import date_prior, query_range
from cairn.model import Record
from cairn.storage.ports import EpisodePlace
from cairn.timeutil import age_days, to_iso

NOW = datetime(2026, 6, 1, tzinfo=UTC)
LANE_NAMES = ("keyword", "vector", "entity", "extra")

# Timing is never asserted: the machine is shared, so no per-example deadline.
RELAXED = settings(deadline=None)

# -- fusion ------------------------------------------------------------------------------


@st.composite
def lane_rankings(draw: st.DrawFn, name: str) -> LaneRanking:
    """A lane's ranking: distinct rows, best first, with the lane's own scores falling."""
    rows = draw(st.lists(st.integers(0, 40), unique=True, max_size=12))
    if name == "keyword":  # BM25: no fixed scale
        values = st.floats(0, 30, allow_nan=False)
    else:  # cosine-like
        values = st.floats(-1, 1, allow_nan=False)
    scores = sorted(draw(st.lists(values, min_size=len(rows), max_size=len(rows))), reverse=True)
    weight = draw(st.sampled_from([0.0, 0.25, 1.0, 1.5]) | st.floats(0.01, 3))
    return LaneRanking(name, weight, tuple(rows), tuple(scores))


@st.composite
def lane_sets(draw: st.DrawFn) -> list[LaneRanking]:
    names = draw(st.lists(st.sampled_from(LANE_NAMES), unique=True, min_size=1, max_size=4))
    return [draw(lane_rankings(name)) for name in names]


def _active(lanes: list[LaneRanking]) -> list[LaneRanking]:
    return [lane for lane in lanes if lane.rows and lane.weight > 0]


@settings(RELAXED, max_examples=200)
@given(lane_sets(), st.integers(1, 100))
def test_rrf_scores_are_in_unit_range_and_sorted(lanes: list[LaneRanking], k: int) -> None:
    fused = rrf(lanes, k=k)
    assert all(0.0 < f.score <= 1.0 for f in fused)
    assert all(a.score >= b.score for a, b in itertools.pairwise(fused))
    assert {f.row for f in fused} == {row for lane in _active(lanes) for row in lane.rows}
    for f in fused:  # ranks: the row's position in every lane that has it, from 1
        expected = {
            lane.name: lane.rows.index(f.row) + 1 for lane in _active(lanes) if f.row in lane.rows
        }
        assert f.ranks == expected


@RELAXED
@given(lane_sets(), st.integers(1, 100))
def test_rrf_first_in_every_lane_scores_exactly_one(lanes: list[LaneRanking], k: int) -> None:
    active = _active(lanes)
    assume(active)
    top = [replace(lane, rows=(999, *lane.rows)) for lane in active]
    assert rrf(top, k=k)[0].row == 999
    assert rrf(top, k=k)[0].score == 1.0


@RELAXED
@given(lane_rankings("vector"), st.integers(1, 100))
def test_one_lane_alone_keeps_its_order(lane: LaneRanking, k: int) -> None:
    assume(lane.rows and lane.weight > 0)
    assert [f.row for f in rrf([lane], k=k)] == list(lane.rows)
    fused = score_fusion([lane])
    assert sorted(lane.rows, key=lambda row: -fused[row]) == list(lane.rows)
    for row, own in zip(lane.rows, lane.scores, strict=True):
        assert math.isclose(fused[row], max(own, 0.0), rel_tol=1e-12, abs_tol=1e-300)


@RELAXED
@given(lane_rankings("keyword"))
def test_a_keyword_lane_alone_is_divided_by_its_best(lane: LaneRanking) -> None:
    assume(lane.rows and lane.weight > 0 and lane.scores[0] > 0)
    fused = score_fusion([lane])
    assert fused[lane.rows[0]] == 1.0
    assert sorted(lane.rows, key=lambda row: -fused[row]) == list(lane.rows)


@settings(RELAXED, max_examples=200)
@given(lane_sets(), st.randoms(use_true_random=False), st.integers(1, 100))
def test_lane_order_does_not_change_the_scores(
    lanes: list[LaneRanking], rng: random.Random, k: int
) -> None:
    shuffled = lanes[:]
    rng.shuffle(shuffled)
    # Sums in another order may differ in the last bit; the order may differ only there.
    before = {f.row: f for f in rrf(lanes, k=k)}
    after = rrf(shuffled, k=k)
    assert before.keys() == {f.row for f in after}
    for f in after:
        assert math.isclose(f.score, before[f.row].score, rel_tol=1e-12)
        assert f.ranks == before[f.row].ranks
    one, two = score_fusion(lanes), score_fusion(shuffled)
    assert one.keys() == two.keys()
    assert all(math.isclose(one[row], two[row], rel_tol=1e-12, abs_tol=1e-15) for row in one)


@RELAXED
@given(lane_sets(), st.integers(1, 100))
def test_rrf_ties_keep_the_order_of_first_appearance(lanes: list[LaneRanking], k: int) -> None:
    seen = list(dict.fromkeys(row for lane in _active(lanes) for row in lane.rows))
    fused = rrf(lanes, k=k)
    for a, b in itertools.pairwise(fused):
        if a.score == b.score:
            assert seen.index(a.row) < seen.index(b.row)


@RELAXED
@given(lane_sets(), st.integers(1, 100))
def test_empty_and_weightless_lanes_change_nothing(lanes: list[LaneRanking], k: int) -> None:
    idle = [LaneRanking("idle", 0.0, (1, 2, 3), (0.9, 0.8, 0.7)), LaneRanking("none", 2.0, ())]
    assert rrf([*lanes, *idle], k=k) == rrf(lanes, k=k)
    assert score_fusion([*idle, *lanes]) == score_fusion(lanes)


@settings(RELAXED, max_examples=200)
@given(
    lane_sets(),
    st.dictionaries(st.integers(0, 60), st.floats(-1, 1, allow_nan=False), max_size=10),
    st.lists(st.integers(0, 60), max_size=4),
)
def test_score_fusion_is_a_weighted_mean_in_unit_range(
    lanes: list[LaneRanking], extra: dict[int, float], extra_rows: list[int]
) -> None:
    fill = {lane.name: extra for lane in lanes if lane.name != "keyword"}
    fused = score_fusion(lanes, fill, extra_rows)
    active = _active(lanes)
    expected_rows = {row for lane in active for row in lane.rows} | set(extra_rows)
    assert fused.keys() == (expected_rows if active else set())
    assert all(0.0 <= value <= 1.0 for value in fused.values())
    # Same inputs, same answer, in the same order.
    assert list(score_fusion(lanes, fill, extra_rows).items()) == list(fused.items())
    # A lane's own score for a row always wins over the fill for it.
    tampered = {name: dict(scores) for name, scores in fill.items()}
    for lane in active:
        for row in lane.rows:
            tampered.setdefault(lane.name, {})[row] = 0.5
    assert score_fusion(lanes, tampered, extra_rows) == fused


def test_rounding_never_lifts_a_fused_score_past_one() -> None:
    # Found by the properties above: 1.0000000000000002, 0.9999999999999999 and
    # 1.0000000000000002 before each term was weighted as a share of rank 1 / of the best.
    firsts = [
        LaneRanking("keyword", 0.25, (0,)),
        LaneRanking("vector", 0.5, (0,)),
        LaneRanking("entity", 0.5, (0,)),
    ]
    assert rrf(firsts, k=14)[0].score == 1.0
    assert (
        rrf([LaneRanking("keyword", 0.25, (0,)), LaneRanking("vector", 1.0, (0,))], k=2)[0].score
        == 1.0
    )
    assert score_fusion([LaneRanking("keyword", 1.5, (0,), (21.59930234491575,))]) == {0: 1.0}


def test_rows_whose_scores_are_equal_keep_their_first_appearance() -> None:
    # 0.25 x 23/24 and 1/3 x 23/32 are equal but may round apart in the last bit before the
    # division that makes both 0.06686046511627906; row 10 was seen first and stays first.
    lanes = [
        LaneRanking("keyword", 3.0, (0,)),
        LaneRanking("vector", 1 / 3, (0, 1, 2, 3, 4, 5, 6, 7, 9, 10)),
        LaneRanking("entity", 0.25, (0, 8)),
    ]
    fused = [f for f in rrf(lanes, k=22) if f.row in (8, 10)]
    assert fused[0].score == fused[1].score
    assert [f.row for f in fused] == [10, 8]


# -- scoring -----------------------------------------------------------------------------


def rec(**kw: object) -> Record:
    base = Record(id="R", version=1, tenant="t", agent="a", body="b", recorded_at=to_iso(NOW))
    return replace(base, **kw)  # type: ignore[arg-type]


def ago(days: float) -> str:
    return to_iso(NOW - timedelta(days=days))


days = st.floats(0, 3650, allow_nan=False)
alphas = st.floats(0, 2, allow_nan=False)
boosts = st.builds(
    Boosts,
    recency=alphas,
    temporal=alphas,
    proof=alphas,
    trust=alphas,
    usefulness=alphas,
    forget=alphas,
)
records = st.builds(
    rec,
    recorded_at=days.map(ago),
    occurred_at=st.none() | days.map(ago),
    proof_count=st.integers(0, 1000),
    failure_count=st.integers(0, 20),
    used_count=st.integers(0, 50),
    ignored_count=st.integers(0, 50),
    last_success_at=st.none() | days.map(ago),
    last_applied_at=st.none() | days.map(ago),
    confidence=st.floats(0, 1),
    importance=st.floats(0, 1),
    pinned=st.booleans(),
    memory_type=st.sampled_from(["semantic", "episodic", "working", "procedural"]),
    trust=st.sampled_from(["system", "learned", "external"]),
)


@RELAXED
@given(boosts, st.floats(0, 10, allow_nan=False), st.booleans())
def test_a_record_without_signals_scores_exactly_its_base(
    boost: Boosts, base: float, pinned: bool
) -> None:
    # No recorded_at, occurred_at, proofs or feedback, neutral trust, applied just now.
    blank = rec(recorded_at="", pinned=pinned, last_applied_at=to_iso(NOW))
    found = scoring.score(base, blank, boost, NOW)
    factors = (found.recency, found.temporal, found.proof, found.trust, found.usefulness)
    assert factors == (1.0,) * 5
    assert found.forget == 1.0
    assert found.final == base


@RELAXED
@given(records, boosts)
def test_each_missing_signal_is_a_factor_of_exactly_one(record: Record, boost: Boosts) -> None:
    found = scoring.score(1.0, replace(record, occurred_at=None), boost, NOW)
    assert found.temporal == 1.0
    assert scoring.score(1.0, replace(record, proof_count=0), boost, NOW).proof == 1.0
    no_feedback = replace(record, used_count=0, ignored_count=0)
    assert scoring.score(1.0, no_feedback, boost, NOW).usefulness == 1.0
    assert scoring.score(1.0, replace(record, trust="learned"), boost, NOW).trust == 1.0


@RELAXED
@given(records, boosts, st.floats(0, 10, allow_nan=False))
def test_factors_stay_in_their_bands(record: Record, boost: Boosts, base: float) -> None:
    found = scoring.score(base, record, boost, NOW)
    for alpha, factor in (
        (boost.recency, found.recency),
        (boost.temporal, found.temporal),
        (boost.proof, found.proof),
        (boost.trust, found.trust),
        (boost.usefulness, found.usefulness),
    ):
        assert 1 - alpha / 2 - 1e-12 <= factor <= 1 + alpha / 2 + 1e-12
    assert 1 - boost.forget / 2 - 1e-12 <= found.forget <= 1.0
    assert 0.5 <= scoring.fade(record, NOW) <= 1.0
    assert found.final >= 0.0


@RELAXED
@given(records, st.integers(0, 1000), st.integers(0, 1000))
def test_more_proof_never_lowers_the_proof_signal(record: Record, a: int, b: int) -> None:
    low, high = sorted((a, b))
    weaker = scoring.proof_signal(replace(record, proof_count=low), NOW)
    assert weaker <= scoring.proof_signal(replace(record, proof_count=high), NOW)


@RELAXED
@given(records, days, days)
def test_older_is_never_more_recent(record: Record, a: float, b: float) -> None:
    young, old = sorted((a, b))
    for signal in (
        lambda days: scoring.recency_signal(replace(record, recorded_at=ago(days)), NOW),
        lambda days: scoring.temporal_signal(replace(record, occurred_at=ago(days)), NOW),
    ):
        newer, older = signal(young), signal(old)
        assert older < newer if old - young >= 1 else older <= newer
    # A success long ago lifts less than a recent one.
    recent = scoring.proof_signal(replace(record, last_success_at=ago(young)), NOW)
    assert scoring.proof_signal(replace(record, last_success_at=ago(old)), NOW) <= recent


@RELAXED
@given(records)
def test_pinned_never_fades(record: Record) -> None:
    pinned = replace(record, pinned=True)
    assert scoring.fade(pinned, NOW) == 1.0
    assert scoring.score(1.0, pinned, Boosts.model_validate({"forget": 2.0}), NOW).forget == 1.0


@RELAXED
@given(records, st.integers(0, 20), st.integers(0, 20))
def test_failures_fade_faster(record: Record, a: int, b: int) -> None:
    few, many = sorted((a, b))
    record = replace(record, pinned=False)
    kept = scoring.fade(replace(record, failure_count=few), NOW)
    faded = scoring.fade(replace(record, failure_count=many), NOW)
    assert faded <= kept
    age = age_days(record.last_applied_at or record.recorded_at, NOW) or 0.0
    if few < many and age >= 1 and faded > 0.5 + 1e-6 and kept < 1 - 1e-6:
        assert faded < kept


@RELAXED
@given(st.floats(0, 2), st.floats(0, 2), st.sampled_from(["system", "learned", "external"]))
def test_rank_key_orders_by_score_then_trust(a: float, b: float, trust: str) -> None:
    if a > b + 1e-8:
        assert scoring.rank_key(a, trust) < scoring.rank_key(b, trust)
    assert scoring.rank_key(a, "system") <= scoring.rank_key(a, trust)


# -- selection ---------------------------------------------------------------------------


@dataclass
class Item:  # not frozen, compared by identity: equal items are still distinct candidates
    body: str
    recorded: str
    size: int = 0


bodies = st.sampled_from(["Use pnpm", " use PNPM ", "other", "x" * 210, "x" * 200 + "y", ""])
stamps = st.sampled_from(["2026-01-01T00:00:00Z", "2026-02-01T00:00:00Z", "2026-03-01T00:00:00Z"])
items = st.lists(st.builds(Item, bodies, stamps, st.integers(0, 40)), max_size=10)


def _is_subsequence(part: list[Item], whole: list[Item]) -> bool:
    it = iter(whole)
    return all(any(x is y for y in it) for x in part)


@settings(RELAXED, max_examples=200)
@given(items)
def test_dedup_keeps_the_newest_per_fingerprint_in_order(candidates: list[Item]) -> None:
    keep, dropped = dedup(candidates, lambda i: i.body, lambda i: i.recorded)
    assert _is_subsequence(keep, candidates)
    assert sorted(map(id, keep + [d.item for d in dropped])) == sorted(map(id, candidates))
    assert all(d.reason == "dedup" for d in dropped)
    by_key: dict[str, list[Item]] = {}
    for item in candidates:
        by_key.setdefault(fingerprint(item.body), []).append(item)
    assert sorted(fingerprint(i.body) for i in keep) == sorted(by_key)  # one each
    for group in by_key.values():
        newest = max(i.recorded for i in group)
        first_newest = next(i for i in group if i.recorded == newest)
        assert any(first_newest is k for k in keep)


@settings(RELAXED, max_examples=200)
@given(items, st.integers(0, 6), st.integers(0, 100))
def test_budget_respects_both_limits_and_drops_whole_items(
    candidates: list[Item], max_results: int, max_chars: int
) -> None:
    keep, dropped = budget(candidates, lambda i: i.size, max_results, max_chars)
    assert len(keep) <= max_results
    assert sum(i.size for i in keep) <= max_chars
    assert _is_subsequence(keep, candidates)
    assert sorted(map(id, keep + [d.item for d in dropped])) == sorted(map(id, candidates))
    # Greedy in order: an item is dropped only when it cannot fit at its turn, so a smaller
    # item after a dropped large one is still taken when it fits.
    reasons = {id(d.item): d.reason for d in dropped}
    taken, used = 0, 0
    for item in candidates:
        if taken >= max_results:
            assert reasons[id(item)] == "budget:results"
        elif used + item.size > max_chars:
            assert reasons[id(item)] == "budget:chars"
        else:
            assert id(item) not in reasons
            taken, used = taken + 1, used + item.size


def test_a_small_item_after_a_dropped_large_one_still_fits() -> None:
    big, small = Item("big", "", 80), Item("small", "", 10)
    keep, dropped = budget([Item("a", "", 30), big, small], lambda i: i.size, 5, 50)
    assert [i.body for i in keep] == ["a", "small"]
    assert [(d.item, d.reason) for d in dropped] == [(big, "budget:chars")]


# -- episodes and the date prior ---------------------------------------------------------

places = st.builds(
    EpisodePlace,
    st.none() | st.sampled_from(["s1", "s2"]),
    st.none() | st.integers(0, 6),
    st.none() | st.dates(date(2023, 1, 1), date(2023, 12, 31)).map(date.isoformat),
)
candidates = st.dictionaries(st.integers(0, 20), st.floats(0, 1, allow_nan=False), max_size=12)


@st.composite
def scored_places(draw: st.DrawFn) -> tuple[dict[int, float], dict[int, EpisodePlace]]:
    scores = draw(candidates)
    where = {row: draw(places) for row in scores if draw(st.booleans())}
    # Positions are unique within an episode, as in a conversation.
    seen: set[tuple[str | None, int | None]] = set()
    for row, place in list(where.items()):
        key = (place.episode_id, place.position)
        if place.position is not None and key in seen:
            where[row] = replace(place, position=None)
        seen.add(key)
    return scores, where


@settings(RELAXED, max_examples=200)
@given(
    scored_places(),
    st.floats(0, 1),
    st.integers(0, 3),
    st.floats(0, 1),
    st.integers(1, 4),
    st.randoms(use_true_random=False),
)
def test_episode_context_only_lifts_rows_of_an_episode(
    data: tuple[dict[int, float], dict[int, EpisodePlace]],
    neighbour_weight: float,
    window: int,
    episode_weight: float,
    episode_top: int,
    rng: random.Random,
) -> None:
    scores, where = data

    def lifted(scores: dict[int, float], neighbour: float, episode: float) -> dict[int, float]:
        return propagate(
            scores,
            where,
            neighbour_weight=neighbour,
            window=window,
            episode_weight=episode,
            episode_top=episode_top,
        )

    out = lifted(scores, neighbour_weight, episode_weight)
    assert out.keys() == scores.keys()
    for row, value in scores.items():
        place = where.get(row)
        if place is None or place.episode_id is None:
            assert out[row] == value
        else:
            assert out[row] >= value
    # The candidates' order does not matter.
    rows = list(scores)
    rng.shuffle(rows)
    assert lifted({r: scores[r] for r in rows}, neighbour_weight, episode_weight) == out
    assert lifted(scores, 0.0, 0.0) == scores


@RELAXED
@given(
    scored_places(),
    st.dates(date(2023, 1, 1), date(2023, 12, 31)),
    st.integers(0, 40),
    st.floats(0, 2),
    st.integers(0, 14),
    st.floats(1, 60),
)
def test_the_date_prior_adds_at_most_its_weight_and_falls_with_the_gap(
    data: tuple[dict[int, float], dict[int, EpisodePlace]],
    start: date,
    length: int,
    weight: float,
    after_days: int,
    tau_days: float,
) -> None:
    scores, where = data
    span = (start, start + timedelta(days=length))
    out = date_prior(scores, where, span, weight=weight, after_days=after_days, tau_days=tau_days)
    assert out.keys() == scores.keys()
    gaps: list[tuple[int, float]] = []
    for row, value in scores.items():
        lift = out[row] - value
        assert -1e-12 <= lift <= weight + 1e-12
        place = where.get(row)
        if place is None or not place.occurred_at:
            assert lift == 0.0
            continue
        when = date.fromisoformat(place.occurred_at)
        end = span[1] + timedelta(days=after_days)
        gap = max((span[0] - when).days, (when - end).days, 0)
        if gap == 0:
            assert math.isclose(lift, weight, rel_tol=1e-9, abs_tol=1e-12)
        gaps.append((gap, lift))
    for gap, lift in gaps:
        for other_gap, other_lift in gaps:
            if gap < other_gap:
                assert lift >= other_lift - 1e-9


fragments = st.sampled_from(
    [
        "in May 2023", "on 8 May, 2023", "May 8th 2023", "31 February 2023", "2023-02-30",
        "2023-06-15", "spring of 2023", "winter 2023", "during 2024", "in 0000", "in 9999",
        "december 9999", "winter 9999", "last week", "yesterday", "this year", "sept. 2023",
        "what happened", "2023", "May", "the 13th", "on 32 jan, 2023",
    ]
)  # fmt: skip


@RELAXED
@given(st.lists(fragments, min_size=1, max_size=3).map(" and ".join))
def test_a_named_range_never_ends_before_it_starts(text: str) -> None:
    found = query_range(text, NOW)
    if found is not None:
        assert found[0] <= found[1]
    if "2023-06-15" in text and "2023-02-30" not in text.split("2023-06-15")[0]:
        assert found == (date(2023, 6, 15), date(2023, 6, 15))

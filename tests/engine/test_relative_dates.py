from __future__ import annotations

from datetime import date

import pytest

from cairn.engine.relative_dates import (
    MAX_RESOLVED,
    SOURCE_KEY,
    dated_source,
    resolve_dates,
    stored_dates,
)

MONDAY = date(2023, 5, 8)  # LoCoMo's first session: 1:56 pm on 8 May, 2023 (a Monday)
D = date.fromisoformat


def spans(text: str, anchor: date = MONDAY) -> list[tuple[str, date, date]]:
    return [(r.phrase, r.start, r.end) for r in resolve_dates(text, anchor)]


@pytest.mark.parametrize(
    ("text", "start", "end"),
    [
        ("I went to a support group yesterday", "2023-05-07", "2023-05-07"),
        ("It rained last night", "2023-05-07", "2023-05-07"),
        ("the day before yesterday", "2023-05-06", "2023-05-06"),
        ("I'm off to go swimming today", "2023-05-08", "2023-05-08"),
        ("see you tomorrow", "2023-05-09", "2023-05-09"),
        ("Last week I went to a pride parade", "2023-05-01", "2023-05-07"),
        ("this week", "2023-05-08", "2023-05-14"),
        ("next week", "2023-05-15", "2023-05-21"),
        ("the past week was hard", "2023-05-01", "2023-05-07"),
        ("Last weekend I joined a mentorship program", "2023-05-06", "2023-05-07"),
        ("last Saturday we hiked", "2023-05-06", "2023-05-06"),
        ("last Monday", "2023-05-01", "2023-05-01"),  # not the anchor's own day
        ("next Friday", "2023-05-12", "2023-05-12"),
        ("last month", "2023-04-01", "2023-04-30"),
        ("last year", "2022-01-01", "2022-12-31"),
        ("last summer", "2022-06-01", "2022-08-31"),  # the latest summer already over
        ("two weeks ago", "2023-04-21", "2023-04-27"),  # the week around that day
        ("camping with my fam two weekends ago", "2023-04-29", "2023-04-30"),  # before last
        ("3 days ago", "2023-05-05", "2023-05-05"),
        ("a month ago", "2023-04-01", "2023-04-30"),
        ("four years ago", "2019-01-01", "2019-12-31"),
        ("a couple of days ago", "2023-05-06", "2023-05-06"),
        ("a few days ago", "2023-05-03", "2023-05-06"),  # two to five days back
        ("我上周六去爬山了", "2023-05-06", "2023-05-06"),  # Saturday of last week
        ("上周", "2023-05-01", "2023-05-07"),
        ("上个星期", "2023-05-01", "2023-05-07"),
        ("上周末", "2023-05-06", "2023-05-07"),
        ("下周三", "2023-05-17", "2023-05-17"),
        ("昨天下雨了", "2023-05-07", "2023-05-07"),
        ("前天", "2023-05-06", "2023-05-06"),
        ("大前天", "2023-05-05", "2023-05-05"),
        ("上个月", "2023-04-01", "2023-04-30"),
        ("去年", "2022-01-01", "2022-12-31"),
        ("前年", "2021-01-01", "2021-12-31"),
        ("三天前", "2023-05-05", "2023-05-05"),
        ("两个星期前", "2023-04-21", "2023-04-27"),
        ("十五天前", "2023-04-23", "2023-04-23"),
        ("二十年前", "2003-01-01", "2003-12-31"),
        ("几天前", "2023-05-03", "2023-05-06"),
    ],
)
def test_a_relative_date_becomes_the_days_it_names(text: str, start: str, end: str) -> None:
    found = spans(text)
    assert len(found) == 1, found
    assert found[0][1:] == (D(start), D(end))
    assert found[0][0] in text  # the phrase as written


def test_a_weekday_resolves_from_every_day_of_the_week() -> None:
    for offset in range(7):
        anchor = date(2023, 5, 8 + offset)
        ((_, day, _),) = spans("last Saturday", anchor)
        assert day.weekday() == 5 and 1 <= (anchor - day).days <= 7
        ((_, day, _),) = spans("next Saturday", anchor)
        assert day.weekday() == 5 and 1 <= (day - anchor).days <= 7


def test_phrases_come_in_order_each_range_once() -> None:
    found = spans("Yesterday was fun; last week too, and yesterday again. 上个月也是")
    assert [f[0] for f in found] == ["Yesterday", "last week", "上个月"]


def test_what_names_no_day_is_left_alone() -> None:
    assert spans("I'll go on Saturday") == []  # past or next: the words do not say
    assert spans("this summer") == []
    assert spans("500 years ago") == []  # history, not a day to find
    assert spans("the last word") == []
    assert spans("") == []


def test_the_calendar_edges_do_not_raise() -> None:
    assert spans("last year", date(1, 3, 1)) == []  # year 0 does not exist
    assert spans("tomorrow", date(9999, 12, 31)) == []
    assert spans("yesterday", date(2024, 3, 1))[0][1] == date(2024, 2, 29)


def test_a_long_text_keeps_at_most_its_first_phrases() -> None:
    text = " ".join(f"{n} days ago" for n in range(1, 20))
    assert len(resolve_dates(text, MONDAY)) == MAX_RESOLVED


def test_the_source_keeps_the_dates_beside_what_the_caller_gave() -> None:
    source = dated_source({"who": "melanie", SOURCE_KEY: "forged"}, "yesterday", "2023-05-08T13:56")
    assert source == {
        "who": "melanie",
        SOURCE_KEY: [{"phrase": "yesterday", "start": "2023-05-07", "end": "2023-05-07"}],
    }
    assert dated_source({SOURCE_KEY: ["x"]}, "no dates here", "2023-05-08") == {}
    assert stored_dates(source) == ((D("2023-05-07"), D("2023-05-07")),)


def test_stored_dates_skip_what_cannot_be_read() -> None:
    source = {SOURCE_KEY: [{"start": "2023-05-07"}, "x", {"start": "bad", "end": "bad"}]}
    assert stored_dates(source) == ()
    assert stored_dates({}) == ()
    assert stored_dates({SOURCE_KEY: None}) == ()


@pytest.mark.parametrize(
    ("odd", "plain"),
    [
        ("ſeveral days ago", "several days ago"),  # the long s
        ("laſt year", "last year"),
        ("thıs week", "this week"),  # the dotless i
        ("two weeKs ago", "two weeks ago"),  # the Kelvin sign
        ("LAST WEEKEND", "last weekend"),
    ],
)
def test_letters_the_pattern_reads_case_insensitively_resolve_as_their_ascii(
    odd: str, plain: str
) -> None:
    anchor = date(2026, 5, 13)
    found = resolve_dates(f"we met {odd} at the office", anchor)  # it raised KeyError
    expected = resolve_dates(f"we met {plain} at the office", anchor)
    assert expected and [(d.start, d.end) for d in found] == [(d.start, d.end) for d in expected]
    assert found[0].phrase == odd  # the phrase as written

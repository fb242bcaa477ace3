from __future__ import annotations

from cairn.storage.inprocess.places import RowPlaces
from cairn.storage.ports import EpisodePlace


def test_places_round_trip_and_unknown_rows() -> None:
    places = RowPlaces()
    places.update(
        [1, 2, 5000],
        ["s1", None, "s1"],
        [0, None, 7],
        ["2023-05-08T13:56:00+00:00", None, "bad date"],
    )
    got = places.places([1, 2, 5000, 4, 10**9])
    assert got[1] == EpisodePlace("s1", 0, "2023-05-08")
    assert got[2] == EpisodePlace(None, None, None)
    assert got[5000] == EpisodePlace("s1", 7, None)  # an unreadable date is no date
    assert 4 not in got and 10**9 not in got  # never seen: nothing known
    places.update([1], ["s2"], [3], ["2024-01-02"])  # a row's change replaces its place
    assert places.places([1])[1] == EpisodePlace("s2", 3, "2024-01-02")

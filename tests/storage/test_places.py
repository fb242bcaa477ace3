from __future__ import annotations

from pathlib import Path

from cairn.model import Record
from cairn.storage.base import EpisodePlace
from cairn.storage.places import RowPlaces
from cairn.storage.sqlite.store import SqliteStore


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


def test_store_serves_places_written_by_another_connection(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    writer, reader = SqliteStore(path, dim=4), SqliteStore(path, dim=4)
    assert reader.episode_positions([1]) == {}
    record = Record(
        id="R1",
        version=1,
        tenant="t",
        agent="a",
        body="turn",
        text_hash="h",
        episode_id="session-9",
        position=4,
        occurred_at="2023-06-01T10:00:00Z",
    )
    with writer.transaction() as tx:
        (row,) = tx.insert_records([(record, None, None)])
    assert reader.episode_positions([row]) == {row: EpisodePlace("session-9", 4, "2023-06-01")}
    writer.close()
    reader.close()

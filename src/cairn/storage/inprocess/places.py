"""Where each row sits in its episode, and on which day: what fusion asks of every candidate.

Recall looks up the episode, position and date of every fused candidate (a few hundred
rows) to lift neighbours and apply the date prior. Read from SQLite that cost 4.7 ms a
recall at 1M memories (each candidate's whole row), and ~1 ms through a covering index;
these arrays answer it in microseconds. Like the vector and keyword indexes they are a
cache fed by the store's ``change_seq`` sync, indexed by row id (SQLite hands row ids out
densely), 16 bytes a row.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date

import numpy as np

from cairn.storage.inprocess.arrays import capacity_for, grown
from cairn.storage.ports import EpisodePlace

_NO_POSITION = np.iinfo(np.int64).min
_NO_DAY = 0  # day numbers are proleptic ordinals (1 = 0001-01-01); 0 never occurs


class RowPlaces:
    def __init__(self) -> None:
        self._codes: dict[str, int] = {}
        self._names: list[str] = [""]  # code 0: no episode; -1: a row not seen
        self._episode = np.full(1024, -1, dtype=np.int32)
        self._position = np.full(1024, _NO_POSITION, dtype=np.int64)
        self._day = np.zeros(1024, dtype=np.int32)
        self._days: dict[str, int] = {}  # "YYYY-MM-DD" -> ordinal, dates repeat a lot
        self._members: dict[int, list[int]] = {}  # episode code -> rows ever placed in it
        self._iso_days: dict[int, str] = {}

    def _grow(self, top: int) -> None:
        if top >= len(self._episode):
            size = capacity_for(len(self._episode), top + 1)
            for attr, fill in (("_episode", -1), ("_position", _NO_POSITION), ("_day", _NO_DAY)):
                old = getattr(self, attr)
                setattr(self, attr, grown(old, size, len(old), fill))

    def _day_of(self, occurred_at: str | None) -> int:
        if not occurred_at:
            return _NO_DAY
        key = occurred_at[:10]
        found = self._days.get(key)
        if found is None:
            try:
                found = date.fromisoformat(key).toordinal()
            except ValueError:
                found = _NO_DAY
            self._days[key] = found
        return found

    def update(
        self,
        rows: Sequence[int],
        episodes: Sequence[str | None],
        positions: Sequence[int | None],
        occurred: Sequence[str | None],
    ) -> None:
        if not rows:
            return
        self._grow(max(rows))
        for row, episode, position, when in zip(rows, episodes, positions, occurred, strict=True):
            if episode is None:
                code = 0
            else:
                code = self._codes.get(episode, 0)
                if code == 0:
                    code = self._codes[episode] = len(self._names)
                    self._names.append(episode)
            if code and self._episode[row] != code:
                self._members.setdefault(code, []).append(row)
            self._episode[row] = code
            self._position[row] = _NO_POSITION if position is None else position
            self._day[row] = self._day_of(when)

    def places(self, rows: Sequence[int]) -> dict[int, EpisodePlace]:
        """Rows this cache has seen; ``occurred_at`` is given as the ISO day."""
        wanted = np.asarray(rows, dtype=np.int64)
        wanted = wanted[(wanted >= 0) & (wanted < len(self._episode))]
        codes = self._episode[wanted]
        seen = codes >= 0
        wanted, codes = wanted[seen], codes[seen]
        out: dict[int, EpisodePlace] = {}
        names, iso = self._names, self._iso
        for row, code, position, day in zip(
            wanted.tolist(),
            codes.tolist(),
            self._position[wanted].tolist(),
            self._day[wanted].tolist(),
            strict=True,
        ):
            out[row] = EpisodePlace(
                names[code] if code else None,
                None if position == _NO_POSITION else position,
                iso(day) if day else None,
            )
        return out

    def episode_rows(self, episode_id: str) -> list[int]:
        """Rows placed in this episode (of any tenant: callers filter by namespace)."""
        code = self._codes.get(episode_id)
        if code is None:
            return []
        return [r for r in self._members.get(code, ()) if self._episode[r] == code]

    def _iso(self, day: int) -> str:
        found = self._iso_days.get(day)
        if found is None:
            found = self._iso_days[day] = date.fromordinal(day).isoformat()
        return found

"""Episode context: a memory is read in the company of its neighbours.

A conversation turn ("Yes, the one from the parade!") or a step of a task run means
little alone. Two general signals, both over the candidate set only:

- neighbour propagation: a row gains ``weight / d × (best score among candidates at
  distance d in the same episode)`` for d up to ``window``;
- episode score: a row gains ``episode_weight × mean of its episode's top-n scores``, so
  an episode that matches the query well rises together.

Rows without an episode are left as they are.
"""

from __future__ import annotations

from collections.abc import Mapping

from cairn.storage.ports import EpisodePlace


def propagate(
    scores: Mapping[int, float],
    places: Mapping[int, EpisodePlace],
    *,
    neighbour_weight: float,
    window: int,
    episode_weight: float,
    episode_top: int,
) -> dict[int, float]:
    by_place: dict[tuple[str, int], int] = {}
    by_episode: dict[str, list[float]] = {}
    for row, score in scores.items():
        place = places.get(row)
        if place is None or place.episode_id is None:
            continue
        by_episode.setdefault(place.episode_id, []).append(score)
        if place.position is not None:
            by_place[(place.episode_id, place.position)] = row
    episode_score = {
        episode: sum(top := sorted(values, reverse=True)[:episode_top]) / len(top)
        for episode, values in by_episode.items()
    }
    out = dict(scores)
    for row in scores:
        place = places.get(row)
        if place is None or place.episode_id is None:
            continue
        if place.position is not None and neighbour_weight > 0:
            for distance in range(1, window + 1):
                near = [
                    scores[by_place[key]]
                    for key in (
                        (place.episode_id, place.position - distance),
                        (place.episode_id, place.position + distance),
                    )
                    if key in by_place
                ]
                if near:
                    out[row] += neighbour_weight / distance * max(0.0, max(near))
        out[row] += episode_weight * episode_score[place.episode_id]
    return out

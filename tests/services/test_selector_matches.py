"""The director's selector matches kept across tasks (services/tasks.SelectorMatches): a
kept match is the one match_selector gives afresh, for every rule and every conditions."""

from __future__ import annotations

import itertools
import random

from cairn.engine.selectors import TaskConditions, match_selector
from cairn.model import Record
from cairn.services.tasks import SelectorMatches, _selector_of
from record_builders import record


def rules() -> list[Record]:
    rng = random.Random(5)
    out = []
    for n in range(300):
        scope = rng.choice(["global", "project"])
        out.append(
            record(
                f"r{n}",
                f"rule {n}",
                scope=scope,
                project_id=rng.choice(["shop", "blog", None]) if scope == "project" else None,
                path_patterns=rng.choice([(), ("src/**",), ("docs/*.md", "README.md")]),
                operations=rng.choice([(), ("commit",), ("deploy", "push")]),
                phases=rng.choice([(), ("review",)]),
                task_types=rng.choice([(), ("bugfix",)]),
            )
        )
    return out


CONDITIONS = [
    TaskConditions(),
    TaskConditions(project_id="shop"),
    TaskConditions(project_id="shop", paths=("src/app.py",), operation="commit"),
    TaskConditions(project_id="blog", paths=("docs/a.md",), mentioned_operations=("push",)),
    TaskConditions(project_id="blog", phase="review", task_type="bugfix"),
]


def test_a_kept_match_is_the_fresh_one() -> None:
    kept = SelectorMatches(limit=50, conditions=3)  # small: the bounds are crossed too
    every = rules()
    for _ in range(2):
        for conditions, rule in itertools.product(CONDITIONS, every):
            fresh = match_selector(_selector_of(rule), conditions)
            assert kept.match(rule, conditions) == fresh
    assert any(kept.match(r, CONDITIONS[2]).matches for r in every)
    assert not all(kept.match(r, CONDITIONS[2]).matches for r in every)


def test_a_changed_selector_is_matched_again() -> None:
    kept = SelectorMatches()
    conditions = TaskConditions(project_id="shop", operation="commit")
    rule = record("r1", "rule", operations=("commit",))
    assert kept.match(rule, conditions).matches
    changed = record("r1", "rule", version=2, operations=("deploy",))
    assert not kept.match(changed, conditions).matches
    moved = record("r1", "rule", version=3, scope="project", project_id="blog")
    assert not kept.match(moved, conditions).matches

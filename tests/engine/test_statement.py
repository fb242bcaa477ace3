"""Tests for the statement reader: signal, memory kind, selector and target from the words."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from cairn.engine.selectors import Selector, TaskConditions, glob_match, match_selector
from cairn.engine.statement import (
    LANGUAGE_GLOBS,
    OPERATIONS,
    PHASES,
    TASK_TYPES,
    StatementReading,
    read_statement,
)

DATA = Path(__file__).parent / "data"
COLUMNS = (
    "label",
    "text",
    "kind",
    "scope",
    "paths",
    "operations",
    "phases",
    "task_types",
    "target",
)
SIGNALS = ("rule", "one-off", "forget", "correct", "neutral")


@dataclass(frozen=True, slots=True)
class Case:
    line: int
    label: str
    text: str
    kind: str
    scope: str
    paths: frozenset[str]
    operations: frozenset[str]
    phases: frozenset[str]
    task_types: frozenset[str]
    target: tuple[str, ...]


def _split(cell: str) -> frozenset[str]:
    return frozenset(value.strip() for value in cell.split(",") if value.strip())


def load_cases(name: str) -> list[Case]:
    """Read a labelled TSV: trailing empty cells may be left off, lists are comma-separated."""
    lines = (DATA / name).read_text(encoding="utf-8").splitlines()
    assert tuple(lines[0].split("\t")) == COLUMNS
    cases = []
    for number, line in enumerate(lines[1:], start=2):
        cells = line.split("\t")
        assert len(cells) <= len(COLUMNS), f"{name}:{number}: too many columns"
        cells += [""] * (len(COLUMNS) - len(cells))
        label, text, kind, scope, paths, operations, phases, task_types, target = cells
        assert label in SIGNALS, f"{name}:{number}: unknown label {label!r}"
        if label in ("rule", "correct"):
            assert kind in ("preference", "policy", "fact"), f"{name}:{number}: kind {kind!r}"
            assert scope in ("global", "project"), f"{name}:{number}: scope {scope!r}"
        else:
            assert not (kind or scope or paths or operations or phases or task_types), (
                f"{name}:{number}: only rules and corrections have a kind and a selector"
            )
        if label not in ("forget", "correct"):
            assert not target, f"{name}:{number}: only forgets and corrections have a target"
        assert _split(operations) <= set(OPERATIONS), f"{name}:{number}: {operations!r}"
        assert _split(phases) <= set(PHASES), f"{name}:{number}: {phases!r}"
        assert _split(task_types) <= set(TASK_TYPES), f"{name}:{number}: {task_types!r}"
        cases.append(
            Case(
                number,
                label,
                text,
                kind,
                scope,
                _split(paths),
                _split(operations),
                _split(phases),
                _split(task_types),
                tuple(target.split()),
            )
        )
    return cases


FIELDS: dict[str, Callable[[Case, StatementReading], bool]] = {
    "kind": lambda case, reading: reading.memory_kind == case.kind,
    "scope": lambda case, reading: reading.selector.scope == case.scope,
    "paths": lambda case, reading: set(reading.selector.path_patterns) == case.paths,
    "operations": lambda case, reading: set(reading.selector.operations) == case.operations,
    "phases": lambda case, reading: set(reading.selector.phases) == case.phases,
    "task_types": lambda case, reading: set(reading.selector.task_types) == case.task_types,
    "target": lambda case, reading: reading.target_terms == case.target,
}


def measure(cases: list[Case], title: str) -> dict[str, float]:
    """Per-field accuracy. The signal is scored on every sentence; kind and selector on the
    rules and corrections the reader also read as such, the target on the forgets and
    corrections it read as such (a wrong signal is already counted once)."""
    hits: dict[str, list[bool]] = {"signal": []}
    misses: list[str] = []
    for case in cases:
        reading = read_statement(case.text)
        hits["signal"].append(reading.signal == case.label)
        if reading.signal != case.label:
            misses.append(f"  signal {case.label} -> {reading.signal}: {case.text}")
        both_rules = case.label in ("rule", "correct") and reading.signal in ("rule", "correct")
        for field, check in FIELDS.items():
            applies = case.label in ("forget", "correct") and reading.signal == case.label
            if field != "target":
                applies = both_rules
            if not applies:
                continue
            ok = check(case, reading)
            hits.setdefault(field, []).append(ok)
            if not ok:
                misses.append(f"  {field}: {case.text}  -> {_shown(field, reading)}")
    accuracy = {field: sum(values) / len(values) for field, values in hits.items()}
    print(f"\n{title}: {len(cases)} sentences")
    for field, values in hits.items():
        print(f"  {field:10} {sum(values):4d}/{len(values):<4d} {accuracy[field]:.3f}")
    print("\n".join(misses))
    return accuracy


def _shown(field: str, reading: StatementReading) -> object:
    if field == "kind":
        return reading.memory_kind
    if field == "target":
        return reading.target_terms
    if field == "paths":
        return reading.selector.path_patterns
    return getattr(reading.selector, field)


DEVELOPMENT = load_cases("signal_cases.tsv")
HOLDOUT = load_cases("statement_holdout.tsv")


def test_development_set_accuracy() -> None:
    accuracy = measure(DEVELOPMENT, "development set")
    assert accuracy["signal"] >= 0.0

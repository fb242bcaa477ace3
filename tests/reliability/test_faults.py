"""The fault cases of the reliability harness (faults.py), each run and held to zero
problems: a full disk, a read-only home, a damaged, empty or foreign file, dates out of
range and the privacy of a home, through the real `cairn` command."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from reliability import faults


@pytest.mark.parametrize("case", faults.CASES, ids=lambda c: c.__name__)
def test_a_fault_is_said_in_true_words_and_loses_nothing(
    case: Callable[[faults.FaultReport, Path], None], tmp_path: Path
) -> None:
    report = faults.FaultReport()
    case(report, tmp_path)
    assert report.tally.failures() == []
    for name, figures in report.cases.items():
        if "skipped" in figures:
            pytest.skip(f"{name}: {figures['skipped']}")
        assert figures.get("commands", 1) > 0
        if "true_words" in figures:
            assert figures["true_words"] == figures["commands"], figures

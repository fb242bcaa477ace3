"""Growable numpy columns, shared by the in-memory indexes."""

from __future__ import annotations

from typing import Any

import numpy as np


def grown(old: np.ndarray, size: int, keep: int, fill: Any = 0) -> np.ndarray:
    """``old`` with room for ``size`` entries on its first axis: the first ``keep`` copied,
    the rest ``fill``. With fill 0 the new pages are mapped lazily, so only the copied part
    becomes resident."""
    out = (
        np.zeros((size, *old.shape[1:]), dtype=old.dtype)
        if fill == 0
        else np.full((size, *old.shape[1:]), fill, dtype=old.dtype)
    )
    out[:keep] = old[:keep]
    return out


def capacity_for(current: int, needed: int) -> int:
    """Doubling growth: amortised O(1) appends."""
    return max(needed, 2 * current)

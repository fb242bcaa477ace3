"""The review flag on the user's own rules, for every interface (the dashboard included,
which reaches nothing but the provider): see :mod:`cairn.engine.learning.review`."""

from __future__ import annotations

from cairn.engine.learning.review import REVIEW_AFTER_FAILURES, needs_review, review_flag

__all__ = ["REVIEW_AFTER_FAILURES", "needs_review", "review_flag"]

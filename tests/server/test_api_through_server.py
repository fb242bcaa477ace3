"""The Python API's own tests, run unchanged against a real ``cairn serve``: ``mem`` is
here a Memory over a RemoteProvider (tests/server/conftest.py), in a tenant of its own.

Left out, and why: tests that read the test clock or the SQLite file directly, open a
second local store, bind another tenant with ``for_tenant`` (a remote provider serves
only its token's tenant), or watch ``store_many`` report progress (a server reports none).
"""

from __future__ import annotations

from services.test_idempotency import (
    test_a_feedback_key_reused_for_another_outcome_is_refused,
    test_a_key_reused_across_kinds_of_change_is_refused,
    test_a_key_reused_for_another_memory_is_refused_and_names_what_differs,
    test_a_secret_redacted_the_same_way_is_still_the_same_request,
)
from test_memory import (
    test_bad_input_is_refused_and_changes_nothing,
    test_correct_can_change_kind_and_selectors_and_replays_the_same,
    test_correct_creates_version_chain,
    test_forget_restore_and_rebuild_keeps_forgotten_out,
    test_fts_syntax_query_is_plain_words,
    test_import_rejects_malformed_without_writing,
    test_inferred_change_cannot_overwrite_explicit,
    test_permanent_forget_cannot_be_restored,
    test_project_scope_filter,
    test_remember_recall_roundtrip,
    test_repeated_event_id_is_a_no_op,
    test_replay_equals_live_state_after_mixed_history,
    test_trust_filter_and_budget,
)
from test_tasks import (
    test_a_correction_in_words_acts_on_the_one_clear_match,
    test_a_forget_of_something_never_stored_changes_nothing,
    test_a_phase_rule_without_a_stated_phase_goes_to_the_manifest,
    test_context_delivers_with_application_records_and_feedback_teaches,
    test_expand_records_an_application_and_shows_verification,
    test_one_outcome_per_application_counters_follow_the_current_outcome,
    test_signals_remember_rules_and_return_one_off_constraints,
    test_the_director_honours_include_trust_levels,
)

__all__ = [
    "test_a_correction_in_words_acts_on_the_one_clear_match",
    "test_a_feedback_key_reused_for_another_outcome_is_refused",
    "test_a_forget_of_something_never_stored_changes_nothing",
    "test_a_key_reused_across_kinds_of_change_is_refused",
    "test_a_key_reused_for_another_memory_is_refused_and_names_what_differs",
    "test_a_phase_rule_without_a_stated_phase_goes_to_the_manifest",
    "test_a_secret_redacted_the_same_way_is_still_the_same_request",
    "test_bad_input_is_refused_and_changes_nothing",
    "test_context_delivers_with_application_records_and_feedback_teaches",
    "test_correct_can_change_kind_and_selectors_and_replays_the_same",
    "test_correct_creates_version_chain",
    "test_expand_records_an_application_and_shows_verification",
    "test_forget_restore_and_rebuild_keeps_forgotten_out",
    "test_fts_syntax_query_is_plain_words",
    "test_import_rejects_malformed_without_writing",
    "test_inferred_change_cannot_overwrite_explicit",
    "test_one_outcome_per_application_counters_follow_the_current_outcome",
    "test_permanent_forget_cannot_be_restored",
    "test_project_scope_filter",
    "test_remember_recall_roundtrip",
    "test_repeated_event_id_is_a_no_op",
    "test_replay_equals_live_state_after_mixed_history",
    "test_signals_remember_rules_and_return_one_off_constraints",
    "test_the_director_honours_include_trust_levels",
    "test_trust_filter_and_budget",
]

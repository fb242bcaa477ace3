"""Outcomes are judged only from clear evidence in the turn."""

from __future__ import annotations

from cairn.hooks.outcomes import corrected, judge
from cairn.hooks.session import Delivery
from cairn.hooks.transcript import ToolCall, Turn

RULE = Delivery("01APPRULE0000000000000000A", "01RECRULE0000000000000000A", 1, 1)
OTHER = Delivery("01APPOTHER000000000000000B", "01RECOTHER000000000000000B", 1, 1)


def turn(*tools: ToolCall, replies: tuple[str, ...] = ()) -> Turn:
    return Turn(0, "u", "install and test", None, replies, tools)


def bash(command: str, failed: bool | None = False) -> ToolCall:
    return ToolCall("t", "Bash", {"command": command}, failed)


def test_a_memory_the_agent_expanded_in_a_turn_that_went_well_was_used() -> None:
    done = turn(bash(f"cairn expand {RULE.record_id}"), bash("pnpm install"))
    verdicts = judge(done, [RULE, OTHER])
    assert [(v.application_id, v.outcome) for v in verdicts] == [
        (RULE.application_id, "used-successfully")
    ]


def test_a_memory_cited_by_its_application_id_in_the_reply_counts_too() -> None:
    done = turn(replies=(f"Following [app {RULE.application_id}] I used pnpm.",))
    assert [v.outcome for v in judge(done, [RULE])] == ["used-successfully"]


def test_a_turn_that_ended_on_a_failure_proves_nothing() -> None:
    done = turn(bash(f"cairn expand {RULE.record_id}"), bash("pnpm test", failed=True))
    assert judge(done, [RULE]) == []


def test_an_outcome_the_agent_reported_itself_is_settled_without_a_second_report() -> None:
    done = turn(bash(f"cairn feedback {RULE.application_id} ignored"))
    (verdict,) = judge(done, [RULE])
    assert verdict.outcome is None and verdict.application_id == RULE.application_id
    mcp = ToolCall("m", "mcp__cairn__memory_feedback", {"application_id": RULE.application_id})
    assert [v.outcome for v in judge(turn(mcp), [RULE])] == [None]


def test_nothing_is_guessed_without_evidence() -> None:
    assert judge(turn(bash("pnpm install")), [RULE, OTHER]) == []


def test_a_correction_by_the_user_marks_the_latest_delivery_corrected() -> None:
    later = Delivery("01APPRULE0000000000000000Z", RULE.record_id, 1, 2)
    (verdict,) = corrected([RULE, OTHER, later], RULE.record_id)
    assert (verdict.application_id, verdict.outcome) == (later.application_id, "corrected")
    assert corrected([OTHER], RULE.record_id) == []

"""Which outcome a delivered memory had, judged only from clear evidence in the turn.

An outcome moves a memory's counters and, in time, its state; a wrong one teaches the
wrong thing. So the hook settles only what the transcript shows plainly and leaves the
rest for review (the learning pipeline reads the same episodes later):

- the agent reported the outcome itself (``cairn feedback APP ...`` or the MCP
  ``memory_feedback`` tool): settled, nothing to add;
- the user corrected the memory in this session: ``corrected``;
- the agent referred to the memory by its id (it expanded it, or cited it) and the turn
  did not end on a failed tool call: ``used-successfully``.

Nothing here guesses ``ignored`` or ``contributed-to-failure``: both need judgment.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass

from cairn.hooks.session import Delivery
from cairn.hooks.transcript import ToolCall, Turn

_CAIRN_FEEDBACK = re.compile(r"\bcairn\b.*\bfeedback\b", re.DOTALL)


@dataclass(frozen=True, slots=True)
class Verdict:
    application_id: str
    outcome: str | None  # None: settled by the agent's own report, nothing to send
    reason: str


def _reports_feedback(call: ToolCall, application_id: str) -> bool:
    text = json.dumps(call.input, ensure_ascii=False)
    if application_id.casefold() not in text.casefold():
        return False
    return call.name.endswith("memory_feedback") or bool(_CAIRN_FEEDBACK.search(text))


def judge(turn: Turn, pending: Sequence[Delivery]) -> list[Verdict]:
    """Verdicts for the deliveries the turn gives clear evidence about (the others stay
    pending: a rule from the session start may be used in a later turn)."""
    said = turn.said().casefold()
    verdicts: list[Verdict] = []
    for delivery in pending:
        app_id = delivery.application_id
        if any(_reports_feedback(call, app_id) for call in turn.tools):
            verdicts.append(Verdict(app_id, None, "reported by the agent"))
        elif (
            delivery.record_id.casefold() in said or app_id.casefold() in said
        ) and not turn.ended_in_failure:
            verdicts.append(Verdict(app_id, "used-successfully", "referred to by id"))
    return verdicts


def corrected(pending: Sequence[Delivery], record_id: str) -> list[Verdict]:
    """The user corrected ``record_id``: its latest pending delivery was corrected."""
    mine = [d for d in pending if d.record_id == record_id]
    if not mine:
        return []
    return [Verdict(mine[-1].application_id, "corrected", "corrected by the user")]

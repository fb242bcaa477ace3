"""An application's outcome, applied to the memory's counters (SPEC §5, §6).

An application has one outcome; the same one again (from the same judge) is a no-op, a
different one replaces it and takes the earlier one's count back, so a record's counters
always follow its applications' current outcomes. Uses and ignores count unless an
untrusted sender reported them, or the memory is ``external`` content (data, never a
rule: nothing it does promotes it). ``failure_count`` moves by the *corroborated* failures
among the memory's applications (:func:`counted_failures`): one session's repeated
failures are not corroboration, a second independent session or a deterministic source
is.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from cairn.engine.learning.corroboration import counted_failures, outcome_source
from cairn.errors import NotFound
from cairn.model import Application
from cairn.storage.ports import RecordAndApplicationWrites, RecordChange

OUTCOME_COUNTERS: dict[str, tuple[str, ...]] = {
    "used-successfully": ("used_count", "proof_count"),
    "ignored": ("ignored_count",),
    "overridden": (),
    "corrected": (),
    "contributed-to-failure": (),
}
_COUNTED = ("used_count", "proof_count", "ignored_count")


def judge_of(
    provenance: Mapping[str, Any] | None, application: Application
) -> tuple[str, str | None]:
    """(source, session) of an outcome, from what the serving process attributed it to
    (never from the delivery: a task's session is a field its caller set). No provenance:
    an outcome journaled before attribution, the owner's own verdict then. An outcome
    kept only for telemetry (learning off) is judged as an untrusted one: it counts for
    nothing."""
    if not provenance:
        return "owner", application.session_id
    if provenance.get("counted") is False:
        source = "untrusted"
    else:
        source = outcome_source(
            str(provenance.get("trust") or "external"), provenance.get("deterministic") is True
        )
    session = provenance.get("session")
    return source, session if isinstance(session, str) and session else None


def apply_outcome(
    tx: RecordAndApplicationWrites,
    tenant: str,
    agent: str,
    application_id: str,
    outcome: str,
    *,
    at: str,
    recorded_at: str,
    provenance: Mapping[str, Any] | None = None,
) -> None:
    application = tx.application(tenant, agent, application_id)
    if application is None:
        raise NotFound(f"no application with id {application_id}")
    source, session = judge_of(provenance, application)
    previous = application.outcome
    previous_source = (application.outcome_source or "owner") if previous else None
    if (outcome, source, session) == (previous, previous_source, application.outcome_session):
        return  # one outcome per application: the same one again is a no-op
    siblings = tx.applications_of(tenant, agent, application.record_id)
    before = counted_failures(siblings)
    after = counted_failures(
        replace(a, outcome=outcome, outcome_source=source, outcome_session=session)
        if a.application_id == application_id
        else a
        for a in siblings
    )
    tx.set_outcome(tenant, agent, application_id, outcome, at, source=source, session=session)
    found = tx.current(tenant, agent, application.record_id)
    if found is None:
        return
    row, record = found
    counts = {name: int(getattr(record, name)) for name in _COUNTED}

    # External content is data, never a rule: its successes prove nothing (it is never
    # promoted), whoever reports them.
    def counts_for(judge: str) -> bool:
        return judge != "untrusted" and record.trust != "external"

    if previous is not None and previous_source is not None and counts_for(previous_source):
        for name in OUTCOME_COUNTERS.get(previous, ()):
            counts[name] = max(0, counts[name] - 1)
    if counts_for(source):
        for name in OUTCOME_COUNTERS[outcome]:
            counts[name] += 1
    failures = max(0, record.failure_count + after - before)
    changes: dict[str, Any] = {**counts, "failure_count": failures, "last_applied_at": at}
    if outcome == "used-successfully" and counts_for(source):
        changes["last_success_at"] = at
    if (
        record.authority == "inferred"
        and record.trust != "external"
        and record.state in ("trial", "proven")
    ):
        # An inferred memory is proven by a successful use; when the only success is
        # taken back, it is on trial again; a corroborated failure with no success
        # retires it.
        if counts["used_count"] > 0:
            changes["state"] = "proven"
        elif previous == "used-successfully":
            changes["state"] = "trial"
        if outcome == "contributed-to-failure" and counts["used_count"] == 0 and failures > 0:
            changes["state"] = "superseded"
            changes["expired_at"] = recorded_at
    tx.update_record(row, RecordChange.of(changes))

"""The learning engine (SPEC §6): pure functions over observations and records.

One module per concern: ``observations`` (what the journal says happened), ``clustering``
(topics), ``corroboration`` (both gates, and the failure gate), ``distill`` (extractive
doc text), ``deltas`` (byte-stable learning deltas), ``lifecycle`` (promotion, demotion),
``consolidation`` (near-duplicates), ``sweep`` (soft eviction), ``outcomes`` and
``events`` (how learning events apply to the projection), ``transcripts`` and
``extraction`` (review), ``answers`` (ask), ``surface`` (what a prompt may receive).
None reads the clock: times come in as arguments or from the events themselves.
"""

"""Consolidation without a model (SPEC §6): near-duplicate inferred memories merge.

Two live inferred memories of one kind whose bodies are at least ``threshold`` similar
merge: the survivor (more proof, else the older) keeps the more specific selector and
links the other's evidence, and lists every distinct fact of both (a repeated one once,
with the evidence of both); the other is superseded into it. Memories of two different
projects never merge. Explicit records are never merged into inferred ones and never
changed by them: an inferred near-duplicate of an explicit record is only retired.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from cairn.engine.learning.deltas import Delta, reflection_of, selector_of, specificity
from cairn.engine.learning.distill import Fact, compose_body, fact_of, merge_facts
from cairn.model import Record
from cairn.text import text_hash

Similarity = Callable[[Record, Record], float]
MERGED_ORIGINS = ("reflection", "review")


def _compatible(a: Record, b: Record) -> bool:
    if a.kind != b.kind:
        return False
    return a.project_id == b.project_id or a.scope == "global" or b.scope == "global"


def _retire(dup: Record, into: Record, reason: str) -> Delta:
    at = max(dup.recorded_at, into.recorded_at)
    return Delta(
        "supersede",
        dup.id,
        dup.kind,
        str(reflection_of(dup).get("topic") or ""),
        None,
        selector_of(dup),
        (),
        "superseded",
        reason,
        changes={
            "state": "superseded",
            "expired_at": at,
            "source": {**dup.source, "merged_into": into.id},
        },
        into=into.id,
    )


def _absorb(survivor: Record, dup: Record) -> Delta:
    evidence = list(dict.fromkeys((*survivor.evidence, *dup.evidence)))
    merged = [*list(survivor.source.get("merged") or []), dup.id]
    changes: dict[str, Any] = {
        "evidence": evidence,
        "source": {**survivor.source, "merged": merged},
    }
    selector = selector_of(survivor)
    in_place = True
    body = survivor.body
    if survivor.kind != "profile":
        facts = merge_facts(facts_of(survivor), facts_of(dup))
        if len(facts) > len(facts_of(survivor)):  # the other says something new: a line
            info = {**reflection_of(survivor), "facts": [f.as_dict() for f in facts]}
            body = compose_body(survivor.kind, facts[0].statement,
                                list(info.get("tools") or ()), (), facts)  # fmt: skip
            changes.update(
                body=body,
                text_hash=text_hash(body),
                recorded_at=max(survivor.recorded_at, dup.recorded_at),
                source={**changes["source"], "reflection": info},
            )
            in_place = False
    if specificity(selector_of(dup)) > specificity(selector):
        selector = selector_of(dup)
        changes.update(selector)
        changes["recorded_at"] = max(survivor.recorded_at, dup.recorded_at)
        in_place = False  # a narrower applicability is a new version
    return Delta(
        "update",
        survivor.id,
        survivor.kind,
        str(reflection_of(survivor).get("topic") or ""),
        body,
        selector,
        tuple(e for e in dup.evidence if e not in survivor.evidence),
        survivor.state,
        f"merged near-duplicate {dup.id}",
        changes=changes,
        in_place=in_place,
    )


def facts_of(record: Record) -> tuple[Fact, ...]:
    """A memory's distinct facts: a doc's as reflection kept them, else its body."""
    kept = [f for f in map(fact_of, reflection_of(record).get("facts") or ()) if f is not None]
    if kept:
        return tuple(kept)
    note = str(reflection_of(record).get("note") or "") or record.body
    return (Fact(" ".join(note.split()), tuple(record.evidence)),)


def merge_participants(records: Sequence[Record]) -> list[Record]:
    """The records :func:`merges` may ask a similarity of: the live inferred ones it
    merges, and the user's own rules of their kinds. Embedding only these keeps a store of
    many memories and few learned ones from embedding everything it holds."""
    live = [r for r in records if r.is_live]
    inferred = [r for r in live if r.authority == "inferred" and r.origin in MERGED_ORIGINS]
    kinds = {r.kind for r in inferred}
    explicit = [r for r in live if r.authority == "explicit" and r.kind in kinds]
    return inferred + explicit


def merges(records: Sequence[Record], similarity: Similarity, threshold: float) -> list[Delta]:
    """Merge deltas for near-duplicates among ``records`` (each memory merges once)."""
    live = sorted((r for r in records if r.is_live), key=lambda r: r.id)
    explicit = [r for r in live if r.authority == "explicit"]
    inferred = [r for r in live if r.authority == "inferred" and r.origin in MERGED_ORIGINS]
    out: list[Delta] = []
    done: set[str] = set()
    for record in inferred:
        for rule in explicit:
            if _compatible(record, rule) and similarity(record, rule) >= threshold:
                out.append(_retire(record, rule, f"repeats the user's own {rule.id}"))
                done.add(record.id)
                break
    rest = sorted((r for r in inferred if r.id not in done), key=lambda r: (-r.proof_count, r.id))
    for i, survivor in enumerate(rest):
        if survivor.id in done:
            continue
        for dup in rest[i + 1 :]:
            if dup.id in done or not _compatible(survivor, dup):
                continue
            if similarity(survivor, dup) >= threshold:
                out.append(_absorb(survivor, dup))
                out.append(_retire(dup, survivor, f"near-duplicate of {survivor.id}"))
                done.update((survivor.id, dup.id))
                break
    return out

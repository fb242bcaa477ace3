"""Text rendering of records and lists; JSON documents are the contract's own models."""

from __future__ import annotations

from typing import Any

SELECTOR_KEYS = ("scope", "project_id", "path_patterns", "operations", "phases", "task_types")
DETAIL_KEYS = (
    "body",
    "title",
    "kind",
    "memory_type",
    "trust",
    "state",
    "authority",
    "origin",
    *SELECTOR_KEYS,
    "tags",
    "pinned",
    "occurred_at",
    "recorded_at",
    "evicted_at",
    "forgotten_at",
    "superseded_by",
    "supersedes",
    "proof_count",
    "used_count",
    "ignored_count",
    "failure_count",
    "source",
    "external_ref",
    "episode_id",
    "position",
)


def one_line(text: str, width: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def project_label(project_id: str | None, names: dict[str, str] | None = None) -> str:
    """``app (git:f46186c5098648e4)``: the readable name beside the stable id."""
    pid = str(project_id or "?")
    name = (names or {}).get(pid)
    return f"{name} ({pid})" if name else pid


def where(record: dict[str, Any], names: dict[str, str] | None = None) -> str:
    if record.get("scope") == "project":
        return f"project {project_label(record.get('project_id'), names)}"
    return "global"


def selector_summary(record: dict[str, Any]) -> str:
    parts = []
    for key, label in (
        ("path_patterns", "paths"),
        ("operations", "ops"),
        ("phases", "phases"),
        ("task_types", "types"),
    ):
        values = record.get(key) or []
        if values:
            parts.append(f"{label} {','.join(values)}")
    return f" [{'; '.join(parts)}]" if parts else ""


def flags(record: dict[str, Any]) -> str:
    from cairn.engine.learning.review import REVIEW_AFTER_FAILURES

    failures = int(record.get("failure_count") or 0)
    review = (
        record.get("authority") == "explicit"
        and not record.get("pinned")
        and failures >= REVIEW_AFTER_FAILURES
    )
    shown = [
        name
        for name, on in (
            ("forgotten", record.get("forgotten_at")),
            ("evicted", record.get("evicted_at")),
            ("pinned", record.get("pinned")),
            (f"review: followed by {failures} failures; keep, correct or forget?", review),
        )
        if on
    ]
    return f" ({', '.join(shown)})" if shown else ""


def trust_label(record: dict[str, Any]) -> str:
    """What the trust column says: ``user`` for what the user stated (their own word,
    not something cairn learned), else the trust level."""
    if record.get("authority") == "explicit" and record.get("trust") != "external":
        return "user"
    return str(record.get("trust", ""))


def record_table(
    records: list[dict[str, Any]],
    names: dict[str, str] | None = None,
    *,
    width: int | None = 60,
) -> str:
    """One line per memory; ``width`` None: whole bodies (``list --wide``, or a pipe)."""
    if not records:
        return "(no memories)"
    places = [where(r, names) for r in records]
    room = max(28, *(len(p) for p in places))
    header = f"{'ID':<26}  {'V':>2}  {'STATE':<10} {'WHERE':<{room}} {'TRUST':<8} {'KIND':<10} BODY"
    rows = [header]
    for r, place in zip(records, places, strict=True):
        text = str(r.get("body", ""))
        body = one_line(text, width) if width else " ".join(text.split())
        body += selector_summary(r) + flags(r)
        rows.append(
            f"{r['id']:<26}  {r['version']:>2}  {r['state']:<10} {place:<{room}}"
            f" {trust_label(r):<8} {r['kind']:<10} {body}"
        )
    return "\n".join(rows)


def record_detail(record: dict[str, Any], names: dict[str, str] | None = None) -> str:
    lines = [f"{record['id']} (version {record['version']})"]
    for key in DETAIL_KEYS:
        value = record.get(key)
        if key == "project_id" and value:
            value = project_label(value, names)
        if key == "trust" and trust_label(record) == "user":
            value = f"{value} (stated by the user: their own rule, not learned)"
        if key not in SELECTOR_KEYS and value in (None, (), [], {}, "", False, 0):
            continue
        if isinstance(value, list | tuple):
            value = ", ".join(str(v) for v in value) or "-"
        elif value is None or value == "":
            value = "-"
        if key == "body":
            value = str(value).replace("\n", "\n" + " " * 17)
        lines.append(f"  {key:<14} {value}")
    return "\n".join(lines)

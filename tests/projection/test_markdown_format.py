"""Rendering the Markdown projection: layout, compact metadata, exact round trips."""

from __future__ import annotations

import random
from dataclasses import replace
from typing import Any

from cairn import Record
from cairn.projection import ProjectedEntry, Selectors, parse_document, parse_projection
from cairn.projection.markdown_format import (
    cut_entries,
    heading_for,
    render_document,
    render_profile,
    render_project,
    title_from_heading,
)
from cairn.text import text_hash

TRICKY_BODIES = [
    "Always use pnpm in this repository",
    "### not a heading\nbut a body line",
    '<!-- cairn {"id": "01FAKE", "version": 99} -->',
    "<!-- cairn 01FAKE@99 -->",
    "Use:\n```bash\npnpm install\n```\nthen test",
    "an unclosed ```\n```python\nprint('x')",
    "````cairn-body\nlooks like our fence\n````",
    "first paragraph\n\n\nthird paragraph after two blank lines",
    "  indented start",
    "ends with a newline\n",
    "\n\nstarts with blank lines",
    "中文记忆：这个仓库总是使用 pnpm，不要用 npm。",
    "_italic first line_ could pass for a selector line",
    "paths: src/** reads like a selector line",
    "operations: commit\nphases: review",
    "> Not applied: reads like a conflict note",
    "# level one\n## level two\n#### level four",
    "windows\r\nline endings and a lone \r carriage return",
    "hard break  \nkept with trailing spaces inside",
    "<!-- cairn-index {} -->\ntext",
    "<!-- cairn-index\n-->",
    "  ### indented heading",
    "tab\tseparated\u2028unicode line separator\x0bvertical tab",
    "`single` and ``double`` and ```triple``` backticks",
    "ends with a fence\n```",
    "-->",
]

ODD_SELECTORS = Selectors(
    path_patterns=(
        "src/api/**",
        "a, b.txt",
        '"quoted"',
        "`ticked`",
        "<!--x",
        "目录/*.md",
        " edge ",
    ),
    operations=("commit", "push"),
    phases=("review",),
    task_types=("bug fix",),
)


def make_record(n: int, body: str, **changes: Any) -> Record:
    base = Record(
        id=f"01J0000000000000000000{n:04d}",
        version=n % 4 + 1,
        tenant="default",
        agent="default",
        body=body,
        kind=("fact", "policy", "preference", "skill")[n % 4],
        recorded_at=f"2026-05-01T00:00:{n % 60:02d}.000000Z",
        text_hash=text_hash(body),
    )
    return replace(base, **changes)


def test_tricky_bodies_kinds_and_selectors_round_trip_exactly() -> None:
    records = [
        make_record(n, body, **(ODD_SELECTORS.fields() if n % 2 else {}))
        for n, body in enumerate(TRICKY_BODIES)
    ]
    entries = parse_projection(render_profile(records))
    assert len(entries) == len(records)  # no body was mistaken for an entry of its own
    got = {e.id: e for e in entries}
    for record in records:
        entry = got[record.id]
        assert (entry.version, entry.body, entry.kind) == (
            record.version,
            record.body,
            record.kind,
        ), record.body
        assert entry.selectors == Selectors.of(record)
        assert entry.heading == heading_for(record.title, record.body).replace("\\<", "<")


def test_tricky_bodies_round_trip_in_a_project_file() -> None:
    records = [
        make_record(n, body, scope="project", project_id="git:abc", operations=("commit",))
        for n, body in enumerate(TRICKY_BODIES)
    ]
    text = render_project(records, "git:abc", "cairn")
    assert text.startswith("# Project: cairn\n")
    doc = parse_document(text)
    assert doc.header is not None and doc.header["project_id"] == "git:abc"
    assert {e.id: e.body for e in doc.entries} == {r.id: r.body for r in records}


def test_each_entry_carries_only_its_id_and_version_as_machine_text() -> None:
    record = make_record(
        2,
        "Never commit generated files.",
        kind="policy",
        path_patterns=("src/api/**", "tests/api_*.py"),
        operations=("commit",),
        tags=("build",),
        source={"channel": "cli", "session": "s" * 300},
    )
    lines = render_profile([record]).split("\n")
    at = lines.index("### Never commit generated files.")
    assert lines[at + 1 : at + 6] == [
        f"<!-- cairn {record.id}@3 -->",
        "paths: src/api/**, tests/api_*.py",
        "operations: commit",
        "",
        "Never commit generated files.",
    ]
    entry_lines = lines[at : at + 6]
    assert sum(len(line) for line in entry_lines if line.startswith("<!--")) < 50
    assert "{" not in "\n".join(entry_lines)  # no JSON in the entry; the store has the rest


def test_sections_follow_kinds_and_the_record_title_wins() -> None:
    kinds = ("fact", "policy", "preference", "profile", "episode", "skill", "topic")
    records = [make_record(n, f"{kind} body", kind=kind) for n, kind in enumerate(kinds)]
    records[2] = replace(records[2], title="Short answers")
    text = render_profile(records)
    lines = text.split("\n")
    assert lines[0] == "# Profile"
    assert "`cairn sync`" in text and "delete a whole entry" in text and "add a memory" in text
    assert [line for line in lines if line.startswith("## ")] == [
        "## Policies",
        "## Preferences",
        "## Profile",
        "## Facts",
        "## Skills",
        "## Episodes",
        "## Topics",
    ]
    assert "### Short answers" in lines
    assert {e.kind for e in parse_projection(text)} == set(kinds)


def test_selector_values_that_need_it_are_quoted_and_read_back() -> None:
    record = make_record(1, "body", **ODD_SELECTORS.fields())
    text = render_profile([record])
    paths = next(line for line in text.split("\n") if line.startswith("paths: "))
    assert paths.startswith("paths: src/api/**, ")
    assert '"a, b.txt"' in paths and "目录/*.md" in paths and "<!--" not in paths
    assert "task types: bug fix" in text
    (entry,) = parse_projection(text)
    assert entry.selectors == ODD_SELECTORS


def test_plain_bodies_are_verbatim_and_structure_like_ones_are_fenced() -> None:
    plain = make_record(1, "Never push to main.\n\nAsk for a review first.")
    tricky = make_record(2, "### Deploy\nrun make deploy")
    text = render_profile([plain, tricky])
    assert "\n\nNever push to main.\n\nAsk for a review first.\n" in text
    assert "\n```cairn-body\n### Deploy\nrun make deploy\n```\n" in text
    assert sum(line.startswith("### ") for line in text.split("\n")) == 2 + 1


def test_long_and_untitled_bodies_get_short_titles() -> None:
    text = render_profile([make_record(1, "word " * 40), make_record(2, "这" * 100)])
    titles = [line for line in text.split("\n") if line.startswith("### ")]
    assert all(len(t) <= 4 + 73 for t in titles) and all(t.endswith("…") for t in titles)
    assert heading_for(None, "<b>bold</b> start") == "\\<b>bold\\</b> start"


def test_title_from_heading_only_when_it_is_more_than_the_first_words() -> None:
    assert title_from_heading("Use pnpm", "Use pnpm") is None
    assert title_from_heading("  Use   pnpm ", "Use pnpm\nalways") is None
    assert title_from_heading("Package manager", "Use pnpm") == "Package manager"
    assert title_from_heading("", "Use pnpm") is None


def test_rendering_is_byte_stable() -> None:
    records = [make_record(n, body) for n, body in enumerate(TRICKY_BODIES)]
    first = render_profile(records)
    assert render_profile(list(reversed(records))) == first
    assert render_profile(records) == first


def test_a_header_value_can_not_close_its_comment_early() -> None:
    text = render_project([], "git:x", "a --> b")
    header = next(line for line in text.split("\n") if line.startswith("<!-- cairn-file"))
    assert header.count("-->") == 1 and header.endswith(" -->")
    assert parse_document(text).header == {
        "format": "cairn.markdown.v2",
        "scope": "project",
        "project_id": "git:x",
        "project_name": "a --> b",
    }


def test_kept_conflicts_and_unapplied_entries_render_and_read_back_stably() -> None:
    record = make_record(1, "Deploy on Fridays", kind="policy")
    block = ProjectedEntry(
        id=record.id,
        version=1,
        body="Deploy on Thursdays\n### with a heading inside",
        heading="Deploy on Thursdays",
        selectors=Selectors(operations=("deploy",)),
        conflict="edited version 1, but the memory changed since (now version 2)",
    )
    added = ProjectedEntry(id=None, version=None, body="Use tabs", heading="Tabs", kind="fact")
    text = render_document("Profile", {"format": "cairn.markdown.v2"}, [record], [block, added])
    lines = text.split("\n")
    assert [line for line in lines if line.startswith("## ")] == [
        "## Conflicts",
        "## Policies",
        "## Facts",
    ]
    at = lines.index(f"<!-- cairn-conflict {record.id}@1 -->")
    assert lines[at + 1].startswith("> Not applied: edited version 1")
    doc = parse_document(text)
    kept, entry, hand = doc.entries
    assert (kept.id, kept.version, kept.body, kept.selectors) == (
        record.id,
        1,
        block.body,
        block.selectors,
    )
    assert kept.conflict == block.conflict and not kept.is_new
    assert entry.id == record.id and entry.conflict is None
    assert hand.is_new and (hand.body, hand.heading, hand.kind) == ("Use tabs", "Tabs", "fact")
    assert doc.index == {record.id: 2}  # only memories are indexed, not kept text
    again = render_document("Profile", {"format": "cairn.markdown.v2"}, [record], [kept, hand])
    assert again == text


def test_a_long_index_spreads_over_lines_and_reads_back() -> None:
    records = [make_record(n, f"rule {n}") for n in range(10)]
    text = render_profile(records)
    start = text.index("<!-- cairn-index")
    index_lines = text[start:].split("\n")
    assert len(index_lines) > 4 and max(len(line) for line in index_lines) <= 100
    assert parse_document(text).index == {r.id: r.version for r in records}


def test_cut_entries_keeps_every_other_line_as_it_was() -> None:
    records = [make_record(n, f"rule {n}") for n in range(5)]
    text = render_profile(records).replace("rule 1", "rule one, edited")
    doc = parse_document(text)
    gone = {records[2].id, records[3].id}
    cut = cut_entries(doc, lambda e: e.id in gone)
    assert "rule 2" not in cut and "rule 3" not in cut and records[2].id not in cut
    assert "rule one, edited" in cut
    again = parse_document(cut)
    assert sorted(e.id or "" for e in again.entries) == [r.id for r in records if r.id not in gone]
    assert set(again.index or {}) == {r.id for r in records} - gone


def test_random_hostile_bodies_and_selectors_round_trip() -> None:
    """Bodies and selector values built from the pieces of the format itself."""
    rng = random.Random(20260601)
    pieces = [
        "#", "##", "###", " ", "  ", "\t", "\n", "\r", "\r\n", "`", "```", "````", "~~~",
        "<!--", "-->", "<!-- cairn ", "@2", "cairn-body", "cairn-index", "cairn-conflict",
        "paths:", "operations:", "> Not applied: ", "_", "*", ",", '"', "\\", "\u2028",
        "\ufeff", "\x0b", "中文", "é", "word", "x",
    ]  # fmt: skip
    records = []
    for n in range(400):
        body = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 30)))
        if not body.strip():
            body += "x"
        paths = tuple(
            v
            for v in ("".join(rng.choice(pieces) for _ in range(rng.randint(1, 6))).strip()
                      for _ in range(rng.randint(0, 3)))
            if v and "\n" not in v and "\r" not in v
        )  # fmt: skip
        records.append(make_record(n, body, path_patterns=paths))
    got = {e.id: e for e in parse_projection(render_profile(records))}
    assert len(got) == len(records)
    for record in records:
        assert got[record.id].body == record.body, repr(record.body)
        assert got[record.id].selectors.path_patterns == record.path_patterns

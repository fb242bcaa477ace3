"""Reading projection files back: entries added by hand, selector lines, faults by line,
and the files of the first format exactly as an earlier cairn wrote them."""

from __future__ import annotations

from pathlib import Path

import pytest

from cairn import InvalidInput
from cairn.projection import Selectors, parse_document, parse_projection

DATA = Path(__file__).parent / "data"
HEADER = '<!-- cairn-file {"format":"cairn.markdown.v2","scope":"global"} -->'


def doc(*lines: str) -> str:
    return "\n".join(["# Profile", "", HEADER, "", *lines, ""])


def test_entries_added_by_hand_take_kind_title_and_selectors_from_the_file() -> None:
    text = doc(
        "### Loose entry before any section",
        "",
        "## Policies",
        "",
        "### Package manager",
        "Paths: `src/**`, web/*.ts",
        "OPERATION: Install",
        "",
        "Always use pnpm.",
        "",
        "### A heading alone is a memory",
        "## facts",
        "### Lives in Lisbon",
        "Lives in Lisbon",
    )
    loose, rule, alone, fact = parse_projection(text)
    assert all(e.is_new and e.id is None and e.version is None for e in (loose, rule, alone))
    assert loose.kind is None and loose.body == "Loose entry before any section"
    assert (rule.kind, rule.heading, rule.body) == ("policy", "Package manager", "Always use pnpm.")
    assert rule.selectors == Selectors(
        path_patterns=("src/**", "web/*.ts"), operations=("Install",)
    )
    assert (alone.body, alone.kind) == ("A heading alone is a memory", "policy")
    assert (fact.kind, fact.body) == ("fact", "Lives in Lisbon")


def test_selector_lines_are_only_the_lines_right_under_the_machine_line() -> None:
    text = doc(
        "## Policies",
        "### rule",
        "<!-- cairn 01JA@2 -->",
        "paths:",
        'task types: bugfix, "has, comma"',
        "phases: review",
        "",
        "paths: this line is body text, after the blank line",
    )
    (entry,) = parse_projection(text)
    assert (entry.id, entry.version) == ("01JA", 2)
    assert entry.selectors == Selectors(task_types=("bugfix", "has, comma"), phases=("review",))
    assert entry.body == "paths: this line is body text, after the blank line"


def test_a_kept_conflict_block_is_read_with_its_reason() -> None:
    text = doc(
        "## Conflicts",
        "### Deploy on Thursdays",
        "<!-- cairn-conflict 01JB@1 -->",
        "> Not applied: edited version 1, but the memory changed since (now version 2)",
        "> Merge what you want ...",
        "operations: deploy",
        "",
        "Deploy on Thursdays",
    )
    (block,) = parse_projection(text)
    assert (block.id, block.version, block.body) == ("01JB", 1, "Deploy on Thursdays")
    assert block.conflict == "edited version 1, but the memory changed since (now version 2)"
    assert block.selectors.operations == ("deploy",) and not block.is_new


def test_malformed_files_raise_invalid_input_naming_the_line() -> None:
    cases = [
        (doc("## Policies", "### x", "<!-- cairn 01JA -->", "", "b"), 7, "ID@VERSION"),
        (doc("## Policies", "### x", "<!-- cairn 01JA@0 -->"), 7, "ID@VERSION"),
        (doc("## Policies", "### x", "<!-- cairn 01JA@1"), 7, "not closed"),
        (doc("## Policies", "### x", "<!-- cairnish -->"), 7, "unknown `<!-- cairn` line"),
        (doc("## Policies", "stray text"), 6, "text outside any entry"),
        (doc("## My notes"), 5, "unknown section"),
        (doc("## Policies", "### x", "# top"), 7, "a `#` heading inside"),
        (doc("## Policies", "### x", "", "```cairn-body", "never closed"), 8, "never closed"),
        (doc("## Policies", "### x", "paths: `open"), 7, "never closes"),
        (doc("## Policies", "### x", 'paths: "a" b'), 7, "separated by commas"),
        (doc("<!-- cairn-index 01JA@x -->"), 5, "not ID@VERSION"),
        (doc("<!-- cairn-index", "01JA@1"), 5, "never closed"),
        (doc("<!-- cairn-index -->", "after"), 6, "text after the closing"),
        (doc("## Policies", "### x", '<!-- cairn {"id":"a","version":"2"} -->'), 7, "version"),
        (doc("## Policies", "### x", '<!-- cairn {"id":"a",} -->'), 7, "malformed cairn"),
        (doc("## Policies", "### x", "<!-- cairn " + "[" * 5000 + " -->"), 7, "cairn"),
        (doc("## Policies", "### x", 'paths: "a\\ud800"'), 7, "lone surrogate"),
        (
            doc("## Policies", "### x", '<!-- cairn {"id":"\\udc00","version":1} -->'),
            7,
            "surrogate",
        ),
    ]
    for text, line, message in cases:
        with pytest.raises(InvalidInput, match=rf"profile\.md line {line}: .*{message}"):
            parse_document(text, source="profile.md")
    broken_header = doc().replace('"scope":"global"', '"scope":"global","project_name":"\\ud800"')
    with pytest.raises(InvalidInput, match=r"line 3: .*lone surrogate"):
        parse_document(broken_header)
    newer = doc().replace("cairn.markdown.v2", "cairn.markdown.v9")
    with pytest.raises(InvalidInput, match="line 3: unknown format"):
        parse_document(newer)


def test_crlf_and_bom_from_an_editor_are_read_back() -> None:
    text = doc("## Facts", "### a", "<!-- cairn 01JA@1 -->", "", "alpha", "", "beta")
    windows = "\ufeff" + text.replace("\n", "\r\n")
    (entry,) = parse_projection(windows)
    assert entry.body == "alpha\n\nbeta"


def test_a_file_of_the_first_format_reads_back_every_field() -> None:
    text = (DATA / "legacy_v1_profile.md").read_text(encoding="utf-8")
    document = parse_document(text)
    assert document.header is not None and document.header["format"] == "cairn.markdown.v1"
    policy, *rest = document.entries
    assert policy.is_legacy and policy.kind == "policy" and policy.metadata is not None
    assert policy.body == "Never commit generated files.\n\n### Why\nThey are rebuilt in CI."
    assert policy.selectors == Selectors(
        path_patterns=("src/gen/**", "docs/_build/*"), operations=("commit",), phases=("review",)
    )
    assert policy.metadata["title"] == "Generated files" and policy.metadata["state"] == "proven"
    assert {e.body for e in rest} == {"Always answer in English", "Uses pnpm, never npm"}
    assert document.index == {e.id: e.version for e in document.entries}
    project = parse_document((DATA / "legacy_v1_project.md").read_text(encoding="utf-8"))
    assert project.header is not None and project.header["project_id"] == "git:legacy1"
    assert [e.body for e in project.entries] == ["The API runs on port 8080"]

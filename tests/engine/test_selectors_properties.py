"""Properties of globs and selector matching, checked with generated inputs.

``glob_match`` is compared with a reference matcher written here from its documented
semantics -- segment by segment, with no regular expressions -- over a small alphabet, so
that generated patterns and paths collide often enough to exercise every rule.
"""

from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st

from cairn.engine.selectors import (
    Selector,
    TaskConditions,
    glob_match,
    match_selector,
    normalize_path,
)

# Timing is never asserted: the machine is shared, so no per-example deadline.
RELAXED = settings(deadline=None)

# -- a reference glob matcher ------------------------------------------------------------


def _char_class(segment: str, start: int) -> tuple[set[str], bool, int] | None:
    """The class opened by ``[`` at ``start``: (members, negated, index after it), or None
    when it is never closed (then ``[`` is a literal). A ``]`` first is a member; ``x-y``
    is the range from x to y, empty when y sorts before x."""
    index = start + 1
    negated = index < len(segment) and segment[index] in "!^"
    if negated:
        index += 1
    close = segment.find("]", index + 1)  # the first member may be "]" itself
    if index >= len(segment) or close == -1:
        return None
    text = segment[index:close]
    members: set[str] = set()
    i = 0
    while i < len(text):
        if i + 2 < len(text) and text[i + 1] == "-":
            members.update(chr(c) for c in range(ord(text[i]), ord(text[i + 2]) + 1))
            i += 3
        else:
            members.add(text[i])
            i += 1
    return members, negated, close + 1


def _segment_matches(pattern: str, name: str) -> bool:
    """One path segment against one pattern segment: ``*``, ``?``, classes, literals."""
    if not pattern:
        return not name
    head = pattern[0]
    if head == "*":
        rest = pattern.lstrip("*")
        return any(_segment_matches(rest, name[i:]) for i in range(len(name) + 1))
    if not name:
        return False
    if head == "?":
        return _segment_matches(pattern[1:], name[1:])
    if head == "[":
        found = _char_class(pattern, 0)
        if found is not None:
            members, negated, after = found
            if (name[0] in members) != negated:
                return _segment_matches(pattern[after:], name[1:])
            return False
    return head == name[0] and _segment_matches(pattern[1:], name[1:])


def _segments_match(pattern: list[str], names: list[str]) -> bool:
    """``**`` as a segment: any number of segments, at least one when it ends the pattern."""
    if not pattern:
        return not names
    if pattern[0] == "**":
        least = 1 if len(pattern) == 1 else 0
        return any(_segments_match(pattern[1:], names[i:]) for i in range(least, len(names) + 1))
    if not names or not _segment_matches(pattern[0], names[0]):
        return False
    return _segments_match(pattern[1:], names[1:])


def reference_glob(pattern: str, path: str) -> bool:
    text = pattern.strip().replace("\\", "/")
    while text.startswith("./"):
        text = text[2:]
    segments = [s for s in text.split("/") if s not in ("", ".")]
    names = [s for s in path.replace("\\", "/").split("/") if s not in ("", ".")]
    if not segments or not names:
        return False
    anchored = text.startswith("/") or len(segments) > 1
    below_only = text.endswith("/")
    starts = [0] if anchored else range(len(names))
    for start in starts:
        # The pattern names a path or a directory above it: everything below matches too.
        for end in range(start + 1, len(names) + (0 if below_only else 1)):
            if _segments_match(segments, names[start:end]):
                return True
    return False


# -- generated patterns and paths -------------------------------------------------------

NAME_CHARS = "ab.-]!^["
names = st.text(alphabet=NAME_CHARS, min_size=1, max_size=3)
paths = st.lists(names, min_size=1, max_size=4).map("/".join).filter(normalize_path)
messy_paths = st.lists(
    st.one_of(names, st.sampled_from([".", "", "./a", "a\\b"])), min_size=1, max_size=5
).map("/".join)

char_classes = st.builds(
    lambda negation, members: f"[{negation}{members}]",
    st.sampled_from(["", "!", "^"]),
    st.text(alphabet="ab.-]!^", min_size=1, max_size=3),
)
segment_parts = st.one_of(
    st.sampled_from(["a", "b", ".", "-", "]", "!", "^", "*", "?", "[", "**"]), char_classes
)
pattern_segments = st.one_of(
    st.just("**"), st.lists(segment_parts, min_size=1, max_size=3).map("".join)
)
patterns = st.builds(
    lambda lead, segments, trail: lead + "/".join(segments) + trail,
    st.sampled_from(["", "/", "./"]),
    st.lists(pattern_segments, min_size=1, max_size=4),
    st.sampled_from(["", "/"]),
)


@settings(RELAXED, max_examples=800)
@given(patterns, paths)
@example("[!]a]", "b")  # a negated class starting with "]"
@example("[!]a]", "xa]")
@example("[b-a]", "a")  # an empty range: matches nothing, never an error
@example("[b-ac]", "c")
@example("**/", "a")
@example("a/**/", "a/b")
@example("./**/a", "b/a")
def test_glob_match_agrees_with_the_reference(pattern: str, path: str) -> None:
    assert glob_match(pattern, path) == reference_glob(pattern, path)


def test_character_classes_that_used_to_break() -> None:
    # A negated class starting with "]" became "[^/]a]": any character, then "a]".
    assert glob_match("[!]a]", "b")
    assert not glob_match("[!]a]", "]") and not glob_match("[!]a]", "xa]")
    # "[!-.]" became "[^/-.]", a range from "/" to "." that re rejects: an error, not False.
    assert glob_match("[!-.]", "a") and not glob_match("[!-.]", "-")
    # A reversed range raised re.error from every match of the rule; now it is empty.
    assert not glob_match("[b-a]", "a") and not glob_match("[b-a]", "b")
    assert glob_match("[b-ac]", "c")


@RELAXED
@given(st.text(max_size=12), st.text(max_size=12))
def test_any_text_is_a_pattern_that_compiles(pattern: str, path: str) -> None:
    assert glob_match(pattern, path) in (True, False)  # never an exception


@RELAXED
@given(patterns, messy_paths)
def test_paths_are_matched_as_normalised(pattern: str, path: str) -> None:
    assert glob_match(pattern, path) == glob_match(pattern, normalize_path(path))


@RELAXED
@given(messy_paths)
def test_normalize_path_is_idempotent(path: str) -> None:
    once = normalize_path(path)
    assert normalize_path(once) == once
    assert "\\" not in once and "//" not in once
    assert not once.startswith("/") and not once.endswith("/")
    assert "." not in once.split("/")


@RELAXED
@given(paths)
def test_a_path_matches_itself_and_everything_below_it(path: str) -> None:
    literal = "".join(ch if ch.isalnum() or ch in "./-" else "?" for ch in path)
    assert glob_match(literal, path)
    assert glob_match(literal, f"{path}/x/y")
    assert not glob_match(f"{literal}/", path)  # a trailing "/": only what is below


# -- selectors ---------------------------------------------------------------------------

projects = st.sampled_from(["p1", "p2"])
words = st.sampled_from(["commit", "Commit", "push", " review ", ""])
selectors = st.builds(
    Selector,
    scope=st.sampled_from(["global", "project"]),
    project_id=st.none() | projects,
    path_patterns=st.lists(patterns | st.just(" "), max_size=2).map(tuple),
    operations=st.lists(words, max_size=2).map(tuple),
    phases=st.lists(words, max_size=2).map(tuple),
    task_types=st.lists(words, max_size=2).map(tuple),
)
tasks = st.builds(
    TaskConditions,
    project_id=st.none() | projects,
    paths=st.lists(paths, max_size=2).map(tuple),
    operation=st.none() | words,
    phase=st.none() | words,
    task_type=st.none() | words,
)


def _satisfied(selector: Selector, task: TaskConditions) -> dict[str, bool | None]:
    """Each non-empty dimension of the selector: satisfied by the task (True), stated
    otherwise (False), or left unstated by the task (None)."""
    out: dict[str, bool | None] = {}
    if selector.scope == "project":
        out["project"] = bool(selector.project_id) and task.project_id == selector.project_id
    wanted_paths = [p for p in selector.path_patterns if p.strip()]
    if wanted_paths:
        if not any(normalize_path(t) for t in task.paths):
            out["path"] = None
        else:
            out["path"] = any(glob_match(p, t) for p in wanted_paths for t in task.paths)
    for label, allowed, given_value in (
        ("operation", selector.operations, task.operation),
        ("phase", selector.phases, task.phase),
        ("task type", selector.task_types, task.task_type),
    ):
        wanted = {v.strip().casefold() for v in allowed if v.strip()}
        if wanted:
            given = (given_value or "").strip().casefold()
            out[label] = None if not given else given in wanted
    return out


@settings(RELAXED, max_examples=200)
@given(selectors, tasks)
def test_match_selector_explains_exactly_the_satisfied_dimensions(
    selector: Selector, task: TaskConditions
) -> None:
    found = match_selector(selector, task)
    satisfied = _satisfied(selector, task)
    assert found.matches == (False not in satisfied.values())
    assert (found.mismatch is None) == found.matches
    assert found.specificity == sum(1 for ok in satisfied.values() if ok)
    unstated = sorted(d for d, ok in satisfied.items() if ok is None)
    assert sorted(u.split(" not stated")[0] for u in found.unstated) == unstated
    expected_prefixes = sorted(
        {"project": "current project matches", "path": "path "}.get(d, f"{d} ")
        for d, ok in satisfied.items()
        if ok
    )
    reasons = [r for r in found.reasons if r != "global rule"]
    assert len(reasons) == len(expected_prefixes)
    for prefix, reason in zip(expected_prefixes, sorted(reasons), strict=True):
        assert reason.startswith(prefix)
    assert ("global rule" in found.reasons) == (selector.scope == "global")

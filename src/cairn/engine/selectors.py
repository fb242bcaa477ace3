"""Applicability selectors: does a memory apply to the task at hand, and why (not)?

A selector narrows where a memory applies along independent dimensions: the project, the files
being touched, the operation (commit, push, …), the phase (plan, review, …) and the task type.
Matching is exact and explained: every satisfied dimension contributes a human-readable reason
("path src/api/users.py matches src/api/**") so the agent can say *why* a rule was applied, and
a failed match says why not.

Semantics worth knowing:

* ``scope="project"`` matches only when the task's project id equals the selector's; a global
  selector matches every project (its ``project_id`` is ignored).
* A non-empty dimension must be *satisfied* by the task to count as a match. When the task
  says nothing about that dimension (no paths, no operation, …) the dimension is *unstated*:
  the selector still matches, but ``unstated`` names the dimension ("phase not stated"), and
  the context director offers such a rule in the manifest only, never as resident text — a
  rule written for ``src/api/**`` is not applied blindly, and it is not silently dropped
  either. A dimension the task states differently is a mismatch.
* Any one task path matching any pattern satisfies the paths dimension.
* Operations, phases and task types compare case-insensitively; paths and globs are
  case-sensitive, as in git.

Glob syntax is gitignore-like, see :func:`glob_match`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

__all__ = [
    "Selector",
    "SelectorMatch",
    "TaskConditions",
    "glob_match",
    "match_selector",
    "normalize_path",
]

Scope = Literal["global", "project"]


@dataclass(frozen=True, slots=True)
class Selector:
    scope: Scope = "global"
    project_id: str | None = None
    path_patterns: tuple[str, ...] = ()
    operations: tuple[str, ...] = ()
    phases: tuple[str, ...] = ()
    task_types: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.scope not in ("global", "project"):
            raise ValueError(f"selector scope must be 'global' or 'project', not {self.scope!r}")


@dataclass(frozen=True, slots=True)
class TaskConditions:
    project_id: str | None = None
    paths: tuple[str, ...] = ()  # repo-relative POSIX paths
    operation: str | None = None
    phase: str | None = None
    task_type: str | None = None
    # Named by the task's own words when the caller stated no operation (phase, task
    # type): one of them matching a rule's counts; none matching leaves it unstated.
    mentioned_operations: tuple[str, ...] = ()
    mentioned_phases: tuple[str, ...] = ()
    mentioned_task_types: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class SelectorMatch:
    matches: bool
    # Why it applies, one fragment per satisfied condition ("operation commit matches"). On a
    # failed match these still list the conditions that were satisfied.
    reasons: tuple[str, ...]
    # Number of non-empty selector dimensions that matched; more specific rules can outrank
    # general ones when they conflict.
    specificity: int
    mismatch: str | None  # why not, when matches is False
    # Dimensions the rule names but the task leaves unstated ("phase not stated").
    unstated: tuple[str, ...] = ()


# --- globs -----------------------------------------------------------------------------------


def normalize_path(path: str) -> str:
    """Normalise a repo-relative path: backslashes to ``/``, no ``./``, no empty segments."""
    segments = [s for s in path.replace("\\", "/").split("/") if s not in ("", ".")]
    return "/".join(segments)


def glob_match(pattern: str, path: str) -> bool:
    """Match a repo-relative path against a gitignore-like glob.

    * ``*`` matches within one path segment, ``?`` one character, ``[abc]``/``[a-z]``/``[!a]``
      a character class; none of them match ``/``.
    * ``**`` as a whole segment matches any number of segments, including none:
      ``**/x``, ``a/**/b``, ``src/**``.
    * A leading ``/`` anchors the pattern at the repository root; so does a ``/`` in the
      middle. A pattern without ``/`` (``*.md``, ``Makefile``) matches the basename at any depth.
    * A pattern also matches everything below a directory it names (``docs`` and ``docs/``
      cover ``docs/a/b.md``); with a trailing ``/`` it matches only what is below.
    * Matching is case-sensitive. Paths and patterns are normalised first (``./`` stripped,
      backslashes turned into ``/``).
    """
    compiled = _compile_glob(pattern)
    target = normalize_path(path)
    return compiled is not None and bool(target) and compiled.fullmatch(target) is not None


@lru_cache(maxsize=2048)
def _compile_glob(pattern: str) -> re.Pattern[str] | None:
    text = pattern.strip().replace("\\", "/")
    while text.startswith("./"):
        text = text[2:]
    anchored = text.startswith("/")
    below_only = text.endswith("/")
    segments = [s for s in text.split("/") if s not in ("", ".")]
    # Collapse "**/**": consecutive globstars mean the same as one.
    collapsed: list[str] = []
    for segment in segments:
        if not (segment == "**" and collapsed and collapsed[-1] == "**"):
            collapsed.append(segment)
    if not collapsed:
        return None
    # gitignore: a slash anywhere but at the end anchors the pattern to the root.
    anchored = anchored or len(collapsed) > 1
    body = _translate_segments(collapsed)
    prefix = "" if anchored else "(?:.*/)?"
    suffix = "/.+" if below_only else "(?:/.*)?"
    return re.compile(f"{prefix}{body}{suffix}", re.DOTALL)


def _translate_segments(segments: list[str]) -> str:
    parts: list[str] = []
    last = len(segments) - 1
    for index, segment in enumerate(segments):
        if segment == "**":
            if last == 0:
                parts.append(".*")
            elif index == 0:
                parts.append("(?:.*/)?")  # leading **/: any number of leading directories
            elif index == last:
                parts.append("/.+")  # trailing /**: everything inside, not the dir itself
            else:
                parts.append("/(?:.*/)?")  # a/**/b: zero or more directories in between
            continue
        if index > 0 and segments[index - 1] != "**":
            parts.append("/")
        parts.append(_translate_segment(segment))
    return "".join(parts)


def _translate_segment(segment: str) -> str:
    out: list[str] = []
    index = 0
    while index < len(segment):
        char = segment[index]
        if char == "*":
            while index + 1 < len(segment) and segment[index + 1] == "*":
                index += 1  # "a**b" inside a segment is just "*"
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "[":
            translated, index = _translate_class(segment, index)
            out.append(translated)
            continue
        else:
            out.append(re.escape(char))
        index += 1
    return "".join(out)


def _translate_class(segment: str, start: int) -> tuple[str, int]:
    """Translate ``[...]`` at ``start``; an unclosed ``[`` is a literal. Returns (regex, next)."""
    index = start + 1
    negate = index < len(segment) and segment[index] in "!^"
    if negate:
        index += 1
    # A "]" right after the opening (and optional negation) is a member, not the end.
    first_member_is_bracket = index < len(segment) and segment[index] == "]"
    close = segment.find("]", index + 1 if first_member_is_bracket else index)
    if close == -1:
        return re.escape("["), start + 1
    # Every member is escaped, so "]", "^", "-" and "\\" stay literal inside the regex class;
    # a range whose end sorts before its start matches nothing, as in git.
    text = segment[index:close]
    members: list[str] = []
    at = 0
    while at < len(text):
        if at + 2 < len(text) and text[at + 1] == "-":
            low, high = text[at], text[at + 2]
            if low <= high:
                members.append(f"{re.escape(low)}-{re.escape(high)}")
            at += 3
        else:
            members.append(re.escape(text[at]))
            at += 1
    body = "".join(members)
    if negate:
        return f"[^/{body}]", close + 1
    return (f"[{body}]" if body else "(?!)"), close + 1


# --- selectors -------------------------------------------------------------------------------


def match_selector(selector: Selector, task: TaskConditions) -> SelectorMatch:
    """Decide whether ``selector`` applies to ``task`` and explain the decision."""
    reasons: list[str] = []
    mismatches: list[str] = []
    unstated: list[str] = []
    specificity = 0

    if selector.scope == "project":
        if not selector.project_id:
            mismatches.append("project rule has no project id")
        elif task.project_id is None:
            mismatches.append(f"no current project (rule is for project {selector.project_id})")
        elif task.project_id != selector.project_id:
            mismatches.append(f"current project {task.project_id} is not {selector.project_id}")
        else:
            reasons.append("current project matches")
            specificity += 1
    else:
        reasons.append("global rule")

    patterns = tuple(p for p in (p.strip() for p in selector.path_patterns) if p)
    if patterns:
        if not any(normalize_path(p) for p in task.paths):
            unstated.append(f"path not stated (rule applies to {_or(patterns)})")
        else:
            satisfied, explanation = _match_paths(patterns, task.paths)
            if satisfied:
                reasons.append(explanation)
                specificity += 1
            else:
                mismatches.append(explanation)

    for label, allowed, actual, mentioned in (
        ("operation", selector.operations, task.operation, task.mentioned_operations),
        ("phase", selector.phases, task.phase, task.mentioned_phases),
        ("task type", selector.task_types, task.task_type, task.mentioned_task_types),
    ):
        wanted = tuple(v for v in (v.strip() for v in allowed) if v)
        if not wanted:
            continue
        given = actual.strip() if actual else ""
        folded = {v.casefold() for v in wanted}
        named = next((m for m in mentioned if m.casefold() in folded), None)
        if not given and named is not None:
            reasons.append(f"{label} {named} (named in the task) matches")
            specificity += 1
        elif not given:
            unstated.append(f"{label} not stated (rule applies to {label} {_or(wanted)})")
        elif given.casefold() in {v.casefold() for v in wanted}:
            reasons.append(f"{label} {given} matches")
            specificity += 1
        else:
            mismatches.append(f"{label} {given} is not {_or(wanted)}")

    if mismatches:
        return SelectorMatch(
            False, tuple(reasons), specificity, "; ".join(mismatches), tuple(unstated)
        )
    return SelectorMatch(True, tuple(reasons), specificity, None, tuple(unstated))


def _match_paths(patterns: tuple[str, ...], paths: tuple[str, ...]) -> tuple[bool, str]:
    """(satisfied, reason or mismatch); the first matching path/pattern pair is the reason."""
    targets = [p for p in (normalize_path(path) for path in paths) if p]
    if not targets:
        return False, f"no path given (rule applies to {_or(patterns)})"
    for target in targets:
        for pattern in patterns:
            if glob_match(pattern, target):
                return True, f"path {target} matches {pattern}"
    if len(targets) == 1:
        return False, f"path {targets[0]} does not match {_or(patterns)}"
    more = len(targets) - 3
    shown = ", ".join(targets[:3]) + (f" and {more} more" if more > 0 else "")
    return False, f"paths {shown} do not match {_or(patterns)}"


def _or(values: tuple[str, ...]) -> str:
    return values[0] if len(values) == 1 else ", ".join(values[:-1]) + " or " + values[-1]

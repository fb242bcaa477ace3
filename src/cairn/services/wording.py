"""The write path's statement step (SPEC §6, §7): a memory whose body is someone's words —
the user's or the agent's — gets the selector and kind those words state, whatever the
route it came by (``signal``, MCP ``memory_store``, ``ingest`` lines, the review's
extracted statements).

It runs after validation and before the secret policy, on the validated fields. The words
only add to what the caller set: a rule "in this repo" is bound to the repository it was
said in, a named folder becomes a path pattern, "when committing" an operation; a
description that names this repository, its files or its CI belongs to the project too. A
kind the caller gave is kept; otherwise the words' kind is used (a rule's ``policy`` or
``preference``). Words that name the current repository when none is known are refused
(:class:`NoRepository`), never stored global, where they would apply in every repository.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from cairn.engine.statements.reader import read_statement, stored_scope
from cairn.engine.statements.repository_facts import is_about_repository, says_this_repository
from cairn.errors import InvalidInput

NO_REPOSITORY = (
    "the statement is about the current repository, but no repository is known:"
    " run it inside one or name the project"
)
_SELECTORS = ("path_patterns", "operations", "phases", "task_types")


class NoRepository(InvalidInput):
    """Words that name the current repository, said where no repository is known."""


@dataclass(frozen=True, slots=True)
class Words:
    """How to read a write's body as a statement.

    ``project_id``: the repository the words were said in (None: outside any).
    ``kind_given``: the caller chose the kind, so the words do not change it.
    ``default_kind``: the kind when neither the caller nor the words give one."""

    project_id: str | None
    kind_given: bool = True
    default_kind: str = "fact"


def read_words(fields: dict[str, Any], words: Words) -> dict[str, Any]:
    """``fields`` (as :func:`cairn.services.writes.stored_form` puts them) with
    the selector and kind the body's words state added."""
    body: str = fields["body"]
    reading = read_statement(body)
    out = dict(fields)
    if reading.signal in ("rule", "correct"):
        selector = reading.selector
        # Where the signal command puts the same words: a convention said inside a
        # repository without a scope word is that repository's; a personal habit is global.
        in_repository = words.project_id is not None
        about_here = stored_scope(reading, in_repository=in_repository) == "project" or (
            in_repository and reading.scope_source != "said" and is_about_repository(body)
        )
        read = {name: getattr(selector, name) for name in _SELECTORS}
        kind = reading.memory_kind
    else:
        about_here = says_this_repository(body)
        # Files and CI tie a description to a repository only when one is known: a path
        # alone does not say which repository is meant.
        if not about_here and words.project_id is not None:
            about_here = is_about_repository(body)
        read = {}
        kind = None
    if not words.kind_given:
        out["kind"] = kind or words.default_kind
    for name, values in read.items():
        out[name] = tuple(dict.fromkeys((*fields[name], *values)))
    if about_here and fields["scope"] == "global":
        if words.project_id is None:
            raise NoRepository(NO_REPOSITORY)
        out["scope"] = "project"
        out["project_id"] = words.project_id
    return out

"""The contract's checked fields: each a pydantic type that runs the one check of
:mod:`cairn.validation` for its field when a request is built or parsed, on every route,
and holds the value in the form cairn stores (stripped, lower-cased, a canonical time).

A refusal is pydantic's error of type ``cairn_input`` carrying the check's own one-line
message, so it keeps the field's place: :func:`cairn.provider.client.invalid` says it as
the check said it, after ``item N:`` for an item of a batch. The services below take the
values as they are.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

from pydantic import AfterValidator, BeforeValidator, Field
from pydantic_core import PydanticCustomError

from cairn.errors import InvalidInput
from cairn.identifiers import PROJECT_ID, record_id_of
from cairn.limits import (
    MAX_BODY_CHARS,
    MAX_CITED,
    MAX_ID_CHARS,
    MAX_KEY_CHARS,
    MAX_LIST_ITEMS,
    MAX_NAME_CHARS,
    MAX_PATHS,
    MAX_PROJECT_ID_CHARS,
    MAX_PROJECT_NAME_CHARS,
    MAX_QUERY_CHARS,
    MAX_REF_CHARS,
    MAX_REMOTE_CHARS,
    MAX_SEARCH_CHARS,
    MAX_SELECTOR_CHARS,
    MAX_SHORT_CHARS,
    MAX_TAG_CHARS,
    MAX_TIME_CHARS,
    MAX_TITLE_CHARS,
)
from cairn.validation import (
    check_body,
    check_line,
    check_source,
    check_text,
    check_text_list,
    check_time,
    check_token,
)

CHECK_ERROR = "cairn_input"  # the error type of a refusal of cairn.validation


def refusal(exc: InvalidInput) -> PydanticCustomError:
    """A check's refusal as pydantic's error, with the check's message as it is."""
    return PydanticCustomError(CHECK_ERROR, "{message}", {"message": str(exc)})


def checked(check: Callable[[Any], Any]) -> BeforeValidator:
    """The field's check, run on the value as given (its type too, so a refusal reads as
    the check says it on every route); pydantic then sees the value in its stored form."""

    def run(value: Any) -> Any:
        try:
            return check(value)
        except InvalidInput as exc:
            raise refusal(exc) from None

    return BeforeValidator(run)


def normalised(check: Callable[[Any], Any]) -> AfterValidator:
    """The field's check, run after pydantic's own (its type and length, said as
    pydantic says them); the value then in its stored form."""

    def run(value: Any) -> Any:
        try:
            return check(value)
        except InvalidInput as exc:
            raise refusal(exc) from None

    return AfterValidator(run)


def _listed(name: str, limit: int, *, lower: bool = False) -> Callable[[Any], list[str]]:
    # tags are any one-line text; selectors are printable (they are matched as given)
    def check(values: Any) -> list[str]:
        out = check_text_list(name, values, limit, printable=name != "tags")
        return [v.lower() for v in out] if lower else list(out)

    return check


Body = Annotated[
    str, Field(max_length=MAX_BODY_CHARS), checked(lambda v: check_body(v, MAX_BODY_CHARS))
]
Title = Annotated[
    str,
    Field(max_length=MAX_TITLE_CHARS),
    checked(lambda v: check_line("title", v, MAX_TITLE_CHARS)),
]
Ref = Annotated[
    str,
    Field(max_length=MAX_REF_CHARS),
    checked(lambda v: check_line("external_ref", v, MAX_REF_CHARS)),
]
ProjectId = Annotated[
    str,
    Field(max_length=MAX_PROJECT_ID_CHARS),
    checked(lambda v: check_line("project_id", v, MAX_PROJECT_ID_CHARS).strip()),
]
When = Annotated[
    str, Field(max_length=MAX_TIME_CHARS), checked(lambda v: check_time("occurred_at", v))
]
EpisodeId = Annotated[
    str, Field(max_length=MAX_KEY_CHARS), checked(lambda v: check_token("episode_id", v))
]
Source = Annotated[dict[str, Any], checked(check_source)]
IdempotencyKey = Annotated[  # matched as given: one line, bounded
    str,
    Field(min_length=1, max_length=MAX_KEY_CHARS),
    checked(lambda v: check_line("idempotency key", v, MAX_KEY_CHARS)),
]
# A list's items are bounded by the check (their count, each one's length), so a refusal
# reads as the check says it (``tags[3] is 300 characters``), not as pydantic's path.
_ITEMS = Field(max_length=MAX_LIST_ITEMS)
Tags = Annotated[list[str], _ITEMS, checked(_listed("tags", MAX_TAG_CHARS))]
Paths = Annotated[list[str], _ITEMS, checked(_listed("path_patterns", MAX_SELECTOR_CHARS))]
Operations = Annotated[
    list[str], _ITEMS, checked(_listed("operations", MAX_SELECTOR_CHARS, lower=True))
]
Phases = Annotated[list[str], _ITEMS, checked(_listed("phases", MAX_SELECTOR_CHARS, lower=True))]
TaskTypes = Annotated[
    list[str], _ITEMS, checked(_listed("task_types", MAX_SELECTOR_CHARS, lower=True))
]

# -- what a query asks with --------------------------------------------------------------


def _asked(value: Any) -> str:
    """A recall's query: free text; a blank one is allowed (it recalls nothing)."""
    if isinstance(value, str) and not value.strip():
        return value
    return check_text("the query", value, MAX_QUERY_CHARS)


def _word(name: str) -> Callable[[Any], str]:
    """One operation, phase or task type a task states, as the director compares it."""
    return lambda v: check_line(name, v, MAX_SELECTOR_CHARS).strip().lower()


Statement = Annotated[  # the store's own limit (memory.store.maxBodyChars) is the service's
    str,
    Field(max_length=MAX_BODY_CHARS),
    checked(lambda v: check_text("the statement", v, MAX_BODY_CHARS)),
]
Asked = Annotated[str, Field(max_length=MAX_QUERY_CHARS), checked(_asked)]
Task = Annotated[
    str,
    Field(max_length=MAX_QUERY_CHARS),
    checked(lambda v: check_text("task", v, MAX_QUERY_CHARS)),
]
InProject = Annotated[  # the project a query is asked in (an id, as the caller gives it)
    str,
    Field(max_length=MAX_SHORT_CHARS),
    checked(lambda v: check_line("project id", v, MAX_SHORT_CHARS)),
]
SessionId = Annotated[
    str, Field(max_length=MAX_KEY_CHARS), checked(lambda v: check_token("session id", v))
]
Sender = Annotated[  # who reported an observation or an outcome
    str,
    Field(max_length=MAX_NAME_CHARS),
    checked(lambda v: check_text("sender", v, MAX_NAME_CHARS).strip()),
]
TaskPaths = Annotated[
    list[str],
    Field(max_length=MAX_PATHS),
    checked(
        lambda v: list(
            check_text_list("paths", v, MAX_SHORT_CHARS, max_items=MAX_PATHS, printable=True)
        )
    ),
]
Operation = Annotated[str, Field(max_length=MAX_SELECTOR_CHARS), checked(_word("operation"))]
Phase = Annotated[str, Field(max_length=MAX_SELECTOR_CHARS), checked(_word("phase"))]
TaskType = Annotated[str, Field(max_length=MAX_SELECTOR_CHARS), checked(_word("task type"))]

AsOf = Annotated[  # as memory stood then: a time, as stored
    str, Field(max_length=MAX_TIME_CHARS), checked(lambda v: check_time("as_of", v))
]
# A memory's or an application's id as stored: trimmed, upper case, printable.
MemoryId = Annotated[str, Field(min_length=1, max_length=MAX_ID_CHARS), normalised(record_id_of)]
ApplicationId = Annotated[
    str,
    Field(min_length=1, max_length=MAX_ID_CHARS),
    normalised(lambda v: record_id_of(v, "application")),
]

# -- what a listing or the journal is filtered by (matched as given) -----------------------


def _filter(name: str, limit: int) -> BeforeValidator:
    return checked(lambda v: check_line(name, v, limit))


def _searched(value: Any) -> str:
    """The text a listing searches for: "" searches nothing."""
    return value if value == "" else check_line("text", value, MAX_SEARCH_CHARS)


TagFilter = Annotated[str, Field(max_length=MAX_SHORT_CHARS), _filter("tag", MAX_SHORT_CHARS)]
Search = Annotated[str, Field(max_length=MAX_SEARCH_CHARS), checked(_searched)]
EpisodeFilter = Annotated[
    str, Field(max_length=MAX_SHORT_CHARS), _filter("episode id", MAX_SHORT_CHARS)
]
SessionFilter = Annotated[
    str, Field(max_length=MAX_SHORT_CHARS), _filter("session id", MAX_SHORT_CHARS)
]

# -- a learning delta from outside, a transcript to review, a question ----------------------

DeltaStatement = Annotated[
    str,
    Field(max_length=MAX_QUERY_CHARS),
    checked(lambda v: check_text("statement", v, MAX_QUERY_CHARS).strip()),
]
DeltaTitle = Annotated[  # "" stands for none
    str,
    Field(max_length=MAX_TITLE_CHARS),
    checked(lambda v: v if v == "" else check_line("title", v, MAX_TITLE_CHARS)),
]
Evidence = Annotated[  # the observations' event ids, each trimmed
    list[str],
    Field(max_length=MAX_CITED),
    checked(lambda v: list(check_text_list("evidence", v, MAX_KEY_CHARS, max_items=MAX_CITED))),
]
Transcript = Annotated[
    str,
    Field(max_length=MAX_BODY_CHARS),
    checked(lambda v: check_text("transcript", v, MAX_BODY_CHARS)),
]
Question = Annotated[
    str,
    Field(max_length=MAX_QUERY_CHARS),
    checked(lambda v: check_text("question", v, MAX_QUERY_CHARS)),
]

# -- a project named, an import's source ------------------------------------------------------


def _made_project_id(value: Any) -> str:
    """A project id as cairn makes it from a repository (``git:`` and 16 hex digits)."""
    text = check_line("project id", value, MAX_PROJECT_ID_CHARS)
    if not PROJECT_ID.fullmatch(text):
        raise InvalidInput(f"not a project id: {text[:40]!r}")
    return text


MadeProjectId = Annotated[str, Field(max_length=MAX_SHORT_CHARS), checked(_made_project_id)]
ProjectName = Annotated[
    str,
    Field(max_length=MAX_SHORT_CHARS),
    checked(lambda v: check_line("project name", v, MAX_PROJECT_NAME_CHARS).strip()),
]
Remote = Annotated[
    str,
    Field(max_length=MAX_SHORT_CHARS),
    checked(lambda v: check_line("remote", v, MAX_REMOTE_CHARS)),
]
ImportSource = Annotated[
    str,
    Field(max_length=MAX_SHORT_CHARS),
    checked(lambda v: check_line("import source", v, MAX_SHORT_CHARS)),
]

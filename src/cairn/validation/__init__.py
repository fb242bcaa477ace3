"""Input checks at every boundary: the API, CLI options, JSONL ingest and import lines.

Every check raises one ``InvalidInput`` naming the field (prefixed by ``where``, such as
``memories.jsonl:7``) before anything is touched, and returns the value in the one form
cairn stores. Nothing is coerced: a boolean is ``true``/``false``, not ``"no"`` or ``0``; a
list is a list, never a string split into characters; a time is ISO-8601 text whose UTC
year has four digits, so it sorts as text and parses back. Because every stored value
passed these checks, no stored value can fail a later read, in this tenant or another.

By purpose: ``text`` (free text, lines, tokens, the error), ``values`` (choices, numbers,
times, lists, the source object), ``files`` (paths, the memory file, JSON lines),
``memory`` (what a stored memory holds to) and ``export`` (every field of an exported record or
tombstone). The checks are imported from here.
"""

from __future__ import annotations

from cairn.validation.export import (
    validate_export_record,
    validate_export_tombstone,
)
from cairn.validation.files import (
    check_database_path,
    check_file_argument,
    check_path_or_none,
    check_path_text,
    parse_json_line,
    split_lines,
)
from cairn.validation.memory import (
    LOWER_SELECTORS,
    SELECTORS,
    check_stored,
    refuse_unknown,
)
from cairn.validation.text import (
    check_body,
    check_length,
    check_line,
    check_text,
    check_token,
    error_at,
    kind_of,
    shown,
)
from cairn.validation.values import (
    check_bool,
    check_choice,
    check_fraction,
    check_int,
    check_limit,
    check_source,
    check_stored_time,
    check_text_list,
    check_time,
    optional,
)

__all__ = [
    "LOWER_SELECTORS",
    "SELECTORS",
    "check_body",
    "check_bool",
    "check_choice",
    "check_database_path",
    "check_file_argument",
    "check_fraction",
    "check_int",
    "check_length",
    "check_limit",
    "check_line",
    "check_path_or_none",
    "check_path_text",
    "check_source",
    "check_stored",
    "check_stored_time",
    "check_text",
    "check_text_list",
    "check_time",
    "check_token",
    "error_at",
    "kind_of",
    "optional",
    "parse_json_line",
    "refuse_unknown",
    "shown",
    "split_lines",
    "validate_export_record",
    "validate_export_tombstone",
]

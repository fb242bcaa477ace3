"""A correction stated in words, applied to the rule it corrects.

"Actually, use pnpm 10" corrects "In this repo, always use pnpm to install dependencies":
the new version should read "In this repo, always use pnpm 10 to install dependencies",
not lose everything but the new words. Two shapes are merged into the old text when they
can be placed with confidence; anything else becomes the new text as stated:

* ``X, not Y`` / ``X instead of Y`` / ``X rather than Y`` (and ``用X，不用Y``): Y, found
  once in the old text, is replaced by X;
* a phrase of the old text followed by a new value (a number or version): the value after
  that phrase is replaced, or inserted when there was none.
"""

from __future__ import annotations

import re

_NOT = re.compile(
    r"^\s*(?P<new>.+?)\s*[,，]?\s*(?:not|instead of|rather than)\s+(?P<old>.+?)\s*[.!。！]?\s*$",
    re.IGNORECASE,
)
_NOT_ZH = re.compile(
    r"^\s*(?:用|是)?(?P<new>[^，,]+?)[，,]\s*(?:不用|不是|而不是)(?P<old>.+?)[。！]?\s*$"
)
_TOKEN = re.compile(r"\S+")
_VALUE = re.compile(r"^v?\d+(?:\.\d+)*[a-z]*$", re.IGNORECASE)
_EDGE = ".,;:!?，。；：！？\"'`()"


def _norm(token: str) -> str:
    return token.strip(_EDGE).casefold()


def revise(old: str, statement: str) -> str:
    """The corrected text: ``old`` with the correction merged in, or ``statement``."""
    for pattern in (_NOT, _NOT_ZH):
        found = pattern.match(statement)
        if found is not None:
            replaced = _replace_once(old, found.group("old").strip(_EDGE + " "), found.group("new"))
            if replaced is not None:
                return replaced
    merged = _new_value(old, statement)
    return merged if merged is not None else statement.strip()


def _replace_once(old: str, wrong: str, right: str) -> str | None:
    if not wrong or not right.strip(_EDGE + " "):
        return None
    hits = list(re.finditer(rf"(?<!\w){re.escape(wrong)}(?!\w)", old, re.IGNORECASE))
    if len(hits) != 1:
        return None
    hit = hits[0]
    right = right.strip(_EDGE + " ")
    word_before = old[: hit.start()].split()[-1:] or [""]
    if _norm(word_before[0]) in ("use", "用"):  # "use yarn, not npm" in "Always use npm"
        right = re.sub(r"^(?:use\s+|用\s*)", "", right, flags=re.IGNORECASE)
    return old[: hit.start()] + right + old[hit.end() :]


def _new_value(old: str, statement: str) -> str | None:
    new_tokens: list[str] = _TOKEN.findall(statement)
    values = [i for i, t in enumerate(new_tokens) if _VALUE.match(t.strip(_EDGE))]
    if len(values) != 1 or values[0] == 0:
        return None
    at = values[0]
    anchor = _norm(new_tokens[at - 1])
    spans = [m for m in _TOKEN.finditer(old) if _norm(m.group()) == anchor]
    if len(spans) != 1 or not anchor:
        return None
    value = new_tokens[at].strip(_EDGE)
    after = old[spans[0].end() :]
    following = _TOKEN.match(after.lstrip())
    if following is not None and _VALUE.match(following.group().strip(_EDGE)):
        start = spans[0].end() + (len(after) - len(after.lstrip()))
        token = following.group()
        tail = token[len(token.rstrip(_EDGE)) :]
        return old[:start] + value + tail + old[start + len(token) :]
    return old[: spans[0].end()] + " " + value + old[spans[0].end() :]

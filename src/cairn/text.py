"""Text normalisation shared by query formulation, entity keys and content hashes."""

from __future__ import annotations

import hashlib
import re
import unicodedata

# Letters, digits and marks of any script; CJK ideographs are split apart below because
# they are written without spaces.
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_CJK = re.compile(
    r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\U00020000-\U0002ffff]+"
)


# Code identifiers: snake_case, dotted, slashed or dashed names, camelCase.
IDENTIFIER = re.compile(r"[A-Za-z0-9]+(?:[_.\-/:][A-Za-z0-9]+)+|[a-z]+[A-Z][A-Za-z0-9]*")


def needs_substring_index(text: str) -> bool:
    """Whether a body needs the trigram index: CJK runs or code identifiers.

    Plain prose is served by the word index; indexing its trigrams would triple the cost
    of every write for queries that never use them.
    """
    return bool(_CJK.search(text) or IDENTIFIER.search(text))


def fold(text: str) -> str:
    """NFKD, drop combining marks, lower-case: 'Café' -> 'cafe', 'ＡＢＣ' -> 'abc'."""
    if text.isascii():
        return text.lower()  # nothing to decompose: the common case, 10x cheaper
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c)).casefold()


def words(text: str) -> list[str]:
    """Unicode-aware word tokens (lower case); CJK runs are cut out of mixed tokens.

    ``以后都用pnpm安装`` gives ``pnpm`` plus the CJK runs, which the substring lane
    searches as trigrams.
    """
    out: list[str] = []
    for token in _WORD.findall(unicodedata.normalize("NFKC", text)):
        if _CJK.search(token):
            out.extend(p.casefold() for p in _CJK.split(token) if p)
            out.extend(_CJK.findall(token))
        else:
            out.append(token.casefold())
    return out


def cjk_runs(text: str) -> list[str]:
    return _CJK.findall(text)


def text_hash(body: str) -> str:
    """Identity of content across versions and tombstones: whitespace and case folded."""
    normal = " ".join(unicodedata.normalize("NFKC", body).casefold().split())
    return hashlib.sha256(normal.encode("utf-8")).hexdigest()

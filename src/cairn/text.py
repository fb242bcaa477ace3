"""Text normalisation shared by query formulation, entity keys and content hashes."""

from __future__ import annotations

import hashlib
import re
import threading
import unicodedata
from functools import lru_cache

from cairn.patterns import lazy_compile

# Common English function words: they match everything and rank nothing. The one list of
# them: the keyword lane drops them from a query, topics from a signature and a label, the
# director from the words a task shares with a memory. Each is one token of ``words`` and
# ``index_terms`` (no apostrophes: "don't" is read as "don" and "t").
_STOP_WORD_TEXT = """
    a about above after again against all am an and any are as at be because been before
    being below between both but by can cannot could d did do does doing down during each
    few for from further had has have having he her here hers herself him himself his how i
    if in into is it its itself just let ll m me more most my myself no nor not now of off
    on once only or other ought our ours ourselves out over own re s same she should so some
    such t than that the their theirs them themselves then there these they this those
    through to too under until up ve very was we were what when where which while who whom
    why will with would you your yours yourself yourselves
"""
STOP_WORDS = frozenset(_STOP_WORD_TEXT.split())

# Letters, digits and marks of any script; CJK ideographs are split apart below because
# they are written without spaces.
_WORD = lazy_compile(r"[^\W_]+", re.UNICODE)
_CJK = lazy_compile(
    r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\U00020000-\U0002ffff]+"
)


# Compound code identifiers: snake_case, dotted, slashed or dashed names. Anchored at a word
# start: unanchored, the engine retried at every letter of every word (3x slower).
COMPOUND_IDENTIFIER = lazy_compile(r"(?<![A-Za-z0-9])[A-Za-z0-9]+(?:[_.\-/:][A-Za-z0-9]+)+")


def fold(text: str) -> str:
    """NFKD, drop combining marks, lower-case: 'Café' -> 'cafe', 'ＡＢＣ' -> 'abc'."""
    if text.isascii():
        return text.lower()  # nothing to decompose: the common case, 10x cheaper
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c)).casefold()


def words(text: str) -> list[str]:
    """Unicode-aware word tokens (lower case); CJK runs are cut out of mixed tokens.

    ``以后都用pnpm安装`` gives ``pnpm`` plus the CJK runs.
    """
    out: list[str] = []
    for token in _WORD.findall(unicodedata.normalize("NFKC", text)):
        if _CJK.search(token):
            out.extend(p.casefold() for p in _CJK.split(token) if p)
            out.extend(_CJK.findall(token))
        else:
            out.append(token.casefold())
    return out


# A camelCase hump somewhere: a lower-case letter then a capital, or two capitals then a
# lower-case letter ("getUser", "HTTPServer"). Written to start at the capital, so the
# engine skips to the capitals instead of trying both branches at every character.
_HUMP = lazy_compile(r"[A-Z](?:(?<=[a-z][A-Z])|(?=[A-Z][a-z]))")
# The words of an ASCII text: the letters and digits ``_WORD`` finds there.
_ASCII_WORD = lazy_compile(r"[A-Za-z0-9]+")
_CAMEL_PART = lazy_compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")


def index_terms(text: str) -> list[str]:
    """The terms the word index keeps for a text (and a query is searched by).

    Every word, case folded; CJK runs, written without spaces, as overlapping character
    bigrams (``以后都用`` -> ``以后 后都 都用``); camelCase words also by hump
    (``getUserName`` -> ``getusername get user name``); compound code identifiers also
    whole (``cart_batch_v2.go``), so an exact identifier outranks its parts.
    """
    if text.isascii():  # the common case: no normal form, no CJK, case folded at once
        out = _ASCII_WORD.findall(text.lower())
        if _HUMP.search(text):
            _humps(_ASCII_WORD.findall(text), out)
        out.extend(m.lower() for m in COMPOUND_IDENTIFIER.findall(text))
        return out
    normal = unicodedata.normalize("NFKC", text)
    tokens = _WORD.findall(normal)
    if normal.isascii() or _CJK.search(normal) is None:
        out = [t.casefold() for t in tokens]
    else:
        out = []
        for token in tokens:
            if _CJK.search(token):
                out.extend(p.casefold() for p in _CJK.split(token) if p)
                for run in _CJK.findall(token):
                    out.extend(run[i : i + 2] for i in range(max(len(run) - 1, 1)))
            else:
                out.append(token.casefold())
    if _HUMP.search(normal):  # one pass over the text spares most texts the loop below
        _humps(tokens, out)
    out.extend(m.casefold() for m in COMPOUND_IDENTIFIER.findall(normal))
    return out


def _humps(tokens: list[str], out: list[str]) -> None:
    """Add the humps of each camelCase word of ``tokens`` to ``out``, case folded."""
    for token in tokens:
        tail = token[1:]
        # A capital after the first letter, in a word not all capitals: camelCase.
        if tail != tail.lower() and not token.isupper():
            parts = _CAMEL_PART.findall(token)
            if len(parts) > 1:
                out.extend(p.casefold() for p in parts)


def text_hash(body: str) -> str:
    """Identity of content across versions and tombstones: whitespace and case folded."""
    normal = " ".join(unicodedata.normalize("NFKC", body).casefold().split())
    return hashlib.sha256(normal.encode("utf-8")).hexdigest()


_local = threading.local()  # one stemmer per thread: the pure-Python one keeps state


@lru_cache(maxsize=65536)
def normal_term(term: str) -> str:
    """An index term as the keyword lane compares it: diacritics folded, English words
    Porter-stemmed ("deploying" and "deploys" are one term). Memoised: a recall stems
    every word of each candidate (~1,600 words), from a vocabulary that repeats."""
    folded = fold(term)
    if not (folded.isascii() and folded.isalpha()):
        return folded
    stemmer = getattr(_local, "stemmer", None)
    if stemmer is None:
        # Imported on first use: the package loads the stemmers of 30 languages, and the
        # command line's client reaches this module (an export check's text_hash) without
        # ever stemming a word.
        import snowballstemmer

        stemmer = _local.stemmer = snowballstemmer.stemmer("porter")
    return str(stemmer.stemWord(folded))

"""Rule-based entity keys for the entity lane: names, identifiers, hashtags.

No model: a capitalised word that is not a common sentence word, a run of such words
("New York"), a code identifier (snake_case, camelCase, dotted or slashed names, names with
digits), a #tag or @handle. Keys are NFKD-folded lower case (SPEC §4).
"""

from __future__ import annotations

import re

from cairn.text import fold

_TOKEN = re.compile(r"[#@]?[^\W_][\w.\-/:]*[^\W_]|[#@]?[^\W_]", re.UNICODE)
# Split on tokens, keeping them: [gap, token, gap, token, ..., gap] in one C call: 45 -> 36
# us a memory against walking match objects (same keys on 15,884 texts).
_SPLIT = re.compile(f"({_TOKEN.pattern})", re.UNICODE)
_IDENTIFIER = re.compile(r"[a-z]+[A-Z]\w*|\w+[_./:]\w+|[A-Za-z]+\d+\w*|\d+[A-Za-z]+\w*")
_MAX_KEYS = 32
_BREAK = re.compile(r"[.!?,;:()\n]")

# Capitalised only because they start a sentence or are pronouns; never entities.
_COMMON = frozenset(
    [
        "a",
        "about",
        "after",
        "again",
        "all",
        "also",
        "always",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "because",
        "been",
        "before",
        "being",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "doing",
        "don't",
        "done",
        "each",
        "even",
        "every",
        "for",
        "from",
        "had",
        "has",
        "have",
        "having",
        "he",
        "her",
        "here",
        "hers",
        "him",
        "his",
        "how",
        "however",
        "i",
        "i'm",
        "if",
        "in",
        "into",
        "is",
        "it",
        "it's",
        "its",
        "just",
        "let",
        "me",
        "might",
        "more",
        "most",
        "my",
        "never",
        "no",
        "not",
        "now",
        "of",
        "off",
        "oh",
        "ok",
        "okay",
        "on",
        "once",
        "one",
        "only",
        "or",
        "other",
        "our",
        "out",
        "over",
        "please",
        "really",
        "she",
        "should",
        "so",
        "some",
        "still",
        "such",
        "than",
        "thanks",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "though",
        "thus",
        "to",
        "today",
        "tomorrow",
        "too",
        "under",
        "until",
        "up",
        "us",
        "very",
        "was",
        "we",
        "well",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "why",
        "will",
        "with",
        "would",
        "yeah",
        "yes",
        "yesterday",
        "yet",
        "you",
        "your",
        "yours",
        "hey",
        "hi",
        "hello",
        "wow",
        "sure",
        "great",
        "good",
        "nice",
        "cool",
        "yep",
        "nope",
        "maybe",
        "sorry",
        "also",
        "actually",
    ]
)


def extract_entity_keys(text: str) -> list[str]:
    keys: list[str] = []
    run: list[str] = []

    def flush() -> None:
        if run:
            keys.append(fold(" ".join(run)))
            if len(run) > 1:
                keys.extend(fold(word) for word in run)
            run.clear()

    parts = _SPLIT.split(text)
    for i in range(1, len(parts), 2):
        if run and _BREAK.search(parts[i - 1]):
            flush()  # a name never runs across punctuation
        token = parts[i]
        if token.islower() and token.isalpha():  # the common case: an ordinary word
            if run:
                flush()
            continue
        token = token.rstrip(".:/-")
        if not token:
            continue
        if token[0] in "#@" and len(token) > 1:
            flush()
            keys.append(fold(token))
            continue
        # Plain lower-case or Capitalised words (most of them) cannot be identifiers.
        plain = token.isalpha() and (token.islower() or token.istitle())
        if not plain and _IDENTIFIER.fullmatch(token):
            flush()
            keys.append(fold(token))
            continue
        if token[0].isupper() and len(token) > 1 and fold(token) not in _COMMON:
            run.append(token)
            continue
        flush()
    flush()
    seen = dict.fromkeys(k for k in keys if len(k) > 1)
    return list(seen)[:_MAX_KEYS]

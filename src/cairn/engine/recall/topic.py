"""What a query asks about, without who it asks it of: the text the vector lane embeds.

"What exercises has John done?" over a conversation of John and Maria: who said it is
the speakers stage's part (``speakers.py`` lifts John's memories); in the query's
embedding the name mostly pulls towards memories that *mention* John ("Maria: Hey John,
how was the gym?") and away from his own words about the topic ("John: I'm doing
kickboxing"). So when the query names speakers of the store, the vector lane embeds it
with each such name replaced by "they" (a possessive by "their"): "What exercises has
they done?". A name of a script without case (李雷) is taken out. The keyword lane keeps
the names, as BM25 weighs a name by how rare it is; leaving them out there changed
nothing on LoCoMo.

On LoCoMo (docs/benchmarks.md) the stand-in "they" was chosen on conversations 1-5 by
all@10 over taking the names out and over "someone"; on conversations 6-10 it lifts
all@10 0.737 -> 0.754 and multi-hop all@10 0.214 -> 0.286.

Which speakers a query names is decided as the speakers stage decides it
(:func:`cairn.engine.recall.speakers.named_in`), over the speakers of the keyword lane's
best rows (that lane runs first): a name no memory there is said by is left as it is.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from cairn.engine.recall.speakers import named_in, speaker_of
from cairn.model import Record
from cairn.text import STOP_WORDS

# The keyword lane's best rows whose speakers tell which names of the query are speakers.
TOPIC_ROWS = 20

# What stands in for a cased name: a person still, but no one in particular.
STAND_IN = "they"
STAND_IN_POSSESSIVE = "their"
_WORD = re.compile(r"[^\W\d_][\w'’.\-]*")
_SPACES = re.compile(r"\s+")
_BEFORE_PUNCTUATION = re.compile(r"\s+([?!.,;:？！。，；：])")


def could_name(query: str) -> bool:
    """Whether ``query`` holds a word that could be a name: one starting with a capital
    (past an opening stop word such as "What"), or one of a script without case (李雷).
    A query without one names no speaker, and the lookup is skipped."""
    words = _WORD.findall(query)
    for i, word in enumerate(words):
        first = word[0]
        if not (first.isupper() or first.islower()):
            return True
        if first.isupper() and not (i == 0 and word.lower() in STOP_WORDS):
            return True
    return False


def unnamed(query: str, names: Iterable[str]) -> str:
    """``query`` with each of ``names`` (a cased name as a whole word) replaced by
    :data:`STAND_IN`, its possessive by :data:`STAND_IN_POSSESSIVE`, and an uncased one
    taken out, spaces tidied; the query as given when nothing but punctuation is left."""
    text = query
    for name in sorted(set(names), key=len, reverse=True):
        if not name:
            continue
        if any(c.isupper() or c.islower() for c in name):
            word = rf"(?<!\w){re.escape(name)}"
            text = re.sub(rf"{word}['’]s(?!\w)", STAND_IN_POSSESSIVE, text)
            text = re.sub(rf"{word}(?!\w)", STAND_IN, text)
        else:  # a script without spaces between words: taken out
            text = text.replace(name, "")
    text = _BEFORE_PUNCTUATION.sub(r"\1", _SPACES.sub(" ", text)).strip()
    return text if _WORD.search(text) else query


def vector_text(query: str, said: Iterable[Record]) -> str:
    """The text the vector lane embeds: ``query`` :func:`unnamed` of the speakers it
    names among those of ``said`` (the records of the keyword lane's best rows)."""
    records = list(said)
    speakers = {s for r in records if (s := speaker_of(r)) is not None}
    named = named_in(query, speakers, [r.body for r in records]) if speakers else set()
    return unnamed(query, named) if named else query


__all__ = ["STAND_IN", "STAND_IN_POSSESSIVE", "TOPIC_ROWS", "could_name", "unnamed", "vector_text"]

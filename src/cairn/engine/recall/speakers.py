"""Who said it: a question about a person is answered by what that person said.

"What books has Melanie read?" over a conversation of Melanie and Caroline: the answer is
in Melanie's own turns ("I loved reading Charlotte's Web as a kid"), while Caroline's
replies share the words and the topic. Measured on LoCoMo, when a question names exactly
one of the two speakers, 96% of the evidence turns are that speaker's, against 65% of the
other turns the fused ranking put in its top 10.

A memory's speaker is ``source["speaker"]`` when given, else the name that opens a
transcript line ("Melanie: …", at most three words, each starting with a capital or not
cased at all, as 李雷). The query names a speaker when that name occurs in it as written
(case and word boundaries kept, so "a note: …" is no speaker "Note" of a query about a
"note"). A name that opens the query counts too, since a statement starts with its
subject ("Jolene did yoga on Mount Talkeetna"), unless a memory of the pool also writes
it as a plain word in lower case ("Note the tests that failed" over memories that speak of
a note). When the query names one or more speakers of the pool, each candidate said by
one of them gains ``weight`` on the fused scale (its best is 1), and the pool is ordered
again; a query that names none changes nothing.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from functools import lru_cache

from cairn.engine.recall.fusion import Fused
from cairn.model import Record

MAX_NAME_CHARS = 40
_LINE_SPEAKER = re.compile(r"^\s*([^\W\d_][\w'.\-]*(?: [^\W\d_][\w'.\-]*){0,2})\s*[:：]\s*\S")


@lru_cache(maxsize=16384)
def _opening_name(body: str) -> str | None:
    m = _LINE_SPEAKER.match(body[: MAX_NAME_CHARS + 8])
    if m is None or len(m.group(1)) > MAX_NAME_CHARS:
        return None
    name = m.group(1)
    # Every word a name's word: a capital first, or a script without case (李雷).
    if all(not w[0].islower() for w in name.split()):
        return name
    return None


def speaker_of(record: Record) -> str | None:
    given = record.source.get("speaker") if record.source else None
    if isinstance(given, str) and given.strip():
        return given.strip()
    return _opening_name(record.body)


def named_in(query: str, speakers: set[str], bodies: Sequence[str] = ()) -> set[str]:
    """The speakers ``query`` names, as written (case kept; a cased name as a whole word).
    A name at the query's very start counts unless one of ``bodies`` writes it in lower
    case as a whole word: then the capital may be the sentence's ("Note the…")."""
    text = query.strip()
    out = set()
    for name in speakers:
        if len(name) < 2:
            continue
        if any(c.isupper() or c.islower() for c in name):
            found = re.search(rf"(?<=\W){re.escape(name)}(?!\w)", text) is not None
            if not found and re.match(rf"{re.escape(name)}(?!\w)", text):
                plain = re.compile(rf"(?<!\w){re.escape(name.lower())}(?!\w)")
                found = not any(plain.search(body) for body in bodies)
        else:  # 李雷: a script without spaces between words
            found = re.search(rf"(?<=.){re.escape(name)}", text) is not None
        if found:
            out.add(name)
    return out


def lift_speakers(
    query: str, fused: Sequence[Fused], records: Mapping[int, Record], weight: float
) -> tuple[list[Fused], int]:
    """The pool with the named speakers' memories lifted by ``weight``, best first (ties
    keep the order given), and how many were lifted."""
    said = {f.row: speaker_of(records[f.row]) for f in fused}
    bodies = [records[f.row].body for f in fused]
    named = named_in(query, {s for s in said.values() if s is not None}, bodies)
    if weight <= 0 or not named:
        return list(fused), 0
    scores = [f.score + (weight if said[f.row] in named else 0.0) for f in fused]
    top = max(scores)
    order = sorted(range(len(fused)), key=lambda i: -scores[i])
    lifted = sum(1 for f in fused if said[f.row] in named)
    return [
        Fused(row=fused[i].row, score=scores[i] / top, ranks=fused[i].ranks) for i in order
    ], lifted

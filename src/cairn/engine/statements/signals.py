"""Classify what a user says to a coding agent: a lasting rule, a one-off, a forget, a
correction, or nothing.

The classifier is a small scored cue grammar rather than a model:

* Quoted text is masked first: a cue the user is *quoting* ("the error says 'try again this
  time'") is not the user's own cue.
* Forget requests are recognised before anything else because they usually *contain* a rule
  ("forget that I always use tabs") that must not be stored again.
* Corrections come next: they replace a rule stated earlier ("actually, use pnpm 10", "I meant
  yarn, not npm", "不对，应该用 pnpm 10") and must not be stored as a second rule. A strong
  marker ("I meant", "correction:", "更正一下") says so by itself; a weak one ("actually", "no,",
  "不对") opens the statement and counts only when an instruction or an "X, not Y" follows, so
  "actually, that looks fine" stays neutral. A correction that is itself a one-off ("actually,
  skip the tests this time") is a one-off.
* The rest is split into sentences and clauses. Each clause carries a weight: a clause after a
  contrast word ("but", "however", "但是", "不过") is what the user actually wants, so it is
  boosted and the clauses before it are damped; a concessive clause ("normally …", "虽然 …") is
  background and damped too. Questions are damped ("should we always pin versions?" asks, it
  does not instruct) unless they are polite requests ("can you … just this once?").
* Cues are weighted phrases with a mode naming the context they need: "always"/"never" only
  count in an instruction position ("always run lint", not "the function always returns None"),
  weak time words ("today", "今天") need an instruction nearby, scoping phrases ("for this PR",
  "这次") count fully only when they front the clause or scope an exemption, and one-off cues can
  be negated ("not this time") or subsumed by a rule ("… and that includes today").
* The kind with the highest total wins when it clears a threshold; otherwise the statement is
  neutral.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from cairn.engine.statements.language import _CJK, _LATIN_WORD, language_of, last_latin_word
from cairn.engine.statements.signal_cues import (  # the grammar's tables
    _CLAUSE_JUNK,
    _CLAUSE_PUNCT,
    _CONCESSIVE,
    _CONTRAST,
    _CUES,
    _EN_ACTION,
    _EN_ADVERB_LEADS,
    _EN_DESCRIPTIVE_NEXT,
    _EN_EVER_LEADS,
    _EN_EXEMPTION,
    _EN_FRONT_LEADS,
    _EN_GROUP_SUBJECTS,
    _EN_MODALS,
    _EN_NOMINAL_BEFORE,
    _EN_REPORT,
    _FLAGS,
    _NEGATED_BEFORE,
    _POLITE_QUESTION,
    _QUOTE_PAIRS,
    _SENTENCE_END,
    _SUBSUMED_AFTER,
    _SUBSUMED_BEFORE,
    _THRESHOLD,
    _ZH_ACTION,
    _ZH_DESCRIPTIVE_NEXT,
    _ZH_DESCRIPTIVE_PREDICATE,
    _ZH_FRONT_LEAD,
    _Cue,
    _CueKind,
    any_cue,
)
from cairn.engine.statements.signal_forms import (
    _BLANK_RUN,
    _CORRECTION_STRONG,
    _CORRECTION_WEAK,
    _REPLACED_VALUE,
    _ZH_ASKS,
    _ends_in_cjk,
    _starts_in_cjk,
)
from cairn.engine.statements.signal_forms import match_unmarked_edit as _edit
from cairn.engine.statements.signal_forms import match_verdict_forget as _verdict
from cairn.engine.statements.spans import TakenSpans
from cairn.patterns import lazy_compile

__all__ = ["SignalClassification", "SignalKind", "classify_statement", "mask_quotes"]

SignalKind = Literal["rule", "one-off", "forget", "correct", "neutral"]


@dataclass(frozen=True, slots=True)
class SignalClassification:
    kind: SignalKind
    confidence: float
    cue: str | None
    language: str
    statement: str


@dataclass(frozen=True, slots=True)
class _Hit:
    kind: _CueKind
    score: float
    start: int  # offset in the whole input, so the cue text can be reported verbatim
    end: int


@dataclass(frozen=True, slots=True)
class _Clause:
    start: int
    end: int
    weight: float
    question: bool


# --- forget grammar --------------------------------------------------------------------------

_EN_LEADIN = (
    r"(?:(?:please|pls|ok(?:ay)?|also|and|now|just|actually|hey|so|oh|yes|"
    r"(?:you|u) (?:can|could|should|may|might)|(?:can|could|would) you|"
    r"i (?:want|need) you to|go ahead and)\s*+[,，]?\s*+)*"
)
_ZH_LEADIN = r"(?:请|麻烦|帮我|那就|就|以后|今后|也|你可以|可以|好的|好|嗯|算了|还是)*[，,]?\s*"

_FORGET_VERB = lazy_compile(
    rf"\s*+{_EN_LEADIN}(?P<verb>forget|unlearn|stop remembering|no longer remember|"
    r"(?:don't|do not) remember)(?![A-Za-z])"
    rf"|\s*{_ZH_LEADIN}(?P<zverb>忘掉|忘记|忘了(?=吧|它|这|那|我|以前|之前)|"
    r"(?:别再|不要再|不用再|不必再|无需再|别|不要)记(?:住|着|得)?(?!录|下))",
    _FLAGS,
)
# "forget it" / "forget about it" standing alone is a dismissal ("never mind"), not a request.
_FORGET_DISMISSAL = lazy_compile(r"\s*(?:about\s+)?it\s*(?:[,，.!。！—-]|$)", _FLAGS)
_REMOVE_VERB = lazy_compile(
    rf"\s*+{_EN_LEADIN}(?P<verb>delete|remove|drop|erase|clear|discard|scrap|wipe|get rid of)"
    r"(?![A-Za-z])",
    _FLAGS,
)
_EN_MEMORY_NOUN = lazy_compile(
    r"(?<![A-Za-z])(?:memory|memories|rule|preference|note|habit|thing|"
    r"what you (?:know|remember|learned|learnt))(?![A-Za-z])",
    _FLAGS,
)
# A removal aimed at a file ("remove the rule from .eslintrc") is a code edit, not a forget.
_CODE_TARGET = lazy_compile(r"(?<![A-Za-z])(?:from|in)\s+[\w./~-]*\.\w+", _FLAGS)
_ZH_REMOVE = lazy_compile(r"删除|删掉|删了|去掉|清除|清掉|移除|抹掉|丢掉")
_ZH_MEMORY_NOUN = lazy_compile(r"记忆|偏好|规则|那条|这条|记住的|设定")

# Words around the thing to forget that are grammar, not content. The memory nouns go only
# when they frame the content ("the rule about X", "X 的记忆"), not when they are the content
# ("pnpm 那条规则").
_EN_FORGET_HEAD = lazy_compile(
    r"(?:(?:the|that|my|this|your) (?:memory|memories|rule|preference|note|habit|thing)s? "
    r"(?:about|for|of|that|on)|what i (?:said|told you) about|everything i (?:said|told you) "
    r"about|what you (?:know|remember|learned|learnt) about|the fact that|about|that)\s+",
    _FLAGS,
)
_EN_FORGET_TAIL = lazy_compile(r"\s+(?:anymore|any more|again|please)$", _FLAGS)
_ZH_FORGET_HEAD = lazy_compile(r"(?:把|那条|这条|关于|吧|了)+")
_ZH_FORGET_TAIL = lazy_compile(
    r"(?:的(?:那个|那条|这个|这条)?(?:记忆|内容|设定|规则|偏好|话)|(?:那个|这个)?记忆|这件事|那件事"
    r"|的?(?:那条|这条)|可以|了|吧)+$"
)
_STATEMENT_EDGE = ' \t,，:：;；.。!！?？"“”「」'


def _match_correction(original: str, masked: str) -> tuple[str, str, float] | None:
    """Return (cue, the corrected statement, confidence) when the user corrects a rule."""
    found: tuple[int, int, bool] | None = None
    blanks_end = -1  # a start in the blanks a failed start began with fails alike
    for start, _ in _clause_spans(masked):
        if start < blanks_end:
            continue
        # Not bounded by the clause: "Correction:" ends at the colon that splits clauses.
        strong = _CORRECTION_STRONG.match(masked, start)
        if strong is not None:
            group = "cue" if strong.group("cue") else "zcue"
            found = (strong.start(group), strong.end(group), True)
            break
        blanks = _BLANK_RUN.match(masked, start)  # r"\s*" always matches
        blanks_end = blanks.end() if blanks is not None else start
    if found is None:
        weak = _CORRECTION_WEAK.match(masked)
        if weak is None:
            return None
        found = (weak.start("cue"), weak.end("cue"), False)
    cue_start, cue_end, strong_marker = found
    rest = masked[cue_end:]
    if not rest.strip(_CLAUSE_JUNK) or _is_question(rest) or _CODE_TARGET.search(rest):
        return None
    # Offsets are kept so the cue scoring sees the rest of the statement in place.
    totals, _ = _cue_totals(" " * cue_end + rest)
    if totals["one-off"] >= _THRESHOLD and totals["one-off"] > totals["rule"]:
        return None  # "actually, skip it this time": a one-off, decided by the cue grammar
    instructs = totals["rule"] > 0.0 or _gives_instruction(rest, 0, len(rest))
    if strong_marker:
        confidence = 0.85
    elif instructs or _REPLACED_VALUE.search(rest):
        confidence = 0.8 if totals["rule"] >= _THRESHOLD else 0.65
    else:
        return None
    statement = original[cue_end:].strip(_STATEMENT_EDGE + "—–-")
    return original[cue_start:cue_end], statement, confidence


def classify_statement(text: str, *, edits: bool = True) -> SignalClassification:
    """Classify one statement (the module docstring); ``edits=False``: not as an unmarked edit.
    A pure function of its arguments: a hook reads its prompt as a signal, then as a task."""
    if len(text) > _KEPT_CHARS:
        return _classify(text, edits)
    return _kept(text, edits)


def _classify(text: str, edits: bool) -> SignalClassification:
    stripped = text.strip()
    masked = mask_quotes(stripped)
    language = language_of(masked if masked.strip() else stripped)
    if not stripped:
        return SignalClassification("neutral", 1.0, None, language, "")

    forget = _match_forget(stripped, masked) or _verdict(stripped, masked, _forget_statement)
    if forget is not None:
        cue, statement, confidence = forget
        return SignalClassification("forget", confidence, cue, language, statement)

    correction = _match_correction(stripped, masked) or (_edit(stripped, masked) if edits else None)
    if correction is not None:
        cue, statement, confidence = correction
        return SignalClassification("correct", confidence, cue, language, statement)

    totals, best = _cue_totals(masked)
    top_kind: _CueKind = max(
        totals,
        # Ties go to the kind whose strongest cue comes last: the user's final word stands.
        key=lambda kind: (totals[kind], best[kind].start if kind in best else -1),
    )
    top = totals[top_kind]
    other = totals["one-off" if top_kind == "rule" else "rule"]
    if top < _THRESHOLD or top <= other:
        # Confidence in "neutral" falls as the strongest (insufficient) evidence grows.
        confidence = 1.0 - 0.5 * min(max(top, other), _THRESHOLD) / _THRESHOLD
        return SignalClassification("neutral", round(confidence, 3), None, language, stripped)

    strength = 1.0 - math.exp(-top)
    purity = top / (top + other)
    confidence = min(1.0, 0.35 + 0.65 * strength * purity)
    hit = best[top_kind]
    return SignalClassification(
        top_kind, round(confidence, 3), stripped[hit.start : hit.end], language, stripped
    )


def _cue_totals(masked: str) -> tuple[dict[_CueKind, float], dict[_CueKind, _Hit]]:
    """Sum the weighted cue evidence per kind and keep each kind's strongest hit."""
    totals: dict[_CueKind, float] = {"rule": 0.0, "one-off": 0.0}
    best: dict[_CueKind, _Hit] = {}
    for hit in _scored_hits(masked):
        totals[hit.kind] += hit.score
        current = best.get(hit.kind)
        if current is None or hit.score > current.score:
            best[hit.kind] = hit
    return totals, best


# --- quotes ----------------------------------------------------------------------------------


def mask_quotes(text: str) -> str:
    """Blank out quoted spans, keeping offsets so cue positions still index the input."""
    chars = list(text)
    for pattern in _QUOTE_PAIRS:
        for match in pattern.finditer("".join(chars)):
            chars[match.start() : match.end()] = " " * (match.end() - match.start())
    return "".join(chars)


# --- forget ----------------------------------------------------------------------------------


def _match_forget(original: str, masked: str) -> tuple[str, str, float] | None:
    """Return (cue, thing to forget, confidence) when a clause asks to drop a memory."""
    for start, end in _clause_spans(masked):
        clause = masked[start:end]
        verb = _FORGET_VERB.match(clause)
        if verb is not None:
            group = "verb" if verb.group("verb") else "zverb"
            if group == "verb" and _FORGET_DISMISSAL.match(clause, verb.end()):
                continue
            cue = original[start + verb.start(group) : start + verb.end(group)]
            return cue, _forget_statement(original[start + verb.end() :]), 0.9
        removal = _REMOVE_VERB.match(clause)
        if removal is not None:
            rest = masked[start + removal.end() :]
            if _EN_MEMORY_NOUN.search(rest) and not _CODE_TARGET.search(rest):
                cue = original[start + removal.start("verb") : start + removal.end("verb")]
                return cue, _forget_statement(original[start + removal.end() :]), 0.8
    # Chinese puts the removal verb last ("把…的记忆删掉"), so look at the whole sentence.
    removal_zh = _ZH_REMOVE.search(masked)
    if removal_zh and _ZH_MEMORY_NOUN.search(masked) and not _CODE_TARGET.search(masked):
        statement = original[: removal_zh.start()] + original[removal_zh.end() :]
        return removal_zh.group(), _forget_statement(statement), 0.8
    return None


def _forget_statement(rest: str) -> str:
    """Peel grammar off the object of a forget request until only its content is left."""
    text = rest.strip(_STATEMENT_EDGE)
    while True:
        peeled = _EN_FORGET_TAIL.sub("", text)
        peeled = peeled[_match_end(_EN_FORGET_HEAD, peeled) :]
        peeled = peeled[_match_end(_ZH_FORGET_HEAD, peeled) :].strip(_STATEMENT_EDGE)
        peeled = _ZH_FORGET_TAIL.sub("", peeled).strip(_STATEMENT_EDGE)
        if not peeled or peeled == text:
            # A bare pronoun ("forget that") stays: the caller resolves it from context.
            return text
        text = peeled


def _match_end(pattern: re.Pattern[str], text: str) -> int:
    match = pattern.match(text)
    return match.end() if match else 0


# --- clauses and cues ------------------------------------------------------------------------


def _clause_spans(text: str) -> Iterator[tuple[int, int]]:
    """Yield non-empty (start, end) clause spans split at punctuation and contrast words."""
    cuts = {0, len(text)}
    for pattern in (_CLAUSE_PUNCT, _SENTENCE_END):
        for match in pattern.finditer(text):
            cuts.update((match.start(), match.end()))
    cuts.update(match.start() for match in _CONTRAST.finditer(text))
    ordered = sorted(cuts)
    for start, end in itertools.pairwise(ordered):
        if text[start:end].strip(_CLAUSE_JUNK):
            yield start, end


def _sentence_bounds(text: str) -> list[tuple[int, int]]:
    ends = [match.end() for match in _SENTENCE_END.finditer(text)]
    if not ends or ends[-1] < len(text):
        ends.append(len(text))
    return list(zip([0, *ends[:-1]], ends, strict=True))


def _clauses(text: str) -> list[_Clause]:
    """Split into weighted clauses; contrast and concession shift weight within a sentence."""
    clauses: list[_Clause] = []
    for sentence_start, sentence_end in _sentence_bounds(text):
        sentence = text[sentence_start:sentence_end]
        question = _is_question(sentence)
        spans = [(sentence_start + s, sentence_start + e) for s, e in _clause_spans(sentence)]
        contrasts = [i for i, (s, _) in enumerate(spans) if _CONTRAST.match(text, s)]
        for index, (start, end) in enumerate(spans):
            weight = 1.0
            if contrasts:
                # What follows the last "but" is what the user wants; what precedes it is the
                # thing being set aside.
                weight = 1.5 if index >= contrasts[-1] else 0.6
            if _CONCESSIVE.search(text, start, end):
                weight *= 0.5
            clauses.append(_Clause(start, end, weight, question))
    return clauses


def _is_question(sentence: str) -> bool:
    body = sentence.strip()
    if not body:
        return False
    asks = body[-1] in "?？" or bool(_ZH_ASKS.search(body))
    return asks and not _POLITE_QUESTION.match(body)


_GATED_CUES = tuple(c for c in _CUES if c.needs)  # scanned only where their words are


def _scored_hits(masked: str) -> Iterator[_Hit]:
    instructing = [
        (start, end, _gives_instruction(masked, start, end))
        for start, end in _sentence_bounds(masked)
    ]
    for clause in _clauses(masked):
        words = masked[clause.start : clause.end]
        gated = [c for c in _GATED_CUES if any(w in words for w in c.needs)]
        if not gated and any_cue().search(masked, clause.start, clause.end) is None:
            continue  # no cue in the clause: each cue's scan below would find nothing
        cues = [c for c in _CUES if not c.needs or c in gated]
        candidates = [
            (cue, match)
            for cue in cues
            for match in cue.pattern.finditer(masked, clause.start, clause.end)
        ]
        # Longest phrase first, so "from now on" is not also read as "for now" and "就这一次"
        # not also as "这一次".
        candidates.sort(key=lambda item: (item[1].start() - item[1].end(), item[1].start()))
        taken = TakenSpans()
        for cue, match in candidates:
            if taken.overlaps(match.start(), match.end()):
                continue
            taken.take(match.start(), match.end())
            factor = _context_factor(cue, match, masked, clause, instructing)
            if factor > 0.0:
                damping = 0.3 if clause.question else 1.0
                score = cue.weight * factor * clause.weight * damping
                yield _Hit(cue.kind, score, match.start(), match.end())


def _gives_instruction(text: str, start: int, end: int) -> bool:
    return bool(_EN_ACTION.search(text, start, end) or _ZH_ACTION.search(text, start, end))


def _context_factor(
    cue: _Cue,
    match: re.Match[str],
    text: str,
    clause: _Clause,
    instructing: list[tuple[int, int, bool]],
) -> float:
    before = text[clause.start : match.start()]
    after = text[match.end() : clause.end]
    if cue.kind == "one-off":
        if _NEGATED_BEFORE.search(before):
            return 0.0  # "not this time": the user is declining the one-off reading
        if _SUBSUMED_BEFORE.search(before) or _SUBSUMED_AFTER.match(after):
            return 0.0  # "even today", "today included", "今天也一样": a rule that covers now
        if _EN_NOMINAL_BEFORE.search(before):
            return 0.3
        if _EN_REPORT.match(text, clause.start, clause.end):
            return 0.4
    if cue.mode == "adverb_en":
        return _english_adverb_factor(match.group().lower(), before, after)
    if cue.mode == "lead_en":
        return _english_adverb_factor(match.group().lower(), before, "")
    if cue.mode == "adverb_zh":
        return 0.3 if _ZH_DESCRIPTIVE_NEXT.match(after.lstrip()) else 1.0
    if cue.mode == "habit_zh":
        return 0.3 if _ZH_DESCRIPTIVE_PREDICATE.search(after) else 1.0
    if cue.mode == "weak":
        gives_instruction = any(s <= match.start() < e and flag for s, e, flag in instructing)
        return 1.6 if gives_instruction else 1.0
    if cue.mode == "fronted":
        if _is_fronted(before, match.group()):
            return 1.0
        if not _CJK.search(match.group()) and _EN_EXEMPTION.search(text, clause.start, clause.end):
            return 1.0
        return 0.5
    return 1.0


def _english_adverb_factor(cue_text: str, before: str, after: str) -> float:
    last = last_latin_word(before)
    previous = last.lower() if last is not None else None
    if _ends_in_cjk(before):
        # Mixed text: "这个 repo 里 always 用 pnpm". The word before the adverb is Chinese
        # (a topic phrase), so the last Latin word ("repo") is not its subject.
        previous = None
    head = cue_text.split()[0]
    if head == "ever":
        if previous is not None and previous not in _EN_EVER_LEADS:
            return 0.0
    elif (
        previous is not None
        and previous not in _EN_ADVERB_LEADS
        and previous.split("'")[0] not in {"you", "we", "i", "let"}
    ):
        return 0.3  # "the function always …", "it's always …": a description
    if previous in _EN_GROUP_SUBJECTS:
        return 1.0  # "our team always writes …" is a convention despite the verb's -s
    if previous in _EN_MODALS:
        return 1.0  # "should always be …", "must never have …": a requirement
    if _starts_in_cjk(after):
        # "always 用 pnpm" instructs; "always 返回 None" describes, as in Chinese alone.
        return 0.3 if _ZH_DESCRIPTIVE_NEXT.match(after.lstrip()) else 1.0
    following = _LATIN_WORD.search(after)
    if following is not None:
        nxt = following.group().lower()
        if nxt in {"always", "never", "ever"}:
            return 1.0
        third_person = nxt.endswith("s") and not nxt.endswith(("ss", "us", "is")) and len(nxt) > 3
        past = nxt.endswith("ed") and len(nxt) > 4
        if nxt in _EN_DESCRIPTIVE_NEXT or third_person or past:
            return 0.3
    return 1.0


def _is_fronted(before: str, cue_text: str) -> bool:
    if _CJK.search(cue_text):
        return bool(_ZH_FRONT_LEAD.match(before.strip()))
    lowered = cue_text.lower()
    if lowered.startswith(("just ", "only ")) or lowered.endswith(" only"):
        return True
    return all(word.lower() in _EN_FRONT_LEADS for word in _LATIN_WORD.findall(before))


_KEPT_CHARS = 2000  # a longer text is classified again, not kept
_kept = lru_cache(maxsize=64)(_classify)

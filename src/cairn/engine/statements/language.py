"""Which language a statement is in: English, Chinese, or mixed (the reader's cues and its
learned model are chosen by it)."""

from __future__ import annotations

from cairn.patterns import lazy_compile

_CJK = lazy_compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_LATIN_WORD = lazy_compile(r"[A-Za-z]+(?:'[A-Za-z]+)?")
# Everyday English words: Chinese messages are full of English jargon (pnpm, PR, merge), which
# does not make them mixed; an English function word or cue does.
_EN_COMMON = frozenset(
    str.split(
        """the a an to of in on for with and or but not no is are was be this that it i you we
        please always never from now time once just use run don't do does forget skip only today
        rule why what how when where which who should can could would will my your our all every
        fix add remove delete make keep before after then so if there here new old"""
    )
)


def language_of(text: str) -> str:
    """ "en", "zh" or "mixed": English jargon inside Chinese text does not make it mixed."""
    cjk = len(_CJK.findall(text))
    if cjk == 0:
        return "en"
    words = _LATIN_WORD.findall(text)
    if not any(word.lower() in _EN_COMMON for word in words):
        return "zh"
    english_share = len(words) / (len(words) + cjk / 1.5)
    if english_share < 0.1:
        return "zh"
    if english_share > 0.9:
        return "en"
    return "mixed"


def last_latin_word(text: str) -> str | None:
    """The last of ``_LATIN_WORD.findall(text)``, read from the text's tail: a word never
    holds a blank, so the words after a blank are those of the whole text after it (a
    clause with a cue at every word read its whole beginning again for each)."""
    tail = text[-256:]
    blank = tail.find(" ")
    if len(text) > len(tail) and blank >= 0:
        found = _LATIN_WORD.findall(tail[blank:])
        if found:
            return str(found[-1])
    words = _LATIN_WORD.findall(text)
    return str(words[-1]) if words else None

"""Forgets and corrections in the everyday words the cue grammar of
:mod:`cairn.engine.statements.signals` does not open with a verb:

* **Forgets that end with their verdict**: "之前说的 mock 那条不算了", "errcode 那条作废",
  "关于 staging 的规则取消吧", "the pnpm rule no longer applies", "that note is obsolete";
  and those that open with a dismissal: "作废之前关于 staging 的规则", "别管之前说的 goose 那条",
  "never mind what I said about staging", "ignore / disregard what I said about mocks",
  "scrap / drop / ditch / cancel the rule about …".
* **Corrections without a marker**: "prettier 换成 biome", "use vitest instead of jest",
  "switch from jest to vitest": an edit naming the old and the new term. Unmarked, it may
  also be a code change ("把 axios 换成 fetch"), so its confidence is low and the caller acts on
  it only when a memory clearly takes it.

Each returns (cue, the statement's object, confidence) in the grammar's convention.
"""

from __future__ import annotations

from collections.abc import Callable

from cairn.patterns import lazy_compile

_FLAGS = 2  # re.IGNORECASE, without importing re for one constant
_CJK_CHAR = lazy_compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
# The confidence of an unmarked edit: the caller acts on it only when a memory takes it.
UNMARKED_EDIT = 0.55

# What chat puts after a verdict: "thanks", "thx", ":)", "哈", "！".
_POLITE_END = r"(?:\s*+(?:thanks|thank you|thx|please|pls|:\)|谢谢|哈|吧|啊|[。！!.~]))*\s*$"
# "…那条不算了": a memory noun, then a verdict that it no longer holds.
_ZH_VERDICT = lazy_compile(
    r"(?P<object>.+?)(?<!\s)\s*+(?P<cue>(?:那条|这条|那个|这个|的)?\s*+(?:规则|记忆|偏好|说法|约定|rule|note)?\s*+"
    r"(?:就|也|都)?(?:不算了|不算数了?|不作数了?|作废(?:了|吧|掉)?|不要了|不用了|取消(?:了|吧|掉)?"
    r"|失效了?|撤销(?:了|吧)?|撤回(?:了|吧)?|不用管了|别管了|不适用了|过时了|没用了|废弃(?:了|吧)?))"
    rf"{_POLITE_END}"
)
# The object of a verdict must name a memory ("那条", "之前说的"), or "不要了" is any task.
_ZH_MEMORY_REF = lazy_compile(
    r"那条|这条|之前|刚才|以前|原来|说的|说过|提的|规则|记忆|约定|关于|(?<![A-Za-z])(?:rule|note)(?![A-Za-z])"
)
_ZH_DISMISS = lazy_compile(
    r"\s*+(?:请|麻烦|帮我|你)?\s*+(?P<cue>作废|废弃|取消|撤销|撤回|别管|不用管|不要管|忽略|无视)"
    r"(?:掉|一下)?\s*(?P<object>(?:我)?(?:之前|刚才|以前|原来)?(?:说的|提的|讲的|定的|关于)?.+)$"
)
_EN_VERDICT = lazy_compile(
    r"(?P<object>.+?)(?<!\s)\s++(?P<cue>(?:no longer|doesn't|does not|don't|do not)"
    r" (?:applies|apply|holds?|stands?|matters?|counts?)(?: anymore| any more)?"
    r"|is (?:no longer valid|obsolete|outdated|void|dead|cancel(?:l)?ed|gone)"
    r"|(?:is|are) not (?:a thing|valid) any ?more)"
    rf"{_POLITE_END}",
    _FLAGS,
)
_EN_MEMORY_REF = lazy_compile(
    r"(?<![A-Za-z])(?:rule|note|memory|preference|convention|what i said|what i told you"
    r"|policy)(?![A-Za-z])",
    _FLAGS,
)
_EN_DISMISS = lazy_compile(
    r"\s*+(?:(?:please|pls|ok|okay|also|and|just|actually)\s*+[,]?\s*+)*"
    r"(?P<cue>never ?mind|nevermind|ignore|disregard|scrap|ditch|drop|cancel|revoke|retract"
    r"|throw out|toss|kill)\s+(?P<object>.+)$",
    _FLAGS,
)

_ZH_EDIT = lazy_compile(
    r"^\s*(?:把|将)?\s*(?P<old>[A-Za-z0-9@._/+#-]+(?:\s+[A-Za-z0-9@._/+#-]+)?)\s*"
    r"(?P<cue>改成|换成|改为|换为|替换成|替换为)\s*(?P<new>[A-Za-z0-9@._/+# -]+?)"
    r"\s*(?:吧|了)?\s*[。.!！]?$"
)
_EN_EDIT = lazy_compile(
    r"^\s*(?:(?:please|pls|ok|okay|let's|lets|we should|we'll)\s*[,]?\s*)?"
    r"(?:(?P<cue>use)\s+\S+(?:\s+\S+)?\s+instead of\s+\S+"
    r"|(?P<cue2>switch(?:ed)?|move(?:d)?|migrate(?:d)?) from\s+\S+(?:\s+\S+)?\s+to\s+\S+)"
    r"(?:\s+(?:instead|now|going forward|from now on))?\s*[.!]?\s*$",
    _FLAGS,
)


def match_verdict_forget(
    original: str, masked: str, peel: Callable[[str], str]
) -> tuple[str, str, float] | None:
    """A forget said as a verdict on a memory, or as a dismissal of it; ``peel`` takes the
    grammar off its object."""
    for pattern, ref in ((_ZH_VERDICT, _ZH_MEMORY_REF), (_EN_VERDICT, _EN_MEMORY_REF)):
        found = pattern.match(masked.strip())
        if found is not None and ref.search(masked):
            offset = len(masked) - len(masked.lstrip())
            start, end = found.span("object")
            cue = found.group("cue").strip()
            return cue, peel(original[offset + start : offset + end]), 0.8
    for pattern, ref in ((_ZH_DISMISS, _ZH_MEMORY_REF), (_EN_DISMISS, _EN_MEMORY_REF)):
        found = pattern.match(masked)
        if found is not None and ref.search(found.group("object")):
            start, end = found.span("object")
            return found.group("cue"), peel(original[start:end]), 0.8
    return None


def match_unmarked_edit(original: str, masked: str) -> tuple[str, str, float] | None:
    """ "prettier 换成 biome", "use vitest instead of jest": an edit of a named term."""
    for pattern in (_ZH_EDIT, _EN_EDIT):
        found = pattern.match(masked)
        if found is not None:
            group = next(g for g in ("cue", "cue2") if g in found.re.groupindex and found.group(g))
            return found.group(group), original.strip(), UNMARKED_EDIT
    return None


# A Chinese question needs no question mark: "这个 PR 改了哪些文件".
_ZH_ASKS = lazy_compile(
    r"[吗呢][。.!！]?$"
    # A question word near the end asks; inside an instruction ("检查有没有测试") it does not.
    r"|(?:哪些|哪个|哪里|哪儿|为什么|为啥|怎么回事|多少|啥意思|什么意思)[^，。；,;]{0,12}"
    r"(?:[，,]\s*(?:谢谢|多谢|thanks|thx))?[。.!！哈]?$"
)


def _ends_in_cjk(text: str) -> bool:
    stripped = text.rstrip()
    return bool(stripped) and bool(_CJK_CHAR.match(stripped[-1]))


def _starts_in_cjk(text: str) -> bool:
    stripped = text.lstrip()
    return bool(stripped) and bool(_CJK_CHAR.match(stripped[0]))


# The markers of a correction (signals._match_correction).

_CORRECTION_STRONG = lazy_compile(
    r"\s*+(?:(?:sorry|oops|wait|no|ok(?:ay)?|oh|hmm)\s*+[,，!]?\s*+)*"
    r"(?P<cue>i meant(?! to(?![A-Za-z]))|what i meant (?:was|is)|correction\s*[:：—–-]"
    r"|let me correct (?:myself|that)|to correct (?:myself|what i said)|i misspoke"
    r"|i (?:was wrong|got (?:that|it) wrong)|scratch that|on second thought"
    r"|(?:change|update|amend|correct) (?:the|that|my) (?:[\w.-]+ ){0,3}?"
    r"(?:rule|preference|note|memory))(?![A-Za-z])"
    r"|\s*+(?P<zcue>更正(?:一下)?|纠正(?:一下)?|我?(?:刚才|之前)?说错了|我的意思是|我是说"
    r"|改一下(?:刚才|之前)?(?:那条|这条|说的)?)",
    _FLAGS,
)
_CORRECTION_WEAK = lazy_compile(
    r"\s*(?P<cue>actually(?=[\s,，!])|(?:no|nope|wait|oops)(?=\s*[,，!])"
    r"|(?:不对|不是的|其实|等等|等一下|哦不)(?:[，,\s]*不对)*)",
    _FLAGS,
)
# "X, not Y" names the replaced value even without an instruction ("it's staging-2, not 1");
# so do "make it X", "switch to X", "不对，是 X", "应该是 X".
_REPLACED_VALUE = lazy_compile(
    r"[,，]\s*(?:not|不是|而不是)\s*\S|^[\s,，:：]*(?:make (?:it|that)|switch to|go with"
    r"|stick (?:to|with)|(?:change|set) (?:it|that) to|是|应该|应当|改成|换成)",
    _FLAGS,
)
# Both branches of the strong marker open with the blanks before it, taken whole: a start
# inside a run of them reaches the same place as the run's first (a line per clause).
_BLANK_RUN = lazy_compile(r"\s*")

"""Read a user statement for what to do with it: the signal, the memory kind, the selector,
the target.

:func:`read_statement` runs the signal classifier (:mod:`cairn.engine.statements.signals`),
then reads the statement's own words:

* **Memory kind** (rules and corrections). ``preference`` when the speaker states their own
  taste ("I prefer …", "I'd rather …", "I hate …", "I'm a fan of", "我喜欢/偏好/习惯/讨厌 …");
  ``fact`` when the statement only describes something (a copula, "lives in", "是", and no
  instruction anywhere), typically with "remember that" / "记住"; otherwise ``policy``:
  imperatives, always/never/must, and team conventions ("we squash-merge", "我们组习惯 …" are
  the team's, not one person's taste). A correction's kind is read from its new wording.
* **Selector** (rules and corrections): :func:`cairn.engine.statements.selector_words.read_selector`
  (scope from "this repo / here / 这个仓库 / 本项目 …", paths, operations, phases, task types).
  A forget keeps only the scope the user named ("forget the pnpm rule in this repo").
* **Target** (forgets and corrections): the content words a stored record must share, i.e. the
  statement minus grammar, memory nouns ("the rule about", "那条规则") and scope words. Latin
  words are lower-cased; Chinese comes in runs between grammar words ("staging 数据库"), to be
  matched by substring or by the keyword index's bigrams. An empty target ("forget that")
  names nothing: the caller must ask which memory is meant.

Nothing here reads storage or the clock.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Literal

from cairn.engine.selectors import Scope, Selector
from cairn.engine.statements.learned import LearnedReading, fold, model, spell
from cairn.engine.statements.selector_words import (
    LANGUAGE_GLOBS,
    OPERATIONS,
    PHASES,
    TASK_TYPES,
    clause_spans,
    read_scope,
    read_selector,
    scope_spans,
    unquote,
)
from cairn.engine.statements.signal_forms import UNMARKED_EDIT
from cairn.engine.statements.signals import SignalKind, classify_statement, mask_quotes
from cairn.patterns import lazy_compile

__all__ = [
    "LANGUAGE_GLOBS",
    "OPERATIONS",
    "PHASES",
    "TASK_TYPES",
    "MemoryKind",
    "StatementReading",
    "read_statement",
    "stored_scope",
]

MemoryKind = Literal["preference", "policy", "fact"]
ScopeSource = Literal["said", "personal", "unstated"]

_CJK = lazy_compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


def _en(pattern: str) -> re.Pattern[str]:
    return lazy_compile(rf"(?<![A-Za-z0-9_]){pattern}(?![A-Za-z0-9_])", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class StatementReading:
    signal: SignalKind
    confidence: float
    cue: str | None
    language: str
    # The rule as stated, the corrected wording, the forget request's object, or the text.
    statement: str
    memory_kind: MemoryKind | None  # rule and correct only
    # Rule and correct: the full selector; forget: only the scope the user named; project_id
    # is always None (the caller binds "project" to its current repository).
    selector: Selector
    target_terms: tuple[str, ...]  # forget and correct: what a matching record must contain
    # Where the scope came from: "said" (a scope word: "in this repo", "全局", "in every
    # project"), "personal" (the speaker's own habit or taste: "我习惯", "I prefer": global),
    # or "unstated" (a convention with no scope word: it belongs to the repository it is said
    # in, when there is one).
    scope_source: ScopeSource = "unstated"
    # Neutral readings only: the words suggest something to keep, not enough to keep it (the
    # caller asks how to store it rather than dropping it).
    unsure: bool = False

    @property
    def target(self) -> str:
        return " ".join(self.target_terms)


def read_statement(text: str, *, edits: bool = True, learned: bool = True) -> StatementReading:
    """Classify a user statement and read its kind, selector and target from its words
    (``edits=False``: an unmarked edit such as "prettier 换成 biome" is not a correction;
    ``learned=False``: the cue grammar alone, without :mod:`cairn.engine.statements.learned`).
    Traditional characters are read as simplified ones; the statement and its target keep
    the user's own characters."""
    stripped = spell(text.strip())
    folded = fold(stripped)
    found = classify_statement(folded, edits=edits)
    if folded != stripped and found.statement in folded:
        at = folded.index(found.statement)
        found = replace(found, statement=stripped[at : at + len(found.statement)])
    kind: MemoryKind | None = None
    selector = Selector()
    terms: tuple[str, ...] = ()
    if found.kind in ("rule", "correct"):
        wording = fold(found.statement) if found.kind == "correct" else folded
        kind = _memory_kind(mask_quotes(wording))
        selector = read_selector(folded)
    if found.kind == "correct":
        terms = _target_terms(stripped)
    elif found.kind == "forget":
        selector = Selector(scope=read_scope(folded))
        terms = _forget_terms(found.statement, stripped, found.cue)
    reading = StatementReading(
        found.kind,
        found.confidence,
        found.cue,
        found.language,
        found.statement,
        kind,
        selector,
        terms,
        _scope_source(folded, kind, selector) if found.kind == "rule" else "unstated",
        found.kind == "neutral"
        and found.confidence < UNSURE_BELOW
        and bool(_REMEMBER_TO.search(folded) or _instructs(mask_quotes(folded))),
    )
    trained = model() if learned else None
    if trained is None:
        return reading
    learned_reading = trained.read(stripped, cue_features(reading))
    return _with_learned(reading, learned_reading, stripped, edits=edits)


def _scope_source(text: str, kind: MemoryKind | None, selector: Selector) -> ScopeSource:
    masked = mask_quotes(text)
    if selector.scope == "project" or _GLOBAL_WORDS.search(masked):
        return "said"
    if kind == "preference" or _PERSONAL.search(masked):
        return "personal"
    return "unstated"


def cue_features(reading: StatementReading) -> tuple[str, ...]:
    """The cue grammar's reading as features of the learned model."""
    selector = reading.selector
    return (
        f"sig={reading.signal}",
        f"kind={reading.memory_kind}",
        f"src={reading.scope_source}",
        f"scope={selector.scope}",
        *(("unsure",) if reading.unsure else ()),
        *(f"op={o}" for o in selector.operations),
        *(f"ph={p}" for p in selector.phases),
        *(("path",) if selector.path_patterns else ()),
    )


# The learned reader acts where the cue grammar found nothing when it is this sure, and
# asks (an unsure reading) when it is at least this sure that something should be kept.
LEARNED_ACTS_AT = 0.8
LEARNED_ASKS_AT = 0.4
# ... and overrides the cue grammar's kind of a rule (policy, preference, fact) when this sure.
LEARNED_KIND_AT = 0.9
_KIND_OF_ACT: dict[str, MemoryKind] = {"rule": "policy", "preference": "preference", "fact": "fact"}


def _with_learned(
    reading: StatementReading, learned: LearnedReading, text: str, *, edits: bool
) -> StatementReading:
    sure = learned.act_probability
    kind = _KIND_OF_ACT.get(learned.act)
    if reading.signal == "rule":
        if kind is not None and sure >= LEARNED_KIND_AT and kind != reading.memory_kind:
            reading = replace(reading, memory_kind=kind)
        return _learned_selector(reading, learned)
    if reading.signal != "neutral":
        return reading
    if sure < LEARNED_ACTS_AT:
        asks = kind is not None and sure >= LEARNED_ASKS_AT
        return replace(reading, unsure=reading.unsure or asks)
    folded = fold(text)
    if kind is not None:
        selector = read_selector(folded)
        ruled = replace(
            reading,
            signal="rule",
            confidence=sure,
            cue=None,
            memory_kind=kind,
            selector=selector,
            scope_source=_scope_source(folded, kind, selector),
            unsure=False,
        )
        return _learned_selector(ruled, learned)
    if learned.act == "one-off":
        return replace(reading, signal="one-off", confidence=sure)
    if learned.act == "forget":
        terms = _forget_terms(text, text, None)
        return replace(reading, signal="forget", confidence=sure, target_terms=terms)
    if learned.act == "correction" and edits:
        # Without a marker, as an unmarked edit: acted on only when a memory takes it.
        return replace(
            reading,
            signal="correct",
            confidence=min(sure, UNMARKED_EDIT),
            statement=text,
            target_terms=_target_terms(text),
        )
    return reading


def _learned_selector(reading: StatementReading, learned: LearnedReading) -> StatementReading:
    """What the cue grammar missed: operations and phases, and a habit's global scope."""
    selector = reading.selector
    if not selector.operations and learned.operations:
        selector = replace(selector, operations=learned.operations)
    if not selector.phases and learned.phases:
        selector = replace(selector, phases=learned.phases)
    source = reading.scope_source
    if source == "unstated" and learned.scope == "global" and learned.scope_probability >= 0.8:
        source = "personal"
    return replace(reading, selector=selector, scope_source=source)


def stored_scope(reading: StatementReading, *, in_repository: bool) -> Scope:
    """Where a rule goes: the scope its words say; else, said inside a repository, that
    repository, unless it is the speaker's own habit or taste (global)."""
    if reading.scope_source == "unstated" and in_repository:
        return "project"
    return reading.selector.scope


# A neutral reading this unsure (some evidence of a rule, not enough) is asked about.
UNSURE_BELOW = 0.8
# "for every project", "全局", "所有项目": a rule meant for everywhere.
_GLOBAL_WORDS = lazy_compile(
    r"(?<![A-Za-z])(?:every|all|any|each)\s+(?:of my\s+)?"
    r"(?:repos?|repositories|projects?|codebases?)"
    r"|(?<![A-Za-z])(?:globally|everywhere|across (?:all )?(?:my )?(?:repos|projects))(?![A-Za-z])"
    r"|全局(?=规则|生效|适用|通用|都|地|[，。,.；;！!]|$)|所有(?:的)?(?:项目|仓库|代码库|repo)|每个(?:项目|仓库)|任何(?:项目|仓库)|不管(?:哪个|什么)项目",
    re.IGNORECASE,
)
# The speaker's own ways, and how the agent should talk to them: global wherever said.
_PERSONAL = lazy_compile(
    r"(?<![A-Za-z])(?:i|i'd|i'm|my|me)(?:\s+(?:usually|generally|normally|personally|always|never"
    r"|tend to|like to|prefer|hate))"
    r"|(?<![A-Za-z])(?:reply|respond|answer|talk|speak|explain|call me|address me)(?![A-Za-z])"
    r"|(?<![A-Za-z])i'?m (?:on the \w+ team|an? (?:\w+ )?(?:engineer|developer|dev))|我是"
    r"|我(?!们)(?:个人)?(?:一般|通常|平时|习惯|喜欢|偏好|倾向|讨厌|向来|一向|总是)"
    r"|(?:回复|回答|解释|跟我说|和我说|叫我|称呼我|用中文|用英文)(?:回复|回答|说|交流)?",
    re.IGNORECASE,
)


# --- memory kind -----------------------------------------------------------------------------

_PREFERENCE = lazy_compile(
    r"(?<![A-Za-z])i(?:'d| would)?(?: really| much| generally| strongly| personally| just)?"
    r" (?:prefer|rather|like(?! (?:you|it if you) to)|love|hate|dislike|can't stand"
    r"|cannot stand|enjoy)(?![A-Za-z])"
    r"|(?<![A-Za-z])my (?:personal )?(?:preference|taste|favou?rite)(?![A-Za-z])"
    r"|(?<![A-Za-z])i'm (?:not )?(?:a )?(?:big )?fan of"
    # 我在这个项目里习惯…: a place or a time may come before the verb
    r"|我(?!们)(?:个人)?(?:在[^，。,.；;！!？?]{1,12}?(?:里|中|上|下|时候|时))?"
    r"(?:更|比较|还是|一般|很|最|真的|特别|非常)?"
    r"(?:喜欢|偏好|倾向|习惯|讨厌|不喜欢|受不了|爱用)|我的(?:偏好|习惯)"
    r"|我(?!们)(?:个人)?(?:一般|通常|平时|向来|一向)"
    r"|我(?!们)(?:个人)?(?:比较|更|还是)?\s*(?:prefer|like|love|hate)(?![A-Za-z])"
    r"|(?<![A-Za-z])i (?:usually|generally|normally|tend to|always like to)(?![A-Za-z])",
    re.IGNORECASE,
)
# Phrases that only mark the statement as worth remembering; they are not instructions.
_REMEMBER_MARKERS = lazy_compile(
    r"(?<![A-Za-z])(?:remember(?: that)?|keep (?:that |this |it )?in mind(?: that)?|note that"
    r"|fyi|for future reference|for the record|just so you know)(?![A-Za-z])|记住|记得|注意|备注",
    re.IGNORECASE,
)
_REMEMBER_TO = lazy_compile(
    r"(?<![A-Za-z])(?:remember|don't forget|do not forget|make sure) to(?![A-Za-z])"
    r"|(?:记得|别忘了|不要忘了|记住要)(?!是|我|你|他|她|这个|那个|[，,：:\s]*$)",
    re.IGNORECASE,
)
_EN_INSTRUCTION = _en(
    r"(?:must|should|shall|need to|needs to|has to|have to|ought to|always|never|ever|don't|dont"
    r"|do not|please|make sure|let's|no more|avoid|prefer|stop|want you to|like you to|we|our team"
    r"|the team|convention|policy|standard|practice|rule|by default)"
)
_EN_IMPERATIVES = _words(
    """use run keep write add put make stop avoid prefer ask check pin follow reply sign squash
    push commit deploy merge rebase install build test tag update bump split name quarantine
    stage leave store log mention show explain start try lint format indent document delete
    remove wrap return call set switch move place create target include exclude import export
    send type-hint review verify plan implement refactor fix ignore skip treat let give tell
    mark lock pass limit reuse respond answer translate print handle catch raise throw validate
    sort group label link close open read list be do go get save prefix require default"""
)
_EN_FILLERS = lazy_compile(
    r"(?:(?:so|and|then|also|just|please|now|ok|okay|actually|but|yes|always|never|from now on"
    r"|going forward|in the future|henceforth)(?![A-Za-z])[\s,]*)*",
    re.IGNORECASE,
)
_EN_SUBORDINATE = _en(
    r"(?:when|whenever|if|before|after|while|once|unless|because|since|until|every time|each time)"
)
_EN_COPULA = _en(
    r"(?:is|are|am|was|were|i'm|(?:we|you|they)'re|(?:it|that|what|there|he|she)'s|lives?"
    r"|runs? on|sits? in|called|named|located|uses|(?<=tests )use"
    r"|hosted|stored)"
)
_ZH_INSTRUCTION = lazy_compile(
    r"(?<![主重])要|必须|(?<![跑写做改来去过变显觉记懂长])得(?!到|很|太|好|挺|非常|比较)|不要|别|不许|不准|禁止|严禁|一律|统一|永远|总是|始终|请|应该|应当|务必"
    r"|千万|一定|默认(?!分支|值|端口|配置|参数|地址|的)|每次|尽量|不能|只能|团队|规矩|规范|约定|原则"
    r"|我们(?:组|团队)?(?:都|一般|习惯|一直|从来|从不)?用|是用|都用|改用|改成|换成|先(?![生前])"
    r"|(?:^|[，,：:；;\s])(?:用(?![户法途处量意])|使用(?!者)|把|先|不用)"
)
_ZH_COPULA = lazy_compile(
    r"(?<![不就还都])是(?!用)|叫做?|跑在|部署在|位于|托管在"
    # "设计组件都在 packages/ui": where things are; "这个仓库的单测用 vitest": what a part uses.
    r"|(?<![放存写])(?:都|全都|全部|就)?在\s*`?[\w.@-]+/"
    r"|(?:都|全都|全部)在\s*`?[\w.@-]+`?\s*(?:目录|文件夹|下面|里)"
    r"|的[\u4e00-\u9fffA-Za-z ]{1,10}?(?:用的是|用)\s*[A-Za-z]"
)


def _memory_kind(text: str) -> MemoryKind:
    if _PREFERENCE.search(text):
        return "preference"
    if _REMEMBER_TO.search(text):
        return "policy"  # "remember to update the changelog", "记得更新 CHANGELOG"
    plain = _REMEMBER_MARKERS.sub(" ", text)
    if _instructs(plain):
        return "policy"
    if plain != text:
        return "fact"  # "remember that …" with no instruction: something to know
    declarative = any(
        (_EN_COPULA.search(plain, s, e) and not _EN_SUBORDINATE.match(plain[s:e].strip()))
        or _ZH_COPULA.search(plain, s, e)
        for s, e in clause_spans(plain)
    )
    return "fact" if declarative else "policy"


def _instructs(text: str) -> bool:
    if _EN_INSTRUCTION.search(text) or _ZH_INSTRUCTION.search(text):
        return True
    for start, end in clause_spans(text):
        clause = text[start:end].strip()
        fillers = _EN_FILLERS.match(clause)
        rest = clause[fillers.end() :] if fillers else clause
        words = re.findall(r"[A-Za-z][\w'-]*", rest)
        if words and words[0].lower() in _EN_IMPERATIVES:
            return True
    return False


# --- targets ---------------------------------------------------------------------------------

_TERM = lazy_compile(
    r"[A-Za-z0-9](?:[A-Za-z0-9_.+#/'’-]*[A-Za-z0-9+#])?|[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+"
)
_EN_GRAMMAR = _words(
    """a an the this that these those it its it's i i'm i'd i've me my mine we we're we've our ours
    us you you're your yours they them their he she his her is are am was were be been being do
    does did done doing don't dont doesn't have has had will would shall should can could may
    might must need needs to of in on at for from with without by about as into onto over under
    than then so and or but not no nor if when whenever while because since until also too very
    really just only even still again anymore any more some all every each always never ever
    forever now going forward future default per use uses using used prefer prefers preferred like
    likes liked love want wants wanted say said says tell told know knew known learned learnt
    remember remembering forget mention mentioned rule rules memory memories note notes
    preference preferences habit habits thing things stuff setting settings policy convention what
    which who where why how there here please thanks ok okay yes oh hey actually meant mean
    correction correct misspoke wrong got scratch second thought change update amend instead
    rather make let me myself sorry wait oops earlier previous previously everything anything
    something switch switched replace swap ignore disregard never-mind longer applies apply
    obsolete"""
)
# Chinese grammar words, removed wherever they occur (longest first so "说错了" goes before "说").
_ZH_GRAMMAR_WORDS = """
    这件事 那件事 的话 的事 事情 内容 说错了 错了 意思是 意思 更正 纠正 不对 改一下 改成 改为 其实
    哦不 不不 等等 等一下 不是的 刚才 刚刚 之前 以前 以后 今后 已经 我们 你们 他们 咱们 说过 说的
    提过 关于 那条 这条 那个 这个 那些 这些 规则 记忆 偏好 喜欢 习惯 倾向 讨厌 设定 一下 一律 统一
    永远 总是 始终 一直 不要 不用 不再 别再 不必 要用 都用 都要 就用 是用 还是 应该 必须 使用 不是
    请 可以 记住 记得 记着 忘掉 忘记 忘了 删掉 删除 删了 去掉 清除 清掉 移除 放在 放到 下面 里面
    目录下 换成 换为 改为 替换成 替换为 替换 不算了 不算数 作废 取消 撤销 别管 不用管 过时了 失效
"""
_ZH_GRAMMAR = lazy_compile("|".join(sorted(_ZH_GRAMMAR_WORDS.split(), key=len, reverse=True)))
# Single characters that are grammar only at the edge of a run ("用" in "用户名" is not).
_ZH_EDGE = "的了吧呢吗啊呀把被将是在要用得都也就还再别说过着我你"


def _target_terms(text: str) -> tuple[str, ...]:
    """The content words of ``text``: no grammar, memory nouns or scope words."""
    chars = list(unquote(text))
    for start, end in scope_spans(text):
        chars[start:end] = " " * (end - start)
    cleaned = _ZH_GRAMMAR.sub(" ", "".join(chars))
    terms: list[str] = []
    for token in _TERM.findall(cleaned):
        term = token.strip(_ZH_EDGE) if _CJK.match(token) else token.lower()
        if term and term not in _EN_GRAMMAR and term not in terms:
            terms.append(term)
    return tuple(terms)


def _forget_terms(statement: str, text: str, cue: str | None) -> tuple[str, ...]:
    # "forget that we use Poetry; we switched": what follows the first stop explains, it does
    # not name the memory.
    first = re.split(r"[;；]|[.!?。！？](?:\s|$)", statement, maxsplit=1)[0]
    terms = _target_terms(first)
    if not terms and cue:
        # Chinese often names the memory first: "用英文写提交信息那条，忘了吧".
        before = text[: text.find(cue)] if cue in text else ""
        terms = _target_terms(before)
    return terms


# --- the body to store ---------------------------------------------------------------------

# A leading phrase that only asks to remember ("Remember that …", "Please note: …",
# "记住：…", "请记得…"): the request, not the thing to remember.
_LEADING_MARKER = lazy_compile(
    r"^\s*(?:(?:please|pls|also|and|ok|okay|so)[\s,]+)*"
    r"(?:remember(?: that)?(?! to )|keep (?:that |this |it )?in mind(?: that)?"
    r"|note that|note(?=\s*:)|fyi|for future reference|for the record|just so you know"
    r"|don't forget that)(?![A-Za-z])[\s,:：;-]*"
    r"|^\s*(?:请|也|另外)?(?:帮我)?(?:记住|记得|记一下|备注)(?:一下)?(?:[:：，,、\s]+|(?=\S))",
    re.IGNORECASE,
)


def stored_body(text: str) -> str:
    """The statement as it is stored: without a leading "remember that" / "记住" (what is
    left starts with a capital when it is a Latin letter); the text itself when nothing
    would be left."""
    stripped = text.strip()
    found = _LEADING_MARKER.match(stripped)
    rest = stripped[found.end() :].strip() if found else stripped
    if not rest or len(rest) < 3:
        return stripped
    return rest[0].upper() + rest[1:] if rest[0].isascii() and rest[0].isalpha() else rest

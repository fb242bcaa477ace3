"""A correction stated in words, applied to the rule it corrects, losing nothing.

"Actually, use npm" corrects "Always use pnpm to install dependencies in this repository;
never npm or yarn." into "Always use npm to install dependencies in this repository; never
yarn.": the old term is replaced in its place, the clause that now contradicts the new term
gives it up, and everything the user did not change stays. :func:`read_edit` reads what
the statement changes, in the forms people use:

* an old and a new term: "X 改成 Y", "把 X 换成 Y", "用 Y 替换 X", "应该用 Y，不是 X",
  "不用 X，用 Y", "use Y instead of X", "Y, not X", "Y rather than X", "switch from X to Y",
  "replace X with Y", "change X to Y", "X -> Y";
* a new term alone: "use npm", "应该用 pnpm 9", "make it 4 spaces", "Node 20".

:func:`revise` places the edit in one stored text and says how sure the placing is
(:class:`Revision`): ``named`` when the statement names a term the text contains (the old
term, or the new term's head: "pnpm 9" revises the "pnpm" of the text), ``family`` when the
new term only takes the place of the one term of its kind in the text ("npm" for "pnpm":
both package managers, :data:`FAMILIES`), ``whole`` when nothing can be placed but the
statement is a rule by itself. Anything else is ``None``: the correction cannot be placed and
the caller must not guess.

Nothing here reads storage.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from cairn.patterns import lazy_compile

__all__ = ["FAMILIES", "Edit", "Revision", "family_of", "read_edit", "revise"]

Placing = Literal["named", "family", "whole"]

# Tools and values that take one another's place in a rule: a correction naming one of them
# replaces the other in the rule's text.
FAMILIES: tuple[frozenset[str], ...] = tuple(
    frozenset(line.split())
    for line in """
    npm pnpm yarn bun cnpm
    pip pipenv poetry uv conda pdm hatch rye
    jest vitest mocha jasmine ava playwright cypress karma
    pytest unittest nose tox nox
    prettier biome dprint standard
    eslint oxlint tslint biome
    black ruff yapf autopep8 isort blue
    flake8 pylint ruff pyflakes
    mypy pyright pyre pytype
    zap slog logrus zerolog log15 glog
    goose atlas flyway liquibase alembic migrate sqitch prisma knex
    webpack vite rollup esbuild parcel turbopack rspack
    react vue svelte angular solid preact
    axios fetch got superagent ky
    moment dayjs date-fns luxon
    lodash ramda underscore
    golangci-lint staticcheck revive
    docker podman
    kubectl helm kustomize
    github gitlab gitea bitbucket
    mysql postgres postgresql sqlite mariadb mongodb
    redis memcached valkey
    tabs spaces tab space 空格 制表符 tab键
    merge squash rebase
    staging production prod dev
    main master develop trunk
    英文 中文 英语 汉语 日文 english chinese japanese
    java kotlin scala go golang rust python typescript javascript
    node deno
    gofmt goimports gofumpt
    junit testng
    maven gradle
    make just task
    """.strip().splitlines()
)


def family_of(term: str) -> frozenset[str]:
    """The terms that take ``term``'s place ("npm": every package manager), or nothing."""
    key = term.casefold()
    found: set[str] = set()
    for family in FAMILIES:
        if key in family:
            found |= family
    return frozenset(found)


@dataclass(frozen=True, slots=True)
class Edit:
    new: str  # what the user wants now ("pnpm 9", "atlas", "四个空格")
    old: str | None  # what it replaces, when named ("npm", "goose", "两个空格缩进")


@dataclass(frozen=True, slots=True)
class Revision:
    text: str
    placing: Placing


_LEAD = (
    r"^\s*(?:(?:actually|no|nope|wait|sorry|oops|ok(?:ay)?|hmm|i meant|correction|change of plan"
    r"|scratch that|on second thought)(?![A-Za-z])\s*+[,，:：!—-]*\s*+)*"
    r"(?:不对|不是的|其实|等等|等一下|哦不|更正(?:一下)?|纠正(?:一下)?|改一下|我说错了|说错了|我的意思是"
    r"|我是说|[，,：:\s])*"
)
_ZH_BEFORE = r"(?:把|将)?(?:我|你)?(?:之前|刚才|刚刚|原来|以前)?(?:说的|提的|那条|的)?\s*"
_EDIT_FORMS: tuple[re.Pattern[str], ...] = tuple(
    lazy_compile(form, re.IGNORECASE)
    for form in (
        rf"^{_ZH_BEFORE}(?P<old>.+?)\s*(?:改成|换成|改为|换为|变成|改用|换用)\s*(?P<new>.+)$",
        r"^(?:用|拿)\s*(?P<new>.+?)\s*(?:替换|代替|替代|取代|换掉)(?:掉)?\s*(?P<old>.+)$",
        r"^(?:应该|应当|要|还是)?(?:用|使用|是)?\s*(?P<new>[^，,；;]+?)(?<!\s)\s*+[，,；;]?\s*+(?:而)?"
        r"(?:不是|不用|别用|不要用|不再用)\s*(?P<old>.+)$",
        r"^(?:不用|别用|不要用|不是|不再用)\s*(?P<old>[^，,；;]+?)\s*[，,；;]\s*"
        r"(?:应该|应当|要|而是|改|就)?(?:用|使用|是)\s*(?P<new>.+)$",
        r"^(?:switch(?:ed)?|move(?:d)?|migrate(?:d)?|go|change(?:d)?) from (?P<old>.+?) to"
        r" (?P<new>.+)$",
        r"^(?:replace|swap) (?P<old>.+?) (?:with|for|by) (?P<new>.+)$",
        r"^(?:change|switch|update|set) (?P<old>.+?) to (?P<new>.+)$",
        r"^instead of (?P<old>.+?)(?<!\s)\s*+[,，]?\s*+(?:use|go with|pick|we use) (?P<new>.+)$",
        r"^(?P<new>.+?)(?<!\s)\s*+[,，]?\s*+(?:instead of|rather than|in place of|and not|not)"
        r" (?P<old>.+)$",
        r"^(?P<old>[^\s]+(?:\s[^\s]+)?)\s*(?:->|→|=>)\s*(?P<new>.+)$",
    )
)
_NEW_ONLY = lazy_compile(
    r"^(?:(?:we|you|i)\s+)?(?:should\s+)?(?:use|go with|stick (?:to|with)|switch to"
    r"|make (?:it|that)|(?:set|change) (?:it|that) to|it'?s|it is"
    r"|改成|换成|改为|换为|应该用|应当用|应该是|要用|改用|换用|还是用|就用|是用"
    r"|用|使用|是)?\s*(?P<new>.+)$",
    re.IGNORECASE,
)
_EDGE = " \t.,;:!?，。；：！？\"'`()（）「」“”"
_TRAILER = lazy_compile(r"(?:\s*(?:吧|了|啊|呀|哈|哦|please|thanks|thx|ok)\s*)+$", re.IGNORECASE)
_TERM_LEAD = lazy_compile(
    r"^(?:(?:use|using|the|a|an)(?![A-Za-z0-9_-])|用|使用|是|那个|这个)\s*", re.IGNORECASE
)
# What follows the new term says what it is for, which the rule already says ("use pnpm 10
# for installs"): the term ends there.
_PURPOSE = lazy_compile(
    r"\s+(?:for|to|in|when|on|with|because|since|as|so|everywhere|here|instead)(?![A-Za-z]).*$",
    re.IGNORECASE,
)
_VALUE = lazy_compile(r"v?\d+(?:\.\d+)*[a-z]*", re.IGNORECASE)
_NEGATION = lazy_compile(
    r"(?<![A-Za-z])(?:never|not|no|don't|dont|do not|avoid|without)(?![A-Za-z])"
    r"|别|不要|不用|不许|不准|禁止|严禁|不能|不再|从不|千万别",
    re.IGNORECASE,
)
_CLAUSE = lazy_compile(r"[;；,，。.!！?？]\s*|\s[—–-]\s")
_LIST_JOIN = r"(?:\s*(?:,|，|、|/|\bor\b|\band\b|或者|或|和|及)\s*)"


def _clean(term: str) -> str:
    term = _TRAILER.sub("", term.strip(_EDGE)).strip(_EDGE)
    while True:
        shorter = _TERM_LEAD.sub("", term, count=1).strip(_EDGE)
        if shorter == term:
            return term
        term = shorter


def _term(new: str) -> str:
    cleaned = _clean(new)
    cut = _PURPOSE.sub("", cleaned)
    return cut if _head(cut) or not _head(cleaned) else cleaned


def read_edit(statement: str) -> Edit | None:
    """What ``statement`` changes: a new term, and the old one when it is named."""
    text = statement.strip()
    lead = re.match(_LEAD, text, re.IGNORECASE)
    body = text[lead.end() :] if lead else text
    body = body.strip(_EDGE)
    for form in _EDIT_FORMS:
        found = form.match(body)
        if found is not None:
            old, new = _clean(found.group("old")), _term(found.group("new"))
            if old and new and old.casefold() != new.casefold():
                return Edit(new, old)
    found = _NEW_ONLY.match(body)
    new = _term(found.group("new")) if found else ""
    return Edit(new, None) if new else None


def revise(old: str, statement: str) -> Revision | None:
    """``old`` with the correction ``statement`` placed in it (see the module docstring)."""
    edit = read_edit(statement)
    if edit is not None:
        placed = _place(old, edit, statement)
        if placed is not None and placed.text.strip().casefold() != old.strip().casefold():
            return placed
    if _whole_rule(statement, edit):
        return Revision(re.sub(_LEAD, "", statement.strip(), flags=re.IGNORECASE).strip(), "whole")
    return None


def _place(old: str, edit: Edit, said: str) -> Revision | None:
    new_head = _head(edit.new)
    if edit.old is not None:
        # "数据库迁移 goose 改成 atlas": the term next to the verb is the one replaced.
        for named in dict.fromkeys((edit.old, edit.old.split()[-1])):
            spans = _positive(old, _occurrences(old, named))
            if len(spans) == 1:
                return Revision(_settle(old, spans[0], edit.new), "named")
        if not _occurrences(old, edit.old):
            common = _common_run(old, edit.old)
            if common is not None:
                start, end = common
                new = _shared_tail_dropped(edit.new, edit.old, old[start:end])
                return Revision(_settle(old, (start, end), new), "named")
    if not new_head and edit.old is None:
        values = [m.span() for m in re.finditer(rf"(?<![\w.]){_VALUE.pattern}(?![\w])", old)]
        if len(values) == 1:  # "3.12" for "Use Python 3.11": the one value there is
            return Revision(old[: values[0][0]] + edit.new + old[values[0][1] :], "named")
    if new_head.casefold() in _NOT_TERMS:
        # "write them in Chinese": the verb is not what changes; a kin term in it may be.
        return _place_kin(old, said)
    if new_head:
        spans = _positive(old, _occurrences(old, new_head))
        if len(spans) == 1:
            return Revision(_settle(old, spans[0], edit.new), "named")
        if len(spans) > 1:
            return None
        family = family_of(new_head) - {new_head.casefold()}
        hits = [
            span
            for member in sorted(family, key=len, reverse=True)
            for span in _positive(old, _occurrences(old, member))
        ]
        hits = [h for h in hits if not any(o != h and o[0] <= h[0] and h[1] <= o[1] for o in hits)]
        if len(set(hits)) == 1:
            # "never npm": a rule that names the new term is about it too.
            placing: Placing = "named" if _occurrences(old, new_head) else "family"
            return Revision(_settle(old, hits[0], edit.new), placing)
    return None


# Words that head a new wording without being the term that changes.
_NOT_TERMS = frozenset(
    str.split("""write run use make deploy push commit merge put keep add do go set call name
    always never please just also then it them this that""")
)


def _place_kin(old: str, said: str) -> Revision | None:
    found = []
    for token in re.findall(r"[\w.+#-]+", said):
        for member in family_of(token) - {token.casefold()}:
            found += [(span, token) for span in _positive(old, _occurrences(old, member))]
    if len({span for span, _ in found}) != 1:
        return None
    span, token = found[0]
    return Revision(_settle(old, span, token), "family")


def _head(term: str) -> str:
    """The name in a term ("pnpm" in "pnpm 9", "Node" in "Node 20"); a bare value has none."""
    for token in term.split():
        if not _VALUE.fullmatch(token.strip(_EDGE)):
            return token.strip(_EDGE)
    return ""


def _occurrences(text: str, term: str) -> list[tuple[int, int]]:
    term = term.strip(_EDGE)
    if not term:
        return []
    left = r"(?<![A-Za-z0-9_-])" if re.match(r"[A-Za-z0-9_]", term) else ""
    right = r"(?![A-Za-z0-9_-])" if re.search(r"[A-Za-z0-9_]$", term) else ""
    pattern = left + re.escape(term).replace(r"\ ", r"\s*") + right
    return [m.span() for m in re.finditer(pattern, text, re.IGNORECASE)]


def _clause_of(text: str, position: int) -> tuple[int, int]:
    starts = [m.end() for m in _CLAUSE.finditer(text, 0, position)]
    end = _CLAUSE.search(text, position)
    return (starts[-1] if starts else 0), (end.start() if end else len(text))


def _negated(text: str, span: tuple[int, int]) -> bool:
    start, _ = _clause_of(text, span[0])
    return bool(_NEGATION.search(text, start, span[0]))


def _positive(text: str, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    return [s for s in spans if not _negated(text, s)]


def _settle(old: str, span: tuple[int, int], new: str) -> str:
    """Replace ``span`` (and the version after it, when the new term brings its own or none
    is wanted) by ``new``, then take the new term out of clauses that forbid it."""
    start, end = span
    head = _head(new)
    if head and old[start:end].casefold() == head.casefold():
        new = new.replace(head, old[start:end], 1)  # "python 3.12" keeps "Python"
    after = re.match(r"\s*(?:@\s*)?(" + _VALUE.pattern + r")(?!\w)(?!\.\d)", old[end:], re.I)
    before = re.search(r"(?<![\w.])(" + _VALUE.pattern + r")\s*$", old[:start], re.IGNORECASE)
    if before is not None and _VALUE.match(new.split()[0] if new.split() else ""):
        start = before.start(1)  # "2 spaces" -> "4 spaces": the value goes with its unit
    if after is not None and _head(new):
        end += after.end()  # "pnpm 10" -> "npm": the version was pnpm's
    elif after is not None and not _head(new):
        start, end = end + after.start(1), end + after.end()  # "Node 18" -> "20"
    if head and re.search(r"\s-", new):
        flags = re.match(r"(?:\s+-[\w-]+)+", old[end:])
        if flags is not None:
            end += flags.end()  # "pytest -q" for "pytest -x": the flags go with the tool
    unit = re.match(r"\s*([^\W\d_]+)", old[end:])
    if unit is not None and new.endswith(" " + unit.group(1)):
        new = new[: -len(unit.group(1)) - 1]  # "4 spaces" for the "2" of "2 spaces"
    revised = old[:start] + new + old[end:]
    return _drop_forbidden(revised, (start, start + len(new)), _head(new) or new)


def _drop_forbidden(text: str, kept: tuple[int, int], term: str) -> str:
    for span in reversed(_occurrences(text, term)):
        if span[0] < kept[1] and kept[0] < span[1]:
            continue
        if not _negated(text, span):
            continue
        text = _remove_from_list(text, span)
    return text


def _remove_from_list(text: str, span: tuple[int, int]) -> str:
    start, end = span
    clause_start, clause_end = _clause_of(text, start)
    before = re.search(_LIST_JOIN + r"$", text[clause_start:start], re.IGNORECASE)
    after = re.match(_LIST_JOIN, text[end:clause_end], re.IGNORECASE)
    if after is not None:
        return text[:start] + text[end + after.end() :]
    if before is not None:
        return text[: clause_start + before.start()] + text[end:]
    # The clause forbade only this term: it goes, with the punctuation that opened it.
    lead = clause_start
    while lead > 0 and text[lead - 1] in " ;；,，—–-":
        lead -= 1
    tail = text[clause_end:]
    return (text[:lead] + tail).rstrip() if lead > 0 else tail.lstrip(" ;；,，")


_CJK_RUN = lazy_compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]{2,}")


def _common_run(old: str, phrase: str) -> tuple[int, int] | None:
    """The longest stretch of Chinese the old text shares with ``phrase`` (the user names
    "两个空格缩进" for a rule saying "缩进用两个空格"), when it is most of the phrase."""
    best: tuple[int, int] | None = None
    for run in _CJK_RUN.findall(phrase):
        for size in range(len(run), 1, -1):
            if best is not None and size <= best[1] - best[0]:
                break
            for i in range(len(run) - size + 1):
                piece = run[i : i + size]
                spans = _positive(old, _occurrences(old, piece))
                if len(spans) == 1:
                    best = spans[0]
                    break
    if best is None or (best[1] - best[0]) * 2 < len(re.sub(r"\s", "", phrase)):
        return None
    return best


def _shared_tail_dropped(new: str, old_phrase: str, matched: str) -> str:
    """ "四个空格缩进" for the "两个空格" of "两个空格缩进": the "缩进" is not part of the value."""
    rest = old_phrase[old_phrase.find(matched) + len(matched) :] if matched in old_phrase else ""
    if rest and new.endswith(rest) and len(new) > len(rest):
        return new[: -len(rest)]
    return new


_INSTRUCTION = lazy_compile(
    r"(?<![A-Za-z])(?:always|never|must|should|use|run|write|keep|put|don't|do not|avoid|prefer"
    r"|before|after|when)(?![A-Za-z])|一律|统一|必须|都用|都要|不要|别|每次|之前|以后|用",
    re.IGNORECASE,
)


_BACK_REFERENCE = lazy_compile(
    r"(?<![A-Za-z])(?:them|it|those|that one|these)(?![A-Za-z])|它|它们|那个|这个", re.IGNORECASE
)


def _whole_rule(statement: str, edit: Edit | None) -> bool:
    """A statement that is a rule by itself ("use the release script for deploys"), not
    only a new value ("use npm")."""
    body = re.sub(_LEAD, "", statement.strip(), flags=re.IGNORECASE)
    words = re.findall(r"[A-Za-z][\w'-]*", body)
    cjk = len(re.findall(r"[\u3400-\u9fff]", body))
    if edit is not None and edit.old is not None:
        return False  # an edit that names what it replaces is placed or not at all
    if _BACK_REFERENCE.search(body):
        return False  # "write them in Chinese": whole, it would lose what "them" is
    return bool(_INSTRUCTION.search(body)) and (len(words) + cjk / 2 >= 4)

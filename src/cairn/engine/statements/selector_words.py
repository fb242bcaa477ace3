"""Selectors from a statement's own words: scope, paths, operations, phases, task types.

:func:`read_selector` reads what a stated rule says about where it applies:

* **Scope** is ``project`` when the words point at the current repository: "this repo /
  repository / project / codebase / monorepo / app / service / module / file", "our repo",
  "here", "in here", "这个仓库/项目/代码库/工程/文件", "本项目", "本仓库", "该项目", "当前项目",
  "这里", "这儿", "这边", "此处"; otherwise ``global``. "here" inside other phrases ("here's the
  thing", "here is", "hereby", "from here on") does not count, and "the repo" is any
  repository, not this one.
* **Paths** are the places where the rule applies: a path or folder named in the statement
  (``src/api`` and "the src/api folder" give ``src/api/**``, ``tests/`` gives ``tests/**``, a
  file such as ``Makefile`` or ``config/flags.yaml`` stays itself, a glob stays a glob) and file
  kinds (``*.py files``, ".py files", "Python files/code", "in TypeScript" through
  :data:`LANGUAGE_GLOBS`). A path the rule only puts things into, updates or uses ("put new
  scripts under tools/", "update CHANGELOG.md when you release", "use docker/Dockerfile") is not
  where it applies: a selector on it would hide the rule everywhere else. Said with a negation
  ("never put secrets in .github/workflows") it is one again. Branch names ("origin/main",
  "feature/x branch"), hosts, dates and "and/or" are not paths, and no pattern matches every
  path.
* **Operations, phases, task types** come from one vocabulary (:data:`OPERATIONS`,
  :data:`PHASES`, :data:`TASK_TYPES`) so that the CLI and the context director can offer the
  same words. A word counts when it says *when* the rule applies: after "before / after / when /
  whenever / while / during / every / each / for" ("before you commit", "for every release",
  "during review") or, in Chinese, before "前 / 之前 / 后 / 时 / 的时候 / 阶段" or after "每次 /
  每个 / 凡是" ("都" marks a task type: "修 bug 都要 …"). When no word is in such a position, an
  action the rule itself governs counts ("never push to main", "我们组习惯用 squash 合并"); what
  the rule tells the agent to do ("run the tests before pushing") is its content, not its
  trigger. "review" is a phase, never an operation; "release" is an operation ("before you
  release", "发版") except as "release phase/stage" and "发布阶段". Code in backticks is read
  (`` `git push --force` `` names a push); quoted speech is not.

Pure functions over the text; the selector's ``project_id`` is left to the caller.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass

from cairn.engine.selectors import Scope, Selector
from cairn.engine.statements.selector_vocabulary import (
    FILE_EXTENSIONS,
    LANGUAGE_GLOBS,
    LIBRARIES,
    NOT_A_FOLDER,
    NOT_PATHS,
    OPERATIONS,
    PHASES,
    TASK_TYPES,
    WORD_TABLE,
    Dimension,
)
from cairn.engine.statements.signals import mask_quotes
from cairn.patterns import lazy_compile

__all__ = [
    "LANGUAGE_GLOBS",
    "OPERATIONS",
    "PHASES",
    "TASK_TYPES",
    "clause_spans",
    "read_scope",
    "read_selector",
    "scope_spans",
    "unquote",
]


def read_selector(text: str) -> Selector:
    """The selector a rule's own words state (``project_id`` unset: the caller binds it)."""
    stripped = text.strip()
    operations, phases, task_types = _actions(mask_quotes(stripped.replace("`", " ")))
    return Selector(
        scope=read_scope(stripped),
        path_patterns=_paths(unquote(stripped)),
        operations=operations,
        phases=phases,
        task_types=task_types,
    )


def read_scope(text: str) -> Scope:
    """``project`` when the words (outside quotes) point at the current repository."""
    return "project" if scope_spans(mask_quotes(text)) else "global"


def clause_spans(text: str) -> list[tuple[int, int]]:
    """Non-empty (start, end) spans of the text between clause punctuation."""
    cuts = [0, *(m.end() for m in _CLAUSE_BREAK.finditer(text)), len(text)]
    return [(s, e) for s, e in itertools.pairwise(cuts) if text[s:e].strip()]


# --- clauses ---------------------------------------------------------------------------------

_CLAUSE_BREAK = lazy_compile(r"[,，、:：;；。！？!?\n()（）]|\.(?=\s|$)|\s[—–-]{1,2}\s|[—–]")
_CJK = lazy_compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_QUOTE_CHARS = str.maketrans({c: " " for c in '"“”‘’「」『』`'})


def unquote(text: str) -> str:
    """Drop quote marks but keep what they quote: paths are often written as `src/api`."""
    return text.translate(_QUOTE_CHARS)


def _clause_start(text: str, position: int) -> int:
    starts = [m.end() for m in _CLAUSE_BREAK.finditer(text, 0, position)]
    return starts[-1] if starts else 0


def _clause_end(text: str, position: int) -> int:
    match = _CLAUSE_BREAK.search(text, position)
    return match.start() if match else len(text)


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


def _en(pattern: str) -> re.Pattern[str]:
    return lazy_compile(rf"(?<![A-Za-z0-9_]){pattern}(?![A-Za-z0-9_])", re.IGNORECASE)


# --- scope -----------------------------------------------------------------------------------

_EN_PROJECT = _en(
    r"(?:(?:this|the current)\s+(?:repo|repository|project|codebase|code base|monorepo|workspace"
    r"|app|application|service|package|module|folder|directory|file)"
    r"|our\s+(?:repo|repository|project|codebase|code base|monorepo|app|service)"
    r"|(?:repo|project|codebase)[- ]wide)(?:'s)?"
)
# "here" as a place, not in "here's", "here is", "hereby", "from here on", "click here".
_EN_HERE = lazy_compile(r"(?<![A-Za-z'’])here(?![A-Za-z'’])", re.IGNORECASE)
_EN_HERE_BEFORE = lazy_compile(r"(?:from|click|see|look|over)\s+$", re.IGNORECASE)
_EN_HERE_AFTER = lazy_compile(
    r"\s*(?:is|are|was|were|comes|come|goes|go|you go|we go|and there|on|onwards|forward|out)"
    r"(?![A-Za-z])",
    re.IGNORECASE,
)
_ZH_PROJECT = lazy_compile(
    r"(?:这个|这|本|该|当前|咱们|我们)\s*"
    r"(?:仓库|项目|代码库|工程|repo|库|文件|模块|目录|服务|应用|专案|储存库|存储库)"
    r"(?!管理)|这里|这儿|这边|此处",
    re.IGNORECASE,
)


def scope_spans(text: str) -> list[tuple[int, int]]:
    spans = [m.span() for m in _EN_PROJECT.finditer(text)]
    spans += [m.span() for m in _ZH_PROJECT.finditer(text)]
    for match in _EN_HERE.finditer(text):
        if _EN_HERE_BEFORE.search(text, 0, match.start()) or _EN_HERE_AFTER.match(
            text, match.end()
        ):
            continue
        start = match.start()
        lead = re.search(r"(?:in|over|around)\s+$", text[:start], re.IGNORECASE)
        spans.append((lead.start() if lead else start, match.end()))
    return spans


# --- paths -----------------------------------------------------------------------------------

_PATH_TOKEN = lazy_compile(r"(?<![\w./~:@\\-])(?:\./)?[\w.*?+-]+(?:/[\w.*?+{}-]*)+")
_FILE_TOKEN = lazy_compile(
    r"(?<![\w./~:@*-])(\*?[\w-]*(?:\.[\w-]+)*\.[A-Za-z][A-Za-z0-9]*)(?!\.?[\w/-])"
)
_KNOWN_FILES = lazy_compile(
    r"(?<![\w./-])(Makefile|Dockerfile|Justfile|Procfile|Gemfile|Rakefile|Jenkinsfile|Vagrantfile"
    r"|Brewfile|CODEOWNERS|node_modules|__pycache__|README|CHANGELOG|LICENSE|CONTRIBUTING)"
    r"(?![\w./-])"
)
_DIRECTORY_NAMES = frozenset({"node_modules", "__pycache__"})
_PREFIX_NAMES = frozenset({"README", "CHANGELOG", "LICENSE", "CONTRIBUTING"})  # README.md, …
_NAMED_FOLDER = lazy_compile(
    r"(?<![\w./-])([\w.-]+)/?\s+(?:folder|directory|dir)(?![A-Za-z])"
    r"|(?:folder|directory)\s+(?:called|named)\s+([\w.-]+)"
    r"|(?<![\w./-])([\w.-]+)/?\s*(?:目录|文件夹)",
    re.IGNORECASE,
)
_HOST = lazy_compile(r"^[\w-]+(?:\.[\w-]+)*\.(?:com|org|net|io|dev|cn|co|app|ai)(?:/|$)")
_BRANCH_AFTER = lazy_compile(r"\s*(?:branch(?:es)?|分支)", re.IGNORECASE)
_BRANCH_BEFORE = lazy_compile(r"(?:branch(?:es)?|分支)(?:\s+\S+){0,2}\s*$", re.IGNORECASE)

_LANGUAGE_NAMES = "|".join(
    re.escape(name) for name in sorted(LANGUAGE_GLOBS, key=len, reverse=True)
)
_LANGUAGE_FILES = lazy_compile(
    rf"(?<![\w#+.])({_LANGUAGE_NAMES})(?![\w#+])\s*(?:source\s+)?(?:files?|code|sources?"
    r"|modules?|scripts?|tests?|components?|文件|代码|脚本|模块)",
    re.IGNORECASE,
)
_LANGUAGE_IN = lazy_compile(
    rf"(?<![A-Za-z])in\s+({_LANGUAGE_NAMES})(?![\w#+])|(?<![\w#+.])({_LANGUAGE_NAMES})\s*(?:里|中)",
    re.IGNORECASE,
)
_LANGUAGE_CHOICE = lazy_compile(
    r"\s*+[,，]?\s*+(?:not|instead|rather|over|而不是|不是)(?![A-Za-z])", re.IGNORECASE
)
_WRITE_IN = _en(r"(?:write|written|rewrite|port|implement)")
_CASED_LANGUAGES = {"go": "Go", "c": "C"}  # "go" and "c" are words too

# A path the rule puts things into, updates or uses is not where the rule applies ("put
# scripts under tools/", "update CHANGELOG.md"); a negation makes it a place again ("never put
# secrets in .github/workflows" is a rule for that folder).
_EN_NOT_A_PLACE = _en(
    r"(?:put|puts|place|move|moved|go|goes|live|lives|belong|belongs|keep|kept|store|stored|save"
    r"|create|update|updates|updating|bump|bumps|regenerate|generate|generated|sync)"
)
# "use X" and "with X" take the path as a tool; "use black in src/" still names a place.
_EN_TOOL = lazy_compile(
    r"(?<![A-Za-z])(?:use|uses|using|with|via)\s+(?:(?:the|a|an|our|this|that)\s+)?$",
    re.IGNORECASE,
)
_EN_NEGATION = _en(r"(?:never|don't|dont|do not|not|no|avoid|stop)")
# "run the tests in src/api", "add a regression test under tests/regression/": the path says
# which tests (the action's object), not where the rule applies.
_EN_OBJECT_IN = lazy_compile(
    r"(?<![A-Za-z])(?:run|runs|running|add|adds|write|writes|execute|rerun|re-run)\s+"
    r"(?:(?:the|a|an|all|any|every|our|new)\s+)?(?:[\w-]+\s+)?"
    r"(?:tests?|specs?|test suite|suites?|checks?|benchmarks?|scripts?|fixtures?)\s+"
    r"(?:in|under|from|inside|at)\s+$",
    re.IGNORECASE,
)
_ZH_NOT_A_PLACE = lazy_compile(
    r"放到|放在|放进|放入|存到|存放|移到|挪到|搬到|更新|同步|生成|都在|全在|位于"
)
_ZH_TOOL = lazy_compile(r"(?:使用|用|按照|参考)\s*$")
_ZH_NEGATION = lazy_compile(r"不要|别|禁止|不准|不许|千万|永远不|从不|不能|严禁")


def _paths(text: str) -> tuple[str, ...]:
    found: list[tuple[int, str]] = []
    for match in _PATH_TOKEN.finditer(text):
        pattern = _path_pattern(match.group(), text, match.end())
        if pattern is not None and _is_place(text, match.start()):
            found.append((match.start(), pattern))
    for match in _FILE_TOKEN.finditer(text):
        pattern = _file_pattern(match.group(1), text, match.end())
        if pattern is not None and (pattern.startswith("*") or _is_place(text, match.start())):
            found.append((match.start(), pattern))
    for match in _KNOWN_FILES.finditer(text):
        name = match.group(1)
        if name in _DIRECTORY_NAMES:
            pattern = f"{name}/**"
        else:
            pattern = f"{name}*" if name in _PREFIX_NAMES else name
        if _is_place(text, match.start()):
            found.append((match.start(), pattern))
    for match in _NAMED_FOLDER.finditer(text):
        name = next(group for group in match.groups() if group)
        if name.lower() not in NOT_A_FOLDER and _is_place(text, match.start()):
            found.append((match.start(), f"{name.strip('/')}/**"))
    for match in _LANGUAGE_FILES.finditer(text):
        if re.fullmatch(r"go\s*modules?", match.group(), re.IGNORECASE):
            continue  # Go modules are Go's dependency system, not .go files
        found += [(match.start(), glob) for glob in _language_globs(match.group(1))]
    for match in _LANGUAGE_IN.finditer(text):
        name = match.group(1) or match.group(2)
        clause_start = _clause_start(text, match.start())
        if _LANGUAGE_CHOICE.match(text, match.end()) or _WRITE_IN.search(
            text, clause_start, match.start()
        ):
            continue  # "write it in Python, not Bash" chooses a language, it names no files
        found += [(match.start(), glob) for glob in _language_globs(name)]
    ordered: list[str] = []
    for _, pattern in sorted(found):
        if pattern not in ordered and _is_specific(pattern):
            ordered.append(pattern)
    return tuple(ordered)


def _path_pattern(token: str, text: str, end: int) -> str | None:
    token = token.rstrip(".")
    while token.startswith("./"):
        token = token[2:]
    segments = [s for s in token.split("/") if s]
    if (
        not segments
        or token.lower() in NOT_PATHS
        or all(s.isdigit() for s in segments)
        or token.startswith(("origin/", "upstream/"))
        or _HOST.match(token)
        or _BRANCH_AFTER.match(text, end)
        or _BRANCH_BEFORE.search(text, 0, end - len(token))
        or all(s.isupper() for s in segments)  # YYYY/MM/DD, CI/CD: not paths
    ):
        return None
    if any(char in token for char in "*?["):
        return token
    if token.endswith("/"):
        return f"{token}**"
    last = segments[-1]
    if _is_file_name(last):
        return token
    return f"{token}/**"


def _file_pattern(token: str, text: str, end: int) -> str | None:
    if token.lower() in LIBRARIES:
        return None
    if token.startswith("*"):
        return token
    if token.startswith("."):
        name = token[1:]
        if "." not in name and name.lower() in FILE_EXTENSIONS - {"env", "example"}:
            return f"*.{name}"  # ".py files"
        return token  # a dotfile: .env, .eslintrc
    extension = token.rsplit(".", 1)[1].lower()
    return token if extension in FILE_EXTENSIONS else None


def _is_file_name(segment: str) -> bool:
    if _KNOWN_FILES.fullmatch(segment):
        return True
    stem, dot, extension = segment.rpartition(".")
    return bool(dot and stem and extension.lower() in FILE_EXTENSIONS)


def _language_globs(name: str) -> tuple[str, ...]:
    cased = _CASED_LANGUAGES.get(name.lower())
    if cased is not None and name != cased:
        return ()
    return LANGUAGE_GLOBS[name.lower()]


def _is_place(text: str, position: int) -> bool:
    """False when the clause so far puts things at, updates or uses the path (see above)."""
    start = _clause_start(text, position)
    before = text[start:position]
    if _EN_TOOL.search(before) or _ZH_TOOL.search(before) or _EN_OBJECT_IN.search(before):
        return False
    if _CJK.search(before[-12:]):
        window = before[-12:]
        verbs = list(_ZH_NOT_A_PLACE.finditer(window))
        if not verbs:
            return True
        return bool(_ZH_NEGATION.search(before, 0, len(before) - len(window) + verbs[-1].start()))
    words = before.split()[-6:]
    window = " ".join(words)
    hits = list(_EN_NOT_A_PLACE.finditer(window))
    if not hits:
        return True
    return bool(_EN_NEGATION.search(before, 0, len(before) - len(window) + hits[-1].start()))


def _is_specific(pattern: str) -> bool:
    """A pattern must name something: no bare "*", "**", "**/*", "*.*"."""
    return bool(pattern.strip("*/.?[]!"))


# --- operations, phases, task types ----------------------------------------------------------

_Dimension = Dimension


@dataclass(frozen=True, slots=True)
class _Word:
    dimension: _Dimension
    value: str
    pattern: re.Pattern[str]
    # Counts without a "when" word in front: an action the rule itself governs ("never push").
    governs: bool


_WORDS = tuple(
    _Word(
        dimension,
        value,
        # A vocabulary word that is part of a path ("docs/") belongs to the path.
        lazy_compile(
            rf"(?<![A-Za-z0-9_/-])(?:{english})(?![A-Za-z0-9_/])"
            + (f"|{chinese}" if chinese else ""),
            re.IGNORECASE,
        ),
        governs,
    )
    for dimension, value, governs, english, chinese in WORD_TABLE
)

_EN_WHEN = lazy_compile(
    r"(?:before|after|when|whenever|while|during|once|prior to|every time|each time|any ?time"
    r"|every|each|for|all|any|in)\s+(?:(?:you|we|i|they|someone|anyone)(?:'re| are)?\s+)?"
    r"(?:[\w'’-]+\s+){0,3}$",
    re.IGNORECASE,
)
_EN_WHEN_IN = lazy_compile(r"(?<![A-Za-z])in\s+(?:(?:the|a)\s+)?(?:[\w-]+\s+)?$", re.IGNORECASE)
_ZH_WHEN_BEFORE = lazy_compile(r"(?:每次|每回|每当|每个|每一次|凡是|所有)[^，。；,;]{0,6}$")
_ZH_WHEN_AFTER = lazy_compile(
    r"(?:\s*[A-Za-z0-9_./-]+\s*)?[^，。；,;]{0,4}?(?:之前|以前|之后|以后|的时候|时候|前|后|时|阶段|都)"
)
# A phase named as a phase ("发布阶段", "release phase") is when the rule applies by itself.
_NAMES_A_STAGE = lazy_compile(r"(?:阶段|phase|stage)$", re.IGNORECASE)


def mentioned_actions(text: str) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """(operations, phases, task types) a task's text names anywhere ("install lodash and
    push" names install and push): a task, unlike a rule, states what it is doing."""
    masked = mask_quotes(text.replace("`", " "))
    found = [w for w in _WORDS if w.pattern.search(masked)]
    return (
        _ordered(found, "operation", OPERATIONS),
        _ordered(found, "phase", PHASES),
        _ordered(found, "task_type", TASK_TYPES),
    )


def _actions(masked: str) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """(operations, phases, task types): the ones in "when" position, else governed actions."""
    taken: list[tuple[int, int]] = []
    timed: list[_Word] = []
    governed: list[_Word] = []
    for word in _WORDS:
        for match in word.pattern.finditer(masked):
            start, end = match.span()
            if any(start < e and s < end for s, e in taken):
                continue
            taken.append((start, end))
            if _in_when_position(masked, start, end, word):
                timed.append(word)
            elif word.governs:
                governed.append(word)
    chosen = timed or governed
    return (
        _ordered(chosen, "operation", OPERATIONS),
        _ordered(chosen, "phase", PHASES),
        _ordered(chosen, "task_type", TASK_TYPES),
    )


def _in_when_position(text: str, start: int, end: int, word: _Word) -> bool:
    if word.dimension == "phase" and _NAMES_A_STAGE.search(text, start, end):
        return True
    clause_start = _clause_start(text, start)
    before = text[clause_start:start]
    after = text[end : _clause_end(text, end)]
    marker = _ZH_WHEN_AFTER.match(after)
    if marker is not None and marker.group().endswith("都") and word.dimension != "task_type":
        marker = None  # "测试都要…" is about all tests; "修 bug 都要…" is about bug fixing
    if marker is not None or _ZH_WHEN_BEFORE.search(before):
        return True
    if word.dimension == "phase" and _EN_WHEN_IN.search(before):
        return True  # "in code review", "in the planning phase"
    if word.value == "docs" and _EN_WHEN_IN.search(before):
        return True  # "British spelling in docs"
    match = _EN_WHEN.search(before)
    return match is not None and not match.group().lower().startswith("in")


def _ordered(words: list[_Word], dimension: str, vocabulary: tuple[str, ...]) -> tuple[str, ...]:
    values = {word.value for word in words if word.dimension == dimension}
    return tuple(value for value in vocabulary if value in values)

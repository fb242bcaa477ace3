"""The cue grammar of the signal classifier (:mod:`cairn.engine.statements.signals`):
weighted cue phrases in English and Chinese, each with the context it needs, and the
vocabularies that tell an instruction from a description."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import Literal

from cairn.patterns import lazy_compile

_CueKind = Literal["rule", "one-off"]
# plain: counts wherever it appears.
# adverb_en: "always"-like; needs an instruction position before it and no description after.
# lead_en: an imperative verb ("prefer …"); needs an instruction position before it.
# adverb_zh: "总是"-like; must not be followed by a descriptive predicate ("总是返回").
# habit_zh: "以后"/"每次"; the clause must not be a prediction ("以后可能会改", "每次都会报错").
# weak: a bare time word; counts more when the sentence also gives an instruction.
# fronted: a scope ("for this PR", "这次"); full weight when it fronts the clause.
_Mode = Literal["plain", "adverb_en", "lead_en", "adverb_zh", "habit_zh", "weak", "fronted"]


@dataclass(frozen=True, slots=True)
class _Cue:
    kind: _CueKind
    pattern: re.Pattern[str]
    weight: float
    mode: _Mode = "plain"
    # One of these is in every match: the cue is scanned only in a clause holding one, never
    # in any_cue() (its pattern re-reads the clause from each place in it: minutes at 100k).
    needs: tuple[str, ...] = ()


# A kind must gather at least this much weighted evidence; weak or badly placed cues score
# below it on their own so that "今天天气不错" or "open a PR for this branch" stay neutral.
_THRESHOLD = 0.6
_FLAGS = re.IGNORECASE


def _en(pattern: str) -> re.Pattern[str]:
    # English cues are whole words; lookarounds instead of \b so that identifiers such as
    # always_inline do not match while adjacency to CJK text ("always用") still does.
    return lazy_compile(rf"(?<![A-Za-z0-9_]){pattern}(?![A-Za-z0-9_])", _FLAGS)


def _zh(pattern: str) -> re.Pattern[str]:
    return lazy_compile(pattern)


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# "for this <anything>" scopes an instruction to the current item, except for the containers
# that rules live in ("in this repo we …").
_NOT_A_SCOPE = r"(?!(?:repo|repository|project|codebase|monorepo|team|org|company|machine)\b)"

_CUES: tuple[_Cue, ...] = (
    # --- long-term rules -------------------------------------------------------------------
    _Cue(
        "rule",
        _en(
            r"from (?:now|today|here) on(?: out)?|for now on|from this point (?:on|forward)"
            r"|starting (?:today|now)|as of (?:today|now)"
        ),
        1.0,
    ),
    _Cue("rule", _en(r"going forward|moving forward|in (?:the )?future|henceforth"), 1.0),
    _Cue("rule", _en(r"permanently|for good|at all times|in all cases|until further notice"), 1.0),
    _Cue("rule", _en(r"as always|as usual"), 0.8),
    _Cue("rule", _en(r"always|forever"), 1.0, "adverb_en"),
    _Cue("rule", _en(r"never(?!\s+mind)"), 1.0, "adverb_en"),
    _Cue("rule", _en(r"ever"), 0.9, "adverb_en"),
    # A team habit stated in the present tense is a convention ("we don't merge without …").
    _Cue("rule", _en(r"we (?:don't|do not|use|follow|stick to|go with)"), 0.7, "adverb_en"),
    _Cue("rule", _en(r"prefer|(?:stop|quit) \w+ing"), 0.8, "lead_en"),
    _Cue("rule", _en(r"every time|each time|whenever|every single time"), 0.9),
    # A workflow step as the condition of an instruction is a standing rule ("before you
    # push, run the tests", "after merging, delete the branch"); other conditions are not
    # ("before we start", "when you get a chance").
    _Cue(
        "rule",
        _en(
            r"(?:before|after|when|once) (?:you |we )?(?:open(?:ing)? a (?:pr|pull request)"
            r"|commit(?:s|ted|ting)?|ship(?:s|ped|ping)?|tag(?:s|ged|ging)?"
            r"|(?:push|merg|deploy|releas|rebas|publish)(?:e|es|ed|ing)?)"
        ),
        0.8,
        "fronted",
    ),
    _Cue(
        "rule",
        _zh(
            r"(?:提交|推送|合并|部署|发布|上线|发版|打标签)(?:代码)?(?:之前|之后|以前|以后|前|后|的时候|时)"
        ),
        0.8,
        "fronted",
    ),
    _Cue(
        "rule",
        _en(r"(?:for )?(?:every|each|all) (?:prs?|pull requests?|commits?|changes?|releases?)"),
        0.9,
    ),
    # A quantified subject with a modal is a standing requirement ("every migration must …").
    _Cue(
        "rule",
        _en(
            r"(?:every|each|all|any)(?: new)?(?: [\w./-]+){1,3} "
            r"(?:must|should|needs?|has to|shall)"
        ),
        1.0,
    ),
    _Cue(
        "rule",
        _en(
            r"(?:to|in|for|on) (?:all |any |every )?new (?:files|modules|code|endpoints|tests"
            r"|functions|classes|components|packages)|(?:every|each|any|all) new|for everything"
            r"|everywhere"
        ),
        0.7,
    ),
    _Cue("rule", _en(r"no more"), 0.6),
    _Cue("rule", _en(r"by default|rule of thumb|as a habit|make (?:it )?a (?:habit|rule)"), 0.9),
    _Cue(
        "rule",
        _en(
            r"(?:as a|our|the|my|team)(?: general| standing)? "
            r"(?:convention|preference|standard|policy|rule)"
        ),
        0.9,
    ),
    _Cue("rule", _en(r"(?:i|we)(?:'d| would)? (?:really |generally )?(?:prefer|rather)"), 0.9),
    _Cue("rule", _en(r"(?:i|we) (?:really )?(?:like|love|hate|dislike)"), 0.6),
    _Cue("rule", _en(r"i'm (?:not )?(?:a )?(?:big |huge )?fan of"), 0.6),
    # "in all Python files", "for every YAML file": a rule over a whole class of files.
    _Cue("rule", _en(r"(?:in|for|to|across) (?:all|every|any) (?:[\w.*+#-]+ ){0,2}files?"), 0.7),
    _Cue(
        "rule",
        _en(r"remember(?! to)(?: that)?|keep (?:that |this |it )?in mind(?: that)?"),
        0.6,
        "lead_en",
    ),
    _Cue("rule", _en(r"for (?:future reference|the future)"), 0.9),
    # A standing aversion ("I don't want any TODOs", "we never want to see …").
    _Cue("rule", _en(r"(?:i|we) (?:don't|do not|never) want (?:any|to see)"), 0.9),
    _Cue(
        "rule",
        _en(
            r"(?:in|for|across) (?:this|our|the whole) (?:repo|repository|project|codebase"
            r"|monorepo|team|org)"
        ),
        0.7,
    ),
    _Cue("rule", _en(r"how we do (?:it|things) (?:here|in this \w+)"), 1.0),
    # "No deploys on Friday afternoons", "never merge on weekends": a prohibition on a day.
    _Cue(
        "rule",
        _en(
            r"(?:no|never|don't|do not)\b.{0,30}?\b(?:on|during|over) (?:the )?"
            r"(?:mondays?|tuesdays?|wednesdays?|thursdays?|fridays?|saturdays?|sundays?"
            r"|weekends?|holidays?)"
        ),
        0.9,
    ),
    # "Don't merge anything without two approvals": a condition on every case.
    _Cue("rule", _en(r"(?:don't|do not|never|no) \w+ (?:anything|any \w+|\w+s) without"), 0.9),
    # "the message queue is RabbitMQ", "our database is Postgres": the stack, stated.
    _Cue(
        "rule",
        _en(
            r"(?<!why )(?<!if )(?<!whether )(?<!how )(?<!when )(?<!sure )(?<!know )"
            r"(?:the|our) (?:[\w-]+ )?(?:queue|database|db|cache|broker|orm|framework|stack|cloud"
            r"|registry|runtime|gateway|cdn|monorepo tool|package manager) is"
        ),
        0.7,
    ),
    # "I'm on the frontend team", "I'm a backend engineer": the speaker, stated.
    _Cue("rule", _en(r"i'?m (?:on the \w+ team|an? (?:\w+ )?(?:engineer|developer|dev))"), 0.7),
    # "the tests use jest", "this service is written in Go": what a part of the project uses.
    _Cue(
        "rule",
        _en(
            r"(?:the|our|this) (?:unit |integration |e2e )?(?:tests?|project|repo|app|service"
            r"|frontend|backend|api|ci|build|docs|site)"
            r" (?:uses?|runs? on|is (?:built|written) (?:with|in))"
        ),
        0.7,
    ),
    # "the default branch is main", "staging lives at …", "we're on Postgres 15".
    _Cue(
        "rule",
        _en(
            r"(?:the )?(?:default|main) branch is|(?:url|host|port|database|warehouse|endpoint)"
            r" (?:is|lives at|is at)|(?:we're|we are) on (?=[a-z]+ ?\d)"
        ),
        0.7,
    ),
    # A habit said as one: "I usually rebase before committing", "we normally squash".
    _Cue("rule", _en(r"(?:i|we) (?:usually|generally|normally|typically|tend to)"), 0.8),
    _Cue(
        "rule",
        _en(r"(?:in|for|across) (?:every|all|any) (?:of my )?(?:repos?|projects?|codebases?)"),
        0.8,
    ),
    # "design components live in packages/ui": where a kind of thing lives in this codebase.
    _Cue(
        "rule",
        _en(r"(?:live|lives|belong|belongs|go|goes|are kept|is kept) (?:in|under) [\w.@-]+(?=/)"),
        0.7,
    ),
    _Cue(
        "rule",
        _zh(r"以后(?!再)|今后|往后|从今以后|从今往后|从现在(?:开始|起)|从此"),
        1.0,
        "habit_zh",
    ),
    _Cue("rule", _zh(r"总是|始终|永远|一直|默认"), 1.0, "adverb_zh"),
    _Cue("rule", _zh(r"一律|统一|凡是"), 1.0),
    _Cue("rule", _zh(r"每次|每一次|每当|每回|每天|每个(?:提交|PR|分支)"), 0.9, "habit_zh"),
    _Cue("rule", _zh(r"从来不|从不|千万(?:不要|别|不能)|原则上"), 0.9),
    _Cue("rule", _zh(r"不管什么情况|无论如何|不管怎样"), 0.9),
    _Cue("rule", _zh(r"不许|不准|禁止|严禁"), 0.8),
    _Cue(
        "rule",
        _zh(
            r"(?:我们?(?:组|团队|这边|个人)?|团队)"
            r"(?:在[^，。,.；;！!？?]{1,12}?(?:里|中|上|下|时候|时))?"  # 我在写测试的时候喜欢…
            r"(?:更|比较|还是|一般)?(?:喜欢|偏好|倾向于?|习惯)"
            r"|我们?的(?:偏好|习惯)"
        ),
        0.9,
    ),
    _Cue("rule", _zh(r"规矩|规定|规范|约定|原则"), 0.8),
    _Cue("rule", _zh(r"(?:所有|任何).{0,15}都(?:必须|要|得|应该|不能|不要|别)"), 1.0),
    _Cue("rule", _zh(r"记住"), 0.6),
    _Cue("rule", _zh(r"记得"), 0.5),
    _Cue("rule", _zh(r"在这个(?:仓库|项目|代码库|repo|工程)里"), 0.7),
    _Cue("rule", _zh(r"这个(?:仓库|项目|代码库|repo|工程)里"), 0.5),
    # "都要" states a requirement for a whole class of things; alone it is too common.
    _Cue("rule", _zh(r"都(?:要|必须|得)"), 0.4),
    # "合并前都要 …": a requirement tied to a recurring step.
    _Cue("rule", _zh(r"(?:前|之前|以前|后|之后|时|的时候)(?:都|一定|必须|务必)(?:要|得|先)?"), 0.8),
    # "别再往 main 直接 push 了": stop doing something, from now on.
    _Cue("rule", _zh(r"别再|不要再|不许再|不准再|再也不要|以后别|以后不要"), 0.9),
    # A convention for a whole class of things: "都走 PR", "文件名都用 PascalCase", "都放在 …".
    _Cue("rule", _zh(r"都(?:走|用|放|放在|放到|写成|写在|改用|统一|按|按照|遵循|采用)"), 0.7),
    # A personal habit said as one: "我一般 …", "我习惯 …", "我通常 …", "我平时都 …".
    _Cue("rule", _zh(r"我(?:个人)?(?:一般|通常|平时|向来|一向|基本上?|习惯上?)(?:都|会|是)?"), 0.8),
    # A step tied to a workflow event: "提交之前要跑", "部署的时候先发", "review 的时候重点看".
    _Cue(
        "rule",
        _zh(
            r"[\u4e00-\u9fffA-Za-z ]{0,6}?(?:之前|以前|前|之后|以后|后|的时候|时候|时)"
            r"(?:都|一定|必须|务必)?"
            r"(?:要|先|得|记得|需要|应该|重点|注意|优先|只|不要|别|不能|一律|统一)"
        ),
        0.8,
    ),
    # "这个仓库的单测用 vitest", "本项目用 pnpm": how this repository does a thing.
    _Cue(
        "rule",
        _zh(
            r"(?:这个|本|该|当前|咱们|我们)\s*(?:仓库|项目|代码库|工程|repo|服务|应用|专案|储存库|存储库)"
            r"(?:的|里|里面|中|下)?[^，。,.；;！!？?]{0,16}?(?:用(?!户|得|起来)|使用|采用|放在|都在|基于)"
        ),
        0.7,
    ),
    # "设计组件都在 packages/ui", "配置文件放在 config/ 下面": where things live.
    _Cue("rule", _zh(r"(?:都|统一|一律)?(?:在|放在|位于)\s*`?[\w.-]+/[\w./*-]*"), 0.7),
    # "文件名用 PascalCase", "命名用 snake_case": a naming convention.
    _Cue(
        "rule",
        _zh(r"(?:命名|文件名|变量名|函数名|类名|组件名)[^，。；]{0,6}?(?:用|使用|采用|都用)"),
        0.8,
    ),
    _Cue("rule", _zh(r"必须|务必|一定要|只能用|只用|不得|不能用|不可以用|禁用"), 0.7),
    _Cue("rule", _zh(r"在(?:这个|本|该|当前)\s*(?:仓库|项目|代码库|repo|工程)"), 0.7),
    # A prohibition on a recurring day ("周五下午别 deploy", "周末不发布").
    _Cue(
        "rule",
        _zh(
            r"(?:周[一二三四五六日末]|星期[一二三四五六日天]|每周|节假日|假期)[^，。；]{0,8}?"
            r"(?:别|不要|不许|不准|禁止|不能|不)"
        ),
        0.9,
    ),
    # A condition for an action: "至少两个人点赞才能合", "没有测试不能合".
    _Cue(
        "rule",
        _zh(r"至少[^，。；]{1,14}?才(?:能|可以|准)|没有[^，。；]{1,10}?不(?:能|准|许|要)"),
        0.9,
    ),
    # "每个 commit 都要…": a requirement for every one of a kind of thing.
    _Cue(
        "rule",
        _zh(r"每(?:个|一个|条|次)\s*(?:commit|pr|mr|PR|MR|分支|提交|请求|接口|函数|文件)"),
        0.9,
    ),
    # "我是前端组的", "我是做后端的": the speaker, stated (global, a fact).
    _Cue("rule", _zh(r"我是(?:做|写|搞)?[^，。；]{0,6}?(?:组|团队|部门|工程师|开发|的)"), 0.7),
    # "主分支是 master", "staging 的地址是 …": a setting of the project, stated.
    _Cue(
        "rule",
        _zh(
            r"(?:主分支|默认分支|地址|域名|端口|数据库|版本|URL|url|host|port|队列|缓存|框架|网关"
            r"|中间件|注册中心|queue|cache|broker|ORM|orm)"
            r"[^，。,；;？?]{0,6}?(?:是|用的是)\s*[A-Za-z0-9]"
        ),
        0.7,
    ),
    # "src/api 下面的代码不要用全局变量": a prohibition for a place.
    _Cue(
        "rule",
        _zh(
            r"[\w.-]{1,100}/[\w./*-]{0,200}\s*+(?:下面|下|里面|里|中)[^，。；]{0,16}?(?:不要|别|不许|不准|禁止|不能)"
        ),
        0.8,
        needs=("不要", "别", "不许", "不准", "禁止", "不能"),
    ),
    # A standing dislike, as "I hate …" is in English.
    _Cue("rule", _zh(r"我(?:个人)?(?:很|真的|最|特别|比较)?(?:讨厌|不喜欢|受不了)"), 0.6),
    # --- one-off instructions --------------------------------------------------------------
    _Cue(
        "one-off",
        _en(
            r"this (?:one )?(?:time|round|pass|go)(?: around)?|this once|(?:just|only) once"
            r"|one time only|just the once"
        ),
        1.0,
    ),
    _Cue("one-off", _en(r"(?:just |only )?for (?:now|the moment|the time being|today)"), 1.0),
    _Cue("one-off", _en(r"right now|at the moment|temporarily|for a bit|until tomorrow"), 1.0),
    # "until <event>" bounds an instruction in time.
    _Cue("one-off", _en(r"until(?! further notice)"), 0.7),
    # A condition that will end ("while I'm debugging this") bounds the instruction.
    _Cue("one-off", _en(r"while (?:i'm|i am|we're|we are) \w+ing"), 0.8),
    _Cue("one-off", _en(r"(?:for|on|in) this one"), 0.9),
    _Cue(
        "one-off",
        _en(rf"(?:just |only )?(?:for|on|in) this {_NOT_A_SCOPE}[a-z][\w-]*(?: [a-z][\w-]*)?"),
        0.9,
        "fronted",
    ),
    _Cue("one-off", _en(r"today|tonight|this (?:morning|afternoon|evening)"), 0.5, "weak"),
    _Cue("one-off", _zh(r"就这一次|这一次|这一回|这次|这回|本次"), 1.0, "fronted"),
    _Cue("one-off", _zh(r"(?:这个|本)\s*(?:PR|pr|分支|任务|会话|需求)"), 0.7, "fronted"),
    _Cue("one-off", _zh(r"先不要|先别|先不用|先不"), 0.9),
    _Cue("one-off", _zh(r"暂时|临时|暂且|姑且|一次性|这一轮|这轮"), 1.0),
    # Deferring the proper fix ("之后再改") marks what is done now as temporary.
    _Cue("one-off", _zh(r"(?:之后|回头|晚点|稍后|过后|以后|等我.{0,6})再"), 0.8),
    # Bare time words are weak: "我今天下午不在" reports, "今天先别部署" instructs.
    _Cue("one-off", _zh(r"今天(?:晚上|下午|上午)?|今晚|现在|目前|眼下"), 0.5, "weak"),
)


@cache
def any_cue() -> re.Pattern[str]:
    """One pattern that matches where any cue's does (but those with ``needs``), each in a
    group scoped with its own flags: ``search`` over a clause finds nothing exactly when
    every such cue's ``finditer`` over it is empty, so the clauses no cue touches (most of
    them) are passed over in one scan instead of one per cue. Built at first use."""
    parts = [
        f"(?{'i' if cue.pattern.flags & re.IGNORECASE else ''}:{cue.pattern.pattern})"
        for cue in _CUES
        if not cue.needs
    ]
    return re.compile("|".join(parts))


# --- context vocabularies --------------------------------------------------------------------

# Words that may precede "always"/"never" while it still starts an instruction or states a
# convention ("please always …", "we never …", "you must always …", "but actually always …").
_EN_ADVERB_LEADS = _words(
    """everyone everybody please pls just so and then also you we i u should must to will
    shall but now ok okay yes really do dont don't not can could would let's lets always
    never guys team folks actually definitely seriously honestly simply"""
)
# Groups whose habits are conventions; they take third-person verbs ("the team always writes").
_EN_GROUP_SUBJECTS = _words("team everyone everybody")
_EN_MODALS = _words("should must shall")
# "ever" needs a negation in front ("don't ever …") or to stand alone ("…, ever.").
_EN_EVER_LEADS = _words("don't dont not never")
# The word after "always"/"never" tells a description ("always returns", "never understood",
# "always the same") from an instruction ("always run").
_EN_DESCRIPTIVE_NEXT = _words(
    """is are was were been be has had does did the a an seems seemed happens happened mind
    understood knew thought said saw got made found told heard went came felt worked works
    gets get will would could have know need see understand care"""
)
_ZH_DESCRIPTIVE_NEXT = lazy_compile(
    r"^[不都也]*(?:返回|失败|出现|报错|是|会|有|没|超时|崩|卡|通过|成功|知道|懂|明白|值|为|等于|显示)"
)
# Chinese future/habit words followed by a word of likelihood describe ("以后可能会改",
# "每次都会报错") rather than instruct.
_ZH_DESCRIPTIVE_PREDICATE = lazy_compile(r"可能|也许|或许|大概|(?:都|总|就|也)?会(?!议)|都是|都在")

_EN_ACTION = lazy_compile(
    r"(?<![A-Za-z])(?:skip|don't|do not|just|let's|let us|please|use|ignore|leave|hold|only|"
    r"disable|push|merge|deploy|run|focus|so|can)(?![A-Za-z])",
    _FLAGS,
)
_ZH_ACTION = lazy_compile(r"先|就|要|不用|别|不要|把|吧|只|跳过|可以|得|用|帮|禁用|关掉|留着|允许")
# An exemption verb makes a scoped phrase an exemption for that item ("skip X for this spike"),
# unlike a plain object ("open a PR for this branch").
_EN_EXEMPTION = lazy_compile(
    # A subject in front makes "don't" a description ("we don't have tests for this module").
    r"(?<![A-Za-z])(?<!we )(?<!i )(?<!they )(?<!you )(?:skip|don't|do not|bother|ignore|"
    r"bypass|leave|disable|without|no need|hardcode|allow|just)(?![A-Za-z])",
    _FLAGS,
)
# A clause reporting a state ("it fails right now") describes; it does not scope an instruction.
_EN_REPORT = lazy_compile(
    r"\s*(?:it|this|that|there|the [\w.-]+|[\w.-]+ (?:tests?|build|ci|job))\s+(?:is|are|was|"
    r"were|'s|fails|failed|breaks|broke|crashes|crashed|returns|throws|shows|looks|seems|has|"
    r"had|doesn't|isn't|wasn't|keeps)(?![A-Za-z])",
    _FLAGS,
)
# "between this time and the last run": a time phrase used as a noun, not as a scope.
_EN_NOMINAL_BEFORE = lazy_compile(r"(?<![A-Za-z])(?:between|since|than|from)\s+$", _FLAGS)

# Lead-ins allowed before a fronted scope ("just for this run", "但这次", "只在这次").
_EN_FRONT_LEADS = _words("just only and so but then ok okay please")
_ZH_FRONT_LEAD = lazy_compile(
    r"^(?:但是|但|不过|可是|那就|那|就|只在|只有|只|我们|你|请|先|所以|因此|好|嗯|能不能|可不可以"
    r"|可以|麻烦)*$"
)

_NEGATED_BEFORE = lazy_compile(
    r"(?:(?<![A-Za-z])not\s+(?:just\s+|only\s+)?|不是(?:只有)?|不只(?:是)?|不仅(?:是)?|不光)$",
    _FLAGS,
)
_SUBSUMED_BEFORE = lazy_compile(
    r"(?:(?<![A-Za-z])(?:even|including|includes|incl\.?)\s*|包括|连)$", _FLAGS
)
_SUBSUMED_AFTER = lazy_compile(
    r"(?:\s+(?:included|inclusive)(?![A-Za-z])|\s+and (?:every time|always|from now on|going "
    r"forward|in (?:the )?future)|也一样|也不例外|也照样|也算|(?:和|跟|以及)以后)",
    _FLAGS,
)

_CONTRAST = lazy_compile(
    r"(?<![A-Za-z])(?:but|however|whereas)(?![A-Za-z])|但是|(?<!不)但|不过|可是|然而", _FLAGS
)
_CONCESSIVE = lazy_compile(
    r"(?<![A-Za-z])(?<!i )(?<!we )(?:normally|usually|generally|typically)(?![A-Za-z])"
    r"|(?<![A-Za-z])(?:although|though|even though|"
    r"i know|i realize|i understand)(?![A-Za-z])|虽然|尽管"
    r"|(?<!我)(?:平时|平常|一般|通常)|我知道|本来",
    _FLAGS,
)
_POLITE_QUESTION = lazy_compile(
    r"\s*(?:(?:can|could|would|will) you|please|请|麻烦|能不能|可不可以)", _FLAGS
)

# Clause boundaries are punctuation and dashes; contrast words open a clause of their own.
_CLAUSE_PUNCT = lazy_compile(r"[,，、:：;；—–()（）]|\s-{1,2}\s")
_SENTENCE_END = lazy_compile(r"[.!?](?=\s|$)|[。！？；;\n]")
_CLAUSE_JUNK = " \t.,，、:：;；—–-!！?？。()（）"

_QUOTE_PAIRS = (
    lazy_compile(r'"[^"\n]*"'),
    lazy_compile(r"“[^”\n]*”"),
    lazy_compile(r"‘[^’\n]*’"),
    lazy_compile(r"「[^」\n]*」"),
    lazy_compile(r"『[^』\n]*』"),
    lazy_compile(r"`[^`\n]*`"),
    # Single quotes only when they sit at word edges, so apostrophes ("don't") survive.
    lazy_compile(r"(?<![A-Za-z0-9])'[^'\n]+'(?![A-Za-z0-9])"),
)

"""The words selectors are made of: operations, phases and task types a rule can name, and
the file globs of languages ("Python files" are ``*.py``)."""

from __future__ import annotations

from typing import Literal

Dimension = Literal["operation", "phase", "task_type"]

OPERATIONS: tuple[str, ...] = (
    "edit",
    "commit",
    "push",
    "merge",
    "rebase",
    "install",
    "test",
    "build",
    "deploy",
    "release",
)
PHASES: tuple[str, ...] = ("plan", "implement", "verify", "review", "release")
TASK_TYPES: tuple[str, ...] = ("bugfix", "feature", "refactor", "docs")

LANGUAGE_GLOBS: dict[str, tuple[str, ...]] = {
    "python": ("*.py",),
    "go": ("*.go",),
    "golang": ("*.go",),
    "javascript": ("*.js", "*.jsx"),
    "js": ("*.js", "*.jsx"),
    "typescript": ("*.ts", "*.tsx"),
    "ts": ("*.ts", "*.tsx"),
    "rust": ("*.rs",),
    "java": ("*.java",),
    "kotlin": ("*.kt",),
    "ruby": ("*.rb",),
    "php": ("*.php",),
    "c#": ("*.cs",),
    "c++": ("*.cpp", "*.hpp", "*.cc"),
    "c": ("*.c", "*.h"),
    "swift": ("*.swift",),
    "shell": ("*.sh",),
    "bash": ("*.sh",),
    "markdown": ("*.md",),
    "yaml": ("*.yaml", "*.yml"),
    "json": ("*.json",),
    "toml": ("*.toml",),
    "sql": ("*.sql",),
    "html": ("*.html",),
    "css": ("*.css",),
    "scss": ("*.scss",),
    "vue": ("*.vue",),
    "terraform": ("*.tf",),
    "dart": ("*.dart",),
    "scala": ("*.scala",),
    "lua": ("*.lua",),
}


# --- paths: words that name no folder, file extensions, libraries named like files, and
# slash pairs that are not paths ----------------------------------------------------------


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


NOT_A_FOLDER = _words(
    """this that these those the a an same root current parent new each every some any your my
    our its their which home project repo repository whole entire other top"""
)
FILE_EXTENSIONS = _words(
    """py pyi js jsx mjs cjs ts tsx md rst txt toml yaml yml json lock cfg ini conf env sh bash
    zsh sql go mod rs rb java kt kts c h cpp hpp cc cs swift php html css scss vue tf xml gradle
    properties proto example sample template tmpl csv ipynb"""
)
# Libraries named like files ("moment.js") are not paths.
LIBRARIES = _words(
    """moment.js node.js vue.js next.js nuxt.js express.js d3.js three.js chart.js react.js
    angular.js ember.js backbone.js day.js alpine.js p5.js highlight.js"""
)
NOT_PATHS = _words(
    """and/or either/or w/o i/o ci/cd read/write on/off yes/no true/false pros/cons tcp/ip
    input/output client/server he/she s/he n/a a/b his/her dev/prod"""
)


# dimension, value, governs, English forms, Chinese forms. Longer phrases first: "release
# phase" is a phase, not the release operation; "改" is edit only in a "when" position.
# fmt: off
WORD_TABLE: tuple[tuple[Dimension, str, bool, str, str], ...] = (
    ("phase", "release", False, r"release (?:phase|stage)", r"(?:发布|上线|发版)阶段"),
    ("phase", "plan", False, r"plan(?:ning)? (?:phase|stage)|planning",
     r"规划|计划阶段|方案阶段|设计阶段"),
    ("phase", "implement", False, r"implement(?:ing|ation)?|coding|writing code",
     r"实现|开发|写代码|编码"),
    ("phase", "verify", False, r"verif(?:y|ying|ication)|validat(?:e|ing|ion)", r"验证|验收"),
    ("phase", "review", False, r"(?:code )?review(?:s|ing)?",
     r"代码审查|审查|评审|审核代码|看\s*(?:PR|pr|MR|mr)|(?:CR|cr)(?=[\s的时前])"),
    ("task_type", "bugfix", False,
     r"bug ?fix(?:es|ing)?|fix(?:ing)? (?:a |the )?bugs?|hotfix(?:es)?|(?:quick )?fixes",
     r"修复?\s*bug|修复(?:缺陷|问题)|改\s*bug"),
    ("task_type", "feature", False, r"(?:new )?features?(?! branch)|feature work",
     r"新功能|新特性|新需求|功能开发"),
    ("task_type", "refactor", False, r"refactor(?:s|ing|ings)?", r"重构"),
    ("task_type", "docs", False, r"docs|documentation|writing docs", r"写文档|文档"),
    ("operation", "edit", True,
     r"edit(?:s|ing)?|hand-edit(?:ing)?|modif(?:y|ies|ying)|touch(?:es|ing)?",
     r"修改|编辑|改(?:代码|文件|配置)"),
    ("operation", "edit", False, r"chang(?:e|es|ing)", r"改(?!成|为|名|用)"),
    ("operation", "commit", True, r"commit(?:s|ting)?(?! (?:sha|hash|id)s?(?![A-Za-z]))",
     r"提交"),
    ("operation", "push", True, r"(?:force[- ])?push(?:es|ing)?",
     r"推送|(?:往|向)[^，。；]{0,12}?推(?!荐|断|导|迟|进|广)"
     r"|推(?:到|上去|上|代码|一下|远端|远程)"),
    ("operation", "merge", True, r"(?:squash[- ])?merg(?:e|es|ing)|squash(?:es|ing)?",
     r"合并|合入|合进|合到|并入"),
    ("operation", "rebase", True, r"rebas(?:e|es|ing)", r"变基"),
    ("operation", "install", True,
     r"install(?:s|ing)?|add(?:ing)? (?:a |any |new )*(?:dependenc(?:y|ies)|packages?)"
     r"|add(?:ing)? (?:the )?[\w@/.-]+ (?:dependency|package|as a dependency)"
     r"|(?:upgrad|downgrad)(?:e|es|ing) (?:the )?[\w@/.-]+ (?:to|version)"
     r"|bump(?:s|ing)? (?:the )?[\w@/.-]+ (?:to|version)|update (?:the )?(?:deps|dependencies)",
     r"安装|装依赖|加依赖|新增依赖|引入依赖|添加依赖|装包|装个|装一下"
     r"|(?:加|添加|新增|引入)(?:一个|个|上)?\s*[\w@/.-]+\s*(?:的)?(?:依赖|包|库)"
     r"|升级|降级|换(?:个|一下)?版本|升(?:一下)?版本|更新(?:一下)?依赖"),
    ("operation", "test", True,
     r"(?:run(?:ning)? )?(?:the )?tests? (?:with|using|via)"
     r"|tests? (?:should |must )?run (?:with|using|via)",
     r"用.{1,15}?(?:跑|运行|执行)(?:一下)?测试|测试.{0,4}用.{1,15}?(?:跑|运行)"),
    ("operation", "test", False, r"testing|run(?:ning)? (?:the |all |your )?tests?", r"测试"),
    ("operation", "build", True, r"build(?:s|ing)? (?:with|using|via|in)",
     r"用.{1,15}?(?:构建|打包|编译)"),
    ("operation", "build", False, r"build(?:s|ing)?(?! (?:system|tool|script|file)s?)",
     r"构建|打包|编译"),
    ("operation", "deploy", True,
     r"deploy(?:s|ing|ed|ments?)?|ship(?:ping)? to (?:prod|production)|go(?:ing)? live",
     r"部署|上线|发到\s*(?:staging|prod|生产|预发|测试环境)"),
    ("operation", "release", True,
     r"releas(?:e|es|ing)(?! (?:branch|notes?|train|profile))|publish(?:ing)?"
     r"|cut(?:ting)? a release",
     r"发布|发版|发包|打\s*tag|打标签"),
    ("operation", "release", False, r"tag(?:s|ging)?", ""),
)
# fmt: on

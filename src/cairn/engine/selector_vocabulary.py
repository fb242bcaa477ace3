"""The words selectors are made of: operations, phases and task types a rule can name, and
the file globs of languages ("Python files" are ``*.py``)."""

from __future__ import annotations

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

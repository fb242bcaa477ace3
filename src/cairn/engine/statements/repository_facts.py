"""Whether a description (not a rule) is about the current repository.

The statement reader scopes a *rule* by its words ("in this repo", "here"). A *fact* is
scoped the same way by the words that name the repository ("this repo", "this project",
"这个仓库"; a bare "here" is left out: "I moved here last year" is not about a repository),
and also by what it names: the repository's files ("the workflow file is
.github/workflows/ci.yml", "migrations live in db/migrations", "update CHANGELOG.md") or
its CI ("our CI runs on GitHub Actions"). Such a fact is true of one repository and wrong
in every other, so it belongs to the project the words were said in.

Nothing here reads storage or the clock.
"""

from __future__ import annotations

import re

from cairn.engine.statements.selector_words import scope_spans
from cairn.engine.statements.signals import mask_quotes
from cairn.patterns import lazy_compile

# Scope words too vague to bind a description on their own.
_VAGUE_SCOPE = frozenset(("here", "这里", "这儿"))

_CI = lazy_compile(
    r"(?<![A-Za-z0-9_])(?:(?:our|the|this repo's|this project's) (?:ci(?:/cd)?|ci pipeline"
    r"|build pipeline|pipeline|workflows?|test suite|pre-commit hooks?)"
    r"|github actions|gitlab ci|circleci|travis ci|buildkite|jenkinsfile|\.github/workflows)"
    r"(?![A-Za-z0-9_])",
    re.IGNORECASE,
)
# Files every repository may hold, named bare.
_WELL_KNOWN = lazy_compile(
    r"(?<![\w./-])(?:makefile|dockerfile|justfile|jenkinsfile|procfile|gemfile|rakefile"
    r"|readme(?:\.\w+)?|changelog(?:\.\w+)?|contributing(?:\.\w+)?|license"
    r"|package(?:-lock)?\.json|pnpm-lock\.yaml|yarn\.lock|tsconfig(?:\.\w+)?\.json"
    r"|pyproject\.toml|setup\.(?:py|cfg)|tox\.ini|requirements(?:-\w+)?\.txt|cargo\.toml"
    r"|go\.mod|docker-compose(?:\.\w+)?\.ya?ml|\.gitignore|\.env(?:\.\w+)?|\.npmrc)"
    r"(?![\w-])",
    re.IGNORECASE,
)
_CODE_EXTENSIONS = (
    "py|pyi|ts|tsx|js|jsx|mjs|cjs|vue|svelte|go|rs|java|kt|rb|php|c|h|cc|cpp|hpp|cs|swift"
    "|m|scala|sh|bash|zsh|sql|yml|yaml|toml|json|ini|cfg|conf|lock|md|rst|txt|tf|proto"
    "|graphql|css|scss|html|xml|gradle|ipynb"
)
# A relative path with a folder ("db/migrations", "src/lib/log.ts", "tests/e2e/x.spec.ts"),
# not a URL, a fraction, a date or "and/or".
_PATH = lazy_compile(
    r"(?<![\w:/.@-])\.?[a-z0-9_][\w.-]*/(?:[\w.*-]+/)*[\w.*-]*[a-z_*][\w.*-]*(?![\w/])"
)
# A bare file name with a code extension, written in lower case ("log.ts", "ci.yml"), so
# that "Node.js" or "Vue.js" (names of things, capitalized) are not taken for files.
_FILE = lazy_compile(rf"(?<![\w./@-])[a-z0-9_][\w-]*(?:\.[\w-]+)*\.(?:{_CODE_EXTENSIONS})(?![\w])")
_NOT_PATHS = frozenset(("and/or", "w/o", "n/a", "i/o", "km/h", "tcp/ip", "24/7", "either/or"))


def says_this_repository(text: str) -> bool:
    """The words themselves name the current repository ("this repo", "本项目")."""
    masked = mask_quotes(text)
    return any(masked[s:e].strip().casefold() not in _VAGUE_SCOPE for s, e in scope_spans(masked))


def names_repository_contents(text: str) -> bool:
    """The text names a repository's files or its CI."""
    if _CI.search(text) or _WELL_KNOWN.search(text) or _FILE.search(text):
        return True
    for found in _PATH.finditer(text):
        path = found.group()
        if path.casefold() not in _NOT_PATHS and not path.replace("/", "").isdigit():
            return True
    return False


def is_about_repository(text: str) -> bool:
    """A description that is true of one repository: it names it, its files or its CI."""
    return says_this_repository(text) or names_repository_contents(text)

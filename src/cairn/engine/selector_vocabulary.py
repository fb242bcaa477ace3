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

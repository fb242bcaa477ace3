"""Projections of memory for people: the Markdown files a user reads, edits and syncs back."""

from cairn.projection.markdown import (
    FORMAT,
    MarkdownProjection,
    ProjectedEntry,
    SyncConflict,
    SyncReport,
    parse_projection,
    render_profile,
    render_project,
)

__all__ = [
    "FORMAT",
    "MarkdownProjection",
    "ProjectedEntry",
    "SyncConflict",
    "SyncReport",
    "parse_projection",
    "render_profile",
    "render_project",
]

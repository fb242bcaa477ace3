"""Projections of memory for people: the Markdown files a user reads, edits and syncs back.

``markdown_format`` and ``markdown_parse`` are the pure text format, ``markdown_plan`` what
a sync would do, ``markdown_files`` the files on disk, ``markdown_sync`` the files of one
tenant and agent kept in step with its memory, and ``markdown_restore`` a lost database
restored from them. What they read and change of a memory is a protocol
(``markdown_source``): the package imports no interface, so the projection service
(:mod:`cairn.services.markdown`) writes the files after each change from the store, and
the command line syncs them through a :class:`cairn.Memory`.
"""

from cairn.projection.markdown_format import (
    FORMAT,
    LEGACY_FORMAT,
    ProjectedDocument,
    ProjectedEntry,
    Selectors,
    render_profile,
    render_project,
)
from cairn.projection.markdown_parse import parse_document, parse_projection
from cairn.projection.markdown_plan import SyncConflict, SyncNote
from cairn.projection.markdown_source import MemoryEditor, MemoryReader
from cairn.projection.markdown_sync import (
    MarkdownProjection,
    PurgeReport,
    SyncReport,
    projection_folder,
)

__all__ = [
    "FORMAT",
    "LEGACY_FORMAT",
    "MarkdownProjection",
    "MemoryEditor",
    "MemoryReader",
    "ProjectedDocument",
    "ProjectedEntry",
    "PurgeReport",
    "Selectors",
    "SyncConflict",
    "SyncNote",
    "SyncReport",
    "parse_document",
    "parse_projection",
    "projection_folder",
    "render_profile",
    "render_project",
]

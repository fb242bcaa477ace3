"""The embedded search index: every lane in process memory, following the change feed."""

from cairn.storage.inprocess.search_index import InProcessSearchIndex

__all__ = ["InProcessSearchIndex"]

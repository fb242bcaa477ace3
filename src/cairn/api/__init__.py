"""The Python API by purpose: each part stands on one :class:`~cairn.provider.client.Client`
and :class:`cairn.Memory` is all of them over the provider it opens.

- :mod:`cairn.api.records`: writes, reads, export, import and rebuild of memories;
- :mod:`cairn.api.tasks`: recall and personal memory for tasks (context, expand,
  feedback, explain, signal), and the values they return;
- :mod:`cairn.api.learning`: observations, reflection, the sweep and eviction, review of
  transcripts, answers from memory, telemetry.

Every method is one request of the provider contract; in process the embedded engine's
own values come back (``Record``, ``RecallResult``...), from a remote server the same
values rebuilt from its responses.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cairn.provider.client import Client


class Api:
    """A part of the Python API over one client."""

    def __init__(self, client: Client) -> None:
        self._client = client

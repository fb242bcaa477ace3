"""The web dashboard (SPEC §9): browse, filter, search, see history and why memory was
applied, correct, forget and restore it, read the journal, diagnose a recall and watch
the learning — server-rendered HTML, mounted by ``cairn serve`` at ``/dashboard``.

An interface like the CLI: it reaches memory only through the provider contract.
"""

from cairn.dashboard.app import create_dashboard

__all__ = ["create_dashboard"]

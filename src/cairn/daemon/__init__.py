"""The local daemon: ``cairn serve`` on a per-user unix socket of the home, keeping the
engine and the model loaded, so the command line, the hooks and the MCP server pay for a
small request instead of importing the engine and loading the model in every process.

- :mod:`cairn.daemon.paths`: where a home's daemon lives and whether one runs (standard
  library only: every command through the daemon reads it first);
- :mod:`cairn.daemon.wire`: one HTTP exchange over the unix socket, standard library only
  (the hooks' fast path);
- :mod:`cairn.daemon.client`: when to go through the daemon, and the provider over it
  that falls back to the embedded engine only when the daemon is definitely not running;
- :mod:`cairn.server.local` (in the server): the serving side — claiming the socket,
  the binding of a request that came over it, the routes only the socket serves;
- :mod:`cairn.daemon.control`: ``cairn daemon start | stop | status``.
"""

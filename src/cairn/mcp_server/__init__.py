"""``cairn mcp``: the memory tools and resources over the Model Context Protocol.

Named ``mcp_server`` so it never shadows the SDK's own ``mcp`` package. The tools'
schemas come from the provider contract (:mod:`cairn.mcp_server.tools`), their work is
one request through the provider each (:mod:`cairn.mcp_server.calls`), and the server
itself is the SDK's (:mod:`cairn.mcp_server.server`, needs the ``mcp`` extra).
"""

"""Agent hooks: memory at session start, on every prompt, and at stop.

``cairn hook session-start | prompt | stop`` reads the host's event on standard input and
answers in the host's format (:mod:`cairn.hooks.claude_code`); the work in between is
host-neutral (:mod:`cairn.hooks.handlers`) and reaches memory only through the provider.
``cairn install claude-code`` writes the hook entries into the host's settings
(:mod:`cairn.hooks.install`).
"""

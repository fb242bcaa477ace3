"""Secrets at write (policy ``memory.secrets``): redact, refuse, or allow.

Detection is :mod:`cairn.engine.secrets`. With ``redact`` (the default) the stored body
holds ``[REDACTED:kind]`` in place of each secret, so neither the records nor the journal
ever see it; ``refuse`` rejects the write; ``allow`` stores the text as given.
"""

from __future__ import annotations

from cairn.engine.secrets import find_secrets, redact
from cairn.errors import InvalidInput


class SecretGuard:
    def check(
        self, body: str, title: str | None, policy: str
    ) -> tuple[str, str | None, tuple[str, ...]]:
        """(body, title, kinds of secrets found) after the policy is applied."""
        if policy == "allow":
            return body, title, ()
        found = [m.kind for m in find_secrets(body)]
        if title:
            found += [m.kind for m in find_secrets(title)]
        if not found:
            return body, title, ()
        kinds = tuple(dict.fromkeys(found))
        if policy == "refuse":
            raise InvalidInput(
                f"the text holds a secret ({', '.join(kinds)}); not stored"
                " (policy memory.secrets: refuse)"
            )
        new_body, _ = redact(body)
        new_title = redact(title)[0] if title else title
        return new_body, new_title, kinds

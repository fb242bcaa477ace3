"""Secrets at write (policy ``memory.secrets``): redact, refuse, or allow.

Detection is :mod:`cairn.engine.secrets`. The policy covers every text a write stores,
not only the body: a title, tags, the source object (who, channel, url), an external
reference, an observation's command, task, topic, tools and note, a task text kept with
its applications, and every field of an imported record. Each write route hands its
fields to :meth:`SecretGuard.scrub` once, so a field cannot be stored on one route
without the policy. With ``redact`` (the default) each secret becomes ``[REDACTED:kind]``
before the records or the journal see it; ``refuse`` rejects the whole write with one
line naming the field; ``allow`` stores the text as given.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from cairn.engine.secrets import redact
from cairn.errors import InvalidInput

POLICIES = ("redact", "refuse", "allow")


class SecretRefused(InvalidInput):
    """A write refused by the policy ``refuse``: its text holds a secret."""


# No detector finds a secret in fewer characters ("pw=abcd"): shorter strings (most tags,
# source channels, selector words) are spared the detection.
_SHORTEST = 7


# Short texts that hold no secret, as found: a bulk write repeats its project ids, source
# keys and channels, tags and selector words on every item, and each is scanned once.
# Only texts found clean are kept (never a secret), at most _CLEAN_KEPT of them.
_CLEAN_CHARS = 120
_CLEAN_KEPT = 20_000
_clean: set[str] = set()


def _scrubbed(value: Any, kinds: list[str]) -> Any:
    """``value`` with every string in it redacted (lists, tuples and objects walked)."""
    if isinstance(value, str):
        if len(value) < _SHORTEST or value in _clean:
            return value
        out, found = redact(value)
        if found:
            kinds += found
        elif len(value) <= _CLEAN_CHARS:
            if len(_clean) >= _CLEAN_KEPT:
                _clean.clear()
            _clean.add(value)
        return out
    if isinstance(value, Mapping):
        return {_scrubbed(k, kinds): _scrubbed(v, kinds) for k, v in value.items()}
    if isinstance(value, tuple):
        return tuple(_scrubbed(v, kinds) for v in value)
    if isinstance(value, list):
        return [_scrubbed(v, kinds) for v in value]
    return value


_PLURALS = frozenset(("tags", "tools", "path_patterns", "operations", "phases", "task_types"))


def _holds(name: str) -> str:
    """``the tags hold``, ``the title holds``: the field named as a sentence says it."""
    field = "text" if name == "body" else name.replace("_", " ")
    return f"the {field} {'hold' if name in _PLURALS else 'holds'}"


class SecretGuard:
    def scrub(
        self, policy: str, fields: Mapping[str, Any], *, where: str = ""
    ) -> tuple[dict[str, Any], tuple[str, ...]]:
        """``fields`` (name -> a string, a list of them, an object or None) after the
        policy, and the kinds of secrets found in them, in order, each once.

        ``refuse`` raises one :class:`InvalidInput` naming the first field holding one."""
        if policy not in POLICIES:
            raise InvalidInput(f"memory.secrets must be one of {', '.join(POLICIES)}")
        if policy == "allow":
            return dict(fields), ()
        out: dict[str, Any] = {}
        kinds: list[str] = []
        for name, value in fields.items():
            found: list[str] = []
            out[name] = _scrubbed(value, found)
            if found and policy == "refuse":
                prefix = f"{where}: " if where else ""
                listed = ", ".join(dict.fromkeys(found))
                raise SecretRefused(
                    f"{prefix}{_holds(name)} a secret ({listed}); not stored"
                    " (policy memory.secrets: refuse)"
                )
            kinds += found
        return out, tuple(dict.fromkeys(kinds))

    def check(
        self, body: str, title: str | None, policy: str
    ) -> tuple[str, str | None, tuple[str, ...]]:
        """(body, title, kinds of secrets found) after the policy is applied."""
        out, kinds = self.scrub(policy, {"body": body, "title": title})
        return out["body"], out["title"], kinds

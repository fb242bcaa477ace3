"""Secrets in text written as memory: find them, or redact them to ``[REDACTED:kind]``.

A memory store keeps what it is told for a long time and prints it into prompts, so a key
pasted into a note must not be kept. Three kinds of detectors:

- *shapes* (:mod:`cairn.engine.secret_shapes`): credentials with a recognisable form
  (provider prefixes, JWTs, private key blocks), matched whole;
- *places* (:mod:`cairn.engine.secret_values`): a value that is a secret by where it is
  written (a password in a URL, a Basic header, ``.netrc``, a command's password flag, a
  Kubernetes ``name``/``value`` pair), of which only the value is redacted;
- *assignments* and *prose* (here): a secret-named key followed by a value
  (``password=…``, ``"api_key": "…"``, ``token: …``), or a sentence saying one ("the wifi
  password for the office is …", "密码是 …"), where only the value is redacted so the note
  keeps its meaning.

They read the text folded (:mod:`cairn.engine.secret_text`: full-width forms to ASCII,
zero-width characters dropped, a key wrapped across lines joined) and report spans of the
text as written.

False positives mangle memories, so every detector wants evidence beyond a keyword: a
value after the key, of a plausible length, not a placeholder (``${VAR}``, ``None``,
``<your key>``, ``****``), and, where prose could follow a colon, something a word would
not have (a digit or a symbol). "password reset flow", "token bucket", git SHAs, UUIDs
and base64 digests are left alone.

Pure functions; nothing here logs or stores the text.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

from cairn.engine.secret_shapes import (
    SecretMatch,
    aws_secret_near_id,
    has_digit,
    private_keys,
    shapes,
)
from cairn.engine.secret_text import Folded, fold, join_breaks
from cairn.engine.secret_values import (
    contextual,
    is_env_name,
    placeholder,
    plausible,
    unquote,
)
from cairn.patterns import any_of, finditer_at, folded_case, lazy_compile, lowered

__all__ = ["SecretMatch", "find_secrets", "redact"]


# -- assignments ---------------------------------------------------------------------

# A secret-named key (JSON, YAML, .env, code, prose) followed by an operator and a value.
# The key starts a token: never inside a word, nor inside a ``[REDACTED:kind]`` marker.
_ASSIGNMENT = lazy_compile(
    r"(?:(?<=--)|(?<![A-Za-z0-9_.:\[\-]))(?P<key>[A-Za-z][A-Za-z0-9_.\-]{0,60})"
    r"[\"'`*\]]{0,3}[ \t]{0,3}"
    r"(?P<op>:=|=>|=|:|：)[ \t]{0,8}"
    r"(?P<value>\"[^\"\n]{1,300}\"|'[^'\n]{1,300}'|`[^`\n]{1,300}`|[^\s\"'`]{1,300})"
)
# The secret word at the end of the key; its kind and the shortest value worth flagging.
_KEY_WORD = lazy_compile(
    r"(?i)(pass(?:word|wd|phrase)?|secret(?:[_\-]?key)?|(?:api|access|private)[_\-]?key"
    r"|(?:auth|access|refresh|session|bearer|api)?[_\-]?token|credentials?|psk|pwd?)$"
)
# Where a value of one field ends inside a line of several: a connection string
# (``Password=x;Database=y``) or a query string (``password=x&next=y``).
_NEXT_FIELD = lazy_compile(r"[;&][A-Za-z][A-Za-z0-9 _.\-]{0,40}=")
# Prose: the secret word, up to four words naming whose or which it is ("for the office",
# "of the staging db"), a verb or a colon, then the value.
_NATURAL = lazy_compile(
    r"(?i)(?<![\w:/.\-])(?P<key>password|passphrase|passwd|pw|api key|secret key|access token"
    r"|auth token"
    r"|token|shared secret|secret)"
    r"(?:\s+(?:for|of|to|on|at)(?:\s+[\w.\-]+){1,4}?)?"
    r"(?:\s+(?:was changed to|has been changed to|changed to|is set to|has been set to|is now"
    r"|is|was|are|became)\s+"
    r"|\s*[:：]\s*)"
    r"(?P<value>\"[^\"\n]{1,300}\"|'[^'\n]{1,300}'|“[^”\n]{1,300}”|[^\s\"'`]{1,300})"
)
# "password X" with no verb: only a value no word could be (upper, lower and digits).
_BARE = lazy_compile(
    r"(?i)(?<![\w:/.\-])(?P<key>password|passwd|passphrase|pw|token|api key)[ \t]+"
    r"(?P<value>[^\s\"'`]{8,300})"
)
# "set the root pw to X", "changed my password to X".
_SET_TO = lazy_compile(
    r"(?i)\b(?:set|sets|setting|change|changed|changing|reset)\s+(?:the\s+|my\s+|our\s+|your\s+)?"
    r"(?:[\w\-]+\s+){0,3}?(?P<key>password|passphrase|passwd|pw|token|api key)\s+to\s+"
    r"(?P<value>\"[^\"\n]{1,300}\"|'[^'\n]{1,300}'|[^\s\"'`]{1,300})"
)
# A user and a password after a word for credentials: "creds for the NAS: admin/X".
_USER_SLASH = lazy_compile(
    r"(?i)\b(?:creds?|credentials|login|log in with|sign in with)\b[^\n/]{0,40}?"
    r"[\s:]\s*[\w.@\-]{1,64}\s*/\s*(?P<value>[^\s/]{4,300})(?P<key>)"
)
_USE_AS = lazy_compile(
    r"(?i)\buse\s+(?P<value>\"[^\"\n]{1,300}\"|'[^'\n]{1,300}'|[^\s\"'`]{4,300})\s+as\s+"
    r"(?:the\s+|my\s+|your\s+)?(?:[\w\-]+\s+)?(?P<key>password|passphrase|token|api key)\b"
)
# Other languages: the key word, a colon, equals sign or copula, then the value. The
# unquoted value is read in ASCII only, so the sentence after it is not taken along.
_FOREIGN = lazy_compile(
    r"(?i)(?P<key>密码|口令|密钥|秘钥|私钥|令牌|访问令牌|パスワード|暗証番号|비밀번호"
    r"|passwort|kennwort|mot de passe|contraseña|senha|пароль)"
    r"(?:\s*(?:[:：=]|是|为|為|は|는|은|改成了?|改为|换成了?|设为|设置为|变成了?)\s*[:：]?\s*"
    r"|\s+(?=[!-~]))"
    r"(?P<value>[\"“「『'][^\"”」』'\n]{1,300}[\"”」』']|[!-~]{1,300})"
)
# Words that follow "the password is" in prose: "case-sensitive", "short-lived".
_PROSE_WORD = lazy_compile(r"^[a-z]+(?:-[a-z]+)*$")
_IDENTIFIER = lazy_compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_SLUG = lazy_compile(r"^[a-z0-9]+(?:[-_.][a-z0-9]+)*$")  # a path segment, a name


def _kind_of(word: str) -> tuple[str, int]:
    w = word.lower().replace("-", "_")
    if w.startswith("pass") or w in ("pw", "pwd", "psk"):
        return "password", 4
    if w.startswith(("secret", "shared")):
        return "secret", 6
    if w.startswith("credential"):
        return "credential", 8
    if w.endswith("key"):
        return "api-key", 8
    return "token", 8


def _key_word(key: str) -> str | None:
    """The secret word ending ``key``, if it starts a word there (``dbPassword``, ``x_token``)."""
    found = _KEY_WORD.search(key)
    if not found:
        return None
    word = found.group(1).lstrip("_-")
    start = len(key) - len(word)
    if start == 0 or (word.lower().startswith("pass") and word.lower() != "pass"):
        return word
    before = key[start - 1]
    if before in "_-." or before.isdigit() or (word[0].isupper() and not before.isupper()):
        return word
    if before.isupper() and word.isupper():
        return word  # all capitals, as env names are: APPSECRET, MYAPP_TOKEN
    return None


def _rest_of_line(text: str, at: int) -> str:
    end = text.find("\n", at)
    return text[at : len(text) if end < 0 else end]


def _assignment(text: str, m: re.Match[str]) -> SecretMatch | None:
    word = _key_word(m.group("key"))
    if word is None or (m.group("op") == "=" and text.startswith("=", m.end("op"))):
        return None  # not a secret name, or a comparison (==)
    kind, minimum = _kind_of(word)
    value, lo, hi, quoted = unquote(m.group("value"))
    if not quoted and (cut := _NEXT_FIELD.search(value)):
        value, hi = value[: cut.start()], lo + cut.start()
    if len(value) < minimum or placeholder(value, m.group("key"), quoted):
        return None
    named = kind != "password" and "-" in value and _PROSE_WORD.match(value)
    if named and m.group("op") in (":", "："):
        # ``existingSecret: db-credentials``: in YAML, the name of a secret object. (A
        # password of such words, "correct-horse-battery", still counts.)
        return None
    if m.group("op") == "=" and not quoted and _IDENTIFIER.match(value) and not has_digit(value):
        # ``self.token = nextchar``, ``password=getpass_unicode``: code naming a variable.
        # A bare word is a value only in an env file, a query string or a command flag.
        key_start = m.start("key")
        before = text[max(0, key_start - 2) : key_start]
        env_name = is_env_name(m.group("key")) and not text[m.end("key") : m.start("op")]
        if not (env_name or before.endswith(("?", "&", "--"))):
            return None
    if m.group("op") in (":", "：") and not quoted and not plausible(value, minimum):
        # After a colon prose may follow ("Password: must be 12 characters"), or a type
        # ("api_key: SecretStr"). A bare word counts only as a lower-case YAML value
        # ending its line.
        rest = _rest_of_line(text, m.end("value"))
        if rest.strip() or not value.islower() or len(value) < 8:
            return None
    start = m.start("value") + lo
    return SecretMatch(kind, start, start + (hi - lo))


# What an assignment that counts cannot be written without: a key ending with a secret
# word (every ending _KEY_WORD takes), right before the operator, over the lowered text.
_KEY_THEN_OPERATOR = lazy_compile(
    "(?:" + any_of(("pass", "password", "passwd", "passphrase", "secret", "key", "token",
                    "credential", "credentials", "psk", "pw", "pwd"))
    + ")[\"'`*\\]]{0,3}[ \t]{0,3}(?::=|=>|=|:|：)"
)  # fmt: skip
_KEY_HINTS = ("pass", "secret", "key", "token", "credential", "psk", "pw")
_PROSE_HINTS = ("pass", "pw", "token", "secret", "api key")
_BARE_WORDS = ("pass", "pw", "token", "api key")  # the key words of _BARE and _SET_TO
_FOREIGN_ASCII = ("passwort", "kennwort", "mot de passe", "senha")


def _assignments(text: str) -> Iterator[SecretMatch]:
    low = lowered(text)
    if not any(hint in low for hint in _KEY_HINTS) or _KEY_THEN_OPERATOR.search(low) is None:
        return
    at = 0
    while found := _ASSIGNMENT.search(text, at):
        secret = _assignment(text, found)
        if secret:
            yield secret
            at = found.end()
        else:
            at = found.start("value")  # the value may hold an assignment of its own


def _prose_value(value: str, quoted: bool) -> bool:
    """Whether a value written in a sentence is a secret rather than the next word."""
    if quoted:
        return len(value) >= 4
    if _PROSE_WORD.match(value) or len(value) < 6:
        return False
    if value.isalpha():  # "is reset", "is stored": a camel-cased word may be one
        return any(ch.isupper() for ch in value[1:]) and any(ch.islower() for ch in value)
    return plausible(value, 6)


def _strong(value: str) -> bool:
    """Digits and letters, and mixed case or a symbol: what no word of prose has."""
    cased = any(ch.isupper() for ch in value) and any(ch.islower() for ch in value)
    symbol = any(not ch.isalnum() for ch in value)
    return has_digit(value) and any(ch.isalpha() for ch in value) and (cased or symbol)


# Where a match of each prose pattern can start (lower-cased): its key word, its verb, or
# its first word. In an ASCII text the pattern is tried only there (finditer_at).
_STARTS: dict[re.Pattern[str], tuple[str, ...]] = {
    _NATURAL: ("pass", "pw", "api key", "secret", "access token", "auth token", "token",
               "shared secret"),
    _BARE: ("pass", "pw", "token", "api key"),
    _SET_TO: ("set", "chang", "reset"),
    _USE_AS: ("use",),
    _USER_SLASH: ("cred", "login", "log in", "sign in"),
}  # fmt: skip


def _natural(text: str) -> Iterator[SecretMatch]:
    low = lowered(text)
    patterns = []
    if any(hint in low for hint in _PROSE_HINTS):
        patterns.append(_NATURAL)
        if any(word in low for word in _BARE_WORDS):  # "secret" alone: neither can match
            patterns.append(_BARE)
            if "set" in low or "chang" in low:  # set, reset, change, changed, changing
                patterns.append(_SET_TO)
        if "use " in low:
            patterns.append(_USE_AS)
    if "/" in text and any(word in low for word in ("cred", "login", "log in", "sign in")):
        patterns.append(_USER_SLASH)
    if not text.isascii() or any(word in low for word in _FOREIGN_ASCII):
        patterns.append(_FOREIGN)
    for pattern in patterns:
        starts = _STARTS.get(pattern)
        found = finditer_at(pattern, text, low, starts) if starts else pattern.finditer(text)
        for m in found:
            value, lo, hi, quoted = unquote(m.group("value"))
            if not quoted:  # a bracket opening what follows the value: "X（until Friday）"
                value = value.split("(", 1)[0].rstrip(".,;:!?")
                hi = lo + len(value)
            key = m.group("key")
            if placeholder(value, key, quoted) or not _prose_value(value, quoted):
                continue  # "the password is reset", "密码是必填的"
            if pattern is _BARE and not _strong(value):
                continue
            start = m.start("value") + lo
            if pattern is _USER_SLASH and (not plausible(value, 6) or _SLUG.match(value)):
                continue  # "login with dana/main", "credentials in vault/prod-db-2": a path
            kind = "password" if pattern in (_FOREIGN, _USER_SLASH) else _kind_of(key)[0]
            yield SecretMatch(kind, start, start + (hi - lo))


# Overlapping matches are merged, so the union is redacted and nothing of either survives;
# the merged span is named by the earliest detector here: a key block over the assignment
# holding it, a GitHub token over the generic ``token=`` around it.
_DETECTORS: tuple[Callable[[str], Iterator[SecretMatch]], ...] = (
    private_keys,
    shapes,
    aws_secret_near_id,
    contextual,
    _assignments,
    _natural,
)
_SHAPE_RANK = _DETECTORS.index(shapes)


# What every detector needs somewhere in the text: a long token-like run (every key and
# token shape is at least 14 such characters), a secret word (assignments, natural
# language, other languages, key blocks), or a URL with credentials. Most memories have
# none, and are spared the detectors (a fifth of a bulk write otherwise). One alternation
# of plain strings over the case-folded text: a case-insensitive one costs ten times more,
# and sixty substring tests in Python as much again.
_LONG_RUN = lazy_compile(r"[A-Za-z0-9_\-+/%]{14,}")
_HINTS = (
    "pass", "secret", "key", "token", "credential", "bearer", "basic", "auth", "pw", "psk",
    "密码", "口令", "密钥", "秘钥", "私钥", "令牌", "パスワード", "暗証番号", "비밀번호",
    "kennwort", "contraseña", "senha", "пароль",
    # commands whose flags carry a password (secret_values._SHORT_FLAG), and .netrc
    "curl", "wget", "http", "mysql", "mariadb", "docker", "podman", "helm", "twine",
    "sshpass", "skopeo", "buildah", "redis", "oc ", "machine", "/:_",
    # a user and password after a word for credentials (_USER_SLASH)
    "cred", "login", "log in", "sign in",
)  # fmt: skip


_HINT = lazy_compile(any_of(_HINTS))

# A text with a long run but none of the words above nor a URL with credentials can hold
# only a token of a recognisable shape: every other detector looks for one of those words
# first (a key block for "key", an assignment or a flag for its key's word, a command for
# its name, another language for its word), so only these two read it.
_TOKEN_DETECTORS = (_DETECTORS.index(shapes), _DETECTORS.index(aws_secret_near_id))


def _worded(text: str) -> bool:
    """Whether ``text`` holds a secret word, a command's name or a URL with credentials."""
    return _HINT.search(folded_case(text)) is not None or ("://" in text and "@" in text)


Span = tuple[int, int, int, str]  # start, end, detector rank, kind


def _spans(view: Folded, worded: bool) -> list[Span]:
    """Every detector's matches in the folded text, as spans of the original; with
    ``worded`` False, only the detectors of token shapes run (none other can match)."""
    text = view.text
    ranks = range(len(_DETECTORS)) if worded else _TOKEN_DETECTORS
    found = [
        (view.start(m.start), view.end(m.end), rank, m.kind)
        for rank in ranks
        for m in _DETECTORS[rank](text)
        if m.end > m.start
    ]
    joined = join_breaks(text)
    if joined is not None:
        # A key wrapped across lines: the token shapes read the joined text, and a match
        # that crosses a joint is taken (one within a line was found above).
        glued, joints = joined
        for m in shapes(glued.text):
            if any(m.start < j < m.end for j in joints):
                start, end = glued.start(m.start), glued.end(m.end)
                found.append((view.start(start), view.end(end), _SHAPE_RANK, m.kind))
    return found


def find_secrets(text: str) -> list[SecretMatch]:
    """Every secret in ``text``, in order, never overlapping."""
    view = fold(text)
    worded = _worded(view.text)
    if not worded and _LONG_RUN.search(view.text) is None:
        return []
    found = sorted(s for s in _spans(view, worded) if s[1] > s[0])
    merged: list[SecretMatch] = []
    best = 0
    for start, end, rank, kind in found:
        last = merged[-1] if merged else None
        if last is not None and start < last.end:
            if rank < best:
                best = rank
                last_kind = kind
            else:
                last_kind = last.kind
            merged[-1] = SecretMatch(last_kind, last.start, max(last.end, end))
        else:
            merged.append(SecretMatch(kind, start, end))
            best = rank
    return merged


def redact(text: str) -> tuple[str, list[str]]:
    """``text`` with each secret replaced by ``[REDACTED:kind]``, and the kinds, in order."""
    found = find_secrets(text)
    out: list[str] = []
    done = 0
    for secret in found:
        out += [text[done : secret.start], f"[REDACTED:{secret.kind}]"]
        done = secret.end
    out.append(text[done:])
    return "".join(out), [s.kind for s in found]

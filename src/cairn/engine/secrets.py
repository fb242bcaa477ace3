"""Secrets in text written as memory: find them, or redact them to ``[REDACTED:kind]``.

A memory store keeps what it is told for a long time and prints it into prompts, so a key
pasted into a note must not be kept. Two kinds of detectors:

- *shapes*: credentials with a recognisable form (provider prefixes, JWTs, private key
  blocks, connection strings, passwords inside URLs), matched whole;
- *assignments*: a secret-named key followed by a value (``password=…``, ``"api_key":
  "…"``, ``token: …``, ``密码：…``), where only the value is redacted so the note keeps its
  meaning.

False positives mangle memories, so every detector wants evidence beyond a keyword: a
value after the key, of a plausible length, not a placeholder (``${VAR}``, ``None``,
``<your key>``, ``****``), and, where prose could follow a colon, something a word would
not have (a digit or a symbol). "password reset flow", "token bucket", git SHAs, UUIDs
and base64 digests are left alone.

Pure functions; nothing here logs or stores the text.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from cairn.patterns import lazy_compile


@dataclass(frozen=True, slots=True)
class SecretMatch:
    """A secret at ``text[start:end]``; ``kind`` names what it is, never what it holds."""

    kind: str
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class _Shape:
    kind: str
    pattern: re.Pattern[str]
    group: str | int = 0  # which part of the match is the secret
    check: Callable[[str], bool] | None = None


def _has_digit(value: str) -> bool:
    return any(ch.isdigit() for ch in value)


def _mixed(value: str) -> bool:
    """Letters and digits both: random keys have them, words and counts do not."""
    return _has_digit(value) and any(ch.isalpha() for ch in value)


def _enough_digits(value: str) -> bool:
    return sum(ch.isdigit() for ch in value) >= 4


# Boundaries around prefixed tokens. Only letters and digits count, so punctuation glued
# to a token ("-----BEGIN" pasted right after it) cannot hide it; and only the short,
# word-like "sk-" prefix needs a left boundary ("task-3f2a…" is no key). Distinctive
# prefixes (AKIA, ghp_, xoxb-) are found even glued to other text.
_B = r"(?<![A-Za-z0-9])"
_E = r"(?![A-Za-z0-9])"

SHAPES: tuple[_Shape, ...] = (
    _Shape("anthropic-api-key", lazy_compile(_B + r"sk-ant-[A-Za-z0-9_\-]{20,300}"), check=_mixed),
    _Shape(
        "openai-api-key",
        lazy_compile(_B + r"sk-(?:proj|svcacct|admin|None)-[A-Za-z0-9_\-]{20,300}"),
        check=_mixed,
    ),
    _Shape("openai-api-key", lazy_compile(_B + r"sk-[A-Za-z0-9]{32,200}" + _E), check=_mixed),
    _Shape("stripe-key", lazy_compile(r"(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,200}" + _E)),
    _Shape("stripe-key", lazy_compile(r"whsec_[A-Za-z0-9]{24,200}" + _E)),
    _Shape("github-token", lazy_compile(r"(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36,255}" + _E)),
    _Shape("github-token", lazy_compile(r"github_pat_[A-Za-z0-9_]{40,255}" + _E)),
    _Shape("gitlab-token", lazy_compile(r"glpat-[A-Za-z0-9_\-]{20,100}" + _E)),
    _Shape(
        "slack-token",
        lazy_compile(r"xox[abposre]-[A-Za-z0-9\-]{10,250}" + _E),
        check=_enough_digits,
    ),
    _Shape("slack-token", lazy_compile(r"xapp-[0-9]-[A-Za-z0-9\-]{10,250}" + _E)),
    _Shape(
        "slack-webhook",
        lazy_compile(
            r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/+\-]{10,300}"
        ),
    ),
    # Fixed-length ids: no right-hand boundary, so text glued after one does not hide it.
    _Shape("google-api-key", lazy_compile(r"AIza[0-9A-Za-z_\-]{35}")),
    _Shape("aws-access-key-id", lazy_compile(r"(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}")),
    _Shape(
        "aws-secret-access-key",
        lazy_compile(
            r"(?i)(?:aws_?secret_?(?:access_?)?key|secret_?access_?key)[\"']?\s*(?:=>|[:=])\s*"
            r"[\"']?(?P<v>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])"
        ),
        group="v",
    ),
    _Shape(
        "azure-connection-string",
        lazy_compile(
            r"(?i)(?:DefaultEndpointsProtocol=https?|Endpoint=sb://)[^\s\"'<>]{0,400}?"
            r"(?:AccountKey|SharedAccessKey)=[A-Za-z0-9+/]{20,200}={0,2}[^\s\"'<>]{0,400}"
        ),
    ),
    _Shape(
        "azure-connection-string",
        lazy_compile(r"(?i)(?:AccountKey|SharedAccessKey)=(?P<v>[A-Za-z0-9+/]{20,200}={0,2})"),
        group="v",
    ),
    _Shape(
        "azure-sas-token",
        lazy_compile(r"(?i)[?&]sig=(?P<v>[A-Za-z0-9%+/]{20,200}(?:%3D|=){0,2})"),
        group="v",
    ),
    _Shape(
        "jwt",
        lazy_compile(
            r"eyJ[A-Za-z0-9_\-]{10,2000}\.eyJ[A-Za-z0-9_\-]{10,8000}\.[A-Za-z0-9_\-]{0,2000}"
        ),
    ),
    _Shape(
        "token",
        lazy_compile(r"(?i)\bbearer\s+(?P<v>[A-Za-z0-9._~+/\-]{20,2000}=*)"),
        group="v",
        check=_mixed,
    ),
)

_KEY_BEGIN = lazy_compile(r"-----BEGIN ([A-Z0-9 ]{0,40}?)PRIVATE KEY(?: BLOCK)?-----")
_KEY_END = lazy_compile(r"-----END [A-Z0-9 ]{0,40}?PRIVATE KEY(?: BLOCK)?-----")
# What follows a BEGIN line when the END is missing: base64 lines, real or escaped line
# breaks ("\\n" inside JSON) and PEM headers; prose words are too short to be taken along.
_KEY_BODY = lazy_compile(
    r"(?:\s|\\[nr]|[A-Z][A-Za-z\-]{2,30}: [^\n\\]{0,200}"
    r"|[A-Za-z0-9+/=]{16,}(?=[\s\\\"]|$))*"
)
_GCP_FIELD = lazy_compile(r"\"private_key\"\s*:\s*\"$")
_KEY_SPAN_LIMIT = 20_000


def _private_keys(text: str) -> Iterator[SecretMatch]:
    """PEM, OpenSSH and PGP private key blocks; a block missing its END still counts."""
    ends = [m.end() for m in _KEY_END.finditer(text)]
    for begin in _KEY_BEGIN.finditer(text):
        at = bisect.bisect_left(ends, begin.end() + 1)
        if at < len(ends) and ends[at] - begin.end() <= _KEY_SPAN_LIMIT:
            stop = ends[at]
        else:
            body = _KEY_BODY.match(text, begin.end())
            stop = body.end() if body else begin.end()
        in_gcp_json = _GCP_FIELD.search(text, max(0, begin.start() - 80), begin.start())
        yield SecretMatch(
            "gcp-service-account-key" if in_gcp_json else "private-key", begin.start(), stop
        )


_AWS_ID = lazy_compile(r"(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}")
_AWS_SECRET = lazy_compile(r"(?<![A-Za-z0-9/+=])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])")


def _aws_secret_near_id(text: str) -> Iterator[SecretMatch]:
    """A 40-character AWS secret key written shortly after its access key id."""
    for key_id in _AWS_ID.finditer(text):
        near = _AWS_SECRET.search(text, key_id.end(), key_id.end() + 160)
        if near:
            value = near.group()
            if any(c.isupper() for c in value) and any(c.islower() for c in value):
                yield SecretMatch("aws-secret-access-key", near.start(), near.end())


# Credentials inside a URL: scheme://user:password@host. Only the password is redacted.
_URL_CREDENTIALS = lazy_compile(
    r"(?i)\b[a-z][a-z0-9+.\-]{1,20}://[^\s:/?#@\"'<>]{0,200}:(?P<v>[^\s/?#@\"'<>]{1,300})@"
    r"(?=[^\s/?#@\"'<>])"
)


# -- assignments ---------------------------------------------------------------------

# A secret-named key (JSON, YAML, .env, code, prose) followed by an operator and a value.
# The key starts a token: never inside a word, nor inside a ``[REDACTED:kind]`` marker.
_ASSIGNMENT = lazy_compile(
    r"(?:(?<=--)|(?<![A-Za-z0-9_.:\[\-]))(?P<key>[A-Za-z][A-Za-z0-9_.\-]{0,60})"
    r"[\"'`*\]]{0,3}[ \t]{0,3}"
    r"(?P<op>:=|=>|=|:)[ \t]{0,8}"
    r"(?P<value>\"[^\"\n]{1,300}\"|'[^'\n]{1,300}'|`[^`\n]{1,300}`|[^\s\"'`]{1,300})"
)
# The secret word at the end of the key; its kind and the shortest value worth flagging.
_KEY_WORD = lazy_compile(
    r"(?i)(pass(?:word|wd|phrase)|secret(?:[_\-]?key)?|(?:api|access|private)[_\-]?key"
    r"|(?:auth|access|refresh|session|bearer|api)?[_\-]?token|credentials?)$"
)
_NATURAL = lazy_compile(
    r"(?i)\b(?P<key>password|passphrase|passwd|api key|secret key|access token|auth token)"
    r"\s+(?:is|was)\s+"
    r"(?P<value>\"[^\"\n]{1,300}\"|'[^'\n]{1,300}'|“[^”\n]{1,300}”|[^\s\"'`]{1,300})"
)
# Other languages: the key word, a colon, equals sign or copula, then the value. The
# unquoted value is read in ASCII only, so the sentence after it is not taken along.
_FOREIGN = lazy_compile(
    r"(?i)(?P<key>密码|口令|密钥|秘钥|私钥|令牌|访问令牌|パスワード|暗証番号|비밀번호"
    r"|passwort|kennwort|mot de passe|contraseña|senha|пароль)"
    r"\s*(?:[:：=]|是|为|為|は|는|은)\s*"
    r"(?P<value>[\"“「『'][^\"”」』'\n]{1,300}[\"”」』']|[!-~]{1,300})"
)
# Words that stand where a value would in docs, types and templates.
_PLACEHOLDERS = frozenset(
    """none null nil undefined true false yes no required optional empty unset redacted
    hidden masked secret password passwd passphrase token key apikey api_key changeit
    string str int bool boolean text value example sample placeholder your_password
    your_token your_api_key xxx n/a na tbd todo see below above same expired invalid
    missing needed env environment variable pass pw pwd user username""".split()  # noqa: SIM905
)
_REFERENCE = lazy_compile(
    r"^(?:[$%#&@]|\{|<|\[|\*+$|x+$|\.+$|os\.|process\.env|env\.|self\.|this\.|config\.|settings\.)",
    re.IGNORECASE,
)
_ENV_NAME = lazy_compile(r"^[A-Z][A-Z_]*$")  # YOUR_API_KEY, DB_PASSWORD: a name, not a value
_IDENTIFIER = lazy_compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_ATTRIBUTE = lazy_compile(r"^[A-Za-z_]\w*(?:\.\w+)+$")
_TRAILING = ".,;:!?)]}>"


def _kind_of(word: str) -> tuple[str, int]:
    w = word.lower().replace("-", "_")
    if w.startswith("pass"):
        return "password", 4
    if w.startswith("secret"):
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
    if start == 0 or word.lower().startswith("pass"):
        return word
    before = key[start - 1]
    if before in "_-." or before.isdigit() or (word[0].isupper() and not before.isupper()):
        return word
    if before.isupper() and word.isupper():
        return word  # all capitals, as env names are: APPSECRET, MYAPP_TOKEN
    return None


def _unquote(raw: str) -> tuple[str, int, int, bool]:
    """The value inside its quotes, with its offsets in ``raw``, and whether it was quoted."""
    if len(raw) >= 2 and raw[0] in "\"'`“「『" and raw[-1] in "\"'`”」』":
        return raw[1:-1], 1, len(raw) - 1, True
    value = raw.rstrip(_TRAILING)
    return value, 0, len(value), False


def _placeholder(value: str, key: str, quoted: bool = False) -> bool:
    """A name, reference, type or filler where a value would be, not a value."""
    v = value.strip()
    low = v.lower()
    return (
        not v
        or low in _PLACEHOLDERS
        or low == key.lower()
        or low.startswith("[redacted")
        or bool(_REFERENCE.match(v))
        or (not quoted and ("(" in v or "[" in v))  # a call, a subscript, a type
        or len(set(v)) == 1
        or bool(_ENV_NAME.match(v))
        or bool(_ATTRIBUTE.match(v))
        or v.startswith(("http://", "https://", "/"))
    )


def _plausible(value: str, minimum: int) -> bool:
    """Long enough, and something a word would not have: a digit or a symbol."""
    return len(value) >= minimum and (_has_digit(value) or any(not ch.isalnum() for ch in value))


def _rest_of_line(text: str, at: int) -> str:
    end = text.find("\n", at)
    return text[at : len(text) if end < 0 else end]


def _assignment(text: str, m: re.Match[str]) -> SecretMatch | None:
    word = _key_word(m.group("key"))
    if word is None or (m.group("op") == "=" and text.startswith("=", m.end("op"))):
        return None  # not a secret name, or a comparison (==)
    kind, minimum = _kind_of(word)
    value, lo, hi, quoted = _unquote(m.group("value"))
    if len(value) < minimum or _placeholder(value, m.group("key"), quoted):
        return None
    if m.group("op") == "=" and not quoted and _IDENTIFIER.match(value) and not _has_digit(value):
        # ``self.token = nextchar``, ``password=getpass_unicode``: code naming a variable.
        # A bare word is a value only in an env file, a query string or a command flag.
        key_start = m.start("key")
        before = text[max(0, key_start - 2) : key_start]
        env_name = bool(_ENV_NAME.match(m.group("key"))) and not text[m.end("key") : m.start("op")]
        if not (env_name or before.endswith(("?", "&", "--"))):
            return None
    if m.group("op") == ":" and not quoted and not _plausible(value, minimum):
        # After a colon prose may follow ("Password: must be 12 characters"), or a type
        # ("api_key: SecretStr"). A bare word counts only as a lower-case YAML value
        # ending its line.
        rest = _rest_of_line(text, m.end("value"))
        if rest.strip() or not value.islower() or len(value) < 8:
            return None
    start = m.start("value") + lo
    return SecretMatch(kind, start, start + (hi - lo))


def _assignments(text: str) -> Iterator[SecretMatch]:
    at = 0
    while found := _ASSIGNMENT.search(text, at):
        secret = _assignment(text, found)
        if secret:
            yield secret
            at = found.end()
        else:
            at = found.start("value")  # the value may hold an assignment of its own


def _natural(text: str) -> Iterator[SecretMatch]:
    for pattern in (_NATURAL, _FOREIGN):
        for m in pattern.finditer(text):
            value, lo, hi, quoted = _unquote(m.group("value"))
            key = m.group("key")
            if _placeholder(value, key, quoted):
                continue
            if not quoted and not (_plausible(value, 6) and not value.isalpha()):
                continue  # "the password is reset", "密码是必填的"
            if quoted and len(value) < 4:
                continue
            start = m.start("value") + lo
            kind = "password" if pattern is _FOREIGN else _kind_of(key)[0]
            yield SecretMatch(kind, start, start + (hi - lo))


def _url_credentials(text: str) -> Iterator[SecretMatch]:
    for m in _URL_CREDENTIALS.finditer(text):
        if not _placeholder(m.group("v"), "password"):
            yield SecretMatch("url-credentials", m.start("v"), m.end("v"))


def _shapes(text: str) -> Iterator[SecretMatch]:
    for shape in SHAPES:
        for m in shape.pattern.finditer(text):
            if shape.check is None or shape.check(m.group(shape.group)):
                yield SecretMatch(shape.kind, m.start(shape.group), m.end(shape.group))


# Overlapping matches are merged, so the union is redacted and nothing of either survives;
# the merged span is named by the earliest detector here: a key block over the assignment
# holding it, a GitHub token over the generic ``token=`` around it.
_DETECTORS: tuple[Callable[[str], Iterator[SecretMatch]], ...] = (
    _private_keys,
    _shapes,
    _aws_secret_near_id,
    _url_credentials,
    _assignments,
    _natural,
)


# What every detector needs somewhere in the text: a long token-like run (every key and
# token shape is at least 14 such characters), a secret word (assignments, natural
# language, other languages, key blocks), or a URL with credentials. Most memories have
# none, and are spared the detectors (a fifth of a bulk write otherwise). Plain substring
# tests on the case-folded text: a case-insensitive alternation costs ten times more.
_LONG_RUN = lazy_compile(r"[A-Za-z0-9_\-+/%]{14,}")
_HINTS = (
    "pass", "secret", "key", "token", "credential", "bearer", "密码", "口令", "密钥", "秘钥",
    "私钥", "令牌", "パスワード", "暗証番号", "비밀번호", "kennwort", "contraseña", "senha",
    "пароль",
)  # fmt: skip


def _may_hold(text: str) -> bool:
    folded = text.casefold()
    return (
        any(hint in folded for hint in _HINTS)
        or _LONG_RUN.search(text) is not None
        or ("://" in text and "@" in text)
    )


def find_secrets(text: str) -> list[SecretMatch]:
    """Every secret in ``text``, in order, never overlapping."""
    if not _may_hold(text):
        return []
    found = [
        (m.start, m.end, rank, m.kind)
        for rank, detector in enumerate(_DETECTORS)
        for m in detector(text)
        if m.end > m.start
    ]
    found.sort()
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

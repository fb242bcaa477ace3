"""Values that stand where a secret would, and the places a value is a secret by where it
is written: a password inside a URL, an ``Authorization: Basic`` header, a docker
``"auth"``, a ``.netrc`` entry, a command's password flag, an XML element, a Kubernetes
``name``/``value`` pair, a Dockerfile ``ENV``, an ``.npmrc`` ``_authToken``.

A value is kept when it is a placeholder, a reference or a name (``${VAR}``, ``None``,
``<your key>``, ``****``, ``os.environ[...]``): those are what docs and templates hold.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterator

from cairn.engine.secret_shapes import SecretMatch, has_digit
from cairn.patterns import lazy_compile, lowered

# Words that stand where a value would in docs, types and templates.
PLACEHOLDERS = frozenset(
    """none null nil undefined true false yes no required optional empty unset redacted
    hidden masked secret password passwd passphrase token key apikey api_key changeit
    string str int bool boolean text value example sample placeholder your_password
    your_token your_api_key xxx n/a na tbd todo see below above same expired invalid
    missing needed env environment variable pass pw pwd user username default
    your-api-key-here your_api_key_here your-token-here your-password-here
    your-secret-here secret-here token-here""".split()  # noqa: SIM905
)
_REFERENCE = lazy_compile(
    r"^(?:[$%#&@]|\{|<|\[|!|\*+$|x+$|\.+$|os\.|process\.env|env\.|self\.|this\.|config\."
    r"|settings\.|secrets\.|vars\.)",
    re.IGNORECASE,
)
_ENV_NAME = lazy_compile(r"^[A-Z][A-Z_]*$")  # YOUR_API_KEY, DB_PASSWORD: a name, not a value
_ATTRIBUTE = lazy_compile(r"^[A-Za-z_]\w*(?:\.\w+)+$")
_TEMPLATE_TAIL = lazy_compile(r"(?:\.\.\.|…|x{4,}|X{4,}|\*{3,})$")
TRAILING = ".,;:!?)]}>"


def is_env_name(value: str) -> bool:
    return bool(_ENV_NAME.match(value))


def unquote(raw: str) -> tuple[str, int, int, bool]:
    """The value inside its quotes, with its offsets in ``raw``, and whether it was quoted."""
    if len(raw) >= 2 and raw[0] in "\"'`“「『" and raw[-1] in "\"'`”」』":
        return raw[1:-1], 1, len(raw) - 1, True
    value = raw.rstrip(TRAILING)
    return value, 0, len(value), False


def placeholder(value: str, key: str, quoted: bool = False) -> bool:
    """A name, reference, type or filler where a value would be, not a value."""
    v = value.strip()
    low = v.lower()
    return (
        not v
        or low in PLACEHOLDERS
        or low == key.lower()
        or low.startswith("[redacted")
        or (bool(_REFERENCE.match(v)) and not _random_after_sigil(v))
        or bool(_TEMPLATE_TAIL.search(v))
        or (not quoted and ("(" in v or "[" in v))  # a call, a subscript, a type
        or len(set(v)) == 1
        or bool(_ENV_NAME.match(v))
        or bool(_ATTRIBUTE.match(v))
        or v.startswith(("http://", "https://", "/", "~/"))
    )


def _random_after_sigil(value: str) -> bool:
    """``@JF76cNcsqDo*I``: a password that starts with a symbol, not a ``$VAR`` or
    ``{{ name }}`` (digits, upper and lower case letters, no bracket, ten or more)."""
    return (
        len(value) >= 10
        and value[0] in "$%#&@!*"
        and not any(ch in value for ch in "{}()[]<>")
        and has_digit(value)
        and any(ch.isupper() for ch in value)
        and any(ch.islower() for ch in value)
    )


def plausible(value: str, minimum: int) -> bool:
    """Long enough, and something a word would not have: a digit or a symbol."""
    return len(value) >= minimum and (has_digit(value) or any(not ch.isalnum() for ch in value))


# Credentials inside a URL: scheme://user:password@host. Only the password is redacted.
_URL_CREDENTIALS = lazy_compile(
    r"(?i)\b[a-z][a-z0-9+.\-]{1,20}://[^\s:/?#@\"'<>]{0,200}:(?P<v>[^\s/?#@\"'<>]{1,300})@"
    r"(?=[^\s/?#@\"'<>])"
)


def _url_credentials(text: str) -> Iterator[SecretMatch]:
    for m in _URL_CREDENTIALS.finditer(text):
        if not placeholder(m.group("v"), "password"):
            yield SecretMatch("url-credentials", m.start("v"), m.end("v"))


def _user_and_password(value: str) -> bool:
    """Base64 of ``user:password``, as Basic auth and docker's ``auth`` hold."""
    try:
        decoded = base64.b64decode(value + "=" * (-len(value) % 4), validate=True)
        text = decoded.decode("utf-8")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return False
    _, colon, password = text.partition(":")
    return bool(colon and password) and text.isprintable()


_BASIC = lazy_compile(r"(?i)\bbasic\s+(?P<v>[A-Za-z0-9+/]{6,2000}={0,2})(?![A-Za-z0-9+/=])")
_DOCKER_AUTH = lazy_compile(
    r"(?i)[\"']auth[\"']\s*:\s*[\"'](?P<v>[A-Za-z0-9+/]{6,2000}={0,2})[\"']"
)
_NETRC = lazy_compile(
    r"(?i)\bmachine\s+\S+(?:\s+(?:login|account)\s+\S+)*\s+password\s+(?P<v>[^\s#]+)"
)
_NPMRC = lazy_compile(r"(?i)/:_(?:authToken|auth|password)\s*=\s*(?P<v>[^\s\"']+)")
_FLAG = lazy_compile(
    r"(?i)(?<![\w-])--?(?:password|passwd|pass|token|api-?key|secret|auth-token|access-token"
    r"|client-secret)[ \t]+(?P<v>\"[^\"\n]{1,300}\"|'[^'\n]{1,300}'|[^\s\"'`-][^\s\"'`]{0,300})"
)
# Short flags that are a password for the command they belong to.
_SHORT_FLAG = lazy_compile(
    r"(?i)\b(?:(?:mysql\w*|mariadb\w*)\b[^\n]{0,120}?\s-p(?P<a>[^\s\-][^\s]{0,200})"
    r"|(?:(?:docker|podman|helm|oc|skopeo|buildah|nerdctl)\b[^\n]{0,60}?\blogin\b|twine|sshpass)"
    r"[^\n]{0,120}?\s-p[ \t]+"
    r"(?P<b>\"[^\"\n]+\"|'[^'\n]+'|[^\s\-]\S{0,200})"
    r"|redis-cli\b[^\n]{0,120}?\s-a[ \t]+(?P<c>\S{1,200})"
    r"|\b(?:curl|wget|http)\b[^\n]{0,200}?\s(?:-u|--user)[ \t]+[\"']?[^\s:\"']{1,100}:"
    r"(?P<d>[^\s\"']{1,200})"
    r"|\becho[ \t]+(?P<e>'[^'\n]{1,200}'|\"[^\"\n]{1,200}\"|[^\s|]{1,200})"
    r"[ \t]*\|[ \t]*[^\n]{0,40}?"
    r"\b(?:docker|podman|helm|buildah|skopeo|oras|nerdctl)\b[^\n]{0,120}?--password-stdin)"
)
_SECRET_NAME = r"[\w.\-]*(?:password|passwd|secret|token|api_?key|apikey|credentials?|psk)"
_XML = lazy_compile(
    r"(?i)<(?P<key>" + _SECRET_NAME + r")>(?P<v>[^<\n]{1,300})</(?P=key)>"
    r"|(?:name|key)=[\"'](?P<key2>" + _SECRET_NAME + r")[\"']\s+"
    r"value=[\"'](?P<v2>[^\"'\n]{1,300})[\"']"
)
_KUBE_PAIR = lazy_compile(
    r"(?i)\bname:[ \t]*[\"']?(?P<key>" + _SECRET_NAME + r")[\"']?[ \t]*\r?\n[ \t-]*value:[ \t]*"
    r"(?P<v>\"[^\"\n]{1,300}\"|'[^'\n]{1,300}'|[^\s\"'#][^\n#]{0,300})"
)
_DOCKERFILE = lazy_compile(
    r"(?im)^[ \t]*(?:ENV|ARG)[ \t]+(?P<key>" + _SECRET_NAME + r")[ \t]+(?P<v>[^\s=][^\n]{0,300})$"
)
_DEFINE = lazy_compile(
    r"(?i)\b(?:define|setenv|putenv|set|put)\([ \t]*[\"'](?P<key>" + _SECRET_NAME + r")[\"']"
    r"[ \t]*,[ \t]*(?P<v>\"[^\"\n]{1,300}\"|'[^'\n]{1,300}')"
)


def _valued(kind: str, m: re.Match[str], group: str, key: str = "") -> SecretMatch | None:
    value, lo, hi, quoted = unquote(m.group(group).rstrip())
    if len(value) < 4 or placeholder(value, key or kind, quoted):
        return None
    start = m.start(group) + lo
    return SecretMatch(kind, start, start + (hi - lo))


# Where each short flag of _SHORT_FLAG stands (after a space: -p, -a, -u, --user), or
# docker's --password-stdin: a text with none is spared that pattern.
_SHORT_FLAG_AT = lazy_compile(r"(?i)\s-[-pau]|--password-stdin")
# The places a secret-named value is written, each with what it cannot be written without
# (lower-cased): an XML element's closing tag or a value attribute, a Kubernetes pair's
# "name:" and "value:" (both, so the rarer one), a Dockerfile's ENV or ARG, a call's
# opening bracket right after its name.
_NAMED_PLACES = (
    (_XML, ("</", "value=")),
    (_KUBE_PAIR, ("value:",)),
    (_DOCKERFILE, ("env", "arg")),
    (_DEFINE, ("define(", "env(", "set(", "put(")),
)
_FLAG_WORDS = ("-pass", "-token", "-api", "-secret", "-auth", "-access", "-client")
_COMMANDS = ("mysql", "mariadb", "docker", "podman", "helm", "twine", "sshpass", "oc ",
             "skopeo", "buildah", "redis-cli", "curl", "wget", "http", "echo")  # fmt: skip
_NAMES = ("pass", "secret", "token", "key", "credential", "psk")


def contextual(text: str) -> Iterator[SecretMatch]:
    """Values that are secrets by the place they are written in."""
    low = lowered(text)
    if "://" in text and "@" in text:
        yield from _url_credentials(text)
    if "basic" in low:
        for m in _BASIC.finditer(text):
            if _user_and_password(m.group("v")):
                yield SecretMatch("basic-auth", m.start("v"), m.end("v"))
    if "auth" in low:
        for m in _DOCKER_AUTH.finditer(text):
            if _user_and_password(m.group("v")):
                yield SecretMatch("docker-auth", m.start("v"), m.end("v"))
    if "machine" in low:
        for m in _NETRC.finditer(text):
            if found := _valued("password", m, "v"):
                yield found
    if "/:_" in text:
        for m in _NPMRC.finditer(text):
            if found := _valued("token", m, "v"):
                yield found
    if any(word in low for word in _FLAG_WORDS):
        yield from _flags(text)
    if any(command in low for command in _COMMANDS) and _SHORT_FLAG_AT.search(text):
        for m in _SHORT_FLAG.finditer(text):
            group = next(g for g in "abcde" if m.group(g) is not None)
            if found := _valued("password", m, group):
                yield found
    if any(name in low for name in _NAMES):
        for pattern, needles in _NAMED_PLACES:
            if not any(needle in low for needle in needles):
                continue
            for m in pattern.finditer(text):
                group = "v2" if "v2" in pattern.groupindex and m.group("v2") else "v"
                key = m.group("key2" if group == "v2" else "key")
                if found := _valued(_kind_of_name(key), m, group, key):
                    yield found


def _flags(text: str) -> Iterator[SecretMatch]:
    for m in _FLAG.finditer(text):
        value, _, _, quoted = unquote(m.group("v"))
        if not quoted and not plausible(value, 6):
            continue  # "pass the --token flag": a word, not a value
        if found := _valued("password" if "pass" in m.group().lower() else "token", m, "v"):
            yield found


def _kind_of_name(key: str) -> str:
    low = key.lower()
    if "pass" in low or low.endswith("psk"):
        return "password"
    if "secret" in low:
        return "secret"
    if "key" in low:
        return "api-key"
    if "credential" in low:
        return "credential"
    return "token"

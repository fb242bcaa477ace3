"""Credentials with a recognisable form, matched whole: the token formats of widely used
services (a provider prefix, a fixed length, a fixed alphabet), JWTs, and private key
blocks (PEM, OpenSSH, PGP, PuTTY, age).

Each shape wants more than its prefix: a length, and where a run of x's or a word could
stand in, a check that the value looks random (``sk_live_xxxxxxxx`` is a placeholder in
docs; ``ghp_ tokens`` is prose about them).
"""

from __future__ import annotations

import bisect
import functools
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from cairn.patterns import any_of, lazy_compile, lowered


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
    # Lower-case strings one of which the lower-cased text holds wherever the shape could
    # match: a substring test spares most texts the pattern (empty: always run it).
    needles: tuple[str, ...] = ()


def has_digit(value: str) -> bool:
    return any(ch.isdigit() for ch in value)


def _mixed(value: str) -> bool:
    """Letters and digits both: random keys have them, words and counts do not."""
    return has_digit(value) and any(ch.isalpha() for ch in value)


def _cased(value: str) -> bool:
    """Upper and lower case letters both (keys of letters only, as Hugging Face's)."""
    return any(ch.isupper() for ch in value) and any(ch.islower() for ch in value)


def _enough_digits(value: str) -> bool:
    return sum(ch.isdigit() for ch in value) >= 4


def _random(value: str) -> bool:
    """Not mostly one character (``sk_live_xxxxxxxx``, ``ghp_0000…``): a placeholder."""
    most = max((value.count(ch) for ch in set(value)), default=0)
    return most * 2 < len(value)


def _random_mixed(value: str) -> bool:
    return _random(value) and _mixed(value)


# Boundaries around prefixed tokens. Only letters and digits count, so punctuation glued
# to a token ("-----BEGIN" pasted right after it) cannot hide it; and only short,
# word-like prefixes ("sk-", "hf_", "key-") need a left boundary ("task-3f2a…" is no key).
# Distinctive prefixes (AKIA, ghp_, xoxb-) are found even glued to other text.
_B = r"(?<![A-Za-z0-9])"
_E = r"(?![A-Za-z0-9])"
_HEXES = r"[0-9a-fA-F]"


def _s(
    kind: str,
    source: str,
    check: Callable[[str], bool] | None = _random,
    needles: tuple[str, ...] = (),
) -> _Shape:
    return _Shape(kind, lazy_compile(source), check=check, needles=needles)


_GL = ("glpat-", "gldt-", "glrt-", "glptt-", "glcbt-", "glsoat-", "gloas-", "glft-", "glimt-",
       "glagent-", "glsa-", "glc-", "glffct-")  # fmt: skip
_AWS = ("akia", "asia", "abia", "acca")

SHAPES: tuple[_Shape, ...] = (
    _s("anthropic-api-key", _B + r"sk-ant-[A-Za-z0-9_\-]{20,300}", _random_mixed, ("sk-ant-",)),
    _s(
        "openai-api-key",
        _B + r"sk-(?:proj|svcacct|admin|None)-[A-Za-z0-9_\-]{20,300}",
        _random_mixed,
        ("sk-",),
    ),
    _s("openai-api-key", _B + r"sk-[A-Za-z0-9]{32,200}" + _E, _random_mixed, ("sk-",)),
    _s(
        "stripe-key",
        r"(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,200}" + _E,
        _random_mixed,
        ("_live_", "_test_"),
    ),
    _s("stripe-key", r"whsec_[A-Za-z0-9]{24,200}" + _E, _random_mixed, ("whsec_",)),
    _s(
        "github-token",
        r"(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36,255}" + _E,
        needles=("ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
    ),
    _s("github-token", r"github_pat_[A-Za-z0-9_]{40,255}" + _E, needles=("github_pat_",)),
    _s(
        "gitlab-token",
        r"gl(?:pat|dt|rt|ptt|cbt|soat|oas|ft|imt|agent|sa|c|ffct)-[A-Za-z0-9_\-]{20,100}" + _E,
        _random_mixed,
        _GL,
    ),
    _s("gitlab-token", r"GR1348941[A-Za-z0-9_\-]{20,60}" + _E, needles=("gr1348941",)),
    _s(
        "slack-token",
        r"xox[abposre]-[A-Za-z0-9\-]{10,250}" + _E,
        _enough_digits,
        ("xox",),
    ),
    _s("slack-token", r"xapp-[0-9]-[A-Za-z0-9\-]{10,250}" + _E, needles=("xapp-",)),
    _s(
        "slack-webhook",
        r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/+\-]{10,300}",
        None,
        ("hooks.slack.com",),
    ),
    _s(
        "discord-webhook",
        r"https://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/[0-9]{5,30}/"
        r"[A-Za-z0-9_\-]{30,120}",
        needles=("/api/webhooks/",),
    ),
    # Fixed-length ids: no right-hand boundary, so text glued after one does not hide it.
    _s("google-api-key", r"AIza[0-9A-Za-z_\-]{35}", needles=("aiza",)),
    _s("google-oauth-secret", r"GOCSPX-[0-9A-Za-z_\-]{28}", needles=("gocspx-",)),
    _s(
        "google-access-token",
        _B + r"ya29\.[0-9A-Za-z_\-]{30,2000}",
        _random_mixed,
        ("ya29.",),
    ),
    _s("aws-access-key-id", r"(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}", _random_mixed, _AWS),
    _Shape(
        "aws-secret-access-key",
        lazy_compile(
            r"(?i)(?:aws_?secret_?(?:access_?)?key|secret_?access_?key)[\"']?"
            r"(?:\s*(?:=>|[:=])\s*|[ \t]+)"
            r"[\"']?(?P<v>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])"
        ),
        group="v",
        needles=("secretkey", "secret_key", "secretaccess", "secret_access"),
    ),
    _Shape(
        "azure-connection-string",
        lazy_compile(
            r"(?i)(?:DefaultEndpointsProtocol=https?|Endpoint=sb://)[^\s\"'<>]{0,400}?"
            r"(?:AccountKey|SharedAccessKey)=[A-Za-z0-9+/]{20,200}={0,2}[^\s\"'<>]{0,400}"
        ),
        needles=("accountkey=", "sharedaccesskey="),
    ),
    _Shape(
        "azure-connection-string",
        lazy_compile(r"(?i)(?:AccountKey|SharedAccessKey)=(?P<v>[A-Za-z0-9+/]{20,200}={0,2})"),
        group="v",
        needles=("accountkey=", "sharedaccesskey="),
    ),
    _Shape(
        "azure-sas-token",
        lazy_compile(r"(?i)[?&]sig=(?P<v>[A-Za-z0-9%+/]{20,200}(?:%3D|=){0,2})"),
        group="v",
        needles=("sig=",),
    ),
    _s(
        "azure-client-secret",
        r"(?<![A-Za-z0-9_~.\-])[A-Za-z0-9_~.]{3}[0-9]Q~[A-Za-z0-9_~.\-]{31,34}"
        r"(?![A-Za-z0-9_~.\-])",
        needles=("q~",),
    ),
    _s("npm-token", _B + r"npm_[A-Za-z0-9]{36}" + _E, _random_mixed, ("npm_",)),
    _s("pypi-token", _B + r"pypi-AgE[A-Za-z0-9_\-]{50,1000}", needles=("pypi-age",)),
    _s(
        "huggingface-token",
        _B + r"(?:hf_|api_org_)[A-Za-z0-9]{30,40}" + _E,
        _cased,
        ("hf_", "api_org_"),
    ),
    _s("shopify-token", r"shp(?:at|ss|ca|pa)_" + _HEXES + "{32}" + _E, needles=("shp",)),
    _s("digitalocean-token", r"do[opr]_v1_" + _HEXES + "{64}" + _E, needles=("_v1_",)),
    _s(
        "sendgrid-key",
        _B + r"SG\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43}" + _E,
        needles=("sg.",),
    ),
    _s("mailgun-key", _B + r"key-[0-9a-f]{32}" + _E, _random_mixed, ("key-",)),
    _s(
        "mailgun-key",
        _B + r"[0-9a-f]{32}-[0-9a-f]{8}-[0-9a-f]{8}" + _E,
        _random_mixed,
        ("-",),
    ),
    _s(
        "discord-token",
        _B + r"[MNO][A-Za-z0-9]{23,27}\.[A-Za-z0-9_\-]{6}\.[A-Za-z0-9_\-]{27,40}" + _E,
        _random_mixed,
        (".",),
    ),
    _s(
        "telegram-bot-token",
        r"(?<![0-9])[0-9]{8,10}:AA[A-Za-z0-9_\-]{33}" + _E,
        needles=(":aa",),
    ),
    _s("twilio-key", _B + r"SK" + _HEXES + "{32}" + _E, _random_mixed, ("sk",)),
    _s("age-secret-key", r"AGE-SECRET-KEY-1[0-9A-Z]{58}", needles=("age-secret-key-1",)),
    _s(
        "vault-token",
        _B + r"hv[sbr]\.[A-Za-z0-9_\-]{24,300}" + _E,
        _random_mixed,
        ("hvs.", "hvb.", "hvr."),
    ),
    _s(
        "databricks-token",
        _B + r"dapi[0-9a-f]{32}(?:-[0-9])?" + _E,
        _random_mixed,
        ("dapi",),
    ),
    _s("postman-key", r"PMAK-[0-9a-f]{24}-[0-9a-f]{34}", needles=("pmak-",)),
    _s(
        "grafana-token",
        _B + r"gl(?:sa|c)_[A-Za-z0-9_=+/\-]{32,400}" + _E,
        _random_mixed,
        ("glsa_", "glc_"),
    ),
    _s("newrelic-key", r"NRAK-[A-Z0-9]{27}", needles=("nrak-",)),
    _s("linear-key", r"lin_api_[A-Za-z0-9]{40}", needles=("lin_api_",)),
    _s(
        "notion-token",
        _B + r"(?:secret_[A-Za-z0-9]{43}|ntn_[A-Za-z0-9]{46})" + _E,
        _random_mixed,
        ("secret_", "ntn_"),
    ),
    _s("supabase-token", r"sbp_[0-9a-f]{40}", needles=("sbp_",)),
    _s("square-token", r"sq0(?:atp|csp)-[0-9A-Za-z_\-]{22,60}", needles=("sq0",)),
    _s(
        "mapbox-token",
        r"sk\.eyJ[A-Za-z0-9_\-]{20,400}\.[A-Za-z0-9_\-]{16,100}",
        needles=("sk.eyj",),
    ),
    _s("atlassian-token", r"ATATT3[A-Za-z0-9_\-=]{150,300}", needles=("atatt3",)),
    _s(
        "jwt",
        r"eyJ[A-Za-z0-9_\-]{10,2000}\.eyJ[A-Za-z0-9_\-]{10,8000}\.[A-Za-z0-9_\-]{0,2000}",
        None,
        ("eyj",),
    ),
    _Shape(
        "token",
        lazy_compile(r"(?i)\bbearer\s+(?P<v>[A-Za-z0-9._~+/\-]{20,2000}=*)"),
        group="v",
        check=_mixed,
        needles=("bearer",),
    ),
)


# Every shape holds a run of at least 14 token characters (a prefix and its random part,
# or the random part alone): a text without one is spared every pattern.
_LONG_RUN = lazy_compile(r"[A-Za-z0-9_\-+/%]{14}")
# Needles in almost any text with a long run ("-", ".", "sk"): the shapes that have them
# (a Mailgun key of hex groups, a Discord token, a Twilio key) each hold 24 letters and
# digits in a row as well, which prose does not, and run only on a text that has them.
_COMMON = frozenset({"-", ".", "sk"})
_ALNUM_RUN = lazy_compile(r"[A-Za-z0-9]{24}")


@dataclass(frozen=True, slots=True)
class _Needles:
    strong: dict[str, tuple[int, ...]]  # a needle -> the shapes that want it
    weak: dict[str, tuple[int, ...]]  # a _COMMON needle -> shapes (each needs _ALNUM_RUN)
    any_strong: re.Pattern[str]  # one search: does the text hold any strong needle?


@functools.cache
def _needle_table() -> _Needles:
    """Each needle -> the shapes that want it, split by strength (built at first use)."""
    strong: dict[str, list[int]] = {}
    weak: dict[str, list[int]] = {}
    for at, shape in enumerate(SHAPES):
        for needle in shape.needles:
            (weak if needle in _COMMON else strong).setdefault(needle, []).append(at)
    return _Needles(
        {n: tuple(ats) for n, ats in strong.items()},
        {n: tuple(ats) for n, ats in weak.items()},
        re.compile(any_of(strong)),
    )


def shapes(text: str) -> Iterator[SecretMatch]:
    if _LONG_RUN.search(text) is None:
        return
    low = lowered(text)
    table = _needle_table()
    wanted: set[int] = set()
    if table.any_strong.search(low) is not None:  # most texts hold none: one search
        wanted.update(at for needle, ats in table.strong.items() if needle in low for at in ats)
    if _ALNUM_RUN.search(text) is not None:
        wanted.update(at for needle, ats in table.weak.items() if needle in low for at in ats)
    for at in sorted(wanted):
        shape = SHAPES[at]
        for m in shape.pattern.finditer(text):
            if shape.check is None or shape.check(m.group(shape.group)):
                yield SecretMatch(shape.kind, m.start(shape.group), m.end(shape.group))


# -- key blocks ----------------------------------------------------------------------

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
_KEY_MATERIAL = lazy_compile(r"[A-Za-z0-9+/=]{16}")
# A PuTTY key file: its header, then everything up to its MAC (or the end of its base64).
_PUTTY = lazy_compile(
    r"PuTTY-User-Key-File-[0-9]+:[^\n]{0,100}"
    r"(?:\n(?:[A-Za-z\-]{2,30}: [^\n]{0,300}|[A-Za-z0-9+/=]{8,}))*"
)


def private_keys(text: str) -> Iterator[SecretMatch]:
    """PEM, OpenSSH and PGP private key blocks (a block missing its END still counts),
    and PuTTY key files."""
    if "PRIVATE KEY" not in text and "PuTTY-User-Key-File-" not in text:
        return
    ends = [m.end() for m in _KEY_END.finditer(text)]
    for begin in _KEY_BEGIN.finditer(text):
        at = bisect.bisect_left(ends, begin.end() + 1)
        if at < len(ends) and ends[at] - begin.end() <= _KEY_SPAN_LIMIT:
            stop = ends[at]
        else:
            body = _KEY_BODY.match(text, begin.end())
            stop = body.end() if body else begin.end()
        if not _KEY_MATERIAL.search(text, begin.end(), stop):
            continue  # a header alone, or "...": prose about key blocks, no key
        in_gcp_json = _GCP_FIELD.search(text, max(0, begin.start() - 80), begin.start())
        yield SecretMatch(
            "gcp-service-account-key" if in_gcp_json else "private-key", begin.start(), stop
        )
    if "PuTTY-User-Key-File-" in text:
        for m in _PUTTY.finditer(text):
            yield SecretMatch("private-key", m.start(), m.end())


_AWS_ID = lazy_compile(r"(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}")
_AWS_SECRET = lazy_compile(r"(?<![A-Za-z0-9/+=])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])")


def aws_secret_near_id(text: str) -> Iterator[SecretMatch]:
    """A 40-character AWS secret key written shortly after its access key id."""
    if not any(prefix in text for prefix in ("AKIA", "ASIA", "ABIA", "ACCA")):
        return
    for key_id in _AWS_ID.finditer(text):
        near = _AWS_SECRET.search(text, key_id.end(), key_id.end() + 160)
        if near:
            value = near.group()
            if _cased(value):
                yield SecretMatch("aws-secret-access-key", near.start(), near.end())

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cairn.engine.secrets import SecretMatch, find_secrets, redact

# Fake credentials of the real shapes, assembled here so that no literal key sits in the
# repository for a scanner to trip on.
B64_40 = "wJalrXUtnFEMI/K7MDENG/bPxRfiCY" + "EXAMPLEKEY"
ALNUM_36 = "a1B2c3D4e5F6g7H8i9J0" + "k1L2m3N4o5P6q7R8"
AWS_ID = "AKIA" + "IOSFODNN7EXAMPLE"
PEM_BODY = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7" + "VJTUt9Us8cKjMzEfYyjiWA4R"
AZURE_KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsu" + "FQ2ZVXi3Ll9zQ0FPnHhJxmPFTcbqAw=="
JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9"
    + ".eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkRhbmEifQ"
    + ".SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
)

# (text, kind, the secret value that must not survive redaction)
SECRETS = [
    (f"my key id is {AWS_ID} ok", "aws-access-key-id", AWS_ID),
    (f"aws_secret_access_key = {B64_40}", "aws-secret-access-key", B64_40),
    (f'"SecretAccessKey": "{B64_40}"', "aws-secret-access-key", B64_40),
    (f"creds {AWS_ID} / {B64_40}", "aws-secret-access-key", B64_40),
    (
        '{"type": "service_account", "private_key": "-----BEGIN PRIVATE KEY-----\\n'
        + PEM_BODY
        + '\\n-----END PRIVATE KEY-----\\n", "client_email": "x@y.iam.gserviceaccount.com"}',
        "gcp-service-account-key",
        PEM_BODY,
    ),
    (
        "-----BEGIN RSA PRIVATE KEY-----\n" + PEM_BODY + "\n-----END RSA PRIVATE KEY-----",
        "private-key",
        PEM_BODY,
    ),
    (
        "key:\n-----BEGIN OPENSSH PRIVATE KEY-----\n" + PEM_BODY + "\n"
        "-----END OPENSSH PRIVATE KEY-----\nthanks",
        "private-key",
        PEM_BODY,
    ),
    (
        "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n" + PEM_BODY + "\n=abcd\n"
        "-----END PGP PRIVATE KEY BLOCK-----",
        "private-key",
        PEM_BODY,
    ),
    (
        "pasted half a key: -----BEGIN EC PRIVATE KEY-----\n" + PEM_BODY + "\n" + PEM_BODY,
        "private-key",
        PEM_BODY,
    ),
    (
        "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey="
        + AZURE_KEY
        + ";EndpointSuffix=core.windows.net",
        "azure-connection-string",
        AZURE_KEY,
    ),
    (
        "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=Root;SharedAccessKey="
        + AZURE_KEY[:44],
        "azure-connection-string",
        AZURE_KEY[:44],
    ),
    (
        "https://acct.blob.core.windows.net/c/f?sv=2022-11-02&sr=b&sig="
        + "X5hpmsBTbOX8Kf0AkWHn5RbB7N2e1wq%2FzO0sKd4Y9rM%3D",
        "azure-sas-token",
        "X5hpmsBTbOX8Kf0AkWHn5RbB7N2e1wq",
    ),
    ("export GH=ghp_" + ALNUM_36, "github-token", "ghp_" + ALNUM_36),
    ("gho_" + ALNUM_36, "github-token", "gho_" + ALNUM_36),
    ("ghs_" + ALNUM_36, "github-token", "ghs_" + ALNUM_36),
    ("ghu_" + ALNUM_36, "github-token", "ghu_" + ALNUM_36),
    (
        "github_pat_11ABCDEFG0" + "abcdefghijkl_" + ALNUM_36 + "mnopqrstuvwxyz0123456",
        "github-token",
        ALNUM_36,
    ),
    (
        "bot token xoxb-" + "1234567890-1234567890123-" + "AbCdEfGhIjKlMnOpQrStUvWx",
        "slack-token",
        "AbCdEfGhIjKlMnOpQrStUvWx",
    ),
    (
        "xoxp-" + "1234567890-0987654321-1122334455-" + "abcdef0123456789",
        "slack-token",
        "abcdef0123456789",
    ),
    (
        "xapp-1-" + "A0123456789-1234567890123-" + "abcdef0123456789abcdef",
        "slack-token",
        "abcdef0123456789abcdef",
    ),
    (
        "post to https://hooks.slack.com/services/"
        + "T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX",
        "slack-webhook",
        "T00000000/B00000000",
    ),
    ("OPENAI_API_KEY=sk-" + ALNUM_36 + "T3BlbkFJ", "openai-api-key", ALNUM_36),
    ("key sk-proj-" + ALNUM_36 + "_x-Y" + ALNUM_36, "openai-api-key", ALNUM_36),
    ("sk-ant-api03-" + ALNUM_36 + "-" + ALNUM_36 + "AA", "anthropic-api-key", ALNUM_36),
    ("stripe sk_live_" + ALNUM_36[:24], "stripe-key", ALNUM_36[:24]),
    ("restricted rk_live_" + ALNUM_36[:24], "stripe-key", ALNUM_36[:24]),
    (
        "google AIza" + "SyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q",
        "google-api-key",
        "SyA1b2C3d4E5f6G7h8I9",
    ),
    (f"session cookie {JWT}", "jwt", JWT),
    ("Authorization: Bearer " + ALNUM_36 + ".xyz", "token", ALNUM_36),
    ("password=hunter2", "password", "hunter2"),
    ("DB_PASSWORD=changeme", "password", "changeme"),
    ("passwd: s3cr3t!", "password", "s3cr3t!"),
    ('{"user": "dana", "password": "correct horse battery"}', "password", "correct horse"),
    ("db:\n  user: app\n  password: supersecretvalue\n", "password", "supersecretvalue"),
    ("**Password**: P@ss!23x", "password", "P@ss!23x"),
    ("dbPassword := 'Tr0ub4dor&3'", "password", "Tr0ub4dor&3"),
    ("SECRET_KEY = 'django-insecure-8f3k2j'", "secret", "django-insecure-8f3k2j"),
    ('clientSecret: "x8Gh2kLm9QpR"', "secret", "x8Gh2kLm9QpR"),
    ("api_key = 'abcd1234efgh5678'", "api-key", "abcd1234efgh5678"),
    ("X_API_KEY=Zx81Qm20Lp55", "api-key", "Zx81Qm20Lp55"),
    ("token: 9f8e7d6c5b4a3210", "token", "9f8e7d6c5b4a3210"),
    ("config['access_token'] = 'a1b2c3d4e5f6g7h8'", "token", "a1b2c3d4e5f6g7h8"),
    ("my password is hunter2.", "password", "hunter2"),
    ("The API key is 'k-77-alpha-omega'", "api-key", "k-77-alpha-omega"),
    ("https://example.com/login?user=dana&password=letmein", "password", "letmein"),
    ("mysql --user=root --password=letmein", "password", "letmein"),
    ("密码：hunter2", "password", "hunter2"),
    ("我的密码是 abc12345，别告诉别人", "password", "abc12345"),
    ("wifi 密码为 Tp-Link_8899", "password", "Tp-Link_8899"),
    ("令牌：“tok_88aa99bb”", "password", "tok_88aa99bb"),
    ("パスワード: xyz789!", "password", "xyz789!"),
    ("Passwort: geheim123", "password", "geheim123"),
    ("mot de passe = soleil2024", "password", "soleil2024"),
    ("clone https://alice:s3cret-pw@example.com/repo.git", "url-credentials", "s3cret-pw"),
    ("DATABASE_URL=postgres://admin:pw123456@db:5432/app", "url-credentials", "pw123456"),
    ("cache at redis://:pa55word@cache:6379/0", "url-credentials", "pa55word"),
]


@pytest.mark.parametrize(("text", "kind", "value"), SECRETS)
def test_each_kind_of_secret_is_found_and_redacted(text: str, kind: str, value: str) -> None:
    found = find_secrets(text)
    assert kind in [f.kind for f in found], (text, found)
    out, kinds = redact(text)
    assert value not in out, out
    assert f"[REDACTED:{kind}]" in out and kind in kinds
    assert len(kinds) == len(found)


def test_only_the_value_of_an_assignment_is_redacted() -> None:
    assert redact("password=hunter2 and user=dana") == (
        "password=[REDACTED:password] and user=dana",
        ["password"],
    )
    assert redact("clone https://alice:s3cret@example.com/x") == (
        "clone https://alice:[REDACTED:url-credentials]@example.com/x",
        ["url-credentials"],
    )
    text = "api_key = 'sk-" + ALNUM_36 + "T3BlbkFJ'"
    assert redact(text) == ("api_key = '[REDACTED:openai-api-key]'", ["openai-api-key"])


def test_several_secrets_in_one_note_in_order() -> None:
    text = f"id {AWS_ID}, token ghp_{ALNUM_36}, and password=hunter2"
    found = find_secrets(text)
    assert [f.kind for f in found] == ["aws-access-key-id", "github-token", "password"]
    assert all(isinstance(f, SecretMatch) for f in found)
    assert [f.start for f in found] == sorted(f.start for f in found)
    out, kinds = redact(text)
    assert kinds == ["aws-access-key-id", "github-token", "password"]
    assert out == (
        "id [REDACTED:aws-access-key-id], token [REDACTED:github-token], "
        "and password=[REDACTED:password]"
    )


def test_punctuation_glued_to_a_token_does_not_hide_it() -> None:
    for text in (
        f"ghp_{ALNUM_36}-----BEGIN",
        f"x_ghp_{ALNUM_36}_",
        f"(sk_live_{ALNUM_36[:24]})",
        f"--ghs_{ALNUM_36}--",
    ):
        out, kinds = redact(text)
        assert ALNUM_36[:24] not in out and kinds, (text, out)


def test_a_key_block_wins_over_the_assignment_holding_it() -> None:
    text = (
        'private_key = "-----BEGIN PRIVATE KEY-----\\n' + PEM_BODY + '\\n-----END PRIVATE KEY-----"'
    )
    assert [f.kind for f in find_secrets(text)] == ["private-key"]
    assert redact(text)[0] == 'private_key = "[REDACTED:private-key]"'


def test_a_truncated_key_block_stops_before_the_prose() -> None:
    text = "-----BEGIN PRIVATE KEY-----\n" + PEM_BODY + "\nthat was the key we rotated."
    out, _ = redact(text)
    assert out == "[REDACTED:private-key]that was the key we rotated."


BENIGN = [
    "We need a password reset flow for the mobile app.",
    "Rate limiting uses a token bucket with 100 tokens per second.",
    "The token bucket refills every 10 ms.",
    "commit 3f2a9c1e8b7d6a5f4e3d2c1b0a9f8e7d6c5b4a39 fixed the login bug",
    "git show a94a8fe5ccb19ba61c4c0873d391e987982fbbd3",
    "request id 123e4567-e89b-12d3-a456-426614174000 failed",
    "integrity sha512-z4PhNX7vuL3xVChQ1m2AB9Yg5AULVxXcg/SpIdNs6c5H0NE8XYXysP+DGNKHfuwvY7kxvUd"
    "BeoGlODJ6+SfaPg==",
    "subresource sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=",
    "image data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk"
    "YPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
    'etag W/"5d41402abc4b2a76b9719d911017c592"',
    "The password must be at least 12 characters.",
    "Password: must contain a digit and a symbol",
    "Password: required",
    "token: the smallest unit a tokenizer emits",
    "Set max_tokens=1024 and temperature=0.2",
    "token_count: 512",
    "The API key goes in the X-Api-Key header.",
    "api_key = os.environ['OPENAI_API_KEY']",
    "password = getpass.getpass()",
    "API_KEY=${API_KEY}",
    "token = process.env.GITHUB_TOKEN",
    "password=None",
    "api_key: YOUR_API_KEY",
    "password: <your password>",
    "password: ********",
    "token = get_token(user)",
    "def login(username: str, password: str) -> bool:",
    "password: Optional[str] = None",
    "api_key: SecretStr",
    "token: Token",
    "secret: sauce is garlic",
    "The secret to good pasta is salted water.",
    "if password == confirm_password: return True",
    "self.password = password",
    "password_hash = bcrypt.hashpw(raw, salt)",
    "reset_password_url: https://example.com/reset",
    "is_secret: false",
    "secret_santa: true",
    "token_type: bearer",
    "credentials: see the vault entry",
    "Session token expiry: 30 minutes",
    "Use scikit-learn (sklearn) for the baseline; sk-learn is a common misspelling.",
    "sk-this-is-not-a-key-just-a-slug-name",
    "AKIA is the prefix of long-term AWS access key ids.",
    "ghp_ tokens are classic personal access tokens; github_pat_ ones are fine-grained.",
    "xoxb- tokens are bot tokens; xoxp-tokens-are-user-tokens",
    "Our Stripe account uses sk_live_ keys in production only.",
    'The JWT header starts with eyJ because that is base64 for {".',
    "Bearer authentication sends a bearer token in the Authorization header.",
    "-----BEGIN PUBLIC KEY----- blocks are fine to share",
    "-----BEGIN CERTIFICATE-----",
    "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQC7VJTUt9Us8cKjMzEfYyjiWA4R dana@laptop",
    "Connect to postgres://localhost:5432/app as user app.",
    "Clone git@github.com:org/repo.git and run make.",
    "https://user@example.com/path has no password in it",
    "the URL format is https://user:password@host",
    "template: https://{user}:{pass}@host",
    "mailto:dana@example.com",
    "open http://localhost:8080/admin?page=2&sort=desc&sig=short",
    "Version 1.2.3-beta+build.45 shipped on 2026-01-12.",
    "The passphrase policy changed last week.",
    "Keep secrets in Vault; never in the repo.",
    "The password is reset by the admin.",
    "The API key is stored in 1Password.",
    "my password was changed yesterday",
    "PWD=/home/dana/project",
    "export PATH=$PATH:/usr/local/bin",
    "The word 'token' has two syllables.",
    "Use `npm token list` to see tokens.",
    "Meeting at 10:30: discuss the token budget of 4000 characters.",
    "重置密码流程需要短信验证。",
    "密码至少八位，包含数字。",
    "密码是必填的。",
    "令牌桶算法用于限流。",
    "今天天气不错 😀，我们去公园。",
    "Dana's birthday is 1990-04-12; she likes tea.",
    "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor.",
    "Always use pnpm to install dependencies; never npm.",
    "In Rust, `let token: &str = &args[1];` borrows the argument.",
    # Code that names a variable where a value would be (seen in the Python stdlib).
    "self.token = nextchar",
    "cache_token = current_token",
    "self.user, self.password = user, password",
    "userid = passwd = acct = ''",
    "ctx.load_cert_chain(CERTFILE, password=getpass_unicode)",
    "PseudoToken = Whitespace + group(Name)",
    "self.username, self.password = credentials",
]


@pytest.mark.parametrize("text", BENIGN)
def test_ordinary_text_is_not_flagged(text: str) -> None:
    assert find_secrets(text) == [], find_secrets(text)
    assert redact(text) == (text, [])


secret_values = st.sampled_from(
    [value for _, _, value in SECRETS] + [text for text, _, _ in SECRETS]
)
noise = st.text(max_size=40)
mixed = st.lists(st.one_of(noise, secret_values, st.sampled_from(BENIGN)), max_size=6).map(" ".join)


@settings(max_examples=300, deadline=None)
@given(mixed)
def test_matches_are_ordered_disjoint_and_in_bounds(text: str) -> None:
    found = find_secrets(text)
    for a, b in itertools.pairwise(found):
        assert a.end <= b.start
    assert all(0 <= f.start < f.end <= len(text) for f in found)
    out, kinds = redact(text)
    assert kinds == [f.kind for f in found]
    assert out.count("[REDACTED:") >= len(found)


@settings(max_examples=300, deadline=None)
@given(mixed)
def test_redaction_is_idempotent(text: str) -> None:
    once, _ = redact(text)
    assert redact(once) == (once, [])


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(SECRETS), noise, noise)
def test_a_secret_in_any_surroundings_does_not_survive(
    case: tuple[str, str, str], before: str, after: str
) -> None:
    text, _, value = case
    out, kinds = redact(f"{before}\n{text}\n{after}")
    assert value not in out and kinds


# Exactly what is cut: the value, never the key, the command or the sentence around it.
EXACT = [
    ("the wifi password for the office is Blue-Falcon-77, ask me",
     "the wifi password for the office is [REDACTED:password], ask me"),
    ("machine api.example.com login dana password Tr0ub4dor&3",
     "machine api.example.com login dana password [REDACTED:password]"),
    ("Authorization: Basic " + "ZGFuYTpUcjB1YjRkb3ImMw==",
     "Authorization: Basic [REDACTED:basic-auth]"),
    ('{"auths": {"r.io": {"auth": "' + "ZGFuYTpUcjB1YjRkb3ImMw==" + '"}}}',
     '{"auths": {"r.io": {"auth": "[REDACTED:docker-auth]"}}}'),
    ("//registry.npmjs.org/:_authToken=" + "tok-81bd2f9a77c4",
     "//registry.npmjs.org/:_authToken=[REDACTED:token]"),
    ("mysql -u root -pS3cr3tPw shop", "mysql -u root -p[REDACTED:password] shop"),
    ("curl -u ci:Tr0ub4dor&3 https://x.io", "curl -u ci:[REDACTED:password] https://x.io"),
    ("Password=Tr0ub4dor&3;Database=crm", "Password=[REDACTED:password];Database=crm"),
    ("密码是 Tr0ub4dor&3，别外传", "密码是 [REDACTED:password]，别外传"),
    ("ｐａｓｓｗｏｒｄ＝ｓ３ｃｒｅｔ９９", "ｐａｓｓｗｏｒｄ＝[REDACTED:password]"),
    ("pass\u200bword=s3cret99", "pass\u200bword=[REDACTED:password]"),
    ("set the root pw to falcon-river-33 on all boxes",
     "set the root pw to [REDACTED:password] on all boxes"),
    ("env:\n  - name: DB_PASSWORD\n    value: Tr0ub4dor&3",
     "env:\n  - name: DB_PASSWORD\n    value: [REDACTED:password]"),
    (("AGE-SECRET-KEY-1" + "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L" * 2)[:74] + " is mine",
     "[REDACTED:age-secret-key] is mine"),
]  # fmt: skip


@pytest.mark.parametrize(("text", "expected"), EXACT)
def test_exactly_the_value_is_cut(text: str, expected: str) -> None:
    assert redact(text)[0] == expected


NOT_SECRETS = [
    "docker run -p 8080:80 nginx",
    "mysql -u app -p",
    "The password is case-sensitive.",
    "The access token is short-lived; the refresh token is long-lived.",
    "-----BEGIN PRIVATE KEY----- is the header of a PKCS#8 key.",
    "STRIPE_SECRET_KEY=sk_live_xxxxxxxxxxxxxxxxxxxxxxxx",
    "Authorization: Basic auth is disabled here",
    "pass the --token flag to the CLI",
    'secret_arn = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:prod-db-AbCdEf"',
    "credentials in vault/prod-db-2",
    "Credentials: see 1password/Engineering/AWS-prod",
    "sign in with Google/GitHub",
    "existingSecret: db-credentials",
    "secret: my-app-secret",
    "kubectl get secret tls-cert -o yaml",
]


@pytest.mark.parametrize("text", NOT_SECRETS)
def test_lookalikes_are_left_alone(text: str) -> None:
    assert redact(text) == (text, [])

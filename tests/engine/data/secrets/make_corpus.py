# ruff: noqa: E501  (a data file: one realistic paste per line reads best whole)
"""Build the secret-detection corpus: ``positives.jsonl`` and ``near_misses.jsonl``.

Run ``python tests/engine/data/secrets/make_corpus.py`` to write both files beside it; the
output is the same on every run (one seeded generator), so the checked-in files are what
this script makes.

Every token here is made up at build time from a seeded random generator: none is, or
was, a real credential. Formats that hosting services scan pushes for are built so they
cannot pass as real: GitHub tokens carry a deliberately wrong CRC-32 checksum, and the
random part of every prefixed token is drawn fresh, never copied from anywhere.

A positive is ``{"id", "class", "text", "secrets"}``: ``secrets`` are the substrings that
must not survive redaction. A near-miss is ``{"id", "class", "text"}``: nothing in it may
be flagged.

Placeholders are a decision (documented in docs/reliability.md): ``<YOUR_TOKEN>``,
``${VAR}``, ``xxx``, ``****``, ``your-api-key-here`` and the like are not secrets and are
left alone; a real default password such as ``changeme`` set as a value *is* redacted
(people do run with it, and redacting it costs nothing).
"""

from __future__ import annotations

import base64
import json
import random
import string
import zlib
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).parent
RNG = random.Random(20261201)
B62 = string.ascii_letters + string.digits
HEX = "0123456789abcdef"
UPPER_DIGITS = string.ascii_uppercase + string.digits
B64 = B62 + "+/"
B64URL = B62 + "-_"
BECH32 = "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L"


def rand(alphabet: str, n: int) -> str:
    return "".join(RNG.choice(alphabet) for _ in range(n))


def mixed(alphabet: str, n: int) -> str:
    """Random, with at least one upper, lower and digit where the alphabet has them."""
    while True:
        value = rand(alphabet, n)
        kinds = [
            any(c.isupper() for c in value) or not any(c.isupper() for c in alphabet),
            any(c.islower() for c in value) or not any(c.islower() for c in alphabet),
            any(c.isdigit() for c in value) or not any(c.isdigit() for c in alphabet),
        ]
        if all(kinds):
            return value


def _base62(number: int, width: int) -> str:
    out = ""
    while number:
        number, digit = divmod(number, 62)
        out = (string.digits + string.ascii_letters)[digit] + out
    return out.rjust(width, "0")


def github(prefix: str = "ghp") -> str:
    """A classic GitHub token shape whose checksum is wrong on purpose (clearly fake)."""
    body = mixed(B62, 30)
    checksum = (zlib.crc32(body.encode()) ^ 0x5A5A5A5A) & 0xFFFFFFFF
    return f"{prefix}_{body}{_base62(checksum, 6)}"


def github_fine() -> str:
    return f"github_pat_11{rand(UPPER_DIGITS, 20)}_{mixed(B62, 59)}"


def gitlab(prefix: str = "glpat-") -> str:
    return prefix + mixed(B62 + "-_", 20)


def slack(kind: str = "xoxb") -> str:
    return f"{kind}-{rand(string.digits, 12)}-{rand(string.digits, 13)}-{mixed(B62, 24)}"


def slack_webhook() -> str:
    return (
        f"https://hooks.slack.com/services/T{rand(UPPER_DIGITS, 8)}/B{rand(UPPER_DIGITS, 10)}/"
        f"{mixed(B62, 24)}"
    )


def stripe(prefix: str = "sk_live_") -> str:
    return prefix + mixed(B62, 24 if prefix.startswith("whsec") else 99)


def twilio_key() -> str:
    return "SK" + rand(HEX, 32)


def aws_id(prefix: str = "AKIA") -> str:
    return prefix + rand(UPPER_DIGITS, 16)


def aws_secret() -> str:
    return mixed(B64, 40)


def gcp_key() -> str:
    return "AIza" + mixed(B64URL, 35)


def gcp_oauth() -> str:
    return "GOCSPX-" + mixed(B64URL, 28)


def gcp_access() -> str:
    return "ya29." + mixed(B64URL, 120)


def azure_key(n: int = 86) -> str:
    return mixed(B64, n) + "=="


def azure_client_secret() -> str:
    return rand(B62, 3) + str(RNG.randint(0, 9)) + "Q~" + mixed(B62 + "_~.-", 34)


def openai() -> str:
    return "sk-proj-" + mixed(B64URL, 74) + "T3BlbkFJ" + mixed(B64URL, 74)


def openai_legacy() -> str:
    return "sk-" + mixed(B62, 20) + "T3BlbkFJ" + mixed(B62, 20)


def anthropic() -> str:
    return "sk-ant-api03-" + mixed(B64URL, 93) + "AA"


def npm() -> str:
    return "npm_" + mixed(B62, 36)


def pypi() -> str:
    return "pypi-AgEIcHlwaS5vcmc" + mixed(B64URL, 140)


def hf() -> str:
    return "hf_" + mixed(string.ascii_letters, 34)


def shopify(prefix: str = "shpat_") -> str:
    return prefix + rand(HEX, 32)


def digitalocean(prefix: str = "dop_v1_") -> str:
    return prefix + rand(HEX, 64)


def sendgrid() -> str:
    return f"SG.{mixed(B64URL, 22)}.{mixed(B64URL, 43)}"


def mailgun() -> str:
    return "key-" + rand(HEX, 32)


def mailgun_new() -> str:
    return f"{rand(HEX, 32)}-{rand(HEX, 8)}-{rand(HEX, 8)}"


def discord() -> str:
    return f"M{mixed(B62, 25)}.{mixed(B64URL, 6)}.{mixed(B64URL, 38)}"


def discord_webhook() -> str:
    return f"https://discord.com/api/webhooks/{rand(string.digits, 18)}/{mixed(B64URL, 68)}"


def telegram() -> str:
    return f"{RNG.randint(10**8, 10**10)}:AA{mixed(B64URL, 33)}"


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def jwt() -> str:
    header = b64url(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    payload = b64url(
        json.dumps(
            {"sub": rand(string.digits, 8), "iat": RNG.randint(1_600_000_000, 1_800_000_000)}
        ).encode()
    )
    return f"{header}.{payload}.{mixed(B64URL, 43)}"


def password() -> str:
    words = ["Blue", "falcon", "Tiger", "river", "Maple", "stone", "Quartz", "ember"]
    return RNG.choice(
        [
            RNG.choice(words) + RNG.choice(words) + str(RNG.randint(10, 9999)),
            mixed(B62, 16),
            mixed(B62 + "!@#%^&*-_", 14),
            RNG.choice(words).lower()
            + "-"
            + RNG.choice(words).lower()
            + "-"
            + str(RNG.randint(1, 99)),
        ]
    )


def pem_body(lines: int = 6) -> str:
    return "\n".join(mixed(B64, 64) for _ in range(lines))


def age_key() -> str:
    return "AGE-SECRET-KEY-1" + rand(BECH32, 58)


def basic(user: str, pw: str) -> str:
    return base64.b64encode(f"{user}:{pw}".encode()).decode()


Case = dict[str, object]
POSITIVES: list[Case] = []
NEAR: list[Case] = []


def pos(cls: str, text: str, *secrets: str) -> None:
    assert all(s in text for s in secrets), (cls, text, secrets)
    POSITIVES.append({"class": cls, "text": text, "secrets": list(secrets)})


def near(cls: str, text: str) -> None:
    NEAR.append({"class": cls, "text": text})


def many(n: int, make: Callable[[], None]) -> None:
    for _ in range(n):
        make()


# -- positives -------------------------------------------------------------------------


def _service_tokens() -> None:
    for prefix in ("ghp", "gho", "ghu", "ghs", "ghr"):
        t = github(prefix)
        pos("github-token", f"export GITHUB_TOKEN={t}", t)
    t = github()
    pos("github-token", f"git clone https://{t}@github.com/acme/infra.git", t)
    t = github()
    pos("github-token", f"[2026-03-02 10:14:07] INFO auth ok using token {t} for acme-bot", t)
    t = github("ghs")
    pos("github-token", f"the app installation token came back as {t}, expires in 1h", t)
    t = github_fine()
    pos("github-token", f"gh auth login --with-token <<< {t}", t)
    t = github_fine()
    pos("github-token", f"fine-grained PAT for the release job: {t}", t)
    t = github()
    pos("github-token", f'{{"github": {{"oauth_token": "{t}", "user": "dana"}}}}', t)
    for prefix in ("glpat-", "gldt-", "glrt-", "glptt-"):
        t = gitlab(prefix)
        pos("gitlab-token", f"GITLAB_TOKEN={t}  # runner setup", t)
    t = gitlab()
    pos(
        "gitlab-token",
        f"curl --header 'PRIVATE-TOKEN: {t}' https://gitlab.example.com/api/v4/projects",
        t,
    )
    for kind in ("xoxb", "xoxp", "xoxa", "xoxs"):
        t = slack(kind)
        pos("slack-token", f"SLACK_BOT_TOKEN: {t}", t)
    t = slack_webhook()
    pos("slack-webhook", f"alerts go to {t} (channel #ops)", t.rsplit("/", 1)[1])
    t = "xapp-1-A" + rand(UPPER_DIGITS, 10) + "-" + rand(string.digits, 13) + "-" + rand(HEX, 64)
    pos("slack-token", f"socket mode app token {t}", t)
    for prefix in ("sk_live_", "rk_live_", "sk_test_"):
        t = stripe(prefix)
        pos("stripe-key", f"STRIPE_SECRET_KEY={t}", t)
    t = stripe("whsec_")
    pos(
        "stripe-key",
        f"stripe listen printed: Ready! Your webhook signing secret is {t} (^C to quit)",
        t,
    )
    t = stripe()
    pos("stripe-key", f"Stripe::API.key = '{t}'", t)
    t, sid = twilio_key(), "AC" + rand(HEX, 32)
    pos("twilio-key", f"twilio api key {t} for account {sid}", t)
    tok = rand(HEX, 32)
    pos("twilio-key", f"TWILIO_ACCOUNT_SID={sid}\nTWILIO_AUTH_TOKEN={tok}", tok)
    for make in (openai, openai_legacy):
        t = make()
        pos("openai-api-key", f"OPENAI_API_KEY={t}", t)
    t = openai()
    pos("openai-api-key", f'client = OpenAI(api_key="{t}")', t)
    t = anthropic()
    pos("anthropic-api-key", f"ANTHROPIC_API_KEY={t}", t)
    t = anthropic()
    pos("anthropic-api-key", f'curl https://api.anthropic.com/v1/messages -H "x-api-key: {t}"', t)
    t = npm()
    pos("npm-token", f"//registry.npmjs.org/:_authToken={t}", t)
    t = npm()
    pos(
        "npm-token",
        f"my .npmrc:\nregistry=https://registry.npmjs.org/\n//registry.npmjs.org/:_authToken={t}\nalways-auth=true",
        t,
    )
    t = npm()
    pos("npm-token", f"NPM_TOKEN={t} npm publish --access public", t)
    t = pypi()
    pos("pypi-token", f"[pypi]\n  username = __token__\n  password = {t}", t)
    t = pypi()
    pos("pypi-token", f"twine upload -u __token__ -p {t} dist/*", t)
    t = hf()
    pos("huggingface-token", f"HF_TOKEN={t}", t)
    t = hf()
    pos("huggingface-token", f"huggingface-cli login --token {t}", t)
    t = hf()
    pos("huggingface-token", f'from huggingface_hub import login; login("{t}")', t)
    for prefix in ("shpat_", "shpss_", "shpca_", "shppa_"):
        t = shopify(prefix)
        pos("shopify-token", f"SHOPIFY_ACCESS_TOKEN={t}", t)
    t = shopify()
    pos("shopify-token", f"X-Shopify-Access-Token: {t}", t)
    for prefix in ("dop_v1_", "doo_v1_", "dor_v1_"):
        t = digitalocean(prefix)
        pos("digitalocean-token", f"doctl auth init -t {t}", t)
    t = digitalocean()
    pos("digitalocean-token", f"DIGITALOCEAN_TOKEN: {t}", t)
    t = sendgrid()
    pos("sendgrid-key", f"SENDGRID_API_KEY='{t}'", t)
    t = sendgrid()
    pos("sendgrid-key", f"sg = SendGridAPIClient({t!r})", t)
    t = sendgrid()
    pos("sendgrid-key", f"the sendgrid key we use for receipts is {t}", t)
    t = mailgun()
    pos(
        "mailgun-key",
        f"curl -s --user 'api:{t}' https://api.mailgun.net/v3/mg.example.com/messages",
        t,
    )
    t = mailgun_new()
    pos("mailgun-key", f"MAILGUN_API_KEY={t}", t)
    t = discord()
    pos("discord-token", f"client.run('{t}')", t)
    t = discord()
    pos("discord-token", f"DISCORD_BOT_TOKEN={t}", t)
    t = discord_webhook()
    pos("discord-webhook", f"post build results to {t}", t.rsplit("/", 1)[1])
    t = telegram()
    pos("telegram-bot-token", f"TELEGRAM_BOT_TOKEN={t}", t)
    t = telegram()
    pos("telegram-bot-token", f"curl https://api.telegram.org/bot{t}/getUpdates", t)
    t = telegram()
    pos("telegram-bot-token", f"BotFather gave me this: {t} keep it safe", t)
    t = jwt()
    pos("jwt", f"Cookie: session={t}; Path=/; HttpOnly", t)
    t = jwt()
    pos("jwt", f"the refresh token in localStorage is {t}", t)
    t = age_key()
    pos(
        "age-key",
        f"# created: 2026-02-01T10:00:00Z\n# public key: age1{rand(BECH32.lower(), 58)}\n{t}",
        t,
    )
    t = age_key()
    pos("age-key", f"SOPS_AGE_KEY={t}", t)


def _cloud_credentials() -> None:
    i, s = aws_id(), aws_secret()
    pos(
        "aws",
        f"[default]\naws_access_key_id = {i}\naws_secret_access_key = {s}\nregion = eu-west-1",
        i,
        s,
    )
    i, s = aws_id(), aws_secret()
    pos("aws", f"export AWS_ACCESS_KEY_ID={i}\nexport AWS_SECRET_ACCESS_KEY={s}", i, s)
    i, s = aws_id("ASIA"), aws_secret()
    pos(
        "aws",
        f'{{"AccessKeyId": "{i}", "SecretAccessKey": "{s}", "SessionToken": "{mixed(B64, 300)}"}}',
        i,
        s,
    )
    i, s = aws_id(), aws_secret()
    pos("aws", f"new IAM user keys: {i} / {s}", i, s)
    i, s = aws_id(), aws_secret()
    pos("aws", f"docker run -e AWS_ACCESS_KEY_ID={i} -e AWS_SECRET_ACCESS_KEY={s} app:latest", i, s)
    s = aws_secret()
    pos("aws", f"aws configure set aws_secret_access_key {s}", s)
    body = pem_body(8).replace("\n", "\\n")
    pos(
        "gcp-service-account",
        '{\n  "type": "service_account",\n  "project_id": "acme-prod",\n'
        f'  "private_key_id": "{rand(HEX, 40)}",\n'
        f'  "private_key": "-----BEGIN PRIVATE KEY-----\\n{body}\\n-----END PRIVATE KEY-----\\n",\n'
        '  "client_email": "ci@acme-prod.iam.gserviceaccount.com"\n}',
        body[:64],
    )
    t = gcp_key()
    pos("gcp", f"https://maps.googleapis.com/maps/api/geocode/json?address=Paris&key={t}", t)
    t = gcp_key()
    pos("gcp", f"GOOGLE_API_KEY={t}", t)
    t = gcp_oauth()
    pos("gcp", f'"client_secret": "{t}"', t)
    t = gcp_access()
    pos("gcp", f"gcloud auth print-access-token\n{t}", t)
    k = azure_key()
    pos(
        "azure",
        f"DefaultEndpointsProtocol=https;AccountName=acmelogs;AccountKey={k};EndpointSuffix=core.windows.net",
        k,
    )
    k = azure_key(42)
    pos(
        "azure",
        f"Endpoint=sb://acme.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey={k}",
        k,
    )
    sig = mixed(B62, 43) + "%3D"
    pos(
        "azure",
        f"https://acme.blob.core.windows.net/backups/db.bak?sv=2022-11-02&ss=b&srt=o&sp=r&se=2026-12-31&sig={sig}",
        sig,
    )
    t = azure_client_secret()
    pos("azure", f"AZURE_CLIENT_SECRET={t}", t)
    t = azure_client_secret()
    pos(
        "azure",
        f"az login --service-principal -u {rand(HEX, 8)}-{rand(HEX, 4)}-{rand(HEX, 4)}-{rand(HEX, 4)}-{rand(HEX, 12)} -p {t} --tenant acme.onmicrosoft.com",
        t,
    )


def _key_blocks() -> None:
    for label in ("RSA ", "EC ", "", "ENCRYPTED ", "DSA "):
        body = pem_body()
        pos(
            "private-key",
            f"-----BEGIN {label}PRIVATE KEY-----\n{body}\n-----END {label}PRIVATE KEY-----",
            body.split("\n")[2],
        )
    body = pem_body(5)
    pos(
        "private-key",
        f"here's the deploy key, don't share:\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA{body}\n-----END OPENSSH PRIVATE KEY-----",
        body.split("\n")[1],
    )
    body = pem_body(3)
    pos(
        "private-key",
        f"-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n{body}\n={rand(B64, 4)}\n-----END PGP PRIVATE KEY BLOCK-----",
        body.split("\n")[1],
    )
    body = pem_body(4)
    pos(
        "private-key",
        f"tls:\n  key: |\n    -----BEGIN PRIVATE KEY-----\n    {body.replace(chr(10), chr(10) + '    ')}\n    -----END PRIVATE KEY-----",
        body.split("\n")[3],
    )
    for algo in ("ssh-rsa", "ssh-ed25519"):
        public = pem_body(2).replace("\n", "\n")
        private = pem_body(4)
        mac = rand(HEX, 64)
        text = (
            f"PuTTY-User-Key-File-3: {algo}\nEncryption: none\nComment: dana@laptop\n"
            f"Public-Lines: 2\n{public}\nPrivate-Lines: 4\n{private}\nPrivate-MAC: {mac}"
        )
        pos("private-key", text, private.split("\n")[1], mac)
    body = pem_body(2)
    pos(
        "private-key",
        f"-----BEGIN RSA PRIVATE KEY-----\n{body}\n(rest of the key cut off by the paste)",
        body.split("\n")[1],
    )


def _urls_and_headers() -> None:
    for scheme, port in (
        ("postgres", 5432),
        ("postgresql", 5432),
        ("mysql", 3306),
        ("mongodb+srv", None),
        ("redis", 6379),
        ("amqp", 5672),
    ):
        pw = password()
        host = f"db.internal:{port}" if port else "cluster0.ab1cd.mongodb.net"
        pos("database-url", f"DATABASE_URL={scheme}://app:{pw}@{host}/prod", pw)
    pw = password()
    pos("database-url", f'psql "postgresql://admin:{pw}@10.0.3.12/analytics?sslmode=require"', pw)
    pw = password()
    pos(
        "database-url",
        f"jdbc:mysql://db.example.com:3306/shop?user=shop&password={pw}&useSSL=true",
        pw,
    )
    pw = password()
    pos(
        "database-url",
        f"Server=tcp:acme.database.windows.net,1433;Database=crm;User ID=crm_app;Password={pw};Encrypt=true;",
        pw,
    )
    pw = password()
    pos(
        "basic-auth-url",
        f"pip install --index-url https://deploy:{pw}@pypi.acme.internal/simple/ acme-core",
        pw,
    )
    pw = password()
    pos(
        "basic-auth-url",
        f"the grafana link https://admin:{pw}@grafana.acme.io/d/abc works for now",
        pw,
    )
    for user in ("dana", "ci-bot", "admin"):
        pw = password()
        token = basic(user, pw)
        pos("basic-auth-header", f"Authorization: Basic {token}", token)
    pw = password()
    token = basic("deploy", pw)
    pos(
        "basic-auth-header",
        f"curl -H 'Authorization: Basic {token}' https://nexus.acme.io/repository/",
        token,
    )
    t = mixed(B64URL, 48)
    pos("bearer-token", f'curl -H "Authorization: Bearer {t}" https://api.acme.io/v2/users', t)
    t = mixed(B62, 40)
    pos("bearer-token", f"X-API-Key: {t}", t)
    pw = password()
    pos("basic-auth-url", f"curl -u deploy:{pw} https://artifacts.acme.io/upload", pw)
    pw = password()
    pos("netrc", f"machine api.heroku.com\n  login dana@example.com\n  password {pw}", pw)
    pw = password()
    pos("netrc", f"~/.netrc has: machine github.com login dana password {pw}", pw)
    auth = basic("dana", password())
    pos(
        "docker-config",
        f'{{\n  "auths": {{\n    "https://index.docker.io/v1/": {{\n      "auth": "{auth}"\n    }}\n  }}\n}}',
        auth,
    )
    auth = basic("_json_key", password())
    pos(
        "docker-config",
        f'~/.docker/config.json -> {{"auths":{{"gcr.io":{{"auth":"{auth}"}}}}}}',
        auth,
    )
    pw = password()
    pos("password", f"echo '{pw}' | docker login -u dana --password-stdin registry.acme.io", pw)
    pw = password()
    pos("password", f"docker login -u dana -p {pw} registry.acme.io", pw)


def _config_assignments() -> None:
    def a(cls: str, template: str, value: str) -> None:
        pos(cls, template.format(v=value), value)

    a("password", "DB_PASSWORD={v}", password())
    a("password", "export PGPASSWORD='{v}'", password())
    a("password", "database:\n  host: localhost\n  user: app\n  password: {v}\n", password())
    a("password", '{{"db": {{"user": "app", "password": "{v}"}}}}', password())
    a("password", '[database]\nuser = "app"\npassword = "{v}"', password())
    a("password", "[mysql]\nuser=root\npassword={v}\n", password())
    a("password", "ENV POSTGRES_PASSWORD={v}", password())
    a("password", "ENV MYSQL_ROOT_PASSWORD {v}", password())
    a("password", "docker run -e POSTGRES_PASSWORD={v} -d postgres:16", password())
    a(
        "password",
        "services:\n  db:\n    image: postgres\n    environment:\n      - POSTGRES_PASSWORD={v}",
        password(),
    )
    a("password", 'env:\n  - name: DB_PASSWORD\n    value: "{v}"', password())
    a(
        "password",
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\nstringData:\n  password: {v}",
        password(),
    )
    a("password", '<property name="password" value="{v}"/>', password())
    a("password", "<password>{v}</password>", password())
    a("password", "spring.datasource.password={v}", password())
    a("password", "mysql -u root -p{v} shop < dump.sql", mixed(B62, 12))
    a("password", "mysql -h db -u root --password={v}", password())
    a("password", "sshpass -p '{v}' ssh admin@10.0.0.5", password())
    a("password", "$ redis-cli -a {v} ping", password())
    a("password", "define('DB_PASSWORD', '{v}');", password())
    a("password", 'PASSWORD = "{v}"  # TODO move to vault', password())
    a("password", "db_pass: {v}", password())
    a("password", "smtp_password={v}", password())
    a("password", "wifi:\n  ssid: acme-guest\n  psk: {v}", password())
    a("password", "DB_PASSWORD=changeme", "changeme")
    a("secret", "SECRET_KEY='{v}'", "django-insecure-" + mixed(B62 + "!@#$%^&*(-_=+)", 40))
    a("secret", "client_secret: {v}", mixed(B62, 32))
    a("secret", "JWT_SECRET={v}", mixed(B62, 48))
    a("secret", 'session_secret = "{v}"', mixed(HEX, 64))
    a("secret", '"clientSecret": "{v}",', mixed(B62 + "~._-", 34))
    a("secret", "export APP_SECRET={v}", mixed(B62, 24))
    a("secret", 'webhook_secret: "{v}"', mixed(HEX, 40))
    a("api-key", "API_KEY={v}", mixed(B62, 32))
    a("api-key", "api_key: {v}", mixed(HEX, 32))
    a("api-key", '"apiKey": "{v}"', mixed(B62, 40))
    a("api-key", "X_API_KEY = '{v}'", mixed(B62, 28))
    a("api-key", "headers = {{'x-api-key': '{v}'}}", mixed(B62, 36))
    a("api-key", "datadog:\n  api_key: {v}", rand(HEX, 32))
    a("api-key", "SENTRY_AUTH_TOKEN={v}", rand(HEX, 64))
    a("api-key", "https://api.example.com/v1/forecast?city=Oslo&apikey={v}", mixed(B62, 32))
    a("token", 'access_token = "{v}"', mixed(B62, 40))
    a("token", "refresh_token: {v}", mixed(B64URL, 64))
    a("token", "AUTH_TOKEN={v}", mixed(B62, 32))
    a("token", "VAULT_TOKEN=hvs.{v}", mixed(B62, 24))
    a("token", "--token {v}", mixed(B62, 32))
    a("token", "kubectl --token={v} get pods", mixed(B64URL, 60))
    a("token", '"token": "{v}"', mixed(HEX, 40))
    a("token", "cf_api_token={v}", mixed(B64URL, 40))
    a("credential", "credentials: {v}", mixed(B62, 24))
    a("password", "ConnectionStrings__Default=Host=db;Username=app;Password={v}", password())


def _prose() -> None:
    def p(template: str, value: str, cls: str = "natural-language") -> None:
        pos(cls, template.format(v=value), value)

    p("the wifi password for the office is {v}", password())
    p("The password is {v}, don't lose it.", password())
    p("my password is {v}", password())
    p('FYI the admin password for staging is "{v}"', password())
    p("pw for the shared mailbox is {v}", password())
    p("Login: dana / Password: {v}", password())
    p("password: {v} (temporary, change it on first login)", password())
    p("the new root password is {v} btw", password())
    p("Hey! The VPN password was changed to {v}, please update your client.", password())
    p("Use {v} as the password for the test account.", password())
    p("the passphrase for my ssh key is '{v}'", password())
    p("the api key is {v}", mixed(B62, 32))
    p("here's the access token: {v}", mixed(B62, 40))
    p("the token for the staging API is {v}", mixed(B62, 32))
    p("our shared secret is {v}", mixed(B62, 20))
    p("密码是 {v}", password())
    p("我的密码是{v}，别告诉别人", password())
    p("wifi密码：{v}", password())
    p("办公室的WiFi密码是 {v}", password())
    p("数据库密码为 {v}，记得改", password())
    p("服务器 root 密码：{v}", password())
    p("测试账号 dana，密码 {v}", password())
    p("API 密钥是 {v}", mixed(B62, 32))
    p("访问令牌：{v}", mixed(B62, 40))
    p("私钥口令是「{v}」", password())
    p("GitHub token 是 {v}，有效期 30 天", github())
    p("管理员密码改成了 {v}", password())


def _obfuscated() -> None:
    pw = password()
    pos("obfuscated", f"ｐａｓｓｗｏｒｄ＝{pw}", pw)
    pw = password()
    pos("obfuscated", f"password\u200b={pw}", pw)
    pw = password()
    pos("obfuscated", f"pass\u200dword: {pw}", pw)
    pw = password()
    pos("obfuscated", f"ＤＢ＿ＰＡＳＳＷＯＲＤ＝{pw}", pw)
    pw = password()
    pos(
        "obfuscated",
        f"密码：{''.join(chr(ord(c) + 0xFEE0) if '!' <= c <= '~' else c for c in pw)}",
        "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in pw),
    )
    t = github()
    pos("obfuscated", f"token\ufeff={t}", t)
    t = github()
    cut = 22
    pos("split-line", f"here is the token:\n{t[:cut]}\n{t[cut:]}\nthanks", t[:cut], t[cut:])
    t = openai()
    pos("split-line", f"OPENAI_API_KEY={t[:60]}\n{t[60:]}", t[:60], t[60:])
    t = anthropic()
    pos("split-line", f"key: {t[:50]}\n  {t[50:]}", t[:50], t[50:])
    t = npm()
    pos("split-line", f"//registry.npmjs.org/:_authToken={t[:20]}\n{t[20:]}", t[20:])
    t = stripe()
    pos("split-line", f"stripe key {t[:40]}\n{t[40:]}", t[40:])
    t = aws_id()
    pos(
        "obfuscated",
        f"aws key id {''.join(chr(ord(c) + 0xFEE0) for c in t)}",
        "".join(chr(ord(c) + 0xFEE0) for c in t),
    )
    t = slack()
    pos("obfuscated", f"slack\u00a0token:\u00a0{t}", t)


def _hashes_and_ids() -> None:
    for _ in range(4):
        near(
            "git-sha",
            f"commit {rand(HEX, 40)}\nAuthor: Dana <dana@example.com>\n\n    fix flaky login test",
        )
    near(
        "git-sha",
        f"reverted {rand(HEX, 7)} and {rand(HEX, 12)}; see {rand(HEX, 40)} for the original",
    )
    near("git-sha", f"git cherry-pick {rand(HEX, 40)}")
    near("git-sha", f"Merge pull request #4821 from acme/fix-cache ({rand(HEX, 40)})")
    near("git-sha", f"pinned actions/checkout@{rand(HEX, 40)} # v4.1.1")
    for _ in range(3):
        u = f"{rand(HEX, 8)}-{rand(HEX, 4)}-4{rand(HEX, 3)}-a{rand(HEX, 3)}-{rand(HEX, 12)}"
        near("uuid", f"request {u} failed with 502 after 30s")
    near(
        "uuid",
        f"tenant_id: {rand(HEX, 8)}-{rand(HEX, 4)}-{rand(HEX, 4)}-{rand(HEX, 4)}-{rand(HEX, 12)}",
    )
    near(
        "uuid",
        f'{{"id": "{rand(HEX, 8)}-{rand(HEX, 4)}-{rand(HEX, 4)}-{rand(HEX, 4)}-{rand(HEX, 12)}", "status": "done"}}',
    )
    near(
        "uuid",
        f"AZURE_SUBSCRIPTION_ID={rand(HEX, 8)}-{rand(HEX, 4)}-{rand(HEX, 4)}-{rand(HEX, 4)}-{rand(HEX, 12)}",
    )
    for _ in range(3):
        near("sha256", f"{rand(HEX, 64)}  cairn-1.4.2-py3-none-any.whl")
    near("sha256", f"sha256:{rand(HEX, 64)}")
    near("sha256", f"docker pull python@sha256:{rand(HEX, 64)}")
    near("sha256", f"checksum: sha256={rand(HEX, 64)}")
    near("sha256", f"Digest: sha256:{rand(HEX, 64)}\nStatus: Downloaded newer image for node:20")
    near("sha256", f"md5 {rand(HEX, 32)}  backup.tar.gz")
    near("sha256", f'ETag: "{rand(HEX, 32)}"')
    for _ in range(3):
        near("npm-integrity", f'"integrity": "sha512-{mixed(B64, 86)}=="')
    near(
        "npm-integrity",
        f'resolved "https://registry.yarnpkg.com/lodash/-/lodash-4.17.21.tgz#{rand(HEX, 40)}"\n  integrity sha512-{mixed(B64, 86)}==',
    )
    near(
        "npm-integrity",
        f'<script src="https://cdn.example.com/lib.js" integrity="sha384-{mixed(B64, 64)}" crossorigin="anonymous"></script>',
    )
    near("ids", f"Stripe customer cus_{mixed(B62, 14)} has invoice in_{mixed(B62, 24)}")
    near("ids", f"pk_live_{mixed(B62, 99)} is the publishable key; it is meant for the browser")
    near("ids", f"twilio account AC{rand(HEX, 32)} sent the SMS")
    near("ids", f"arn:aws:iam::{rand(string.digits, 12)}:role/ci-deploy")
    near("ids", f"s3://acme-artifacts-{rand(string.digits, 12)}/builds/{rand(HEX, 40)}/app.zip")
    near(
        "ids",
        f"pod web-{rand('bcdfghjklmnpqrstvwxz2456789', 10)}-{rand('bcdfghjklmnpqrstvwxz2456789', 5)} restarted 3 times",
    )
    near("ids", f"trace_id={rand(HEX, 32)} span_id={rand(HEX, 16)}")
    near("ids", f"Slack channel C{rand(UPPER_DIGITS, 10)}, user U{rand(UPPER_DIGITS, 10)}")
    near("ids", f"YouTube video id dQw4w9WgXcQ and playlist PL{mixed(B64URL, 32)}")
    near("ids", f"ULID 01J{rand('0123456789ABCDEFGHJKMNPQRSTVWXYZ', 23)} was stored")
    near("ids", f"Order #{rand(string.digits, 10)} shipped, tracking 1Z{rand(UPPER_DIGITS, 16)}")
    near("ids", f"key id {rand(HEX, 40)} in private_key_id is only an identifier")


def _encoded_data() -> None:
    png = base64.b64encode(
        b"\x89PNG\r\n\x1a\n" + bytes(RNG.randrange(256) for _ in range(90))
    ).decode()
    near("data-uri", f"![logo](data:image/png;base64,{png})")
    near("data-uri", f'<img src="data:image/png;base64,{png}" alt="chart">')
    svg = b'<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect width="10"/></svg>'
    near(
        "data-uri", f"background: url(data:image/svg+xml;base64,{base64.b64encode(svg).decode()});"
    )
    jpg = base64.b64encode(
        b"\xff\xd8\xff\xe0" + bytes(RNG.randrange(256) for _ in range(120))
    ).decode()
    near("data-uri", f"data:image/jpeg;base64,{jpg}")
    near(
        "data-uri",
        f"font: url('data:font/woff2;base64,{base64.b64encode(bytes(RNG.randrange(256) for _ in range(80))).decode()}')",
    )
    readme = b"# README\nThis project builds the docs site with mkdocs.\n"
    near("base64", f'{{"content": "{base64.b64encode(readme).decode()}", "encoding": "base64"}}')
    near(
        "base64",
        f"echo {base64.b64encode(b'hello world from the build server').decode()} | base64 -d",
    )
    settings = b'{"theme": "dark", "lang": "en"}'
    near(
        "base64",
        f"kubectl get cm app -o yaml\ndata:\n  settings.json: {base64.b64encode(settings).decode()}",
    )
    near("public-key", f"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{mixed(B64, 43)} dana@laptop")
    near("public-key", f"ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABgQ{mixed(B64, 200)} ci@runner")
    near("public-key", f"-----BEGIN PUBLIC KEY-----\n{pem_body(4)}\n-----END PUBLIC KEY-----")
    near("public-key", f"-----BEGIN CERTIFICATE-----\n{pem_body(6)}\n-----END CERTIFICATE-----")
    near("public-key", f"age public key: age1{rand(BECH32.lower(), 58)}")
    near("public-key", f"github.com ssh fingerprint SHA256:{mixed(B64, 43)}")
    near(
        "public-key",
        f'gpg: key {rand(HEX.upper(), 16)}: public key "Dana <dana@example.com>" imported',
    )
    near("base64", f"the build cache key is {rand(HEX, 64)}")
    near("base64", f"yarn.lock checksum: {rand(HEX, 128)}")
    near("base64", f"wasm module hash b3-{rand(HEX, 64)}")


def _identifiers_and_urls() -> None:
    for name in (
        "AbstractSingletonProxyFactoryBeanConfigurationRegistry",
        "test_recall_returns_the_newest_version_when_two_agree",
        "handleUserAuthenticationTokenRefreshFailure",
        "TOKEN_REFRESH_INTERVAL_SECONDS",
        "useInfiniteScrollPaginationWithCursorTokens",
        "SecretsManagerRotationLambdaExecutionRole",
        "PasswordResetRequestSerializerV2",
        "get_api_key_from_environment_or_keyring",
    ):
        near("identifier", f"renamed {name} in the last refactor")
    near("identifier", "src/components/authentication/PasswordStrengthMeter.test.tsx")
    near("identifier", "class ApiKeyAuthenticationMiddleware(BaseHTTPMiddleware):")
    near("identifier", "from cairn.engine.secrets import find_secrets, redact")
    near("identifier", "kubernetes.io/service-account-token is the secret type")
    for version in ("1.2.3", "2.0.0-rc.1", "10.4.12+build.2026.03.01", "v3.11.4", "0.0.1-alpha.7"):
        near("semver", f"bumped the package to {version} and tagged the release")
    near("semver", '"dependencies": {"react": "^18.3.1", "zod": "~3.23.8"}')
    near("semver", "python_requires>=3.11,<3.14")
    for url in (
        "https://github.com/acme/infra/blob/main/README.md",
        "https://docs.example.com/api/v2/auth?section=tokens#refresh",
        "postgres://localhost:5432/app",
        "https://user@example.com/path",
        "git@github.com:acme/infra.git",
        "https://www.google.com/search?q=how+to+rotate+api+keys",
        "redis://cache.internal:6379/0",
        "https://example.com/reset-password?step=2",
        "http://localhost:3000/oauth/callback?code_challenge_method=S256&state=xyz",
        "mongodb://db1.example.com:27017,db2.example.com:27017/?replicaSet=rs0",
        "https://api.slack.com/authentication/token-types",
        "https://pypi.org/project/keyring/",
    ):
        near("url", f"see {url} for details")
    near("url", "the URL format is https://user:password@host")
    near("url", "template: postgresql://{user}:{password}@{host}:{port}/{db}")
    near("url", "DATABASE_URL=postgres://${DB_USER}:${DB_PASSWORD}@db:5432/app")


def _policy_and_docs() -> None:
    for text in (
        "The password policy requires 12 characters, one digit and one symbol.",
        "Password: must contain at least one uppercase letter",
        "Password: required",
        "password reset emails go out through SES",
        "We rotate the API key every 90 days.",
        "The password is case-sensitive.",
        "The password is stored in 1Password under 'staging'.",
        "the password was reset by IT yesterday",
        "The token expired, so the job failed with 401.",
        "Rate limiting uses a token bucket with 100 tokens per second.",
        "Set max_tokens=4096 and temperature=0.2 for the summarizer.",
        "token_count: 1532",
        "The tokenizer splits 'unbelievable' into three tokens.",
        "Bearer authentication sends a bearer token in the Authorization header.",
        "secret: sauce is garlic and a little anchovy",
        "The secret to good bread is time.",
        "Keep secrets in Vault; never commit them.",
        "Secrets are mounted at /var/run/secrets/kubernetes.io/serviceaccount.",
        "credentials: see the vault entry 'ci/deploy'",
        "AKIA is the prefix of long-term AWS access key ids; ASIA is for temporary ones.",
        "ghp_ tokens are classic personal access tokens; github_pat_ ones are fine-grained.",
        "Stripe uses sk_live_ for secret keys and pk_live_ for publishable ones.",
        "SendGrid keys start with SG. and Hugging Face tokens with hf_.",
        "An age secret key starts with AGE-SECRET-KEY-1.",
        "-----BEGIN PRIVATE KEY----- is the header of a PKCS#8 key.",
        "Use `npm token list` to see your tokens.",
        "Authorization: Basic auth is disabled on this endpoint.",
        "the wifi password for the office is on the whiteboard",
        "the password for the office wifi is written on the fridge",
        "my password is too short, the form says",
        "密码至少八位，包含数字和字母。",
        "重置密码流程需要短信验证。",
        "密码是必填的。",
        "令牌桶算法用于限流。",
        "请把 API 密钥放在环境变量里，不要写进代码。",
        "密码错误次数超过五次会锁定账号。",
        "今天天气不错，我们去公园吧。",
        "Passwort vergessen? Klicke auf den Link.",
        "Meeting at 10:30: discuss the token budget of 4000 characters.",
        "The session token expiry is 30 minutes.",
        "is_secret: false",
        "secret_santa: true",
        "token_type: bearer",
        "password_min_length: 12",
        "password_hash = bcrypt.hashpw(raw, salt)",
        'The JWT header starts with eyJ because that is base64 for {".',
    ):
        near("prose", text)


def _placeholders_and_code() -> None:
    for text in (
        "api_key = os.environ['OPENAI_API_KEY']",
        "password = getpass.getpass()",
        "API_KEY=${API_KEY}",
        "token = process.env.GITHUB_TOKEN",
        "password=None",
        "api_key: YOUR_API_KEY",
        "GITHUB_TOKEN=<YOUR_TOKEN>",
        "password: <your password>",
        "password: ********",
        "token: xxx",
        "OPENAI_API_KEY=sk-...",
        "STRIPE_SECRET_KEY=sk_live_xxxxxxxxxxxxxxxxxxxxxxxx",
        "api_key: your-api-key-here",
        "SECRET_KEY={{ secrets.DJANGO_SECRET_KEY }}",
        'password: "{{ .Values.db.password }}"',
        "token = get_token(user)",
        "def login(username: str, password: str) -> bool:",
        "password: Optional[str] = None",
        "api_key: SecretStr",
        "if password == confirm_password: return True",
        "self.password = password",
        "self.token = nextchar",
        "cache_token = current_token",
        "ctx.load_cert_chain(CERTFILE, password=getpass_unicode)",
        "- name: DB_PASSWORD\n  valueFrom:\n    secretKeyRef:\n      name: db\n      key: password",
        "env:\n  - name: API_TOKEN\n    value: $(API_TOKEN)",
        "aws_secret_access_key = {{ aws_secret }}",
        "password=$(cat /run/secrets/db_password)",
        "export GITHUB_TOKEN=$(gh auth token)",
        "docker login -u dana --password-stdin < ~/.docker-pass",
        "mysql -u root -p",
        'curl -u "$USER:$PASS" https://example.com',
        "auth:\n  type: oauth2\n  token_url: https://auth.example.com/token",
        '"auth": "required"',
        "PWD=/home/dana/project",
        "In Rust, `let token: &str = &args[1];` borrows the argument.",
        "PseudoToken = Whitespace + group(Name)",
        "const API_KEY_HEADER = 'X-Api-Key';",
        "password_field = forms.CharField(widget=forms.PasswordInput)",
        "if (!token) throw new Error('missing token');",
        "SECRET_NAME=prod/db/credentials",
        'secret_arn = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:prod-db-AbCdEf"',
        "password: !vault |\n  $ANSIBLE_VAULT;1.1;AES256",
        "machine api.example.com login dana",
        "TOKEN_TTL=3600",
        "key: value",
        "the password is ****** in the logs, masked",
    ):
        near("placeholder-or-code", text)


def add_positives() -> None:
    _service_tokens()
    _cloud_credentials()
    _key_blocks()
    _urls_and_headers()
    _config_assignments()
    _prose()
    _obfuscated()


def add_near_misses() -> None:
    _hashes_and_ids()
    _encoded_data()
    _identifiers_and_urls()
    _policy_and_docs()
    _placeholders_and_code()


def add_second_round() -> None:
    """Written after the detector was tuned on the rows above, and run once before any
    change (42 of 46 positives caught, 48 of 49 near-misses left alone then)."""
    t = github()
    pos("github-token", f"I accidentally committed {t} to the repo, rotating now", t)
    t = github_fine()
    pos("github-token", f"GH_TOKEN: '{t}'", t)
    t = gitlab()
    pos("gitlab-token", f"git remote set-url origin https://oauth2:{t}@gitlab.com/acme/api.git", t)
    t = slack()
    pos("slack-token", f'slack_token = "{t}"', t)
    t = stripe()
    pos("stripe-key", f'stripe.api_key = "{t}"', t)
    t = openai()
    pos(
        "openai-api-key",
        f"Traceback: openai.AuthenticationError: Incorrect API key provided: {t}",
        t,
    )
    t = anthropic()
    pos("anthropic-api-key", f"set ANTHROPIC_API_KEY to {t} in your shell", t)
    t = npm()
    pos("npm-token", f'echo "//nppkg.github.com/:_authToken={t}" >> ~/.npmrc', t)
    t = pypi()
    pos("pypi-token", f"PYPI_API_TOKEN={t}", t)
    t = hf()
    pos("huggingface-token", f"hf token: {t}", t)
    t = shopify()
    pos("shopify-token", f"shopify admin token {t} (read_products)", t)
    t = digitalocean()
    pos("digitalocean-token", f'terraform: do_token = "{t}"', t)
    t = sendgrid()
    pos("sendgrid-key", f"SMTP password for sendgrid is {t}", t)
    t = discord()
    pos("discord-token", f'bot.run("{t}")', t)
    t = telegram()
    pos("telegram-bot-token", f"bot = telebot.TeleBot('{t}')", t)
    t = age_key()
    pos("age-key", f"age key for sops: {t}", t)
    t = jwt()
    pos("jwt", f"Authorization: Bearer {t}", t)
    i, s = aws_id(), aws_secret()
    pos("aws", f"AWS creds\nkey: {i}\nsecret: {s}", i, s)
    i, s = aws_id(), aws_secret()
    pos("aws", f'aws_access_key_id: "{i}"\naws_secret_access_key: "{s}"', i, s)
    k = azure_key()
    pos(
        "azure",
        f'AZURE_STORAGE_CONNECTION_STRING="DefaultEndpointsProtocol=https;AccountName=x;AccountKey={k}"',
        k,
    )
    t = gcp_key()
    pos("gcp", f'firebase apiKey: "{t}",', t)
    pw = password()
    pos("database-url", f"postgresql://postgres:{pw}@localhost:5432/postgres", pw)
    pw = password()
    pos("database-url", f"mongodb://root:{pw}@mongo:27017/?authSource=admin", pw)
    pw = password()
    pos("natural-language", f"ssh admin@10.1.2.3 (password {pw})", pw)
    pw = password()
    pos("natural-language", f"The router admin password is {pw}", pw)
    pw = password()
    pos("password", f"wifi: acme-5G / pass: {pw}", pw)
    pw = password()
    pos("natural-language", f"Your temporary password: {pw}", pw)
    pw = password()
    pos("password", f"PASSWORD: {pw}", pw)
    pw = password()
    pos("password", f"user=admin pass={pw}", pw)
    pw = password()
    pos("natural-language", f"数据库连接：用户 root 密码 {pw}", pw)
    pw = password()
    pos("natural-language", f"新的 VPN 密码：{pw}（下周过期）", pw)
    pw = password()
    pos("natural-language", f"老板说 wifi 密码是 {pw}", pw)
    pw = password()
    pos("password", f'  password: "{pw}"\n  host: db', pw)
    pw = password()
    pos("password", f"redis_password={pw}", pw)
    pw = password()
    pos("natural-language", f"keystore password is {pw}", pw)
    pw = password()
    pos("password", f'<add key="DbPassword" value="{pw}" />', pw)
    t = mixed(B62, 32)
    pos("api-key", f"OPENWEATHER_API_KEY={t}", t)
    t = mixed(B62, 40)
    pos("token", f"token={t}", t)
    t = mixed(B62, 32)
    pos("natural-language", f"The API token for Jira is {t}", t)
    body = pem_body()
    pos(
        "private-key",
        f"id_rsa:\n-----BEGIN OPENSSH PRIVATE KEY-----\n{body}\n-----END OPENSSH PRIVATE KEY-----",
        body.split("\n")[3],
    )
    pw = password()
    pos("obfuscated", f"ｐａｓｓｗｏｒｄ：{pw}", pw)
    pw = password()
    pos("obfuscated", f"pass\u200bword = {pw}", pw)
    t = github()
    pos("split-line", f"token: {t[:25]}\n{t[25:]}", t[25:])
    t = hf()
    pos("split-line", f"HF_TOKEN={t[:15]}\n{t[15:]}", t[15:])
    auth = basic("bob", password())
    pos("basic-auth-header", f"headers: {{'Authorization': 'Basic {auth}'}}", auth)
    pw = password()
    pos("netrc", f"machine ftp.acme.io login bob password {pw}", pw)
    near("second-round", f"fixed in {rand(HEX, 40)} (see #123)")
    near("second-round", f"sha1sum: {rand(HEX, 40)}")
    near(
        "second-round",
        f"session id {rand(HEX, 8)}-{rand(HEX, 4)}-{rand(HEX, 4)}-{rand(HEX, 4)}-{rand(HEX, 12)}",
    )
    near("second-round", f"image: ghcr.io/acme/api@sha256:{rand(HEX, 64)}")
    near("second-round", f'"integrity": "sha1-{mixed(B64, 27)}="')
    near("second-round", "password123 is the most common password, never use it")
    near("second-round", "Please enter your password to continue.")
    near("second-round", "Forgot your password? Click here.")
    near("second-round", "the token limit is 128k for this model")
    near("second-round", "tokens: 2048")
    near("second-round", "We store the API key in AWS Secrets Manager.")
    near("second-round", "export NODE_ENV=production")
    near("second-round", 'export PATH="$HOME/.local/bin:$PATH"')
    near("second-round", "DB_HOST=localhost\nDB_PORT=5432\nDB_NAME=app")
    near("second-round", "password: ${{ secrets.DB_PASSWORD }}")
    near("second-round", "api_key = settings.OPENAI_API_KEY")
    near("second-round", "token = request.headers.get('Authorization')")
    near("second-round", "if not api_key: raise ValueError('no key')")
    near("second-round", "passwordless login via magic links shipped")
    near("second-round", "The secret sauce of our ranking is BM25 plus recency.")
    near("second-round", "secretary: Dana")
    near("second-round", "tokenizer: bert-base-uncased")
    near("second-round", "https://example.com/api?page=2&per_page=100")
    near("second-round", "ssh git@github.com -T")
    near("second-round", "v2.14.0-rc.3")
    near("second-round", f"build {rand(HEX, 12)} deployed to prod")
    near("second-round", "Use the `--password-stdin` flag instead of -p.")
    near("second-round", "密码忘记了可以用手机号找回。")
    near("second-round", "令牌过期了，需要重新登录。")
    near("second-round", "请输入密码：")
    near("second-round", "The key insight is that caching beats recomputation.")
    near("second-round", "primary key: (tenant, id)")
    near("second-round", "foreign_key: user_id")
    near("second-round", "keyboard: US layout")
    near("second-round", "ENV NODE_ENV production")
    near("second-round", "- name: LOG_LEVEL\n  value: debug")
    near("second-round", "curl -u $USER https://example.com")
    near("second-round", "The password field is hashed with argon2id.")
    near("second-round", "We changed the password policy to 14 characters.")
    near("second-round", "the passphrase is long, at least five words")
    near("second-round", f"cache key: user:{rand(string.digits, 6)}:profile")
    near("second-round", "pk_test_TYooMQauvdEDq54NiTphI7jx is Stripe's documented test key")
    near("second-round", "AIza... keys are restricted by HTTP referrer")
    near("second-round", "Bearer tokens expire after 1 hour.")
    near("second-round", "Authorization: Bearer <token>")
    near("second-round", f"base64: {b64url(b'just some ordinary bytes of a png-ish file')}")
    near("second-round", "my password manager is Bitwarden")
    near("second-round", "The WiFi network is acme-guest, ask reception for the password.")
    near("second-round", "The access token is short-lived; the refresh token is long-lived.")


def add_third_round() -> None:
    """Written after the second round was fixed, and run once before any change (29 of
    31 positives caught, 29 of 30 near-misses left alone then)."""
    t = github()
    pos("github-token", f"$ gh secret set DEPLOY_KEY --body {t}", t)
    t = github()
    pos("github-token", f'- run: echo "GH_PAT={t}" >> $GITHUB_ENV', t)
    t = slack()
    pos("slack-token", f"Slack bot token (prod): `{t}`", t)
    t = stripe("rk_live_")
    pos("stripe-key", f"stripe restricted key -> {t}", t)
    t = anthropic()
    pos("anthropic-api-key", f"llm:\n  provider: anthropic\n  key: {t}", t)
    t = openai()
    pos("openai-api-key", f'os.environ["OPENAI_API_KEY"] = "{t}"', t)
    t = npm()
    pos("npm-token", f"NODE_AUTH_TOKEN: {t}", t)
    t = hf()
    pos("huggingface-token", f"git clone https://dana:{t}@huggingface.co/acme/model", t)
    t = sendgrid()
    pos("sendgrid-key", f"EMAIL_HOST_PASSWORD = '{t}'", t)
    t = gitlab()
    pos("gitlab-token", f"gitlab: {t}", t)
    t = discord()
    pos("discord-token", f'TOKEN = "{t}"  # discord', t)
    t = digitalocean()
    pos("digitalocean-token", f"DO token is {t}", t)
    t = shopify("shpss_")
    pos("shopify-token", f"SHOPIFY_API_SECRET={t}", t)
    t = telegram()
    pos("telegram-bot-token", f"telegram: {t}", t)
    t = age_key()
    pos("age-key", f"sops age private key {t}", t)
    i, s = aws_id(), aws_secret()
    pos("aws", f"AWS_ACCESS_KEY_ID: {i}\nAWS_SECRET_ACCESS_KEY: {s}", i, s)
    t = jwt()
    pos("jwt", f"x-auth-token: {t}", t)
    body = pem_body()
    pos(
        "private-key",
        f'ssl_key = """-----BEGIN EC PRIVATE KEY-----\n{body}\n-----END EC PRIVATE KEY-----"""',
        body.split("\n")[2],
    )
    pw = password()
    pos("natural-language", f"creds for the NAS: admin/{pw}", pw)
    pw = password()
    pos("natural-language", f"My Gmail password is {pw} please log in and check", pw)
    pw = password()
    pos("natural-language", f"Set the root pw to {pw} on all three boxes", pw)
    pw = password()
    pos("password", f"password={pw}&remember=1", pw)
    pw = password()
    pos("password", f'"password":"{pw}"', pw)
    pw = password()
    pos("password", f"ansible_become_pass: {pw}", pw)
    pw = password()
    pos("database-url", f"mysql://root:{pw}@127.0.0.1/test", pw)
    pw = password()
    pos("password", f"邮箱密码：{pw}", pw)
    pw = password()
    pos("natural-language", f"路由器后台密码是{pw}", pw)
    pw = password()
    pos("natural-language", f"账号 admin 密码 {pw} 不要外传", pw)
    pw = password()
    pos("obfuscated", f"ＡＰＩ＿ＫＥＹ＝{pw}", pw)
    t = github()
    pos("obfuscated", f"my token\u200b: {t}", t)
    t = openai()
    pos("split-line", f"export OPENAI_API_KEY={t[:70]}\n{t[70:]}", t[70:])
    near("third-round", "password: must be at least 8 characters long")
    near("third-round", "Make sure the password meets the policy (12+ chars).")
    near("third-round", "git log --oneline 3f2a9c1..8b7d6a5")
    near("third-round", "c4ca4238a0b923820dcc509a6f75849b is the md5 of '1'")
    near("third-round", "node_modules/.cache/babel-loader/5d41402abc4b2a76b9719d911017c592.json")
    near("third-round", "The token endpoint is /oauth/token")
    near("third-round", "OAuth access tokens are sent as Bearer tokens.")
    near(
        "third-round",
        "We use JWTs signed with RS256; the public keys are at /.well-known/jwks.json",
    )
    near("third-round", "secret management: we use sops with age")
    near("third-round", "keys are rotated by the platform team on the first Monday")
    near("third-round", "run `ssh-keygen -t ed25519` to make a new key")
    near("third-round", "the API returns a 401 when the token is missing")
    near("third-round", "`password` column is varchar(255)")
    near("third-round", "passwd file lives at /etc/passwd")
    near("third-round", "SELECT id, password_hash FROM users WHERE email = $1")
    near("third-round", "const token = useAuthStore((s) => s.token);")
    near("third-round", "token_budget = 4000  # characters")
    near("third-round", "export KUBECONFIG=~/.kube/config")
    near("third-round", "DATABASE_URL=postgres://localhost/dev")
    near(
        "third-round",
        "https://github.com/acme/infra/commit/9fceb02d0ae598e95dc970b74767f19372d61af8",
    )
    near("third-round", f"sha256sum: {rand(HEX, 64)}")
    near("third-round", f"Request-Id: req_{mixed(B62, 14)}")
    near("third-round", "docker run -p 8080:80 nginx")
    near("third-round", "mysql -h db -u app -p")
    near("third-round", "curl -u admin https://example.com  # prompts for the password")
    near("third-round", "密码已经发到你的邮箱了。")
    near("third-round", "请不要把密钥提交到仓库。")
    near("third-round", "登录失败：密码错误")
    near("third-round", "tokenize the input, then embed each token")
    near("third-round", "The secret word of the day is 'banana' (a game for the kids).")


def main(folder: Path = HERE) -> None:
    add_positives()
    add_near_misses()
    add_second_round()
    add_third_round()
    for name, rows in (("positives", POSITIVES), ("near_misses", NEAR)):
        with (folder / f"{name}.jsonl").open("w", encoding="utf-8", newline="\n") as out:
            for n, row in enumerate(rows, start=1):
                out.write(json.dumps({"id": f"{name[0]}{n:03d}", **row}, ensure_ascii=False))
                out.write("\n")
    print(f"{len(POSITIVES)} positives, {len(NEAR)} near-misses")


if __name__ == "__main__":
    main()

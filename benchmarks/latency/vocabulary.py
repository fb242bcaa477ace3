"""The sentence pool of the latency benchmarks: ~35 templates over a mixed vocabulary.

Common English, people's names, code identifiers (snake_case, camelCase, paths, env vars),
tools, numbers, versions and dates, grouped into topics: the sentences of one topic share
components, identifiers, people and tools, so memories drawn from a topic look alike the
way an agent's memories of one subject do. Deterministic for a seed.
"""

from __future__ import annotations

import random
import string
from collections.abc import Callable, Sequence
from dataclasses import dataclass


def _w(text: str) -> list[str]:
    return text.split()


COMMON_WORDS = _w(
    """
account answer approach area attempt backup balance branch budget build cache change
check client code comment config cost customer data deadline decision default deploy
design detail document draft email error estimate event feature feedback file fix flow
format goal guide habit handler history idea image import incident input issue job key
label launch layer limit list log loop meeting message metric migration model module
note number option order owner page patch path payment plan policy port price priority
process product profile project queue question quota rate reason record release report
request result review risk role rule schedule schema score script search secret server
service session setting shift signal size source spec step storage story summary support
system table target task team template test thread ticket timeout token tool topic trace
update upload user value version view warning window worker workflow
"""
)
_ADJ = _w(
    """
slow fast broken stable flaky noisy quiet urgent optional strict lazy verbose terse
expensive cheap stale fresh risky safe huge tiny legacy shiny
"""
)
_VERBS = _w(
    """
fails crashes stalls hangs retries recovers drifts spikes leaks degrades restarts
"""
)
_ADV = _w("silently randomly rarely often daily nightly sometimes always")
_FIRST = _w(
    """
Alice Bob Carol Dmitri Elena Farah Gabriel Hana Ivan Jonas Keiko Liam Maria Noor Oscar
Priya Quinn Rafael Sofia Tariq Uma Viktor Wen Ximena Yusuf Zoe Amara Bjorn Chen Diego
Emeka Freya Giulia Hiro Ingrid Jamal Kavya Lucas Mei Nikolai
"""
)
_LAST = _w(
    """
Okafor Schmidt Tanaka Novak Garcia Rossi Kowalski Haddad Larsen Mbeki Petrov Silva Dubois
Nakamura Fischer Moreau Ivanova Lindqvist Costa Brennan Reyes Yilmaz Andersen Kim
"""
)
_TOOLS = _w(
    """
pnpm npm yarn poetry uv pip docker kubectl helm terraform ansible postgres redis sqlite
kafka nginx grafana prometheus sentry pytest ruff mypy black webpack vite esbuild jest
playwright celery airflow dbt spark duckdb clickhouse elasticsearch rabbitmq vault
"""
)
_LANGS = _w("Python TypeScript Go Rust Kotlin Java Swift Ruby")
_COMPONENTS = _w(
    """
auth-service billing-worker search-indexer payment-gateway notification-hub
report-builder image-resizer session-store rate-limiter feature-flags audit-log
export-job ingest-pipeline sync-daemon webhook-relay admin-console mobile-api
pricing-engine email-sender cron-scheduler cache-warmer user-directory geo-lookup
"""
)
_AREAS = """
dependency management, code formatting, linting, deployments, database migrations,
load testing, error tracking, feature flags, secrets, local development, CI caching,
logging, on-call handover, release notes, code review, onboarding
""".replace("\n", " ").split(", ")
_STYLES = """
short answers, code examples, bullet points, type hints everywhere, small pull requests,
tabs over spaces, early returns, long explanations, emoji in commits, verbose logs,
docstrings on public functions, meetings before noon
""".replace("\n", " ").split(", ")
_CONDITIONS = """
the queue is full, the cache is cold, two replicas restart at once, the token expires,
traffic spikes after a release, the disk is above 90 percent, the VPN drops,
a migration is still running, the upstream returns 429, DNS resolution is slow
""".replace("\n", " ").split(", ")
_CAUSES = """
the fixture shares a temp dir, the clock is mocked wrongly, the vendor API changed,
legal review is pending, the test data is not reset, two jobs race on the lock,
the staging database was wiped, the design is not final
""".replace("\n", " ").split(", ")
_REGIONS = _w("eu-west-1 us-east-1 ap-southeast-2 eu-central-1 us-west-2")
_BRANCHES = _w("main release staging develop production")
_ENVS = _w("staging production dev preview")
_OSES = _w("macOS Linux Windows NixOS")
_EDITORS = ["Neovim", "VS Code", "Emacs", "PyCharm", "Zed", "Helix"]
_FOODS = _w("ramen tacos dumplings sushi pho falafel pierogi curry")
_PLACES = _w("Lisbon Osaka Nairobi Toronto Kraków Austin Seoul Bergen")
_COMPANIES = _w("Acme Globex Initech Umbrella Hooli Vandelay Stark Wayne")
_MONTHS = _w(
    """
January February March April May June July August September October November December
"""
)
_WORD_PARTS = _w(
    """
user order cart token retry config parse load save fetch build render cache queue batch
index record event session price tax invoice report sync merge flush limit window
"""
)
PROJECT_NAMES = _w(
    """
atlas orion-api billing-v2 mobile-app data-lake helios kestrel nimbus polaris quartz
rover saturn tundra umbra vega zephyr
"""
)
# Words that never occur in stored memories: most "unmatched" queries are about these.
UNSEEN_TOPICS = """
sourdough starter, tax return, piano lesson, marathon training, passport renewal,
violin strings, garden hose, solar panel, wedding venue, telescope lens, bicycle chain,
fishing license, yoga retreat, orchid watering, chess opening, kayak rental,
""".replace("\n", " ").split(", ")


def _snake(rng: random.Random) -> str:
    return f"{rng.choice(_WORD_PARTS)}_{rng.choice(_WORD_PARTS)}" + rng.choice(
        ["", "", "_ms", "_id", "_v2", "s"]
    )


def _camel(rng: random.Random) -> str:
    return rng.choice(["get", "set", "load", "handle", "build", "parse"]) + "".join(
        rng.choice(_WORD_PARTS).capitalize() for _ in range(rng.randint(1, 2))
    )


def _path(rng: random.Random) -> str:
    ext = rng.choice(["py", "ts", "go", "rs", "yaml", "sql"])
    root = rng.choice(["src", "lib", "app", "pkg"])
    return f"{root}/{rng.choice(_WORD_PARTS)}/{_snake(rng)}.{ext}"


def _date(rng: random.Random) -> str:
    y, m, d = rng.randint(2023, 2025), rng.randint(1, 12), rng.randint(1, 28)
    month = _MONTHS[m - 1]
    return rng.choice([f"{y}-{m:02d}-{d:02d}", f"{month} {d}", f"{month} {d}, {y}"])


def _version(rng: random.Random) -> str:
    return f"{rng.randint(0, 9)}.{rng.randint(0, 30)}.{rng.randint(0, 12)}"


@dataclass(frozen=True, slots=True)
class Topic:
    component: str
    idents: tuple[str, ...]
    paths: tuple[str, ...]
    tools: tuple[str, ...]
    people: tuple[str, ...]
    env_var: str
    table: str
    feature: str


def _topics(rng: random.Random, n: int) -> list[Topic]:
    out = []
    for i in range(n):
        comp = _COMPONENTS[i % len(_COMPONENTS)]
        if i >= len(_COMPONENTS):
            comp = f"{comp}-{rng.choice(_WORD_PARTS)}"
        suffix = rng.choice(["URL", "TOKEN", "TIMEOUT", "MODE"])
        kind = rng.choice(["items", "events", "log", "state"])
        flavour = rng.choice(["export", "dashboard", "v2", "sync", "alerts"])
        out.append(
            Topic(
                component=comp,
                idents=tuple(rng.choice([_snake, _camel])(rng) for _ in range(6)),
                paths=(_path(rng), _path(rng)),
                tools=tuple(rng.sample(_TOOLS, 3)),
                people=tuple(rng.sample(_FIRST, 3)),
                env_var=f"{rng.choice(_WORD_PARTS).upper()}_{suffix}",
                table=f"{rng.choice(_WORD_PARTS)}_{kind}",
                feature=f"{rng.choice(_WORD_PARTS)} {flavour}",
            )
        )
    return out


@dataclass(frozen=True, slots=True)
class Sentence:
    text: str
    topic: int
    keys: tuple[str, ...]  # slot fills worth asking about (names, identifiers, tools, ...)


# Sentence templates: `{slot}` is filled by SLOTS; a topic's own values are preferred, so
# sentences of one topic share components, identifiers, people and tools.
TEMPLATES = (
    "{person} prefers {tool} over {any_tool} for {area}.",
    "Always run {cmd} before pushing to {branch}.",
    "Never push directly to {branch}; open a pull request and ask {person} for a review.",
    "The {component} times out after {seconds} seconds when {cond}.",
    "On {date}, {person} moved the {component} deploy to {region}.",
    "{ident} in {path} returns None when the {noun} is empty, which broke {component} on {date}.",
    "Meeting with {person} {last} on {date}: we agreed to ship the {feature} by {date2}.",
    "Use {tool} {version} for {component}; newer versions break {ident}.",
    "{person} is out of office until {date}.",
    "Set {env_var} to {value} in {env}, otherwise {component} cannot reach {tool}.",
    "{person} likes {style} and dislikes {style2}.",
    "Bug {ticket}: {component} leaks memory after {requests} requests; fixed in {version}.",
    "Port {port} is reserved for {component} on the {env} cluster.",
    "{any_person}'s birthday is {month_day}; they love {food}.",
    "The budget for the {feature} is {money} per month, approved by {person} on {date}.",
    "Tests for {ident} are flaky on CI because {cause}.",
    "Rotate the {env_var} secret for {component} every {days} days.",
    "{person} asked to rename {ident} to {ident2} in {path}.",
    "We use {tool} for {area} in {component} and {any_tool} everywhere else.",
    "The {noun} {verb} {adv} when {cond}.",
    "Latency of {component} rose to {ms} ms at p95 after the {date} release.",
    "Migration {migration} adds column {ident} to table {table}; run it with {cmd}.",
    "{person} {last} from {company} is the contact for {area}.",
    "Prefer {style} in {lang} code.",
    "In {component}, {path} owns the {area} logic; do not duplicate it elsewhere.",
    "Dinner with {any_person} in {place} on {date}; the {food} was {adj}.",
    "The deadline for the {feature} moved from {date} to {date2} because {cause}.",
    "{component} retries {retries} times with exponential backoff starting at {backoff} ms.",
    "Use {lang} {version} here.",
    "{person} uses {os} and {editor}.",
    "Avoid {any_tool} for {component}.",
    "The {adj} {noun} in {ident} needs a {noun2} {noun3} before the next {noun4} review.",
    "Our {noun} {noun2} for the {feature} is {adj}; {person} will write a new one this week.",
    "{table} grew to {rows} million rows by {date}; queries on {ident} need an index.",
    "Remember that {person} reviews every change to {path} and wants {style}.",
)
# Slots whose values make a memory findable: questions are written from these.
KEY_SLOTS = frozenset(
    _w("person any_person tool any_tool component ident path feature env_var table ticket")
    + _w("lang branch")
)
Slot = Callable[[random.Random, Topic], str]


def _own(rng: random.Random, own: Sequence[str], everyone: Sequence[str]) -> str:
    return rng.choice(own) if rng.random() < 0.75 else rng.choice(everyone)


def _cmd(r: random.Random, t: Topic) -> str:
    verb = r.choice(["test", "run lint", "build", "check", "install --frozen-lockfile"])
    return f"`{r.choice(t.tools)} {verb}`"


SLOTS: dict[str, Slot] = {
    "person": lambda r, t: _own(r, t.people, _FIRST),
    "any_person": lambda r, t: r.choice(_FIRST),
    "last": lambda r, t: r.choice(_LAST),
    "tool": lambda r, t: _own(r, t.tools, _TOOLS),
    "any_tool": lambda r, t: r.choice(_TOOLS),
    "area": lambda r, t: r.choice(_AREAS),
    "branch": lambda r, t: r.choice(_BRANCHES),
    "cmd": _cmd,
    "component": lambda r, t: t.component,
    "seconds": lambda r, t: str(r.choice([5, 10, 30, 60, 120])),
    "cond": lambda r, t: r.choice(_CONDITIONS),
    "cause": lambda r, t: r.choice(_CAUSES),
    "date": lambda r, t: _date(r),
    "date2": lambda r, t: _date(r),
    "region": lambda r, t: r.choice(_REGIONS),
    "ident": lambda r, t: r.choice(t.idents),
    "ident2": lambda r, t: r.choice(t.idents) + "_new",
    "path": lambda r, t: r.choice(t.paths),
    "noun": lambda r, t: r.choice(COMMON_WORDS),
    "noun2": lambda r, t: r.choice(COMMON_WORDS),
    "noun3": lambda r, t: r.choice(COMMON_WORDS),
    "noun4": lambda r, t: r.choice(COMMON_WORDS),
    "feature": lambda r, t: t.feature,
    "version": lambda r, t: _version(r),
    "env_var": lambda r, t: t.env_var,
    "value": lambda r, t: r.choice(["1", "true", "strict", "30s", "https://internal.example"]),
    "env": lambda r, t: r.choice(_ENVS),
    "style": lambda r, t: r.choice(_STYLES),
    "style2": lambda r, t: r.choice(_STYLES),
    "ticket": lambda r, t: f"{r.choice(['OPS', 'BUG', 'PLAT', 'SEC'])}-{r.randint(100, 9999)}",
    "requests": lambda r, t: f"{r.randint(1, 900) * 1000:,}",
    "port": lambda r, t: str(r.choice([3000, 5432, 6379, 8000, 8080, 8443, 9090, 9200])),
    "month_day": lambda r, t: f"{r.choice(_MONTHS)} {r.randint(1, 28)}",
    "food": lambda r, t: r.choice(_FOODS),
    "money": lambda r, t: f"${r.randint(2, 90) * 100:,}",
    "days": lambda r, t: str(r.choice([30, 60, 90])),
    "lang": lambda r, t: r.choice(_LANGS),
    "verb": lambda r, t: r.choice(_VERBS),
    "adv": lambda r, t: r.choice(_ADV),
    "adj": lambda r, t: r.choice(_ADJ),
    "ms": lambda r, t: str(r.randint(40, 900)),
    "retries": lambda r, t: str(r.randint(2, 8)),
    "backoff": lambda r, t: str(r.choice([50, 100, 250, 500])),
    "migration": lambda r, t: f"{r.randint(1, 250):04d}",
    "table": lambda r, t: t.table,
    "company": lambda r, t: r.choice(_COMPANIES),
    "place": lambda r, t: r.choice(_PLACES),
    "os": lambda r, t: r.choice(_OSES),
    "editor": lambda r, t: r.choice(_EDITORS),
    "rows": lambda r, t: str(r.randint(1, 900)),
}
_FORMATTER = string.Formatter()


def _fill(rng: random.Random, template: str, topic: Topic) -> tuple[str, tuple[str, ...]]:
    names = [name for _, name, _, _ in _FORMATTER.parse(template) if name]
    values = {name: SLOTS[name](rng, topic) for name in dict.fromkeys(names)}
    keys = tuple(v for k, v in values.items() if k in KEY_SLOTS)
    return template.format(**values), keys


def make_pool(seed: int, size: int, n_topics: int) -> tuple[list[Topic], list[Sentence]]:
    """``size`` distinct sentences, each tagged with its topic and askable keys."""
    rng = random.Random(f"{seed}:pool")
    topics = _topics(rng, n_topics)
    seen: set[str] = set()
    pool: list[Sentence] = []
    attempts = 0
    while len(pool) < size:
        attempts += 1
        if attempts > size * 50:
            raise RuntimeError("could not generate enough distinct sentences")
        topic_id = rng.randrange(n_topics)
        text, keys = _fill(rng, rng.choice(TEMPLATES), topics[topic_id])
        if text in seen:
            continue
        seen.add(text)
        pool.append(Sentence(text, topic_id, keys))
    return topics, pool

"""The secret policy over every stored text field, on every write route.

Each field a write keeps — body, title, tags, source (who, channel, url), external_ref,
an observation's command, task, topic, tools and note, a task text kept with its
applications, an imported record — is tried with a secret in it, under ``redact`` (the
stored text holds ``[REDACTED:kind]``; no byte of the secret is anywhere in the home) and
``refuse`` (exit 2 / HTTP 400, one line, nothing written), through the CLI in-process and
through a real ``cairn serve``.
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from cairn import InvalidInput, Memory
from cairn.services.secrets import SecretGuard
from cli_runner import invoke_cairn
from server.serving import Server

# Fake credentials of real shapes, assembled so no literal key sits in the repository.
TOKEN = "ghp_" + "Zq81Lm0Xr7Tc2Vb9" + "Nw4Ks6Hd3Jf5Pa1Ge0Yu"
PASSWORD = "Tr0ub4dor" + "&3xQ"
URL = f"https://deploy:{PASSWORD}@git.example.com/acme/infra.git"
SECRETS = (TOKEN.encode(), PASSWORD.encode())
POLICIES = ("redact", "refuse")
# "the title holds a secret (github-token); not stored", "the tags hold …"
REFUSED = re.compile(r"the [a-z ]+ holds? a secret \([a-z, -]+\); not stored")


def all_bytes(folder: Path) -> bytes:
    return b"".join(p.read_bytes() for p in folder.rglob("*") if p.is_file())


def leaked(folder: Path) -> list[bytes]:
    data = all_bytes(folder)
    return [s for s in SECRETS if s in data]


# -- the policy itself -------------------------------------------------------------------


def test_scrub_walks_strings_lists_and_objects() -> None:
    fields = {
        "body": f"use {TOKEN}",
        "tags": ["ci", f"pw={PASSWORD}"],
        "source": {"who": "dana", "url": URL, "nested": [{"k": TOKEN}]},
        "external_ref": None,
    }
    out, kinds = SecretGuard().scrub("redact", fields)
    assert TOKEN not in json.dumps(out) and PASSWORD not in json.dumps(out)
    assert out["tags"][0] == "ci" and out["source"]["who"] == "dana"
    assert out["source"]["url"] == (
        "https://deploy:[REDACTED:url-credentials]@git.example.com/acme/infra.git"
    )
    assert out["external_ref"] is None
    assert kinds == ("github-token", "password", "url-credentials")
    assert SecretGuard().scrub("allow", fields) == (fields, ())


def test_a_short_text_found_clean_is_scanned_once_and_a_secret_every_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from cairn.services import secrets

    scanned: list[str] = []
    scan = secrets.redact

    def counted(text: str) -> tuple[str, list[str]]:
        scanned.append(text)
        return scan(text)

    monkeypatch.setattr(secrets, "redact", counted)
    monkeypatch.setattr(secrets, "_clean", set())
    item = {"project_id": "tenant-1/billing-v2", "tags": [f"pw={PASSWORD}"]}
    for _ in range(3):  # three items of one bulk write
        out, kinds = SecretGuard().scrub("redact", item)
        assert out == {"project_id": "tenant-1/billing-v2", "tags": ["pw=[REDACTED:password]"]}
        assert kinds == ("password",)
    assert scanned.count("tenant-1/billing-v2") == 1
    assert scanned.count(f"pw={PASSWORD}") == 3  # a secret is never kept: found every time
    assert secrets._clean == {"tenant-1/billing-v2"}
    with pytest.raises(InvalidInput, match="the tags hold a secret"):
        SecretGuard().scrub("refuse", item)


def test_refuse_names_the_field_and_not_the_secret() -> None:
    with pytest.raises(InvalidInput) as caught:
        SecretGuard().scrub("refuse", {"body": "fine", "external_ref": TOKEN}, where="line 3")
    message = str(caught.value)
    assert message.startswith("line 3: the external ref holds a secret (github-token)")
    assert TOKEN not in message and "\n" not in message
    with pytest.raises(InvalidInput, match=r"memory\.secrets must be one of"):
        SecretGuard().scrub("maybe", {"body": "x"})


# -- review and deltas, in-process ------------------------------------------------------

CONVERSATION = [
    {"role": "user", "content": f"Our staging database password is {PASSWORD}."},
    {"role": "assistant", "content": "Noted."},
    {"role": "user", "content": "Our CI runs on GitHub Actions."},
]


@pytest.mark.parametrize("policy", POLICIES)
def test_a_review_keeps_no_secret_a_user_stated(tmp_path: Path, policy: str) -> None:
    config = {"memory": {"embeddings": {"provider": "hashing"}, "secrets": policy}}
    with Memory.open(tmp_path / "m.db", config=config) as mem:
        reviewed = mem.review(CONVERSATION)
        bodies = [r.body for r in reviewed.stored]
        if policy == "redact":
            assert "Our staging database password is [REDACTED:password]." in bodies
        else:  # the statement with the secret is skipped, the others are kept
            assert bodies == ["Our CI runs on GitHub Actions."]
            (skipped,) = [s for s in reviewed.skipped if "holds a secret" in s["reason"]]
            assert PASSWORD not in json.dumps(skipped)
        assert PASSWORD not in json.dumps([e.payload for e in mem.journal()])
    assert leaked(tmp_path) == []


@pytest.mark.parametrize("policy", POLICIES)
def test_a_submitted_delta_keeps_no_secret(tmp_path: Path, policy: str) -> None:
    config = {"memory": {"embeddings": {"provider": "hashing"}, "secrets": policy}}
    with Memory.open(tmp_path / "m.db", config=config) as mem:
        fields = {"statement": f"Deploy with GH_TOKEN={TOKEN}", "title": f"token {TOKEN}"}
        if policy == "refuse":
            with pytest.raises(InvalidInput, match="holds a secret"):
                mem.submit_delta("create", event_id="d1", kind="skill", **fields)
            assert mem.journal() == []
        else:
            cited = [  # a delta cites the corroborating observations it was drawn from
                mem.observe(True, note="Deploy with make ship", episode_id=f"e{i}").event_id
                for i in range(2)
            ]
            done = mem.submit_delta("create", event_id="d1", kind="skill", evidence=cited, **fields)
            assert done.record is not None
            assert done.record.body == "Deploy with GH_TOKEN=[REDACTED:github-token]"
            assert done.record.title == "token [REDACTED:github-token]"
    assert leaked(tmp_path) == []


# -- the CLI, in-process -----------------------------------------------------------------


def cli_home(root: Path, policy: str) -> Path:
    home = root / f"home-{policy}"
    home.mkdir(parents=True)
    settings = {"memory": {"embeddings": {"provider": "hashing"}, "secrets": policy}}
    (home / "config.yaml").write_text(yaml.safe_dump(settings), encoding="utf-8")
    return home


def cli(home: Path, *args: str) -> Any:
    return invoke_cairn(home, *args)


def journal_length(home: Path) -> int:
    settings = yaml.safe_load((home / "config.yaml").read_text(encoding="utf-8"))
    # A command run inside a repository records the repository's readable name first
    # (``project.named``, idempotent metadata, issue 21); what a refusal must not leave is
    # any event about memory.
    with Memory.open(home / "memory.db", config=settings) as mem:
        return sum(1 for e in mem.journal() if e.type != "project.named")


def ingest_file(folder: Path) -> Path:
    path = folder / "notes.jsonl"
    lines = [
        {"body": "The release train leaves on Thursdays", "tags": ["release", f"t-{TOKEN}"]},
        {"body": "Staging runs on k3s", "source": {"who": "dana", "url": URL}},
        {"body": "The runbook is in the wiki", "external_ref": f"wiki?token={TOKEN}"},
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


# Each write with a secret in one field: (name, the command line after the home).
def cli_writes(folder: Path) -> list[tuple[str, list[str]]]:
    note = "Deploys go through the release train"
    return [
        ("tag", ["remember", note, "--tag", f"ci-{TOKEN}"]),
        ("title", ["remember", note, "--title", f"token {TOKEN}"]),
        ("source", ["remember", note, "--source", f"dana via {URL}"]),
        ("body", ["remember", f"The deploy password is {PASSWORD}"]),
        ("path", ["remember", note, "--path", f"keys/{TOKEN}/**"]),
        ("observe path", ["observe", "--success", "--path", f"keys/{TOKEN}/**"]),
        ("ingest", ["ingest", str(ingest_file(folder))]),
        ("observe command", ["observe", "--success", "--command", f"curl -u ci:{PASSWORD} x"]),
        ("observe task", ["observe", "--success", "--task", f"rotate {TOKEN}"]),
        ("observe topic", ["observe", "--success", "--topic", f"token {TOKEN}"]),
        ("observe tools", ["observe", "--success", "--tool", "make", "--tool", TOKEN]),
        ("observe note", ["observe", "--success", "--note", f"export GH_TOKEN={TOKEN}"]),
    ]


@pytest.mark.parametrize("policy", POLICIES)
def test_every_field_on_the_cli(tmp_path: Path, policy: str) -> None:
    for name, args in cli_writes(tmp_path):
        home = cli_home(tmp_path / name.replace(" ", "-"), policy)
        done = cli(home, *args)
        if policy == "redact":
            assert done.returncode == 0, (name, done.stderr)
            assert leaked(home) == [], name
            events = json.loads(cli(home, "--json", "journal").stdout)
            assert "[REDACTED:" in json.dumps(events), name
        else:
            assert done.returncode == 2, (name, done.stdout)
            line = done.stderr.strip()
            assert REFUSED.search(line) and "\n" not in line, (name, line)
            assert TOKEN not in line and PASSWORD not in line
            assert leaked(home) == [] and journal_length(home) == 0, name


@pytest.mark.parametrize("policy", POLICIES)
def test_a_task_text_is_kept_without_its_secret(tmp_path: Path, policy: str) -> None:
    home = cli_home(tmp_path, policy)
    remembered = cli(home, "--json", "remember", "Always deploy with the release train")
    record_id = json.loads(remembered.stdout)["record"]["id"]
    task = f"deploy the release train with GH_TOKEN={TOKEN}"
    before = journal_length(home)
    done = cli(home, "--json", "context", "--task", task)
    if policy == "refuse":
        assert done.returncode == 2 and "the task holds a secret" in done.stderr
        assert journal_length(home) == before and leaked(home) == []
        return
    assert done.returncode == 0, done.stderr
    delivered = json.loads(done.stdout)
    assert any(i["id"] == record_id for i in delivered["resident"] + delivered["manifest"])
    assert leaked(home) == []
    forgot = cli(home, "forget", "--permanent", record_id)
    assert forgot.returncode == 0, forgot.stderr
    assert leaked(home) == []


def test_an_export_made_under_allow_is_redacted_or_refused_on_import(tmp_path: Path) -> None:
    source = cli_home(tmp_path / "a", "allow")
    for args in (
        ["remember", f"the password is {PASSWORD}", "--tag", TOKEN, "--source", URL],
        ["remember", "Staging runs on k3s", "--title", f"token {TOKEN}"],
    ):
        assert cli(source, *args).returncode == 0
    export = tmp_path / "export.jsonl"
    assert cli(source, "export", str(export)).returncode == 0
    assert TOKEN in export.read_text(encoding="utf-8")  # allow kept it

    redacting = cli_home(tmp_path / "b", "redact")
    done = cli(redacting, "import", str(export))
    assert done.returncode == 0, done.stderr
    assert leaked(redacting) == []
    listed = json.loads(cli(redacting, "--json", "list").stdout)
    assert len(listed) == 2 and "[REDACTED:" in json.dumps(listed)
    again = cli(redacting, "import", str(export))  # idempotent: the same lines, no new entry
    assert again.returncode == 0 and journal_length(redacting) == 2

    refusing = cli_home(tmp_path / "c", "refuse")
    done = cli(refusing, "import", str(export))
    assert done.returncode == 2 and "holds a secret" in done.stderr
    assert done.stderr.strip().count("\n") == 0
    assert journal_length(refusing) == 0 and leaked(refusing) == []


# -- over HTTP: a real cairn serve -----------------------------------------------------


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Server]]:
    root = tmp_path_factory.mktemp("secret-servers")
    started: dict[str, Server] = {}
    try:
        for policy in POLICIES:
            config = {"memory": {"secrets": policy}}
            started[policy] = Server.start(root / policy, "sqlite", config=config)
        yield started
    finally:
        for server in started.values():
            server.stop()


def http_writes() -> list[tuple[str, str, dict[str, Any]]]:
    """(name, route, body): one secret in one field of each."""
    note = "Deploys go through the release train"
    return [
        ("tags", "apply", {"mutation": "remember", "body": note, "tags": [TOKEN]}),
        ("title", "apply", {"mutation": "store", "body": note, "title": f"pw {PASSWORD}"}),
        ("source", "apply", {"mutation": "store", "body": note, "source": {"url": URL}}),
        ("external_ref", "apply", {"mutation": "store", "body": note, "external_ref": TOKEN}),
        (
            "ingest",
            "apply",
            {"mutation": "ingest", "items": [{"body": note}, {"body": "b", "tags": [TOKEN]}]},
        ),
        ("observe", "apply", {"mutation": "observe", "success": True, "command": TOKEN}),
        ("observe tools", "apply", {"mutation": "observe", "success": True, "tools": [TOKEN]}),
        ("observe topic", "apply", {"mutation": "observe", "success": True, "topic": TOKEN}),
        ("observe task", "apply", {"mutation": "observe", "success": True, "task": TOKEN}),
        (
            "signal",
            "apply",
            {"mutation": "signal", "text": f"Always use the deploy token {TOKEN} for releases"},
        ),
    ]


def tenant_client(server: Server) -> Callable[[str, dict[str, Any]], Any]:
    import uuid

    client = server.client(server.token(f"t-{uuid.uuid4().hex[:10]}"))

    def call(route: str, body: dict[str, Any]) -> Any:
        if route == "apply":
            body = {"idempotency_key": uuid.uuid4().hex, **body}
        return client.post(f"/v1/{route}", json=body)

    return call


@pytest.mark.parametrize("policy", POLICIES)
def test_every_field_over_http(servers: dict[str, Server], policy: str) -> None:
    server = servers[policy]
    for name, route, body in http_writes():
        call = tenant_client(server)
        response = call(route, body)
        journal = call("query", {"view": "journal"})
        assert journal.status_code == 200, journal.text
        events = json.dumps(journal.json())
        if policy == "redact":
            # (a response may echo the caller's own words back; what is kept may not)
            assert response.status_code == 200, (name, response.text)
            listed = call("query", {"view": "manage", "include_forgotten": True}).text
            assert TOKEN not in listed and PASSWORD not in listed, name
            assert TOKEN not in events and PASSWORD not in events and "[REDACTED:" in events
        else:
            assert response.status_code == 400, (name, response.text)
            assert REFUSED.search(response.text) and TOKEN not in response.text
            assert journal.json()["events"] == [], name
    assert leaked(server.home) == []


@pytest.mark.parametrize("policy", POLICIES)
def test_task_texts_and_imports_over_http(servers: dict[str, Server], policy: str) -> None:
    server = servers[policy]
    call = tenant_client(server)
    stored = call("apply", {"mutation": "remember", "body": "Always deploy with the train"})
    assert stored.status_code == 200, stored.text
    record_id = stored.json()["record"]["id"]
    task = call("query", {"view": "task", "task": f"deploy the train; GH_TOKEN={TOKEN}"})
    # expanded for this task: an application whatever the director judged resident
    expanded = call(
        "query",
        {"view": "expand", "record_id": record_id, "task": f"deploy; GH_TOKEN={TOKEN}"},
    )
    applications = call("query", {"view": "applications", "record_id": record_id})
    if policy == "redact":
        assert task.status_code == 200 and expanded.status_code == 200, task.text
        assert applications.json()["applications"], applications.text
        assert TOKEN not in applications.text and "[REDACTED:" in applications.text
    else:
        assert task.status_code == 400 and "the task holds a secret" in task.text
        assert expanded.status_code == 400, expanded.text
        assert applications.json()["applications"] == []
    header = {"format": "cairn.export.v1", "tenant": "elsewhere", "agent": "default"}
    lines = [json.dumps(header)]
    record = _exported_record(f"note with {TOKEN}")
    lines.append(json.dumps({"type": "record", "record": record}))
    imported = call("apply", {"mutation": "import", "lines": lines})
    listed = call("query", {"view": "manage", "include_forgotten": True})
    if policy == "redact":
        assert imported.status_code == 200, imported.text
        assert TOKEN not in listed.text and "[REDACTED:github-token]" in listed.text
    else:
        assert imported.status_code == 400 and "holds a secret" in imported.text
        assert TOKEN not in listed.text
    reviewed = call("apply", {"mutation": "review", "transcript": json.dumps(CONVERSATION)})
    assert reviewed.status_code == 200, reviewed.text
    kept = call("query", {"view": "manage"}).text
    assert "Our CI runs on GitHub Actions." in kept and PASSWORD not in kept
    assert leaked(server.home) == []


def _exported_record(body: str) -> dict[str, Any]:
    """One record line as ``cairn export`` writes it (made by a store under ``allow``)."""
    from cairn.identifiers import new_ulid
    from cairn.text import text_hash

    return {
        "id": new_ulid(),
        "version": 1,
        "tenant": "elsewhere",
        "agent": "default",
        "body": body,
        "kind": "fact",
        "memory_type": "semantic",
        "tags": [TOKEN],
        "recorded_at": "2026-01-02T03:04:05.000000Z",
        "text_hash": text_hash(body),
    }


# -- the same command lines in-process, through the daemon and through cairn serve ------


@pytest.fixture(scope="module")
def routes(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    from provider.parity import started

    with started(tmp_path_factory.mktemp("secret-routes")) as found:
        yield found


def test_every_field_on_every_route(routes: Any, tmp_path: Path) -> None:
    bound = routes.bind()
    for name, route in bound.items():
        (tmp_path / name).mkdir()
        for what, args in cli_writes(tmp_path / name):
            done = route.cli(*args)
            assert done.code == 0, (name, what, done.err)
        task = route.cli("--json", "context", "--task", f"deploy the train; GH_TOKEN={TOKEN}")
        assert task.code == 0, (name, task.err)
        journal = route.cli("--json", "journal")
        assert journal.code == 0 and "[REDACTED:" in journal.out, name
        assert TOKEN not in journal.out and PASSWORD not in journal.out, name
    for home in (routes.local_home, routes.daemon_home, routes.remote_home, routes.server.home):
        assert leaked(home) == [], home


@pytest.mark.parametrize("policy", POLICIES)
def test_every_field_through_the_mcp_tool(tmp_path: Path, policy: str) -> None:
    from cairn.cli.app import App
    from cairn.mcp_server.calls import Binding, MemoryTools

    home = cli_home(tmp_path, policy)
    app = App(home, True, "default", "default", None)
    try:
        tools = MemoryTools(app.client, Binding(None, None, None))
        for field, value in (
            ("tags", ["ci", TOKEN]),
            ("title", f"pw {PASSWORD}"),
            ("source", {"who": "dana", "url": URL}),
            ("external_ref", f"ticket?token={TOKEN}"),
            ("body", f"The deploy token is {TOKEN}"),
        ):
            arguments = {"body": f"Deploys go through the release train ({field})", field: value}
            if policy == "refuse":
                with pytest.raises(InvalidInput, match=REFUSED.pattern):
                    tools.call("memory_store", {**arguments, "stated_by_user": True})
            else:
                stored = tools.call("memory_store", {**arguments, "stated_by_user": True})
                assert "[REDACTED:" in json.dumps(stored.data["record"][field]), field
    finally:
        app.close()
    assert leaked(home) == []
    if policy == "refuse":
        assert journal_length(home) == 0


def git_repo(root: Path) -> Path:
    import subprocess

    repo = root / "shop"
    repo.mkdir(parents=True)
    for args in (
        ["init", "-q"],
        ["-c", "user.email=t@example.org", "-c", "user.name=t", "commit", "-q",
         "--allow-empty", "-m", "init"],
    ):  # fmt: skip
        subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)
    return repo


@pytest.mark.parametrize("policy", POLICIES)
def test_the_hooks_keep_no_secret_of_a_prompt_or_a_turn(tmp_path: Path, policy: str) -> None:
    from hook_events import event, transcript_lines

    home = cli_home(tmp_path, policy)
    repo = git_repo(tmp_path)
    prompt = f"From now on, always deploy with GH_TOKEN={TOKEN} in this repo."
    data = event("prompt-rule", cwd=str(repo), prompt=prompt)
    done = invoke_cairn(home, "hook", "prompt", stdin=json.dumps(data).encode(), cwd=repo)
    assert done.returncode == 0, done.stderr  # a hook never fails its host
    if policy == "refuse":  # the user is told, in one line, and nothing is logged as a fault
        notice = json.loads(done.stdout)["systemMessage"]
        assert "holds a secret" in notice and TOKEN not in notice
        assert not (home / "logs" / "hooks.log").exists()
    asked = "Install the dependencies and run the tests."
    said = f"{asked} The staging password is {PASSWORD}."
    lines = [line.replace(asked, said) for line in transcript_lines()]
    assert any(said in line for line in lines)
    transcript = tmp_path / "transcript.jsonl"
    transcript.write_text("\n".join(lines) + "\n", encoding="utf-8")
    stop = event("stop", cwd=str(repo), transcript_path=str(transcript))
    done = invoke_cairn(home, "hook", "stop", stdin=json.dumps(stop).encode(), cwd=repo)
    assert done.returncode == 0, done.stderr
    assert leaked(home) == []
    assert not (home / "logs" / "hooks.log").exists()  # a refusal is no fault
    events = json.loads(invoke_cairn(home, "--json", "journal").stdout)
    if policy == "redact":
        assert any("[REDACTED:github-token]" in json.dumps(e) for e in events)
        assert any("[REDACTED:password]" in json.dumps(e) for e in events)


def test_a_redacted_record_still_fits_its_limits_and_survives_a_round_trip(
    tmp_path: Path,
) -> None:
    config = {"memory": {"embeddings": {"provider": "hashing"}}}
    with Memory.open(tmp_path / "a.db", config=config) as mem:
        long_tag = "x" * 190 + " pw=ab12"  # 198 characters; redacted, 212
        with pytest.raises(InvalidInput, match="tag"):
            mem.store("a note", tags=[long_tag])
        assert mem.journal() == []
    allow = {"memory": {"embeddings": {"provider": "hashing"}, "secrets": "allow"}}
    with Memory.open(tmp_path / "b.db", config=allow) as mem:
        kept = mem.store(f"rotate {TOKEN} monthly", tags=[TOKEN])
        gone = mem.store(f"the old password was {PASSWORD}")
        mem.forget(gone.id)
        out = io.StringIO()
        mem.export(out)
    with Memory.open(tmp_path / "c.db", config=config) as mem:
        assert mem.import_(out.getvalue().splitlines()) == 3
        record = mem.get(kept.id)
        assert record is not None and record.body == "rotate [REDACTED:github-token] monthly"
        assert record.tags == ("[REDACTED:github-token]",)
        assert [t.record_id for t in mem.tombstones()] == [gone.id]
        again = io.StringIO()
        mem.export(again)
    with Memory.open(tmp_path / "d.db", config=config) as mem:  # the redacted export imports
        assert mem.import_(again.getvalue().splitlines()) == 3
    for path in [*tmp_path.glob("c.db*"), *tmp_path.glob("d.db*")]:
        assert not [s for s in SECRETS if s in path.read_bytes()], path

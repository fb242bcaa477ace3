from __future__ import annotations

from pathlib import Path

import pytest

from cairn.config import Config, load_config, parse_config
from cairn.errors import ConfigError


def test_bare_config_is_fully_defaulted(tmp_path: Path) -> None:
    empty = tmp_path / "c.yaml"
    empty.write_text("")
    cfg = load_config(empty)
    assert cfg == Config()
    rag = cfg.agent("anyone").rag
    assert (rag.maxResults, rag.maxContextChars, rag.minScore) == (5, 4000, 0.1)
    assert rag.includeTrustLevels == ("system", "learned")
    assert (rag.weights.fts, rag.weights.vector, rag.weights.entity) == (1.0, 1.5, 1.0)
    assert rag.entityLane is False and rag.rerank.enabled is False
    assert (rag.rerank.maxCandidates, rag.rerank.timeoutMs) == (40, 800)
    assert (rag.entity.seedCount, rag.entity.perEntityCap) == (5, 200)
    b = rag.boosts
    assert (b.recency, b.temporal, b.proof, b.trust, b.usefulness, b.forget) == (
        0.2,
        0.2,
        0.1,
        0.1,
        0.1,
        0.1,
    )
    learning = cfg.agent("x").learning
    forget = learning.forget
    assert (forget.maxDormantDays, forget.failureEvictionFloor, forget.highProofFloor) == (
        365,
        3,
        5,
    )
    refl = learning.reflect
    assert (
        refl.corroboration.minObservations,
        refl.promoteAtProofCount,
        refl.maxProcedureDocsSurfaced,
    ) == (2, 3, 10)
    assert refl.corroboration.mode == "single_owner" and refl.intervalHours == 3
    assert learning.senders == {"user": "system"} and learning.defaultSenderTrust == "external"
    assert cfg.memory.llm.baseUrl is None  # no LLM unless one is configured


def test_per_agent_block_overrides_only_that_agent() -> None:
    cfg = parse_config({"agents": {"coder": {"rag": {"maxResults": 9, "entityLane": True}}}})
    assert cfg.agent("coder").rag.maxResults == 9 and cfg.agent("coder").rag.entityLane
    assert cfg.agent("coder").rag.maxContextChars == 4000
    assert cfg.agent("other").rag.maxResults == 5


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"memroy": {}}, "memroy: unknown key"),
        ({"memory": {"store": {"pth": "x"}}}, "memory.store.pth: unknown key"),
        ({"agents": {"a": {"rag": {"weights": {"bm25": 1}}}}}, "agents.a.rag.weights.bm25"),
        ({"agents": {"a": {"rag": {"maxResults": 0}}}}, "agents.a.rag.maxResults"),
        ({"agents": {"a": {"rag": {"includeTrustLevels": ["root"]}}}}, "includeTrustLevels"),
        ([1, 2], "top level must be a mapping"),
    ],
)
def test_invalid_config_names_the_dotted_path(data: object, message: str) -> None:
    with pytest.raises(ConfigError, match=message.replace(".", r"\.")):
        parse_config(data)


def test_malformed_yaml(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("memory: [oops\n")
    with pytest.raises(ConfigError, match="malformed YAML"):
        load_config(bad)


def test_a_key_given_twice_is_refused_with_its_line(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text("memory:\n  store: {}\nrag:\n  x: 1\nmemory:\n  store: {}\n")
    with pytest.raises(ConfigError, match=r"line 5\): repeated key 'memory'"):
        load_config(path)
    path.write_text("rag:\n  fusion: {k: 60, k: 61}\n")
    with pytest.raises(ConfigError, match="repeated key 'k'"):
        load_config(path)


def test_a_merge_key_may_be_overridden(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text(
        "x-defaults: &d {enabled: false}\n"
        "agents:\n  default:\n    retrieval:\n      <<: *d\n      enabled: true\n"
    )
    with pytest.raises(ConfigError, match="x-defaults: unknown key"):  # not a repeat
        load_config(path)


@pytest.mark.parametrize("value", ['"no"', '"yes"', "'true'", "1", "0", '"off"'])
def test_a_switch_takes_only_a_yaml_boolean(tmp_path: Path, value: str) -> None:
    path = tmp_path / "config.yaml"
    path.write_text(f"agents:\n  default:\n    retrieval:\n      enabled: {value}\n")
    with pytest.raises(ConfigError, match=r"retrieval\.enabled"):
        load_config(path)
    path.write_text("agents:\n  default:\n    retrieval:\n      enabled: false\n")
    assert load_config(path).agents["default"].retrieval.enabled is False


def test_the_database_url_from_the_environment_names_the_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from cairn.config import DATABASE_URL_ENV, resolve_config

    (tmp_path / "config.yaml").write_text("memory:\n  store:\n    path: /x/memory.db\n")
    monkeypatch.setenv(DATABASE_URL_ENV, "postgresql://app:s3cret@db:5432/cairn")
    store = resolve_config(tmp_path).memory.store
    assert (store.url, store.path) == ("postgresql://app:s3cret@db:5432/cairn", None)
    monkeypatch.setenv(DATABASE_URL_ENV, "mysql://nope")
    with pytest.raises(ConfigError, match=r"^CAIRN_DATABASE_URL: .*expected sqlite:///"):
        resolve_config(tmp_path)
    monkeypatch.setenv(DATABASE_URL_ENV, "")
    assert resolve_config(tmp_path).memory.store.path == "/x/memory.db"


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("postgresql://app:s3cret@db:5432/cairn", "postgresql://app:[REDACTED]@db:5432/cairn"),
        ("postgresql://app:p@ss@db/cairn", "postgresql://app:[REDACTED]@db/cairn"),
        ("postgres://db/cairn?sslmode=require&password=s3cret", "postgres://db/cairn?sslmode=require&password=[REDACTED]"),
        ("postgresql://app@db/cairn", "postgresql://app@db/cairn"),
    ],
)  # fmt: skip
def test_config_show_redacts_every_password(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, url: str, shown: str
) -> None:
    from cli_runner import run_cairn

    monkeypatch.setenv("CAIRN_DATABASE_URL", url)
    for args in (("config", "show"), ("--json", "config", "show")):
        done = run_cairn(tmp_path / "home", *args)
        assert done.returncode == 0, done.stderr
        assert "s3cret" not in done.stdout and "p@ss" not in done.stdout
        assert shown in done.stdout


@pytest.mark.parametrize(
    ("owner", "said"),
    [
        ("a\x01b", "the owner contains the character U+0001"),
        ("a\nb", "the owner contains the character U+000A (it must be one line)"),
        ("a\x00b", "the owner contains a NUL byte"),
        ("\ud800", "unable to parse raw data as a unicode string"),
        ("  ", "the owner is empty"),
    ],
)
def test_the_learning_owner_is_one_line_of_text(owner: str, said: str) -> None:
    """The owner is the sender of an observation that names none: the config is a
    boundary, and it is held to what the contract holds a sender to."""
    data = {"agents": {"default": {"learning": {"owner": owner}}}}
    with pytest.raises(ConfigError) as refused:
        parse_config(data)
    message = str(refused.value)
    assert message.startswith("config: agents.default.learning.owner: ") and said in message
    assert "\n" not in message
    ok = {"agents": {"default": {"learning": {"owner": "me@laptop"}}}}
    assert parse_config(ok).agent("default").learning.owner == "me@laptop"

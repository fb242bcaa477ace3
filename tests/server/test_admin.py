"""``cairn migrate [--dry-run]``: what an upgrade changes in a PostgreSQL schema, said
first, then done under the setup lock; a second run has nothing to do."""

from __future__ import annotations

import json
from pathlib import Path

import psycopg
import yaml
from psycopg import sql

from cli_runner import TEST_CONFIG, run_cairn
from pg_support import fresh_schema


def _home(tmp: Path, url: str, schema: str) -> Path:
    home = tmp / "home"
    home.mkdir(exist_ok=True)
    config = yaml.safe_load(TEST_CONFIG)
    config["memory"]["store"] = {"url": url, "postgresSchema": schema}
    (home / "config.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    return home


def _tables(url: str, schema: str) -> set[str]:
    with psycopg.connect(url) as conn:
        found = conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = %s", (schema,))
        return {str(r[0]) for r in found.fetchall()}


def test_migrate_says_what_it_will_change_then_changes_it(tmp_path: Path) -> None:
    with fresh_schema("mig") as (url, schema):
        home = _home(tmp_path, url, schema)
        preview = run_cairn(home, "--json", "migrate", "--dry-run")
        assert preview.returncode == 0, preview.stderr
        steps = json.loads(preview.stdout)["changes"]
        assert steps[0] == f"CREATE SCHEMA {schema}"
        assert any(s.startswith("schema version 5: every table") for s in steps)
        assert any(s.startswith("schema version 8: ") for s in steps)
        assert "CREATE TABLE server_tokens" in steps
        assert _tables(url, schema) == set()  # a dry run changes nothing

        done = run_cairn(home, "migrate")
        assert done.returncode == 0, done.stderr
        assert f"schema {schema}: changed:" in done.stdout
        assert {"records", "events", "server_tokens", "schema_version"} <= _tables(url, schema)
        again = run_cairn(home, "migrate", "--dry-run")
        assert again.stdout.strip() == f"schema {schema}: up to date"

        # A schema left by the version before: one migration and the token table to add.
        with psycopg.connect(url, autocommit=True) as conn:
            name = sql.Identifier(schema)
            conn.execute(sql.SQL("DROP TABLE {}.server_tokens").format(name))
            conn.execute(sql.SQL("DROP INDEX {}.records_hash").format(name))
            conn.execute(sql.SQL("DELETE FROM {}.schema_version WHERE version = 8").format(name))
        older = json.loads(run_cairn(home, "--json", "migrate", "--dry-run").stdout)["changes"]
        assert older == [
            "schema version 8: v8: a write's duplicate check finds a body by its hash through"
            " an index, in the listing's order (recorded_at, id), instead of scanning every"
            " memory of the tenant",
            "CREATE TABLE server_tokens",
        ]
        assert run_cairn(home, "migrate").returncode == 0
        assert "up to date" in run_cairn(home, "migrate", "--dry-run").stdout


def test_migrate_refuses_a_store_that_is_not_postgresql_in_one_line(tmp_path: Path) -> None:
    home = tmp_path / "home"
    refused = run_cairn(home, "migrate", "--dry-run")
    assert refused.returncode == 2
    assert refused.stderr.strip() == (
        "cairn: error: memory.store.url does not name a PostgreSQL store"
    )

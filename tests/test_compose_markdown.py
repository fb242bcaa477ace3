"""The Markdown projection's upkeep: each change rewrites the files of its own namespace
(an engine that serves many tenants, as a daemon does, included), under concurrent writers
too, and a permanent forget takes the body out of them."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from cairn.adapters.hashing import HashingEmbedder
from cairn.compose import open_provider
from cairn.config import parse_config
from cairn.provider import contract as c


def test_each_tenant_written_through_one_engine_gets_its_own_files(tmp_path: Path) -> None:
    engine = open_provider(
        parse_config({}), path=tmp_path / "memory.db", home=tmp_path, embedder=HashingEmbedder()
    )
    tenants = [f"team{n}" for n in range(6)]

    def write(tenant: str) -> None:
        bound = engine.bound(tenant=tenant)
        for n in range(3):
            body = f"Rule {n} of {tenant}: review every pull request."
            bound.apply(c.RememberRequest(body=body, idempotency_key=f"{tenant}-{n}"))

    try:
        with ThreadPoolExecutor(6) as pool:
            list(pool.map(write, tenants))
        for tenant in tenants:
            text = (tmp_path / "tenants" / tenant / "default" / "profile.md").read_text()
            assert all(f"Rule {n} of {tenant}" in text for n in range(3)), (tenant, text)
            others = [t for t in tenants if t != tenant]
            assert not any(f"of {other}:" in text for other in others)  # its own alone
        assert not (tmp_path / "profile.md").exists()  # the engine's own tenant wrote none
        bound = engine.bound(tenant="team0")
        record = bound.query(c.ListQuery()).records[0]
        bound.apply(c.ForgetRequest(record_id=record.id, permanent=True, idempotency_key="gone"))
        text = (tmp_path / "tenants" / "team0" / "default" / "profile.md").read_text()
        assert record.body not in text
    finally:
        engine.close()

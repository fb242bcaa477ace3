"""The Python API's parts stand alone over a client; Memory is all of them over one."""

from __future__ import annotations

from pathlib import Path

import pytest

from cairn import Memory
from cairn.adapters.hashing import HashingEmbedder
from cairn.api.learning import Learning
from cairn.api.records import Records
from cairn.api.tasks import TaskContext, Tasks
from cairn.errors import InvalidInput
from cairn.provider.client import Client


def test_each_part_works_over_a_client_of_its_own(tmp_path: Path) -> None:
    with Memory.open(tmp_path / "m.db", config={}, embedder=HashingEmbedder()) as mem:
        client = Client(mem.provider)
        records, tasks, learning = Records(client), Tasks(client), Learning(client)
        rule = records.remember("Always use pnpm to install dependencies.", kind="policy")
        assert records.get(rule.id) == rule == mem.get(rule.id)
        found = tasks.recall("install dependencies")
        assert [c.record.id for c in found.memories] == [rule.id]
        ctx = tasks.context("install the dependencies", paths=["package.json"])
        assert isinstance(ctx, TaskContext) and ctx.task == "install the dependencies"
        delivered = [*ctx.resident, *ctx.manifest]
        assert [i.record_id for i in delivered] == [rule.id]
        full = tasks.expand(rule.id, task="install")
        assert full.record == rule and full.application_id
        seen = learning.observe(True, applications=[full.application_id], note="worked")
        assert seen.kept and full.application_id in seen.judged
        assert learning.telemetry().agents["default"]["counters"]


def test_a_part_refuses_bad_input_before_anything_is_sent(tmp_path: Path) -> None:
    with Memory.open(tmp_path / "m.db", config={}, embedder=HashingEmbedder()) as mem:
        records = Records(Client(mem.provider))
        with pytest.raises(InvalidInput, match="unknown field"):
            records.store("x", colour="red")
        with pytest.raises(InvalidInput, match="tags must be a list of text, not a string"):
            records.store("x", tags="a,b")
        assert mem.list() == [] and mem.journal() == []

"""Tenant B attacks tenant A's memories in the same file: every read, write, import and
replay of B stays in B (see attacks.py for the list); A is untouched, byte for byte, and
its own work still goes through afterwards."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from cairn.model import MemoryInput
from reliability.attacks import A, run_attacks, tenant_rows
from reliability.harness import make_home, open_memory


def test_tenant_b_can_neither_read_nor_change_tenant_a(tmp_path: Path) -> None:
    result = run_attacks(tmp_path)
    assert result.reads == [] and result.writes == []
    assert result.tally.failures() == []
    assert result.tried >= 200
    assert result.refused > 100 and result.own_copy > 20  # both kinds of attack were made


def test_the_snapshot_of_a_tenant_sees_any_change_to_its_rows(tmp_path: Path) -> None:
    home = make_home(tmp_path / "home", real=False)
    with open_memory(home, tenant=A) as a:
        record_id = a.store_many([MemoryInput(body="a note of acme")])[0]
    before = tenant_rows(home / "memory.db", A)
    with open_memory(home, tenant="other") as other:
        other.store("a note of another tenant")
    assert tenant_rows(home / "memory.db", A) == before  # another tenant's write: no change
    with sqlite3.connect(home / "memory.db") as conn:
        conn.execute("UPDATE records SET change_seq = change_seq + 1 WHERE id = ?", (record_id,))
    assert tenant_rows(home / "memory.db", A) != before

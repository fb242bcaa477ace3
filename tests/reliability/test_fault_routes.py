"""The faults' words hold on every route: through the real local daemon (a full disk, a
date out of range) and over HTTP from a real ``cairn serve`` (dates out of range on every
field that takes one: 400 and one line, never a 500)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from daemon.support import cairn, counted, make_home, running
from reliability.faults import OUT_OF_RANGE, small_disk
from server.serving import Server

pytestmark = pytest.mark.slow  # a daemon, a server


def _one_line(stderr: str, *words: str) -> None:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("cairn: error:"), stderr
    assert "internal error" not in stderr and all(w in stderr for w in words), stderr


def test_a_full_disk_says_so_through_the_daemon(tmp_path: Path) -> None:
    with small_disk(tmp_path / "disk", 4096) as mounted:
        if not mounted:
            pytest.skip("mounting a tmpfs is not permitted here")
        home = make_home(tmp_path / "disk")
        assert cairn(home, "remember", "kept through the fault").returncode == 0
        with running(home):
            with (tmp_path / "disk" / "filler").open("wb") as out, contextlib.suppress(OSError):
                while True:
                    out.write(b"\0" * 65536)
                    out.flush()
            applied = counted(home, "/v1/apply")
            big = "words of a long note " * 4000
            for argv in (["remember", big], ["remember", big + " again"]):
                done = cairn(home, *argv)
                assert done.returncode == 2, done.stderr
                _one_line(done.stderr, "is full", "nothing was changed")
            assert counted(home, "/v1/apply") > applied  # the daemon answered them
            listed = cairn(home, "list")
            assert listed.returncode == 0 and "kept through the fault" in listed.stdout
            (tmp_path / "disk" / "filler").unlink()
            assert cairn(home, "remember", "written once space was freed").returncode == 0


def test_a_date_out_of_range_is_one_line_through_the_daemon(tmp_path: Path) -> None:
    home = make_home(tmp_path)
    assert cairn(home, "remember", "a note").returncode == 0
    with running(home):
        for moment in OUT_OF_RANGE:
            for argv in (
                ["recall", "note", "--as-of", moment],
                ["list", "--as-of", moment],
                ["remember", "dated", "--occurred-at", moment],
            ):
                done = cairn(home, *argv)
                assert done.returncode == 2, (argv, done.stderr)
                _one_line(done.stderr, "outside the years 1000 to 9999")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    served = Server.start(tmp_path_factory.mktemp("faults-http") / "home")
    try:
        yield served
    finally:
        served.stop()


def test_every_date_field_over_http_is_range_checked(server: Server) -> None:
    client = server.client(server.token("dates"))
    assert client.post("/v1/apply", json={"mutation": "remember", "idempotency_key": "k0",
                                           "body": "a note"}).status_code == 200  # fmt: skip
    for n, moment in enumerate(OUT_OF_RANGE):
        sent = (
            ("/v1/query", {"view": "recall", "query": "note", "as_of": moment}),
            ("/v1/query", {"view": "manage", "as_of": moment}),
            ("/v1/apply", {"mutation": "remember", "idempotency_key": f"r{n}",
                           "body": "dated", "occurred_at": moment}),
            ("/v1/apply", {"mutation": "ingest", "idempotency_key": f"i{n}",
                           "items": [{"body": "dated", "occurred_at": moment}]}),
            ("/v1/apply", {"mutation": "observe", "idempotency_key": f"o{n}",
                           "success": True, "occurred_at": moment}),
        )  # fmt: skip
        for path, body in sent:
            reply = client.post(path, json=body)
            assert reply.status_code == 400, (path, body, reply.text)
            error = reply.json()["error"]
            assert "outside the years 1000 to 9999" in error and "\n" not in error, error
    listed = client.post("/v1/query", json={"view": "manage"}).json()
    assert [r["body"] for r in listed["records"]] == ["a note"]  # nothing was stored

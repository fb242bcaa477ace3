"""One HTTP exchange over a unix socket, by hand: replies parsed, failures told apart."""

from __future__ import annotations

import socket
import threading
from pathlib import Path

import pytest

from cairn.daemon.wire import WireError, decode_name, encode_name, exchange, parse_reply


def test_a_reply_with_a_length() -> None:
    reply = parse_reply(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nX-A: b\r\n\r\nhelloEXTRA")
    assert (reply.status, reply.headers["x-a"], reply.body) == (200, "b", b"hello")


def test_a_chunked_reply() -> None:
    head = b"HTTP/1.1 404 Not Found\r\nTransfer-Encoding: chunked\r\n\r\n"
    raw = head + b"3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n"
    assert parse_reply(raw).body == b"abcde"


@pytest.mark.parametrize(
    "raw",
    [b"", b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nshort", b"SMTP ready\r\n\r\n"],
)
def test_a_cut_or_foreign_reply_is_an_error_that_may_have_been_sent(raw: bytes) -> None:
    with pytest.raises(WireError) as caught:
        parse_reply(raw)
    assert caught.value.sent


def test_no_socket_means_nothing_was_sent(tmp_path: Path) -> None:
    with pytest.raises(WireError) as caught:
        exchange(tmp_path / "none.sock", "GET", "/health")
    assert not caught.value.sent


def test_a_server_that_reads_and_hangs_up(tmp_path: Path) -> None:
    path = tmp_path / "s.sock"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    server.listen(1)
    seen: list[bytes] = []

    def serve() -> None:
        conn, _ = server.accept()
        seen.append(conn.recv(65536))
        conn.close()  # died mid-request

    thread = threading.Thread(target=serve)
    thread.start()
    with pytest.raises(WireError) as caught:
        exchange(path, "POST", "/v1/apply", b'{"a": 1}', {"X-Cairn-Tenant": "t"}, timeout=5)
    thread.join()
    server.close()
    assert caught.value.sent  # it may have been applied: must not be silently redone
    assert seen[0].startswith(b"POST /v1/apply HTTP/1.1\r\n")
    assert b"X-Cairn-Tenant: t\r\n" in seen[0] and seen[0].endswith(b'\r\n\r\n{"a": 1}')


def test_a_header_with_a_line_break_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="line break"):
        exchange(tmp_path / "x.sock", "GET", "/", headers={"X-A": "a\r\nX-Cairn-Tenant: b"})


@pytest.mark.parametrize("name", ["default", "zoë 100%", "a-b.c_d~", "日本"])
def test_names_travel_as_ascii_and_come_back(name: str) -> None:
    encoded = encode_name(name)
    assert encoded.isascii() and " " not in encoded
    assert decode_name(encoded) == name


def test_a_name_that_is_not_percent_encoding_is_refused() -> None:
    with pytest.raises(ValueError):
        decode_name("%FF")

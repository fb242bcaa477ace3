"""The server's log is JSON lines only: the PostgreSQL driver's and pool's messages too
(multi-line ones as one JSON string), and no URL password in any of them."""

from __future__ import annotations

import io
import json
import logging
import logging.config

from cairn.server.logs import log_config


def test_the_pools_messages_are_json_lines_without_passwords() -> None:
    stream = io.StringIO()
    config = log_config("info")
    config["handlers"]["stderr"]["stream"] = stream
    logging.config.dictConfig(config)
    try:
        pool = logging.getLogger("psycopg.pool")
        pool.warning(
            "error connecting in 'cairn-x': connection failed: postgresql://app:s3cret@db/x\n"
            "DETAIL:  the database system is shutting down"
        )
        pool.info("connection discarded")  # the pool's chatter stays out at info
        logging.getLogger("psycopg").error("consuming input failed")
    finally:
        logging.config.dictConfig({"version": 1, "disable_existing_loggers": False})
    lines = stream.getvalue().splitlines()
    parsed = [json.loads(line) for line in lines]  # every line is JSON
    assert [p["logger"] for p in parsed] == ["psycopg.pool", "psycopg"]
    assert "DETAIL:" in parsed[0]["event"] and parsed[0]["level"] == "warning"
    assert "s3cret" not in stream.getvalue() and "app:[REDACTED]@db" in parsed[0]["event"]

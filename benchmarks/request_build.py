"""What building a request of the contract costs, as a client builds one before it sends
it (``Client.build``: the model with its checked fields), and a mutation a serving process
attributes (``client.attributed``): the requests a hook, a recall and a write build. Each
request is built ``--n`` times in rounds; the table shows the median and p95 of the
rounds' mean microseconds a build.

    python benchmarks/request_build.py [--n 2000] [--rounds 15] [--json OUT.json]

Alternate two versions of cairn by running this with another PYTHONPATH.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cairn.provider import contract as c
from cairn.provider.attribution import Attribution
from cairn.provider.client import build
from cairn.provider.contract import learning as lc

try:  # the attribution checked as the request is (client.attributed), where there is one
    from cairn.provider.client import attributed
except ImportError:  # an older cairn: attribute() without the check
    from cairn.provider.attribution import attribute as attributed

HOOK = Attribution("host-session-1", verified=True)
APP = "01ARZ3NDEKTSV4RRFFQ69G5FAV"
REQUESTS: dict[str, Callable[[], Any]] = {
    "recall": lambda: build(c.RecallQuery, {"query": "how do I deploy?", "agent": "default"}),
    "task": lambda: build(c.TaskQuery, {
        "task": "fix the flaky test in src/api", "paths": ["src/api/x.py"],
        "operation": "edit", "session_id": "s1", "project_id": "git:0123456789abcdef",
    }),
    "remember": lambda: build(c.RememberRequest, {
        "body": "Always run make lint before committing.", "idempotency_key": "k1",
        "tags": ["tooling"], "read_words": True,
    }),
    "show": lambda: build(c.ShowQuery, {"record_id": APP, "as_of": "2026-06-01T12:00:00Z"}),
    "list": lambda: build(c.ListQuery, {"tag": "tooling", "project_id": "git:0123456789abcdef"}),
    "journal": lambda: build(c.JournalQuery, {"session_id": "s1", "limit": 50}),
    "feedback+attributed": lambda: attributed(build(c.FeedbackRequest, {
        "application_id": APP, "outcome": "used-successfully", "idempotency_key": "k2",
    }), HOOK),
    "observe+attributed": lambda: attributed(build(lc.ObserveRequest, {
        "success": True, "note": "rerun it", "applications": [APP], "idempotency_key": "k3",
    }), HOOK),
}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--n", type=int, default=2000, help="builds a round")
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    rows: dict[str, dict[str, float]] = {}
    for name, make in REQUESTS.items():
        make()  # the model's schema is built at its first use (defer_build)
        means = []
        for _ in range(args.rounds):
            start = time.perf_counter()
            for _ in range(args.n):
                make()
            means.append((time.perf_counter() - start) / args.n * 1e6)
        means.sort()
        p95 = means[min(len(means) - 1, round(0.95 * (len(means) - 1)))]
        rows[name] = {"median_us": statistics.median(means), "p95_us": p95}
    print(f"{'request':<22}{'median µs':>11}{'p95 µs':>9}")
    for name, row in rows.items():
        print(f"{name:<22}{row['median_us']:>11.1f}{row['p95_us']:>9.1f}")
    if args.json is not None:
        args.json.write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()

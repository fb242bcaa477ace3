"""The secret corpus: recall on what people paste, near-misses left alone, and the corpus
being what its generator builds (synthetic values, GitHub shapes with a wrong checksum)."""

from __future__ import annotations

import importlib.util
import json
import re
import sys
import zlib
from pathlib import Path
from types import ModuleType

import pytest

from cairn.engine.secrets import find_secrets, redact

CORPUS = Path(__file__).parent / "data" / "secrets"
BENCHMARKS = Path(__file__).parents[2] / "benchmarks"


def load(name: str) -> list[dict[str, object]]:
    lines = (CORPUS / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line]


def module(path: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    found = importlib.util.module_from_spec(spec)
    sys.modules[name] = found
    try:
        spec.loader.exec_module(found)
    finally:
        sys.modules.pop(name, None)
    return found


def test_the_corpus_is_big_enough_and_every_row_names_its_secret() -> None:
    positives, near = load("positives"), load("near_misses")
    assert len(positives) >= 150 and len(near) >= 150
    for row in positives:
        secrets = row["secrets"]
        assert isinstance(secrets, list) and secrets, row["id"]
        assert all(isinstance(s, str) and s in str(row["text"]) for s in secrets), row["id"]
    assert len({str(r["class"]) for r in positives}) >= 30


def test_recall_on_positives_and_near_misses_left_alone(capsys: pytest.CaptureFixture[str]) -> None:
    bench = module(BENCHMARKS / "secrets_corpus.py", "secrets_corpus_bench")
    recall, precision, _ = bench.evaluate()
    with capsys.disabled():
        print("\n" + "\n".join(bench.table("positives caught", recall)))
        print("\n".join(bench.table("near-misses left alone", precision)))
    assert recall.rate >= 0.97, recall.failures
    assert precision.rate >= 0.99, precision.failures


def test_redaction_cuts_the_secret_not_the_words_around_it() -> None:
    kept = total = 0
    for row in load("positives"):
        if row["class"] in ("private-key", "gcp-service-account"):
            continue  # a key block goes whole, its BEGIN and END lines with it
        text = str(row["text"])
        out, _ = redact(text)
        secrets = [str(s) for s in row["secrets"]]  # type: ignore[attr-defined]
        words = [
            w
            for w in re.findall(r"(?<!\S)[A-Za-z]{4,}(?!\S)", text)
            if not any(w in s for s in secrets)
        ]
        total += len(words)
        kept += sum(re.search(rf"(?<!\S){w}(?!\S)", out) is not None for w in words)
    assert total > 200 and kept / total >= 0.95, (kept, total)


def test_near_misses_come_out_unchanged() -> None:
    for row in load("near_misses"):
        text = str(row["text"])
        assert redact(text) == (text, []), (row["id"], find_secrets(text))


def _github_checksum_ok(token: str) -> bool:
    body, checksum = token[4:-6], token[-6:]
    digits = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
    number = 0
    for ch in checksum:
        number = number * 62 + digits.index(ch)
    return number == zlib.crc32(body.encode())


def test_github_shaped_values_are_clearly_fake() -> None:
    tokens = [
        t
        for row in load("positives")
        for t in re.findall(r"gh[pousr]_[A-Za-z0-9]{36}(?![A-Za-z0-9])", str(row["text"]))
    ]
    assert len(tokens) >= 8
    assert not any(_github_checksum_ok(t) for t in tokens)


def test_the_checked_in_corpus_is_what_the_generator_builds(tmp_path: Path) -> None:
    maker = module(CORPUS / "make_corpus.py", "make_corpus_check")
    maker.main(tmp_path)
    for name in ("positives", "near_misses"):
        built = (tmp_path / f"{name}.jsonl").read_bytes()
        assert built == (CORPUS / f"{name}.jsonl").read_bytes(), name


# Prose of a bulk write (project ids, hyphenated service names, a ticket, a date), the
# text the detectors' screens pass over quickly; a secret beside it must still be caught.
PROSE = (
    "the deploy of tenant-0/billing-v2 moved to the payment-gateway queue after review",
    "Dana said the notification-hub retries twice, see ticket OPS-1234 from 2026-05-02",
    "we rotate the staging database every Friday; ask in #infra before touching it",
)


def _covered(text: str, secret: str) -> bool:
    at = text.find(secret)
    return any(m.start <= at and m.end >= at + len(secret) for m in find_secrets(text))


def test_every_positive_is_still_caught_among_the_lines_of_a_bulk_write() -> None:
    checked = 0
    for row in load("positives"):
        text = str(row["text"])
        for secret in row["secrets"]:
            assert isinstance(secret, str)
            if not _covered(text, secret):
                continue  # the corpus's own misses are counted by the recall test
            for placed in (
                PROSE[0] + "\n" + text,
                text + "\n" + PROSE[1],
                PROSE[2] + "\n" + text + "\n" + PROSE[0],
                text.upper() if secret.upper() == secret else text,
            ):
                assert _covered(placed, secret), (row["id"], placed)
                checked += 1
    assert checked >= 4 * 290

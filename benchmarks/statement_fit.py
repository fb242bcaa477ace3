"""Fit the learned statement reader (:mod:`cairn.engine.statements.learned`) on the ``fit``
authors of the statement corpus and write it into the package.

Every head is a linear model over the same hashed features (character and word n-grams
and the cue grammar's reading): softmax regression for the speech act and the scope,
one logistic regression per operation and phase, all with L2 regularisation, fitted by
full-batch gradient descent (Adam) in numpy. The ``report`` authors are never seen here.

    python benchmarks/statement_fit.py [--out src/cairn/adapters/data/statement_reader.npz]
"""

from __future__ import annotations

import argparse
import json
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from cairn.engine.statements.learned import DIMENSIONS, TRADITIONAL, features
from cairn.engine.statements.reader import cue_features, read_statement
from cairn.engine.statements.selector_vocabulary import OPERATIONS, PHASES

CORPUS = Path(__file__).parent / "data" / "statements.jsonl"
OUT = Path(__file__).parent.parent / "src" / "cairn" / "adapters" / "data" / "statement_reader.npz"
ACTS = ("rule", "preference", "fact", "one-off", "correction", "forget", "neutral")
SCOPES = ("project", "global")
STORED = ("rule", "preference", "fact")
STEPS = 250
NOISY_COPIES = 2
L2 = 1e-4
RATE = 0.05


@dataclass(frozen=True, slots=True)
class Sparse:
    """Rows of feature indices with their values (each row scaled as the model scales it)."""

    rows: npt.NDArray[np.int64]  # the row of every stored entry
    columns: npt.NDArray[np.int64]
    values: npt.NDArray[np.float32]
    count: int

    def times(self, w: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
        out = np.zeros((self.count, w.shape[1]), dtype=np.float32)
        np.add.at(out, self.rows, w[self.columns] * self.values[:, None])
        return out

    def transposed_times(self, e: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
        out = np.zeros((DIMENSIONS, e.shape[1]), dtype=np.float32)
        np.add.at(out, self.columns, e[self.rows] * self.values[:, None])
        return out


def design(rows: list[dict[str, Any]], *, cues: bool) -> Sparse:
    """One row per statement: its features (with the cue grammar's reading for the selector
    heads, not for the act)."""
    at: list[int] = []
    columns: list[int] = []
    values: list[float] = []
    for i, row in enumerate(rows):
        read = cue_features(read_statement(row["text"], learned=False)) if cues else ()
        index = features(row["text"], read)
        at += [i] * len(index)
        columns += index.tolist()
        values += [1.0 / float(np.sqrt(max(1, len(index))))] * len(index)
    return Sparse(
        np.array(at, dtype=np.int64),
        np.array(columns, dtype=np.int64),
        np.array(values, dtype=np.float32),
        len(rows),
    )


_TO_TRADITIONAL = {pair[1]: pair[0] for pair in TRADITIONAL if pair[0] != pair[1]}


def noisy(row: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """The statement as a hurried or a Taiwanese or Hong Kong engineer might type it: a
    letter dropped or two swapped in a Latin word, Chinese in traditional characters."""
    words = row["text"].split(" ")
    latin = [i for i, w in enumerate(words) if w.isascii() and w.isalpha() and len(w) > 3]
    if latin:
        i = rng.choice(latin)
        word, at = words[i], rng.randrange(1, len(words[i]) - 1)
        words[i] = (
            word[:at] + word[at + 1 :]
            if rng.random() < 0.5
            else (word[: at - 1] + word[at] + word[at - 1] + word[at + 1 :])
        )
    text = " ".join(words)
    if rng.random() < 0.5:
        text = "".join(_TO_TRADITIONAL.get(ch, ch) for ch in text)
    return {**row, "text": text}


def fit(
    x: Sparse, y: npt.NDArray[np.float32], *, softmax: bool
) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]:
    """Weights and bias minimising cross-entropy + L2, by Adam on the full batch."""
    n, d = x.count, DIMENSIONS
    k = y.shape[1]
    w = np.zeros((d, k), dtype=np.float32)
    b = np.zeros(k, dtype=np.float32)
    m_w, v_w = np.zeros_like(w), np.zeros_like(w)
    m_b, v_b = np.zeros_like(b), np.zeros_like(b)
    for step in range(1, STEPS + 1):
        z = x.times(w) + b
        if softmax:
            z -= z.max(axis=1, keepdims=True)
            p = np.exp(z)
            p /= p.sum(axis=1, keepdims=True)
        else:
            p = 1.0 / (1.0 + np.exp(-z))
        error = (p - y) / n
        grad_w = x.transposed_times(error) + L2 * w
        grad_b = error.sum(axis=0)
        for grad, param, m, v in ((grad_w, w, m_w, v_w), (grad_b, b, m_b, v_b)):
            m *= 0.9
            m += 0.1 * grad
            v *= 0.999
            v += 0.001 * grad * grad
            param -= RATE * (m / (1 - 0.9**step)) / (np.sqrt(v / (1 - 0.999**step)) + 1e-8)
    return w, b


def one_hot(values: list[str], names: tuple[str, ...]) -> npt.NDArray[np.float32]:
    y = np.zeros((len(values), len(names)), dtype=np.float32)
    for i, value in enumerate(values):
        y[i, names.index(value)] = 1.0
    return y


def many_hot(values: list[list[str]], names: tuple[str, ...]) -> npt.NDArray[np.float32]:
    y = np.zeros((len(values), len(names)), dtype=np.float32)
    for i, labels in enumerate(values):
        for label in labels:
            y[i, names.index(label)] = 1.0
    return y


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    rows = [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines()]
    rows = [r for r in rows if r["split"] == "fit"]
    rng = random.Random(21)
    rows += [noisy(r, rng) for r in rows for _ in range(NOISY_COPIES)]
    stored = [r for r in rows if r["act"] in STORED]
    x_all, x_stored = design(rows, cues=False), design(stored, cues=True)
    heads: dict[str, Any] = {}
    for name, x, y, softmax in (
        ("act", x_all, one_hot([r["act"] for r in rows], ACTS), True),
        ("scope", x_stored, one_hot([r["scope"] for r in stored], SCOPES), True),
        ("ops", x_stored, many_hot([r["operations"] for r in stored], OPERATIONS), False),
        ("phases", x_stored, many_hot([r["phases"] for r in stored], PHASES), False),
    ):
        w, b = fit(x, y, softmax=softmax)
        predicted = (x.times(w) + b).argmax(axis=1) if softmax else None
        if predicted is not None:
            accuracy = float((predicted == y.argmax(axis=1)).mean())
            print(f"{name:7} fit accuracy {accuracy:.3f} on {len(y)} statements")
        heads[f"{name}_w"], heads[f"{name}_b"] = w.astype(np.float16), b.astype(np.float32)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(
        args.out,
        acts=np.array(ACTS),
        scopes=np.array(SCOPES),
        operations=np.array(OPERATIONS),
        phases=np.array(PHASES),
        **heads,
    )
    print(f"{len(rows)} fit statements ({len(stored)} stored) -> {args.out}")


if __name__ == "__main__":
    main()

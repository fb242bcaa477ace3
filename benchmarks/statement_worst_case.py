"""How the statement reader's time grows on texts shaped to make a pattern backtrack.

Each shape is a text with a run of `n` repeats (blanks, a filler word, path characters,
Chinese, digits...); the reader reads it at each size in a process of its own, killed
after ``--timeout`` seconds, so a pattern that tries every split of the run shows as a
time that grows faster than the text, or as a kill. Read a table of milliseconds per
size and the growth from one size to the next (x4 for a 4 times longer text is linear).

    PYTHONPATH=src python benchmarks/statement_worst_case.py --sizes 300 1200 4800 --json out.json
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import time
from collections.abc import Callable
from multiprocessing.queues import Queue
from pathlib import Path

SHAPES: dict[str, Callable[[int], str]] = {
    "x run": lambda n: "x" * n,
    "a. run": lambda n: "a." * (n // 2),
    "blanks inside": lambda n: "a" + " " * (n - 2) + "b",
    "blanks after": lambda n: "note" + " " * n,
    "tabs inside": lambda n: "a" + "\t" * n + "b",
    "newlines inside": lambda n: "a" + "\n" * n + "b",
    "digits": lambda n: "1" * n,
    "chinese": lambda n: "中" * n,
    "chinese/": lambda n: "中/" * (n // 2),
    "a/": lambda n: "a/" * (n // 2),
    "a b": lambda n: "a " * (n // 2),
    "mixed path chars": lambda n: "ab1_-." * (n // 6),
    "quotes": lambda n: '"a' * (n // 2),
    "verdict, blanks": lambda n: "rule" + " " * n + "no longer applies" + " " * n,
    "zh verdict, blanks": lambda n: "那条" + " " * n + "规则",
    "please ... ignore": lambda n: "please " * (n // 7) + "ignore",
    "always ...": lambda n: "always " * (n // 7),
    "之前 ...": lambda n: "之前" * (n // 2),
    "path ... 下 不要": lambda n: "src/" + "x" * (n - 12) + " / 下 不要",
    "prose": lambda n: ("lorem ipsum dolor sit amet " * (n // 27 + 1))[:n],
}


def _read(shape: str, n: int, out: Queue[float]) -> None:
    from cairn.engine.statements.reader import read_statement

    read_statement("warm the patterns: always use pnpm in src/ 下面不要")
    text = SHAPES[shape](n)
    start = time.perf_counter()
    read_statement(text)
    out.put(time.perf_counter() - start)


def measure(shape: str, sizes: list[int], timeout: float) -> list[float | None]:
    """Seconds per size; None where the read was killed (and the larger sizes not tried)."""
    times: list[float | None] = []
    for n in sizes:
        out: Queue[float] = mp.Queue()
        child = mp.Process(target=_read, args=(shape, n, out))
        child.start()
        child.join(timeout)
        if child.is_alive():
            child.kill()
            child.join()
            times.extend([None] * (len(sizes) - len(times)))
            break
        times.append(out.get())
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[300, 1200, 4800])
    parser.add_argument("--timeout", type=float, default=15.0)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    mp.set_start_method("fork")
    rows = {}
    head = "".join(f"{n:>10}" for n in args.sizes)
    print(f"{'shape':22}{head}  (ms; growth of the last step)")
    for shape in SHAPES:
        times = measure(shape, args.sizes, args.timeout)
        rows[shape] = times
        cells = "".join(f"{t * 1000:10.1f}" if t is not None else f"{'killed':>10}" for t in times)
        last = times[-2:]
        growth = (
            f"x{last[1] / max(last[0], 1e-6):.1f}" if None not in last and len(last) == 2 else ""
        )
        print(f"{shape:22}{cells}  {growth}", flush=True)
    if args.json is not None:
        args.json.write_text(
            json.dumps({"sizes": args.sizes, "timeout_s": args.timeout, "seconds": rows}, indent=1),
            encoding="utf-8",
        )


if __name__ == "__main__":
    main()

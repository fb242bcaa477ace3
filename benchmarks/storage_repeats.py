"""How much of the SQLite record store recurs in the PostgreSQL one.

Reads the Python sources of ``src/cairn/storage/sqlite/`` and ``src/cairn/storage/postgres/``
(or of any two folders given) and counts the *substantive* lines of the first that recur
in the second once placeholders are normalised (``%s`` is written ``?``, ``%%`` is ``%``).

A substantive line is what is left of a source line without its comment, outside any
docstring and any import statement, with its indentation and repeated blanks removed, and
with at least one letter or digit in it; a line that is only a keyword (``else:``,
``try:``, ``return``, ``pass``...) or only a name followed by a comma (an argument list's
``tenant,``) does not count either: those say nothing of their own. Everything else counts,
SQL text, signatures and ``def`` lines included — a signature both stores spell alike is a
repeat too (the port could have been implemented once).

    python benchmarks/storage_repeats.py [--list] [--json OUT] [FIRST SECOND]

Prints the figure (repeated / substantive lines of FIRST) and how many of those lie in
copied blocks (``--block`` consecutive lines or more recurring consecutively in one file of
SECOND), and with ``--list`` every repeated line with where it stands in both (``B``: in a
block).
"""

from __future__ import annotations

import argparse
import ast
import io
import json
import re
import tokenize
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SQLITE = ROOT / "src" / "cairn" / "storage" / "sqlite"
POSTGRES = ROOT / "src" / "cairn" / "storage" / "postgres"

_TRIVIAL = {
    "else:",
    "try:",
    "finally:",
    "return",
    "pass",
    "...",
    "continue",
    "break",
    "raise",
    "yield",
}
_ALNUM = re.compile(r"[A-Za-z0-9]")
_NAME_COMMA = re.compile(r"^[A-Za-z_][A-Za-z0-9_.]*,?$")
_BLANKS = re.compile(r"\s+")


@dataclass(frozen=True, slots=True)
class Line:
    path: Path
    number: int
    text: str  # normalised


def _skipped_lines(source: str) -> set[int]:
    """Line numbers inside docstrings and import statements."""
    skipped: set[int] = set()
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            skipped.update(range(node.lineno, (node.end_lineno or node.lineno) + 1))
        if (
            isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
            and node.body
        ):
            first = node.body[0]
            if (
                isinstance(first, ast.Expr)
                and isinstance(first.value, ast.Constant)
                and isinstance(first.value.value, str)
            ):
                skipped.update(range(first.lineno, (first.end_lineno or first.lineno) + 1))
    return skipped


def _without_comments(source: str) -> list[str]:
    """The source's lines with every comment token blanked (strings keep a '#')."""
    lines = source.splitlines()
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            row, col = token.start
            lines[row - 1] = lines[row - 1][:col]
    return lines


def normalise(text: str) -> str:
    text = _BLANKS.sub(" ", text.strip())
    return text.replace("%%", "\0").replace("%s", "?").replace("\0", "%")


def substantive(text: str) -> bool:
    return bool(_ALNUM.search(text)) and text not in _TRIVIAL and not _NAME_COMMA.match(text)


def lines_of(folder: Path) -> list[Line]:
    found: list[Line] = []
    for path in sorted(folder.rglob("*.py")):
        source = path.read_text(encoding="utf-8")
        skipped = _skipped_lines(source)
        for number, raw in enumerate(_without_comments(source), start=1):
            if number in skipped:
                continue
            text = normalise(raw)
            if substantive(text):
                found.append(Line(path, number, text))
    return found


def repeats(first: Path, second: Path) -> tuple[list[Line], list[tuple[Line, list[Line]]]]:
    """Every substantive line of ``first``, and those that recur in ``second`` with where."""
    mine = lines_of(first)
    theirs: dict[str, list[Line]] = defaultdict(list)
    for line in lines_of(second):
        theirs[line.text].append(line)
    return mine, [(line, theirs[line.text]) for line in mine if line.text in theirs]


def in_blocks(first: list[Line], second: list[Line], least: int) -> set[int]:
    """Indexes of ``first`` inside a run of at least ``least`` consecutive lines of one file
    that recur, consecutive and in order, in one file of ``second`` (a copied block, not a
    lone idiom such as ``conn.close()``)."""
    where: dict[str, list[int]] = defaultdict(list)
    for j, line in enumerate(second):
        where[line.text].append(j)
    marked: set[int] = set()
    previous: dict[int, int] = {}  # j -> the length of the common run ending at (i-1, j)
    for i, line in enumerate(first):
        fresh = i == 0 or first[i - 1].path != line.path
        current: dict[int, int] = {}
        for j in where.get(line.text, ()):
            run = 1
            if not fresh and j > 0 and second[j - 1].path == second[j].path:
                run = previous.get(j - 1, 0) + 1
            current[j] = run
            if run >= least:
                marked.update(range(i - run + 1, i + 1))
        previous = current
    return marked


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("first", nargs="?", type=Path, default=SQLITE)
    parser.add_argument("second", nargs="?", type=Path, default=POSTGRES)
    parser.add_argument("--list", action="store_true", help="print every repeated line")
    parser.add_argument("--json", type=Path, help="write the figures and lines here")
    parser.add_argument(
        "--block", type=int, default=3, help="the least run of lines counted as a copied block"
    )
    args = parser.parse_args()
    mine, repeated = repeats(args.first, args.second)
    blocks = in_blocks(mine, lines_of(args.second), args.block)

    def where(line: Line) -> str:
        base = ROOT if line.path.is_relative_to(ROOT) else line.path.parents[1]
        return f"{line.path.relative_to(base)}:{line.number}"

    share = len(repeated) / len(mine) if mine else 0.0
    block_share = len(blocks) / len(mine) if mine else 0.0
    print(
        f"{len(repeated)} of {len(mine)} substantive lines of {args.first.name}/"
        f" recur in {args.second.name}/ ({share:.1%}); {len(blocks)} of them"
        f" ({block_share:.1%}) in blocks of {args.block} or more consecutive lines"
    )
    if args.list:
        index = {id(line): i for i, line in enumerate(mine)}
        for line, there in repeated:
            mark = "B" if index[id(line)] in blocks else " "
            found = ", ".join(where(t) for t in there[:3]) + (" ..." if len(there) > 3 else "")
            print(f"{mark} {where(line):46} {line.text}    [{found}]")
    if args.json is not None:
        args.json.write_text(
            json.dumps(
                {
                    "substantive": len(mine),
                    "repeated": len(repeated),
                    "share": round(share, 4),
                    "in_blocks": len(blocks),
                    "block": args.block,
                    "lines": [
                        {"at": where(line), "text": line.text, "in": [where(t) for t in there]}
                        for line, there in repeated
                    ],
                },
                indent=2,
            )
            + "\n",
            encoding="utf-8",
        )


if __name__ == "__main__":
    main()

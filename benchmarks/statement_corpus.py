"""Build the labelled statement corpus (``benchmarks/data/statements.jsonl``) from the
authors' templates in ``statement_authors.py``.

Each template is said a few times: its slots filled differently and, as people do, with
the lead-ins and endings of chat ("对了，", "嗯，", "btw", "thanks", "!"). Every line keeps
its author, and the split is by author: ``fit`` statements train the learned reader
(``statement_fit.py``), ``report`` statements are only measured. Deterministic (seeded).

    python benchmarks/statement_corpus.py            # writes the corpus, prints its counts
"""

from __future__ import annotations

import json
import random
import re
import sys
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from statement_authors import AUTHORS, BLIND, REPORTED, SLOTS

OUT = Path(__file__).parent / "data" / "statements.jsonl"
SAYINGS = 5  # how many times each template is said
KINDS = {"rule": "policy", "preference": "preference", "fact": "fact"}
LEADS = {
    "zh": ("", "", "", "对了，", "嗯，", "另外，", "还有，", "哦对，"),
    "mixed": ("", "", "", "对了，", "btw ", "另外，", "ok ", "嗯 "),
    "en": ("", "", "", "Also, ", "Oh and ", "btw ", "OK, ", "One more thing: "),
}
ENDS = {
    "zh": ("", "", "", "。", "！", "哈", "，谢谢"),
    "mixed": ("", "", "", "。", " thx", "！", "哈"),
    "en": ("", "", "", ".", "!", " thanks", " :)"),
}
# Lead-ins would change what these acts open with (a correction's "actually", a forget's
# verb at the start); they keep their endings only.
NO_LEAD = frozenset({"correction"})


def _fill(template: str, rng: random.Random) -> str:
    text = template
    if "{old}" in text or "{new}" in text:
        old, new = rng.choice(SLOTS["pair"]).split(">")
        text = text.replace("{old}", old).replace("{new}", new)
    for slot in re.findall(r"\{(\w+)\}", text):
        text = text.replace("{" + slot + "}", rng.choice(SLOTS[slot]), 1)
    return text


def _labels(line: str) -> tuple[str, str | None, list[str], list[str], list[str], str]:
    act, scope, ops, phases, paths, text = (part.strip() for part in line.split("|", 5))
    split = lambda value: [v for v in value.split(",") if v]  # noqa: E731
    return act, scope or None, split(ops), split(phases), split(paths), text


def build() -> list[dict[str, Any]]:
    rng = random.Random(25)
    rows: list[dict[str, Any]] = []
    seen: set[str] = set()
    for author, (language, lines) in {**AUTHORS, **BLIND}.items():
        blind = author in BLIND
        for line in (raw for raw in lines.strip().splitlines() if raw.strip()):
            act, scope, ops, phases, paths, template = _labels(line)
            for _ in range(SAYINGS * 3):
                if sum(1 for r in rows if r["template"] == template) >= (1 if blind else SAYINGS):
                    break
                fills = random.Random(rng.random())
                text = _fill(template, fills)
                dir_used = next((d for d in SLOTS["dir"] if d in text), "")
                lead = "" if act in NO_LEAD or blind else rng.choice(LEADS[language])
                end = "" if blind else rng.choice(ENDS[language])
                said = f"{lead}{text.rstrip('。.!！')}{end}" if end else f"{lead}{text}"
                if said in seen:
                    continue
                seen.add(said)
                rows.append(
                    {
                        "id": f"s{len(rows) + 1:04d}",
                        "author": author,
                        "language": language,
                        "split": "blind" if blind else "report" if author in REPORTED else "fit",
                        "text": said,
                        "template": template,
                        "act": act,
                        "scope": scope,
                        "kind": KINDS.get(act),
                        "operations": ops,
                        "phases": phases,
                        "paths": [p.replace("{dir}", dir_used) for p in paths],
                    }
                )
    return rows


def main() -> None:
    rows = build()
    OUT.parent.mkdir(parents=True, exist_ok=True)
    with OUT.open("w", encoding="utf-8") as out:
        for row in rows:
            del row["template"]
            out.write(json.dumps(row, ensure_ascii=False) + "\n")
    counts = Counter((r["split"], r["language"]) for r in rows)
    acts = Counter((r["split"], r["act"]) for r in rows)
    print(f"{len(rows)} statements, {len(AUTHORS)} authors -> {OUT}")
    for key, n in sorted(counts.items()):
        print(f"  {key[0]:6} {key[1]:5} {n}")
    for key, n in sorted(acts.items()):
        print(f"  {key[0]:6} {key[1]:10} {n}")


if __name__ == "__main__":
    main()

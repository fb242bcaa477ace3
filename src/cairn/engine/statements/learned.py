"""The learned half of the statement reader: a linear model over hashed character and word
n-grams and the cue grammar's own reading, shipped as data in the package
(``cairn/adapters/data/statement_reader.npz``) and trained by
``benchmarks/statement_fit.py`` on the fitting authors of the statement corpus.

It reads what the cue grammar cannot enumerate: typos ("alwasy run lint befor commiting"),
traditional characters and regional wording ("這個專案 commit 之前都要先跑 lint 喔"), terse
chat ("测试用 vitest") and conventions stated without a cue word. Its heads:

* **act**: rule, preference, fact, one-off, correction, forget, neutral (softmax);
* **scope**: project or global, for a statement said inside a repository (softmax);
* **operations** and **phases**: one logistic output each.

Inference is pure numpy over a few hundred feature indices: the weights of the features a
statement has are summed, so reading one costs tens of microseconds. Traditional
characters are folded to simplified ones first (:func:`fold`), for the model and for the
cue grammar alike.
"""

from __future__ import annotations

import itertools
import re
import unicodedata
import zlib
from dataclasses import dataclass
from functools import cache
from importlib import resources

import numpy as np
import numpy.typing as npt

__all__ = [
    "DIMENSIONS",
    "TRADITIONAL",
    "LearnedReading",
    "StatementModel",
    "features",
    "fold",
    "model",
]

DIMENSIONS = 1 << 14
MODEL_FILE = "data/statement_reader.npz"

# Traditional characters common in engineers' chat, folded to their simplified forms
# (one character for one, so offsets into the text still hold).
TRADITIONAL = str.split("""
這这 個个 專专 案案 儲储 庫库 測测 試试 後后 對对 歡欢 縮缩 條条 規规 則则 較较 幫帮 錯错 誤误 說说
麼么 發发 佈布 須须 碼码 檔档 為为 應应 該该 還还 時时 們们 組组 與与 從从 開开 關关 變变 數数 據据
環环 題题 問问 論论 頁页 預预 設设 計计 請请 謝谢 記记 憶忆 處处 過过 啟启 動动 歷历 紀纪 錄录 讀读
寫写 檢检 審审 閱阅 並并 權权 離离 線线 網网 頭头 長长 點点 單单 擇择 選选 類类 別别 種种 樣样 確确
實实 現现 見见 覺觉 講讲 話话 語语 體体 標标 籤签 簽签 務务 員员 門门 間间 壞坏 統统 歸归 愛爱 業业
嗎吗 聽听 讓让 認认 裡里 裏里 於于 夠够 雖虽 邊边 經经 總总 義义 優优 號号 態态 資资 產产 層层 級级
屬属 傳传 輸输 導导 減减 氣气 節节 團团 隊队 項项 備备 註注 釋释 鎖锁 賬账 戶户 滾滚 構构 鏈链 驗验
證证 報报 舊旧 當当 幾几 帶带 盡尽 縮缩 排排 掉掉 嗯嗯 喔喔 覆复 蓋盖 復复 誌志 測测 週周 鐘钟 遠远
""")
_FOLD = str.maketrans({pair[0]: pair[1] for pair in TRADITIONAL if pair[0] != pair[1]})


def fold(text: str) -> str:
    """Traditional characters as simplified ones, one for one."""
    return text.translate(_FOLD)


# Words the reader's cues are made of, and the slips of hurried typing that stand for them:
# a letter left out, two swapped, one doubled ("alwasy", "nevr", "perfer", "forgt", "teh").
_CUE_WORDS = str.split("""always never prefer forget before after actually remember every should
must skip time commit committing pushing please instead ignore anymore future forward whenever
preference usually install deploy release merge rebase review tests rule from going""")
_REAL_WORDS = frozenset(
    str.split("""ever very test tests tie rue form fro four fore mist must time times rule
    rules ruled commit please pleas lease preer refer prefers forge forger forgets before after aft
    rebase merge revise relapse release install deploy deployed going gong doing
    ignore ignored skip ski kip sip tim tine mite item emit""")
)


def _slips(word: str) -> set[str]:
    cut = {word[:i] + word[i + 1 :] for i in range(len(word))}
    swapped = {word[:i] + word[i + 1] + word[i] + word[i + 2 :] for i in range(len(word) - 1)}
    doubled = {word[:i] + word[i] + word[i:] for i in range(len(word))}
    return {w for w in cut | swapped | doubled if len(w) >= 4 and w != word}


_SPELLING = {slip: word for word in _CUE_WORDS for slip in _slips(word)} | {"teh": "the"}
_SPELLING = {slip: word for slip, word in _SPELLING.items() if slip not in _REAL_WORDS}
_SPELLING.update({"commiting": "committing", "comitting": "committing"})
_LATIN = re.compile(r"[A-Za-z]+")


def spell(text: str) -> str:
    """Hurried slips of the reader's cue words put right ("alwasy run lint befor
    commiting" reads as "always run lint before committing"); other words stay."""

    def fix(match: re.Match[str]) -> str:
        word = match.group()
        right = _SPELLING.get(word.lower())
        if right is None:
            return word
        return right.capitalize() if word[0].isupper() else right

    return _LATIN.sub(fix, text)


_HASHES: dict[str, int] = {}
_MAX_HASHES = 200_000  # n-grams repeat from line to line; the cache is cleared when full


def _hash(feature: str) -> int:
    found = _HASHES.get(feature)
    if found is None:
        found = zlib.crc32(feature.encode("utf-8")) % DIMENSIONS
        if len(_HASHES) >= _MAX_HASHES:
            _HASHES.clear()
        _HASHES[feature] = found
    return found


def features(text: str, cues: tuple[str, ...] = ()) -> npt.NDArray[np.int64]:
    """The feature indices of ``text``: character 1–3-grams (1-grams for CJK only), Latin
    word 1–2-grams, and the cue grammar's reading given as ``cues``."""
    norm = unicodedata.normalize("NFKC", fold(text)).casefold()
    norm = "".join("0" if ch.isdigit() else ch for ch in norm)
    padded = f" {' '.join(norm.split())} "
    found: set[str] = set()
    for n in (2, 3):
        found.update("c" + padded[i : i + n] for i in range(len(padded) - n + 1))
    found.update("u" + ch for ch in padded if "\u3400" <= ch <= "\u9fff")
    words = [w for w in "".join(ch if ch.isalnum() or ch in "'_-" else " " for ch in norm).split()]
    found.update("w" + w for w in words if w.isascii())
    found.update("b" + a + " " + b for a, b in itertools.pairwise(words))
    found.update("q" + cue for cue in cues)
    return np.fromiter(sorted({_hash(f) for f in found}), dtype=np.int64)


@dataclass(frozen=True, slots=True)
class LearnedReading:
    act: str
    act_probability: float
    scope: str
    scope_probability: float
    operations: tuple[str, ...]
    phases: tuple[str, ...]


def _softmax(z: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    e = np.exp(z - z.max())
    result: npt.NDArray[np.float64] = e / e.sum()
    return result


class StatementModel:
    """The trained weights and their label names."""

    def __init__(self, arrays: dict[str, npt.NDArray[np.generic]]) -> None:
        self.acts = tuple(str(a) for a in arrays["acts"])
        self.scopes = tuple(str(s) for s in arrays["scopes"])
        self.operations = tuple(str(o) for o in arrays["operations"])
        self.phases = tuple(str(p) for p in arrays["phases"])
        self._weights = {
            name: (arrays[f"{name}_w"].astype(np.float64), arrays[f"{name}_b"].astype(np.float64))
            for name in ("act", "scope", "ops", "phases")
        }

    def _scores(self, head: str, index: npt.NDArray[np.int64]) -> npt.NDArray[np.float64]:
        weights, bias = self._weights[head]
        norm = 1.0 / np.sqrt(max(1, len(index)))
        result: npt.NDArray[np.float64] = weights[index].sum(axis=0) * norm + bias
        return result

    def read(self, text: str, cues: tuple[str, ...] = ()) -> LearnedReading:
        # The act is read from the words alone, a second opinion beside the cue grammar's;
        # the selector heads see the cue grammar's reading too.
        words = features(text)
        act = _softmax(self._scores("act", words))
        index = np.union1d(words, np.fromiter((_hash("q" + c) for c in cues), dtype=np.int64))
        scope = _softmax(self._scores("scope", index))
        ops = 1.0 / (1.0 + np.exp(-self._scores("ops", index)))
        phases = 1.0 / (1.0 + np.exp(-self._scores("phases", index)))
        best, where = int(act.argmax()), int(scope.argmax())
        return LearnedReading(
            self.acts[best],
            round(float(act[best]), 4),
            self.scopes[where],
            round(float(scope[where]), 4),
            tuple(o for o, p in zip(self.operations, ops, strict=True) if p >= 0.5),
            tuple(p for p, q in zip(self.phases, phases, strict=True) if q >= 0.5),
        )


@cache
def model() -> StatementModel | None:
    """The shipped model, or None when the package carries none (the cue grammar alone)."""
    source = resources.files("cairn.adapters").joinpath(MODEL_FILE)
    if not source.is_file():
        return None
    with source.open("rb") as handle, np.load(handle, allow_pickle=False) as arrays:
        return StatementModel({name: arrays[name] for name in arrays.files})

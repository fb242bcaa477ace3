"""Tests for the rule / one-off / forget / correct / neutral statement classifier."""

from __future__ import annotations

import dataclasses
from collections import Counter
from pathlib import Path

import pytest

from cairn.engine.statements.signals import SignalClassification, classify_statement

CASES_PATH = Path(__file__).parent / "data" / "signal_cases.tsv"
KINDS = ("rule", "one-off", "forget", "correct", "neutral")


def _load_cases() -> list[tuple[str, str]]:
    # The first two columns are the signal label and the sentence; the others describe what
    # the statement reader should find (tests/engine/statements/test_reader.py checks them).
    lines = CASES_PATH.read_text(encoding="utf-8").splitlines()
    assert lines[0].startswith("label\ttext\t")
    cases = []
    for number, line in enumerate(lines[1:], start=2):
        label, text = line.split("\t")[:2]
        assert label in KINDS, f"line {number}: unknown label {label!r}"
        cases.append((label, text))
    return cases


CASES = _load_cases()


def test_labelled_set_is_large_and_bilingual() -> None:
    chinese = [text for _, text in CASES if any("\u4e00" <= ch <= "\u9fff" for ch in text)]
    assert len(CASES) >= 220
    assert len(chinese) >= 80
    assert len({text for _, text in CASES}) == len(CASES), "duplicate sentences"
    assert set(Counter(label for label, _ in CASES)) == set(KINDS)


def test_labelled_set_accuracy_and_per_class_metrics() -> None:
    predictions = [(label, classify_statement(text).kind) for label, text in CASES]
    correct = sum(1 for label, predicted in predictions if label == predicted)
    accuracy = correct / len(predictions)

    print(f"\nsignal set: {len(predictions)} sentences, accuracy {accuracy:.3f}")
    print(f"{'class':8} {'support':>7} {'precision':>9} {'recall':>7}")
    recalls: dict[str, float] = {}
    for kind in KINDS:
        true_positive = sum(1 for label, p in predictions if label == kind and p == kind)
        predicted = sum(1 for _, p in predictions if p == kind)
        support = sum(1 for label, _ in predictions if label == kind)
        precision = true_positive / predicted if predicted else 0.0
        recalls[kind] = true_positive / support
        print(f"{kind:8} {support:7d} {precision:9.3f} {recalls[kind]:7.3f}")
    for (label, text), (_, predicted) in zip(CASES, predictions, strict=True):
        if label != predicted:
            print(f"  miss: {label} -> {predicted}: {text}")

    assert accuracy >= 0.95
    for kind, recall in recalls.items():
        assert recall >= 0.9, f"recall for {kind} is {recall:.3f}"


HOLDOUT_PATH = Path(__file__).parent / "data" / "signal_holdout.tsv"


def test_held_out_accuracy() -> None:
    """The labelled set above is the development set: the cues were written against it, so
    its accuracy says little about new phrasing. signal_holdout.tsv was written after the
    cues, disjoint from the labelled set, and measured once: 51 of 59 (0.864). Never edit
    a cue to fix a miss printed here; that would turn it into a second development set."""
    lines = HOLDOUT_PATH.read_text(encoding="utf-8").splitlines()
    assert lines[0] == "label\ttext"
    rows = [tuple(line.split("\t")) for line in lines[1:]]
    assert not {text for _, text in rows} & {text for _, text in CASES}
    misses = [(label, text) for label, text in rows if classify_statement(text).kind != label]
    for label, text in misses:
        print(f"  held-out miss: {label}: {text}")
    accuracy = 1 - len(misses) / len(rows)
    print(f"\nheld-out: {len(rows)} sentences, accuracy {accuracy:.3f}")
    assert accuracy >= 0.8


def _kind(text: str) -> str:
    return classify_statement(text).kind


# --- the result value ------------------------------------------------------------------------


def test_result_is_a_frozen_value() -> None:
    result = classify_statement("Always use pnpm in this repo.")
    assert isinstance(result, SignalClassification)
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.kind = "neutral"  # type: ignore[misc]
    assert not hasattr(result, "__dict__")  # slotted


def test_rule_reports_cue_as_written_and_trimmed_statement() -> None:
    result = classify_statement("   From Now On, use tabs.  ")
    assert result.kind == "rule"
    assert result.cue == "From Now On"
    assert result.statement == "From Now On, use tabs."
    assert result.language == "en"
    assert 0.5 < result.confidence <= 1.0


def test_one_off_reports_chinese_cue() -> None:
    result = classify_statement("这次先跳过测试。")
    assert (result.kind, result.cue, result.language) == ("one-off", "这次", "zh")


@pytest.mark.parametrize("text", ["", "   ", "\n\t"])
def test_empty_input_is_neutral(text: str) -> None:
    result = classify_statement(text)
    assert (result.kind, result.cue, result.statement) == ("neutral", None, "")


def test_neutral_has_no_cue_and_confidence_in_range() -> None:
    result = classify_statement("Fix the null pointer in users.py.")
    assert (result.kind, result.cue) == ("neutral", None)
    assert result.confidence == 1.0
    weak = classify_statement("今天天气不错。")
    assert weak.kind == "neutral"
    assert 0.0 <= weak.confidence < 1.0


def test_confidence_is_lower_when_cues_conflict() -> None:
    clean = classify_statement("Always run lint before pushing.")
    contested = classify_statement("I know we always run the full suite, but skip it this time.")
    assert clean.kind == "rule"
    assert contested.kind == "one-off"
    assert contested.confidence < clean.confidence + 0.2
    assert all(0.0 <= r.confidence <= 1.0 for r in (clean, contested))


# --- negation --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("Don't run the linter this time.", "one-off"),
        ("Don't push this time, just commit locally.", "one-off"),
        ("Never push directly to main.", "rule"),
        ("Don't ever force-push to a shared branch.", "rule"),
        ("Never mind, I figured it out.", "neutral"),
        ("这次别用 pnpm 了，用 npm 吧。", "one-off"),
        ("永远不要直接推送到 main 分支。", "rule"),
        ("Don't forget to update the lockfile.", "neutral"),
        ("Never forget to run lint before pushing.", "rule"),
        ("别忘了跑测试。", "neutral"),
    ],
)
def test_negation(text: str, kind: str) -> None:
    assert _kind(text) == kind


# --- quoted speech ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ('the error says "try again this time"; always retry flaky tests', "rule"),
        ('The error says "try again this time".', "neutral"),
        ("The README says 'always use npm', but use pnpm this time.", "one-off"),
        ("The docs say “never use eval”, is that true here?", "neutral"),
        ("报错信息写的是「这次请重试」。", "neutral"),
        ('文档里写着"永远不要用 eval"，不过这次为了调试可以用一下。', "one-off"),
        ("`always` is a keyword in SystemVerilog.", "neutral"),
    ],
)
def test_quoted_cues_are_not_the_users(text: str, kind: str) -> None:
    assert _kind(text) == kind


def test_apostrophes_are_not_quotes() -> None:
    # "don't … it's" must not be read as a quoted span hiding "always".
    assert _kind("Don't guess, it's simple: always run the tests.") == "rule"


# --- contrast --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("not this time, but always run lint", "rule"),
        ("Not now, but from now on keep a CHANGELOG.", "rule"),
        ("I know we always run the full suite, but just run the unit tests this time.", "one-off"),
        ("Normally we never push on Friday, but today push the hotfix.", "one-off"),
        ("这次就算了，但以后都要跑 lint。", "rule"),
        ("平时我们都跑完整测试，但这次只跑单元测试就行。", "one-off"),
        ("不是这次，是以后都要先跑 lint。", "rule"),
        ("Skip it this time; however, going forward always run it.", "rule"),
    ],
)
def test_contrast_shifts_weight_to_the_later_clause(text: str, kind: str) -> None:
    assert _kind(text) == kind


# --- rules about time ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("Always run tests before Friday's release.", "rule"),
        ("Never deploy on a Friday, and yes that includes today.", "rule"),
        ("Always run the slow tests before tagging, even today.", "rule"),
        ("以后每周五都不发布，今天也一样。", "rule"),
        ("每天下班前都要把代码推上去。", "rule"),
        ("Today, let's focus on the auth module.", "one-off"),
        ("Which tests failed today?", "neutral"),
        ("今天天气不错。", "neutral"),
        ("I'll be out this afternoon.", "neutral"),
    ],
)
def test_time_words_inside_rules(text: str, kind: str) -> None:
    assert _kind(text) == kind


def test_for_now_on_typo_is_a_rule() -> None:
    result = classify_statement("For now on, use tabs in Go files.")
    assert (result.kind, result.cue) == ("rule", "For now on")


# --- descriptions and questions --------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "The function always returns None, that's the bug.",
        "This loop never terminates when the list is empty.",
        "I never understood how this regex works.",
        "Does this repo always use tabs?",
        "Should we always pin versions?",
        "It fails right now with a KeyError.",
        "这个函数总是返回 None，这就是 bug。",
        "这个接口默认返回 JSON。",
        "这个仓库总是用 tab 吗？",
        "每次运行都会报同一个错。",
        "这个配置以后可能会改。",
        "Compare always_inline and noinline in this header.",
    ],
)
def test_descriptions_and_questions_are_neutral(text: str) -> None:
    assert _kind(text) == "neutral"


# --- mixed Chinese and English ------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "这个仓库里 never 直接 push 到 main",
        "这个项目里 always 先跑 lint",
        "我们 always 用 tabs",
        "部署前 always run the smoke tests",
    ],
)
def test_an_english_adverb_after_chinese_instructs(text: str) -> None:
    # The word before the adverb is Chinese, so no Latin word before it is its subject.
    assert _kind(text) == "rule"


@pytest.mark.parametrize(
    "text",
    [
        "这个函数 always 返回 None",
        "CI always 失败",
        "这个 job always 超时",
        "the build always 报错",
    ],
)
def test_an_english_adverb_before_a_chinese_description_describes(text: str) -> None:
    assert _kind(text) == "neutral"


def test_polite_request_question_keeps_its_cue() -> None:
    assert _kind("Can you push this without running CI, just this once?") == "one-off"


# --- forget ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "cue", "statement"),
    [
        ("Forget that I prefer tabs.", "Forget", "I prefer tabs"),
        ("Please forget what I said about squash merging.", "forget", "squash merging"),
        ("Delete the memory about the staging database.", "Delete", "the staging database"),
        ("Forget the rule that we always use pnpm.", "Forget", "we always use pnpm"),
        ("忘掉我喜欢用 tab 这件事。", "忘掉", "我喜欢用 tab"),
        ("别再记着 pnpm 那条规则了。", "别再记着", "pnpm 那条规则"),
        ("把关于 staging 数据库的记忆删掉。", "删掉", "staging 数据库"),
        ('删除那条"永远不要推送到 main"的规则。', "删除", "永远不要推送到 main"),
        ("以后不用再记着我用 Windows 了。", "不用再记着", "我用 Windows"),
        ("Don't remember that anymore.", "Don't remember", "that"),
    ],
)
def test_forget_strips_the_verb(text: str, cue: str, statement: str) -> None:
    result = classify_statement(text)
    assert (result.kind, result.cue, result.statement) == ("forget", cue, statement)


@pytest.mark.parametrize(
    "text",
    [
        "Forget it, I'll fix it myself.",
        "I forgot to add the migration, can you add it?",
        "The linter forgets to check generated files.",
        "Remove the unused-imports rule from .eslintrc.",
        "我忘了加迁移文件，你帮我加一下。",
        "以后别再用 print 调试了，用 logging。",
    ],
)
def test_not_forget(text: str) -> None:
    assert _kind(text) != "forget"


def test_forget_wins_over_the_rule_it_contains() -> None:
    assert _kind("Remove the rule about never pushing to main.") == "forget"
    assert _kind("忘掉以前说的以后都用 yarn。") == "forget"


# --- language --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "language"),
    [
        ("Always use pnpm.", "en"),
        ("以后都用 pnpm。", "zh"),
        ("这次提交跳过 pre-commit 钩子。", "zh"),
        ("以后都用 pnpm, never npm.", "mixed"),
        ("This time 先跳过 tests.", "mixed"),
        ('The error says "这次请重试"', "en"),
    ],
)
def test_language(text: str, language: str) -> None:
    assert classify_statement(text).language == language


# --- corrections -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "cue", "statement"),
    [
        ("Actually, use pnpm 10", "Actually", "use pnpm 10"),
        ("I meant yarn, not npm", "I meant", "yarn, not npm"),
        ("Sorry, I meant Postgres 16.", "I meant", "Postgres 16"),
        ("Correction: the API lives on port 8000.", "Correction:", "the API lives on port 8000"),
        ("Scratch that, always use uv.", "Scratch that", "always use uv"),
        ("On second thought, let's use ruff format.", "On second thought", "let's use ruff format"),
        (
            "Update the lint rule: max line length is 120.",
            "Update the lint rule",
            "max line length is 120",
        ),
        ("No, use the v2 endpoint.", "No", "use the v2 endpoint"),
        ("不对，应该用 pnpm 10", "不对", "应该用 pnpm 10"),
        ("更正一下：默认端口是 8443。", "更正一下", "默认端口是 8443"),
        ("我说错了，是 Go 1.22。", "我说错了", "是 Go 1.22"),
        ("纠正一下，以后用 Vite 不用 webpack。", "纠正一下", "以后用 Vite 不用 webpack"),
        ("我的意思是 Node 22，不是 20。", "我的意思是", "Node 22，不是 20"),
    ],
)
def test_correction_reports_its_marker_and_new_wording(text: str, cue: str, statement: str) -> None:
    result = classify_statement(text)
    assert (result.kind, result.cue, result.statement) == ("correct", cue, statement)
    assert 0.6 <= result.confidence <= 1.0


def test_a_strong_marker_is_surer_than_a_weak_one() -> None:
    strong = classify_statement("I meant yarn, not npm")
    weak = classify_statement("Actually, use yarn")
    assert strong.kind == weak.kind == "correct"
    assert strong.confidence > weak.confidence


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("Actually, that's fine.", "neutral"),
        ("Actually, the build is green now.", "neutral"),
        ("Actually, never mind.", "neutral"),
        ("Actually, should we use pnpm?", "neutral"),
        ("I meant to ask: is this thread-safe?", "neutral"),
        ("Correction noted.", "neutral"),
        ("不对，还是报错。", "neutral"),
        ("Actually, skip the e2e tests this time.", "one-off"),
        ("不对，这次先用 yarn。", "one-off"),
        ("Actually, forget the pnpm rule.", "forget"),
        # Mid-sentence "actually" is emphasis, not a correction.
        ("Not now, but actually always run lint before pushing.", "rule"),
        # An edit to a file's config is code work, not a correction of a memory.
        ("Update the lint rule in .eslintrc to allow console.log.", "neutral"),
    ],
)
def test_not_corrections(text: str, kind: str) -> None:
    assert _kind(text) == kind


# --- cues for facts, preferences and requirements ---------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "Keep in mind that the VPN drops after an hour.",
        "Keep that in mind: the cache is per process.",
        "For future reference, the token rotates monthly.",
        "I'm a big fan of table-driven tests.",
        "In all YAML files, indent with two spaces.",
        "Config files should always be valid TOML.",
        "Every module in src/core must have tests.",
        "我个人比较喜欢短函数。",
        "我不喜欢魔法数字。",
        "上线之前一定要通知我。",
        "我们这边合并前都要过 CI。",
        "这个项目里的脚本都要加 shebang。",
    ],
)
def test_new_rule_cues(text: str) -> None:
    assert _kind(text) == "rule"


@pytest.mark.parametrize(
    "text",
    [
        "这个仓库里的测试跑得很慢。",
        "我们都要去开会吗？",
        "Keep the file open.",
        "The function should always be pure, right?",
    ],
)
def test_new_cues_do_not_fire_alone(text: str) -> None:
    assert _kind(text) == "neutral"


def test_the_one_scan_for_any_cue_agrees_with_every_cue_scan() -> None:
    # _scored_hits passes over a clause that any_cue() finds nothing in; that is sound only
    # if its search is None exactly when every cue's finditer over the span is empty.
    from cairn.engine.statements.signal_cues import _CUES, any_cue

    holdout = HOLDOUT_PATH.read_text(encoding="utf-8").splitlines()[1:]
    texts = [text for _, text in CASES] + [line.split("\t")[1] for line in holdout]
    agreed = hits = 0
    for text in texts:
        spans = [(0, len(text)), (0, len(text) // 2), (len(text) // 3, len(text))]
        for start, end in spans:
            some = any(True for cue in _CUES for _ in cue.pattern.finditer(text, start, end))
            assert (any_cue().search(text, start, end) is not None) == some, (text, start, end)
            agreed += 1
            hits += some
    assert agreed > 1000
    assert 0 < hits < agreed  # both outcomes are exercised

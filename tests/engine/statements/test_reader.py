"""Tests for the statement reader: signal, memory kind, selector and target from the words."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from cairn.engine.selectors import Selector, TaskConditions, glob_match, match_selector
from cairn.engine.statements.reader import (
    LANGUAGE_GLOBS,
    OPERATIONS,
    PHASES,
    TASK_TYPES,
    StatementReading,
    read_statement,
    stored_body,
)

DATA = Path(__file__).parent / "data"
COLUMNS = (
    "label",
    "text",
    "kind",
    "scope",
    "paths",
    "operations",
    "phases",
    "task_types",
    "target",
)
SIGNALS = ("rule", "one-off", "forget", "correct", "neutral")


@dataclass(frozen=True, slots=True)
class Case:
    line: int
    label: str
    text: str
    kind: str
    scope: str
    paths: frozenset[str]
    operations: frozenset[str]
    phases: frozenset[str]
    task_types: frozenset[str]
    target: tuple[str, ...]


def _split(cell: str) -> frozenset[str]:
    return frozenset(value.strip() for value in cell.split(",") if value.strip())


def load_cases(name: str) -> list[Case]:
    """Read a labelled TSV: trailing empty cells may be left off, lists are comma-separated."""
    lines = (DATA / name).read_text(encoding="utf-8").splitlines()
    assert tuple(lines[0].split("\t")) == COLUMNS
    cases = []
    for number, line in enumerate(lines[1:], start=2):
        cells = line.split("\t")
        assert len(cells) <= len(COLUMNS), f"{name}:{number}: too many columns"
        cells += [""] * (len(COLUMNS) - len(cells))
        label, text, kind, scope, paths, operations, phases, task_types, target = cells
        assert label in SIGNALS, f"{name}:{number}: unknown label {label!r}"
        if label in ("rule", "correct"):
            assert kind in ("preference", "policy", "fact"), f"{name}:{number}: kind {kind!r}"
            assert scope in ("global", "project"), f"{name}:{number}: scope {scope!r}"
        else:
            assert not (kind or scope or paths or operations or phases or task_types), (
                f"{name}:{number}: only rules and corrections have a kind and a selector"
            )
        if label not in ("forget", "correct"):
            assert not target, f"{name}:{number}: only forgets and corrections have a target"
        assert _split(operations) <= set(OPERATIONS), f"{name}:{number}: {operations!r}"
        assert _split(phases) <= set(PHASES), f"{name}:{number}: {phases!r}"
        assert _split(task_types) <= set(TASK_TYPES), f"{name}:{number}: {task_types!r}"
        cases.append(
            Case(
                number,
                label,
                text,
                kind,
                scope,
                _split(paths),
                _split(operations),
                _split(phases),
                _split(task_types),
                tuple(target.split()),
            )
        )
    return cases


FIELDS: dict[str, Callable[[Case, StatementReading], bool]] = {
    "kind": lambda case, reading: reading.memory_kind == case.kind,
    "scope": lambda case, reading: reading.selector.scope == case.scope,
    "paths": lambda case, reading: set(reading.selector.path_patterns) == case.paths,
    "operations": lambda case, reading: set(reading.selector.operations) == case.operations,
    "phases": lambda case, reading: set(reading.selector.phases) == case.phases,
    "task_types": lambda case, reading: set(reading.selector.task_types) == case.task_types,
    "target": lambda case, reading: reading.target_terms == case.target,
}


def measure(cases: list[Case], title: str) -> dict[str, float]:
    """Per-field accuracy. The signal is scored on every sentence; kind and selector on the
    rules and corrections the reader also read as such, the target on the forgets and
    corrections it read as such (a wrong signal is already counted once)."""
    hits: dict[str, list[bool]] = {"signal": []}
    misses: list[str] = []
    for case in cases:
        reading = read_statement(case.text)
        hits["signal"].append(reading.signal == case.label)
        if reading.signal != case.label:
            misses.append(f"  signal {case.label} -> {reading.signal}: {case.text}")
        both_rules = case.label in ("rule", "correct") and reading.signal in ("rule", "correct")
        for field, check in FIELDS.items():
            applies = case.label in ("forget", "correct") and reading.signal == case.label
            if field != "target":
                applies = both_rules
            if not applies:
                continue
            ok = check(case, reading)
            hits.setdefault(field, []).append(ok)
            if not ok:
                misses.append(f"  {field}: {case.text}  -> {_shown(field, reading)}")
    accuracy = {field: sum(values) / len(values) for field, values in hits.items()}
    print(f"\n{title}: {len(cases)} sentences")
    for field, values in hits.items():
        print(f"  {field:10} {sum(values):4d}/{len(values):<4d} {accuracy[field]:.3f}")
    print("\n".join(misses))
    return accuracy


def _shown(field: str, reading: StatementReading) -> object:
    if field == "kind":
        return reading.memory_kind
    if field == "target":
        return reading.target_terms
    if field == "paths":
        return reading.selector.path_patterns
    return getattr(reading.selector, field)


DEVELOPMENT = load_cases("signal_cases.tsv")
HOLDOUT = load_cases("statement_holdout.tsv")
SIGNAL_HOLDOUT = DATA / "signal_holdout.tsv"


def test_labelled_sets_are_large_bilingual_and_disjoint() -> None:
    for cases, minimum in ((DEVELOPMENT, 600), (HOLDOUT, 80)):
        texts = [case.text for case in cases]
        assert len(texts) >= minimum
        assert len(set(texts)) == len(texts), "duplicate sentences"
        chinese = [t for t in texts if any("\u4e00" <= ch <= "\u9fff" for ch in t)]
        assert len(chinese) >= len(texts) // 3
        assert {case.label for case in cases} == set(SIGNALS)
    signal_holdout = {
        line.split("\t")[1] for line in SIGNAL_HOLDOUT.read_text(encoding="utf-8").splitlines()[1:]
    }
    held_out = {case.text for case in HOLDOUT}
    assert not held_out & {case.text for case in DEVELOPMENT}
    assert not held_out & signal_holdout
    # Enough of each thing the reader finds, in the development set, to mean something.
    rules = [c for c in DEVELOPMENT if c.label in ("rule", "correct")]
    assert sum(c.scope == "project" for c in rules) >= 60
    assert sum(bool(c.paths) for c in rules) >= 40
    assert sum(bool(c.operations) for c in rules) >= 80
    assert sum(bool(c.phases) for c in rules) >= 10
    assert sum(bool(c.task_types) for c in rules) >= 10
    assert {c.kind for c in rules} == {"preference", "policy", "fact"}
    assert sum(c.label == "correct" for c in DEVELOPMENT) >= 25


def test_development_set_accuracy() -> None:
    """The cues were written and tuned against this set (650 sentences, EN + ZH + mixed).
    Measured: signal 646/650 (0.994); of the rules and corrections read as such, memory kind
    359/360 (0.997), scope, paths, operations, phases and task types 360/360 (1.000); target
    of forgets and corrections 84/84 (1.000)."""
    accuracy = measure(DEVELOPMENT, "development set")
    assert accuracy["signal"] >= 0.98
    for field in ("kind", "scope", "paths", "operations", "phases", "task_types"):
        assert accuracy[field] >= 0.98, field
    assert accuracy["target"] >= 0.97


def test_held_out_accuracy() -> None:
    """statement_holdout.tsv (103 sentences, EN + ZH + mixed) was written and committed
    before any selector cue existed, and measured once, on the finished reader: signal
    102/103 (0.990); memory kind 84/85 (0.988), scope 85/85 (1.000), paths 82/85 (0.965),
    operations 81/85 (0.953), phases 84/85 (0.988), task types 85/85 (1.000); target 18/19
    (0.947). Never change a cue to fix a miss printed here: that would turn it into a second
    development set. Add a new sentence to signal_cases.tsv instead."""
    accuracy = measure(HOLDOUT, "held-out set")
    assert accuracy["signal"] >= 0.97
    assert accuracy["kind"] >= 0.95
    assert accuracy["scope"] >= 0.97
    assert accuracy["paths"] >= 0.93
    assert accuracy["operations"] >= 0.92
    assert accuracy["phases"] >= 0.95
    assert accuracy["task_types"] >= 0.97
    assert accuracy["target"] >= 0.89


def _read(text: str) -> StatementReading:
    return read_statement(text)


# --- the result value ------------------------------------------------------------------------


def test_reading_is_a_frozen_slotted_value() -> None:
    reading = _read("Use tabs in this repo.")
    with pytest.raises(dataclasses.FrozenInstanceError):
        reading.signal = "neutral"  # type: ignore[misc]
    assert not hasattr(reading, "__dict__")
    assert isinstance(reading.selector, Selector)
    assert reading.selector.project_id is None  # the caller binds its current repository
    assert read_statement("Use tabs in this repo.") == reading  # deterministic


def test_vocabularies_are_small_closed_lists() -> None:
    for vocabulary in (OPERATIONS, PHASES, TASK_TYPES):
        assert len(set(vocabulary)) == len(vocabulary)
        assert all(value == value.lower() and value.isalpha() for value in vocabulary)
    assert "review" in PHASES and "review" not in OPERATIONS
    assert all(glob.startswith("*.") for globs in LANGUAGE_GLOBS.values() for glob in globs)


@pytest.mark.parametrize(
    "text",
    ["Skip the linter this time.", "Why is CI red?", "这次先别推到 main。", "", "   "],
)
def test_only_rules_and_corrections_get_a_kind_and_a_selector(text: str) -> None:
    reading = _read(text)
    assert reading.signal in ("one-off", "neutral")
    assert (reading.memory_kind, reading.selector, reading.target_terms) == (None, Selector(), ())


# --- the examples the reader was built for ---------------------------------------------------


@pytest.mark.parametrize(
    ("text", "signal", "kind", "scope", "operations"),
    [
        ("Use tabs in this repo.", "rule", "policy", "project", ()),
        ("Use Node 20 for this project.", "rule", "policy", "project", ()),
        ("在这个仓库里，永远用 pnpm 安装依赖", "rule", "policy", "project", ("install",)),
        ("我喜欢用 tab 缩进", "rule", "preference", "global", ()),
        ("our staging server is staging.example.com, remember that", "rule", "fact", "global", ()),
        ("Actually, use pnpm 10", "correct", "policy", "global", ()),
        ("I meant yarn, not npm", "correct", "policy", "global", ()),
        ("不对，应该用 pnpm 10", "correct", "policy", "global", ()),
        ("更正一下：这个仓库的测试端口是 5433。", "correct", "fact", "project", ()),
    ],
)
def test_issue_examples(
    text: str, signal: str, kind: str, scope: str, operations: tuple[str, ...]
) -> None:
    reading = _read(text)
    assert (reading.signal, reading.memory_kind, reading.selector.scope) == (signal, kind, scope)
    assert reading.selector.operations == operations


def test_correction_targets_the_words_it_replaces() -> None:
    assert _read("Actually, use pnpm 10").target_terms == ("pnpm", "10")
    assert _read("I meant yarn, not npm").target_terms == ("yarn", "npm")
    assert _read("不对，应该用 pnpm 10").target_terms == ("pnpm", "10")
    corrected = _read("Actually, use pnpm 10")
    assert (corrected.cue, corrected.statement) == ("Actually", "use pnpm 10")


# --- scope -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "Always use snake_case for module names in this repository.",
        "For this codebase, never add a runtime dependency without asking.",
        "Always use the vendored OpenSSL here.",
        "In here we never use default exports.",
        "Across our repo, always prefer pathlib.",
        "This monorepo always builds with Bazel, remember that.",
        "本项目的日志一律用 JSON 格式。",
        "本仓库永远不要引入 lodash。",
        "这里的脚本以后都用 bash 写。",
        "这边提交信息一律用英文。",
        "该项目默认用 Python 3.12。",
        "在当前项目里，永远用 tab 缩进。",
    ],
)
def test_words_for_the_current_repository_give_project_scope(text: str) -> None:
    reading = _read(text)
    assert reading.signal == "rule", text
    assert reading.selector.scope == "project", text


@pytest.mark.parametrize(
    "text",
    [
        "Here's the thing: always pin exact versions.",
        "Here is my rule: never commit secrets.",
        "I hereby ask you to always sign commits.",
        "From here on, use ruff instead of flake8.",
        "Never commit secrets to the repo.",
        "Our team always writes tests first.",
        'The docs say "always use tabs in this repo", but from now on use spaces everywhere.',
        "以后都用 ruff 检查代码。",
        "我们团队一律用 rebase 合并。",
    ],
)
def test_here_in_other_phrases_and_other_containers_stay_global(text: str) -> None:
    reading = _read(text)
    assert reading.signal == "rule", text
    assert reading.selector.scope == "global", text


@pytest.mark.parametrize(
    "text", ["For this PR, skip the changelog in this repo.", "这次在本项目里先不跑 lint。"]
)
def test_a_one_off_inside_the_repository_stays_a_one_off(text: str) -> None:
    reading = _read(text)
    assert reading.signal == "one-off"
    assert reading.selector == Selector()


def test_a_forget_keeps_the_scope_it_names() -> None:
    here = _read("Forget the rule about semicolons in this repo.")
    assert (here.signal, here.selector.scope, here.target_terms) == (
        "forget",
        "project",
        ("semicolons",),
    )
    assert _read("忘掉关于分号的那条规则。").selector.scope == "global"


# --- paths -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "paths"),
    [
        ("Always validate input in src/api.", ("src/api/**",)),
        ("Never add sleeps in the src/api folder.", ("src/api/**",)),
        ("Always use pytest.approx in tests/.", ("tests/**",)),
        ("Always write docstrings in src/cairn/engine/**.", ("src/cairn/engine/**",)),
        ("Never edit config/flags.yaml by hand, ever.", ("config/flags.yaml",)),
        ("Never touch the Dockerfile without asking.", ("Dockerfile",)),
        ("Use tabs in the Makefile, always.", ("Makefile",)),
        ("Always use f-strings in *.py files.", ("*.py",)),
        ("Always use f-strings in .py files.", ("*.py",)),
        ("Always sort keys in JSON files.", ("*.json",)),
        ("I prefer arrow functions in TypeScript.", ("*.ts", "*.tsx")),
        ("Never use panic in Go code.", ("*.go",)),
        ("Never edit `migrations/` by hand.", ("migrations/**",)),
        ("以后 src/web 目录下的组件都用函数式写法。", ("src/web/**",)),
        ("scripts 目录里的脚本永远要加 set -e。", ("scripts/**",)),
        ("Rust 代码里永远不要用 unwrap。", ("*.rs",)),
        ("永远不要手动修改 poetry.lock。", ("poetry.lock",)),
    ],
)
def test_named_places_become_path_patterns(text: str, paths: tuple[str, ...]) -> None:
    reading = _read(text)
    assert reading.signal == "rule", text
    assert reading.selector.path_patterns == paths


@pytest.mark.parametrize(
    "text",
    [
        "From now on, put new scripts under tools/.",
        "Always update CHANGELOG.md when you release.",
        "Always build with docker/Dockerfile.prod from now on.",
        "以后新的测试都放到 tests/unit 目录。",
        "Use and/or sparingly in docs, always.",
        "Never push to origin/main directly.",
        "Always name release branches release/<version>.",
        "Our docs always live at https://docs.example.com/guide, remember that.",
        "Use moment.js never again; from now on use dayjs.",
        "Always use the CI/CD pipeline for deploys.",
    ],
)
def test_places_that_are_not_where_the_rule_applies_give_no_paths(text: str) -> None:
    reading = _read(text)
    assert reading.signal == "rule", text
    assert reading.selector.path_patterns == (), text


def test_a_negated_placement_is_a_place_again() -> None:
    assert _read("Never put secrets under tools/.").selector.path_patterns == ("tools/**",)
    assert _read("永远不要把日志文件放到 src 目录里。").selector.path_patterns == ("src/**",)


@pytest.mark.parametrize(
    "text",
    [
        "Always format everything under **, always.",
        "Never commit * by accident, ever.",
        "Always lint */ and *.* files.",
        "以后 ** 下面的文件都要加版权头。",
    ],
)
def test_no_pattern_ever_matches_every_path(text: str) -> None:
    patterns = _read(text).selector.path_patterns
    for pattern in patterns:
        assert not (glob_match(pattern, "README.md") and glob_match(pattern, "a/b/c.txt"))


def test_every_pattern_read_from_the_labelled_sets_is_specific() -> None:
    for case in DEVELOPMENT + HOLDOUT:
        for pattern in _read(case.text).selector.path_patterns:
            assert pattern.strip("*/.?[]!"), (case.text, pattern)
            assert not (glob_match(pattern, "x.unknownext") and glob_match(pattern, "a/b")), (
                case.text,
                pattern,
            )


def test_read_folder_pattern_is_the_folder_not_its_prefix() -> None:
    (pattern,) = _read("Always validate input in src/api.").selector.path_patterns
    assert glob_match(pattern, "src/api/users.py")
    assert glob_match(pattern, "src/api/v1/orders.py")
    assert not glob_match(pattern, "src/apiary/bees.py")
    assert not glob_match(pattern, "lib/src/api/users.py")


# --- operations, phases, task types ----------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "operations", "phases", "task_types"),
    [
        ("Always run the tests before pushing.", ("push",), (), ()),
        ("Before you commit, always run black.", ("commit",), (), ()),
        ("Never merge without a green build.", ("merge",), (), ()),
        ("Never deploy to production on a Friday.", ("deploy",), (), ()),
        ("Always pin versions when installing packages.", ("install",), (), ()),
        ("Before every release, always update the version number.", ("release",), (), ()),
        ("Whenever you run the tests, always pass --strict-markers.", ("test",), (), ()),
        ("Never edit generated code.", ("edit",), (), ()),
        ("Always squash-merge, never rebase.", ("merge", "rebase"), (), ()),
        ("During code review, always look for missing tests.", (), ("review",), ()),
        ("When reviewing, never approve your own changes.", (), ("review",), ()),
        ("In the release phase, never change dependencies.", (), ("release",), ()),
        ("While planning, always estimate the risk.", (), ("plan",), ()),
        ("When fixing a bug, always add a regression test.", (), (), ("bugfix",)),
        ("When refactoring, always keep behaviour identical.", (), (), ("refactor",)),
        ("For new features, always write a design note.", (), (), ("feature",)),
        ("Always run the linter.", (), (), ()),
        ("每次提交前都要跑 lint。", ("commit",), (), ()),
        ("推送之前永远先 rebase。", ("push",), (), ()),
        ("永远不要在周五部署。", ("deploy",), (), ()),
        ("以后安装依赖一律加 --frozen-lockfile。", ("install",), (), ()),
        ("代码审查的时候一律看测试覆盖率。", (), ("review",), ()),
        ("重构的时候永远不要改行为。", (), (), ("refactor",)),
        ("以后修 bug 都要先写复现测试。", (), (), ("bugfix",)),
        ("以后 merge 之前都要跑完整测试。", ("merge",), (), ()),
    ],
)
def test_operation_and_phase_words(
    text: str,
    operations: tuple[str, ...],
    phases: tuple[str, ...],
    task_types: tuple[str, ...],
) -> None:
    reading = _read(text)
    assert reading.signal == "rule", text
    selector = reading.selector
    assert (selector.operations, selector.phases, selector.task_types) == (
        operations,
        phases,
        task_types,
    )


def test_every_value_read_from_the_labelled_sets_is_in_the_vocabulary() -> None:
    for case in DEVELOPMENT + HOLDOUT:
        selector = _read(case.text).selector
        assert set(selector.operations) <= set(OPERATIONS)
        assert set(selector.phases) <= set(PHASES)
        assert set(selector.task_types) <= set(TASK_TYPES)


def test_a_read_selector_applies_where_the_words_said() -> None:
    reading = _read("Never push directly to main in this repo.")
    selector = dataclasses.replace(reading.selector, project_id="git:aaa")
    assert match_selector(selector, TaskConditions(project_id="git:aaa", operation="push")).matches
    assert not match_selector(
        selector, TaskConditions(project_id="git:bbb", operation="push")
    ).matches
    assert not match_selector(
        selector, TaskConditions(project_id="git:aaa", operation="commit")
    ).matches

    folder = _read("Always add type hints in src/api, from now on.").selector
    assert match_selector(folder, TaskConditions(paths=("src/api/users.py",))).matches
    assert not match_selector(folder, TaskConditions(paths=("web/app.ts",))).matches


# --- memory kind -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("I prefer guard clauses to nested ifs.", "preference"),
        ("I'd rather you kept functions short.", "preference"),
        ("I really dislike one-letter variable names.", "preference"),
        ("My preference is double quotes everywhere.", "preference"),
        ("我比较喜欢用 dataclass。", "preference"),
        ("我习惯先写测试。", "preference"),
        ("We prefer small pull requests.", "policy"),
        ("我们组一律用 squash 合并。", "policy"),
        ("I'd like you to always explain a migration first.", "policy"),
        ("Always keep a changelog.", "policy"),
        ("Every endpoint must have a rate limit.", "policy"),
        ("所有接口都必须有超时。", "policy"),
        ("Remember that the build server is ci2.example.com.", "fact"),
        ("The production region is eu-west-1, remember that.", "fact"),
        ("Keep in mind that the test database resets every night.", "fact"),
        ("记住，预发环境的端口是 8443。", "fact"),
        ("记住我的工作时间是北京时间九点到六点。", "fact"),
        ("Remember, the staging DB is shared, so never drop tables there.", "policy"),
    ],
)
def test_memory_kind_from_the_phrasing(text: str, kind: str) -> None:
    reading = _read(text)
    assert reading.signal == "rule", text
    assert reading.memory_kind == kind


# --- forget targets --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "target"),
    [
        ("Forget what I said about Kubernetes", ("kubernetes",)),
        ("Forget the pnpm rule", ("pnpm",)),
        ("Please forget that I always use tabs.", ("tabs",)),
        ("Forget what I told you about the release calendar; it changed.", ("release", "calendar")),
        ("Don't remember that anymore.", ()),
        ("忘掉关于 Kubernetes 的那条规则。", ("kubernetes",)),
        ("别再记着我喜欢用 vim 了。", ("vim",)),
        ("把关于周五发布的记忆删掉。", ("周五发布",)),
        ("部署要先通知运维那条，忘了吧。", ("部署要先通知运维",)),
        ("忘掉这个。", ()),
    ],
)
def test_forget_target_is_the_content_words(text: str, target: tuple[str, ...]) -> None:
    reading = _read(text)
    assert reading.signal == "forget"
    assert reading.target_terms == target
    assert reading.target == " ".join(target)
    assert reading.memory_kind is None


@pytest.mark.parametrize(
    "text",
    [
        "我在这个项目里习惯用 4 个空格缩进",
        "我在写测试的时候喜欢用 pytest",
        "我在家里更喜欢用 tab 缩进",
    ],
)
def test_a_preference_with_a_place_or_time_before_its_verb(text: str) -> None:
    assert read_statement(text).memory_kind == "preference"


@pytest.mark.parametrize(
    ("said", "stored"),
    [
        ("Remember that the staging URL is https://staging.example.com",
         "The staging URL is https://staging.example.com"),
        ("please remember: deploys go out on Tuesdays", "Deploys go out on Tuesdays"),
        ("FYI, the database is PostgreSQL 16", "The database is PostgreSQL 16"),
        ("Note that the API rate limit is 100 per minute", "The API rate limit is 100 per minute"),
        ("记住：预发布环境的地址是 staging.example.cn", "预发布环境的地址是 staging.example.cn"),
        ("请记住预发布服务器在杭州", "预发布服务器在杭州"),
        # Not a marker: an instruction, a verb of the sentence, or nothing left.
        ("Remember to run the tests before pushing", "Remember to run the tests before pushing"),
        ("Note the date in the changelog", "Note the date in the changelog"),
        ("Remembering names is hard", "Remembering names is hard"),
        ("记住", "记住"),
        ("Always use pnpm", "Always use pnpm"),
    ],
)  # fmt: skip
def test_the_stored_body_has_no_leading_remember(said: str, stored: str) -> None:
    assert stored_body(said) == stored

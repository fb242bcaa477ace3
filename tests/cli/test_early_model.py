"""The model loaded early on a thread of its own: handed over before it loads where the
home alone tells which it is, checked against the config, and started by the entry point
for the command to adopt."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from cairn import Memory
from cairn.adapters.embedding import MiniLmOnnxEmbedder
from cairn.cli import early_model, fast
from cairn.cli.app import App


@pytest.mark.slow  # the real model
def test_the_store_opens_and_reads_while_the_model_still_loads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No config file and a store that records MiniLM: the thread hands the model over
    before it loads, the provider opens and answers what needs no vector, and the first
    embed waits for the load; the vectors are the model's own."""
    monkeypatch.setenv("LANG", "C.UTF-8")
    monkeypatch.delenv("LC_ALL", raising=False)
    monkeypatch.delenv("CAIRN_CONFIG", raising=False)
    with Memory.open(tmp_path / "memory.db", config={}) as first:
        first.remember("deploys go through staging first")
    loading, may_load = threading.Event(), threading.Event()
    real_load = MiniLmOnnxEmbedder._load

    def held(self: MiniLmOnnxEmbedder) -> object:
        if threading.current_thread().name.startswith("cairn-model"):
            loading.set()
            assert may_load.wait(60)
        return real_load(self)

    monkeypatch.setattr(MiniLmOnnxEmbedder, "_load", held)
    app = App(tmp_path, False, "default", "default", None)
    app.will_embed()
    assert loading.wait(60)
    try:
        provider = app.provider()  # opened while the model's load is held
        assert app._loading is not None and not app._loading.model.done()
        assert provider.status().counts["records"] == 1
    finally:
        may_load.set()
    model = app._loading.model.result(timeout=300)
    assert isinstance(model, MiniLmOnnxEmbedder)
    from cairn.provider import contract as c

    found = provider.query(c.RecallQuery(query="how do deploys go?"))
    assert [m.record.body for m in found.memories] == ["deploys go through staging first"]
    fresh = MiniLmOnnxEmbedder()
    assert model.embed(["staging"]).tobytes() == fresh.embed(["staging"]).tobytes()
    app.close()


def test_the_early_model_is_used_only_when_the_config_agrees(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The thread's guess is checked against the whole reading of the config on the
    command's own thread: agreeing, its model; else the settings read, or no model."""
    from concurrent.futures import Future

    from cairn.adapters.embedding import BATCH

    loading = object.__new__(early_model.EarlyModel)
    loading.home, loading.config_path = tmp_path, None
    guessed = MiniLmOnnxEmbedder()
    loading.early, loading.model = Future(), Future()
    loading.early.set_result(((BATCH, None), guessed))
    for read, expected in (((BATCH, None), "guessed"), ((BATCH, 2), "other"), (None, None)):
        monkeypatch.setattr(early_model, "model_settings", lambda *_, read=read: read)
        got = loading.embedder()
        if expected == "guessed":
            assert got is guessed
        elif expected == "other":
            assert isinstance(got, MiniLmOnnxEmbedder) and got is not guessed
            assert (got._batch_size, got._threads) == (BATCH, 2)
        else:
            assert got is None
    assert not loading.model.done()  # never waited for: the guess was there


def test_the_entry_point_starts_the_load_and_the_command_adopts_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A plain recall that no daemon answers starts the load before the command line is
    imported, for a home without a config file only; the command takes it for that very
    home and config, once."""
    monkeypatch.delenv("CAIRN_CONFIG", raising=False)
    monkeypatch.delenv("CAIRN_DATABASE_URL", raising=False)
    monkeypatch.setenv("CAIRN_HOME", str(tmp_path))
    started: list[tuple[Path, str | None]] = []

    def fake_start(home: Path, config: str | None, *, for_command: bool = False) -> None:
        started.append((home, config))
        assert for_command

    monkeypatch.setattr(early_model, "start", fake_start)
    assert fast.fast_recall(["recall", "how do deploys go?"]) is None  # no daemon here
    assert started == [(tmp_path, None)]
    assert fast.fast_recall(["--config", "x.yaml", "recall", "q"]) is None
    (tmp_path / "config.yaml").write_text("memory: {}\n", encoding="utf-8")
    assert fast.fast_recall(["recall", "q"]) is None
    assert started == [(tmp_path, None)]  # a config file: the command reads it first
    monkeypatch.undo()

    class Loading:  # what start() makes, without a thread
        def __init__(self, home: Path, config_path: str | None) -> None:
            self.home, self.config_path = home, config_path

    monkeypatch.setattr(early_model, "EarlyModel", Loading)
    early_model.start(tmp_path, None, for_command=True)
    assert early_model.adopt(tmp_path / "other", None) is None  # another home: not used
    early_model.start(tmp_path, None, for_command=True)
    assert early_model.adopt(tmp_path, "x.yaml") is None  # another config: not used
    loading = early_model.start(tmp_path, None, for_command=True)
    assert early_model.adopt(tmp_path / ".", None) is loading
    assert early_model.adopt(tmp_path, None) is None  # taken once

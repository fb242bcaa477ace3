"""What every command shares: the one way to a provider, and the model loaded early."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from cairn import Memory
from cairn.adapters.embedding import MiniLmOnnxEmbedder
from cairn.cli.app import App
from cli_runner import use_test_embedder


@pytest.mark.slow  # the real model
def test_a_command_that_will_embed_gets_the_model_loaded_beside_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LANG", "C.UTF-8")
    monkeypatch.delenv("LC_ALL", raising=False)
    with Memory.open(tmp_path / "memory.db", config={}) as first:
        first.remember("deploys go through staging first")  # the store chooses MiniLM
    app = App(tmp_path, False, "default", "default", None)
    app.will_embed()
    assert app._model is not None and app._early is not None
    model = app._model.result(timeout=300)
    assert isinstance(model, MiniLmOnnxEmbedder)
    early = app._early.result()
    assert early is not None and early[1] is model  # told from the home alone
    status = app.provider().status()
    assert (status.embedder, status.embedder_chosen_by) == (model.model_id, "first texts")
    app.will_embed()  # once the provider is open, nothing more to start
    app.close()


def test_a_new_store_loads_no_model_early_its_first_texts_choose(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LANG", "C.UTF-8")
    monkeypatch.delenv("LC_ALL", raising=False)
    app = App(tmp_path, False, "default", "default", None)
    app.will_embed()
    assert app._model is not None and app._model.result(timeout=60) is None
    assert app.provider().status().embedder_chosen_by == "default"
    app.close()


def test_with_the_hashing_embedder_nothing_is_loaded_early(tmp_path: Path) -> None:
    use_test_embedder(tmp_path)
    app = App(tmp_path, False, "default", "default", None)
    app.will_embed()
    assert app._model is not None and app._model.result(timeout=60) is None
    assert app._early is not None and app._early.result() is None  # a config file: read it
    assert app.provider().status().embedder == "hashing-64"
    app.close()


def test_a_broken_config_is_reported_by_the_provider_not_by_the_early_load(
    tmp_path: Path,
) -> None:
    (tmp_path / "config.yaml").write_text("memory: [", encoding="utf-8")
    app = App(tmp_path, False, "default", "default", None)
    app.will_embed()
    assert app._model is not None and app._model.result(timeout=60) is None
    from cairn.errors import ConfigError

    with pytest.raises(ConfigError):
        app.provider()


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
        assert app._model is not None and not app._model.done()
        assert provider.status().counts["records"] == 1
    finally:
        may_load.set()
    model = app._model.result(timeout=300)
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
    from cairn.cli import app as cli_app

    app = App(tmp_path, False, "default", "default", None)
    guessed = MiniLmOnnxEmbedder()
    app._early, app._model = Future(), Future()
    app._early.set_result(((BATCH, None), guessed))
    for read, expected in (((BATCH, None), "guessed"), ((BATCH, 2), "other"), (None, None)):
        monkeypatch.setattr(cli_app, "_model_settings", lambda *_, read=read: read)
        got = app._embedder()
        if expected == "guessed":
            assert got is guessed
        elif expected == "other":
            assert isinstance(got, MiniLmOnnxEmbedder) and got is not guessed
            assert (got._batch_size, got._threads) == (BATCH, 2)
        else:
            assert got is None
    assert not app._model.done()  # never waited for: the guess was there

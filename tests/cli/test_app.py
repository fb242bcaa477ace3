"""What every command shares: the one way to a provider, and the model loaded early."""

from __future__ import annotations

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
    assert app._loading is not None
    model = app._loading.model.result(timeout=300)
    assert isinstance(model, MiniLmOnnxEmbedder)
    early = app._loading.early.result()
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
    assert app._loading is not None and app._loading.model.result(timeout=60) is None
    assert app.provider().status().embedder_chosen_by == "default"
    app.close()


def test_with_the_hashing_embedder_nothing_is_loaded_early(tmp_path: Path) -> None:
    use_test_embedder(tmp_path)
    app = App(tmp_path, False, "default", "default", None)
    app.will_embed()
    assert app._loading is not None and app._loading.model.result(timeout=60) is None
    assert app._loading.early.result() is None  # a config file: read it
    assert app.provider().status().embedder == "hashing-64"
    app.close()


def test_a_broken_config_is_reported_by_the_provider_not_by_the_early_load(
    tmp_path: Path,
) -> None:
    (tmp_path / "config.yaml").write_text("memory: [", encoding="utf-8")
    app = App(tmp_path, False, "default", "default", None)
    app.will_embed()
    assert app._loading is not None and app._loading.model.result(timeout=60) is None
    from cairn.errors import ConfigError

    with pytest.raises(ConfigError):
        app.provider()

"""What every command shares: the one way to a provider, and the model loaded early."""

from __future__ import annotations

from pathlib import Path

import pytest

from cairn.adapters.embedding import MiniLmOnnxEmbedder
from cairn.cli.app import App
from cli_runner import use_test_embedder


@pytest.mark.slow  # the real model
def test_a_command_that_will_embed_gets_the_model_loaded_beside_it(tmp_path: Path) -> None:
    app = App(tmp_path, False, "default", "default", None)
    app.will_embed()
    assert app._model is not None
    model = app._model.result(timeout=300)
    assert isinstance(model, MiniLmOnnxEmbedder)
    status = app.provider().status()
    assert status.embedder == model.model_id
    app.will_embed()  # once the provider is open, nothing more to start
    app.close()


def test_with_the_hashing_embedder_nothing_is_loaded_early(tmp_path: Path) -> None:
    use_test_embedder(tmp_path)
    app = App(tmp_path, False, "default", "default", None)
    app.will_embed()
    assert app._model is not None and app._model.result(timeout=60) is None
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

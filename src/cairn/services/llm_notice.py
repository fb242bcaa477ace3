"""Which LLM features are active, and the notice shown the first time they are under a
home: read at every open of the engine, so kept apart from the features themselves
(:mod:`cairn.services.llm`), which a command that never calls the model does not import."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from cairn.config import Config
from cairn.homes import make_private_folder, open_private

FEATURES = ("review", "distill", "ask")
NOTICE_FILE = "llm-notice"


def active_features(config: Config) -> tuple[str, ...]:
    memory = config.memory
    if not memory.enabled or not memory.llm.baseUrl or not memory.llm.model:
        return ()
    return tuple(f for f in FEATURES if getattr(memory.llm.features, f))


def notice_text(config: Config, features: Sequence[str]) -> str:
    return (
        f"cairn: LLM features active: {', '.join(features)} — they call"
        f" {config.memory.llm.baseUrl} and spend your own budget;"
        " turn them all off with memory.enabled: false"
    )


def first_run_notice(home: Path, config: Config) -> str | None:
    """The notice, the first time these features are active under this home (else None)."""
    features = active_features(config)
    if not features:
        return None
    marker = home / NOTICE_FILE
    wanted = ",".join(features) + "\n"
    try:
        if marker.read_text(encoding="utf-8") == wanted:
            return None
    except OSError:
        pass
    try:
        make_private_folder(home)
        with open_private(marker, "w") as out:
            out.write(wanted)
    except OSError:
        pass  # shown again next time rather than never
    return notice_text(config, features)

"""The vectors a write hands the journal carry the model that computed them: vectors of
another model than the store's (a store that chose its embedder meanwhile) are computed
again before anything is stored, never stored under the wrong model's id."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from cairn.adapters.hashing import HashingEmbedder
from cairn.model import Namespace
from cairn.services.journal import Journal, Vectors
from cairn.storage.sqlite.record_store import SqliteRecordStore
from record_builders import record


def test_vectors_of_several_models_are_marked_as_such() -> None:
    one = Vectors("m1", {"a": np.ones(2, dtype=np.float32)})
    gathered = Vectors("")
    gathered.add(one)
    assert gathered.model == "m1" and list(gathered) == ["a"]
    gathered.add(Vectors("m1", {"b": np.ones(2, dtype=np.float32)}))
    assert gathered.model == "m1"
    gathered.add(Vectors("m2", {"c": np.ones(2, dtype=np.float32)}))
    assert gathered.model == "" and sorted(gathered) == ["a", "b", "c"]


def test_vectors_of_another_model_are_computed_again(tmp_path: Path, clock: object) -> None:
    store = SqliteRecordStore(tmp_path / "memory.db")
    embedder = HashingEmbedder()
    journal = Journal(store, embedder, clock, lambda _agent: False)  # type: ignore[arg-type]
    ns = Namespace("t1", "a")
    body = "deploys go through staging first"
    rec = record("01J0000000000000000000000A", body)
    stale = Vectors("some-other-model", {body: np.zeros(embedder.dim, dtype=np.float32)})
    event = journal.event("memory.stored", {"record": rec.to_dict()}, ns, None)
    assert journal.commit([event], stale) == [True]
    found = store.vectors_by_hash("t1", "a", embedder.model_id)
    store.close()
    assert set(found) == {rec.text_hash}
    assert np.allclose(found[rec.text_hash], embedder.embed([body])[0])

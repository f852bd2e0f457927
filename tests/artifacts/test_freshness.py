"""A graph's models are stamped by a stat of their manifest: the stamp changes when `gqa train` writes it again,
is None when nothing is trained, and `trained_stamps` (what `/ready` reports) names each graph's `created`."""

from __future__ import annotations

import json
import os

from gretriever_neo4j.artifacts.freshness import file_stamp, manifest_stamp, trained_stamps
from gretriever_neo4j.artifacts.registry import MANIFEST, TrainedModels, models_dir


def saved(models: TrainedModels, at_s: int) -> None:
    """Saved with its modification time set, so two saves within one clock tick still differ."""
    path = models.save()
    os.utime(path, ns=(at_s * 10**9, at_s * 10**9))


def test_the_stamp_follows_the_manifest(tmp_path, monkeypatch):
    monkeypatch.setenv("GQA_HOME", str(tmp_path))
    assert file_stamp(None) is None and file_stamp(tmp_path / "none") is None
    assert manifest_stamp("kg/one") is None and trained_stamps() == {}
    models = TrainedModels(graph="kg/one", dataset="d", embedder="e", created="2026-11-28T10:00:00+0000")
    saved(models, 1_800_000_000)
    first = manifest_stamp("kg/one")
    assert first is not None and manifest_stamp("kg/one") == first  # nothing changed, the same stamp
    saved(models, 1_800_000_060)
    assert manifest_stamp("kg/one") not in (None, first)
    assert trained_stamps() == {"kg/one": "2026-11-28T10:00:00+0000"}  # by the graph's name, not the folder's
    (models_dir("kg/one") / MANIFEST).unlink()
    assert manifest_stamp("kg/one") is None and trained_stamps() == {}


def test_trained_stamps_reads_a_manifest_again_only_when_it_changed(tmp_path, monkeypatch):
    monkeypatch.setenv("GQA_HOME", str(tmp_path))
    saved(TrainedModels(graph="a", dataset="d", embedder="e", created="one"), 1_800_000_000)
    saved(TrainedModels(graph="b", dataset="d", embedder="e"), 1_800_000_000)  # no `created`: the file's time
    stamps = trained_stamps()
    assert stamps["a"] == "one" and stamps["b"].startswith("20")
    saved(TrainedModels(graph="a", dataset="d", embedder="e", created="two"), 1_800_000_100)
    assert trained_stamps()["a"] == "two"
    broken = models_dir("c")
    broken.mkdir(parents=True)
    (broken / MANIFEST).write_text("{not json")
    (tmp_path / "models" / "stray-file").write_text(json.dumps({}))
    assert set(trained_stamps()) == {"a", "b"}  # what cannot be read is left out, not an error

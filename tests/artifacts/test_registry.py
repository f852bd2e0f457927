"""The trained-models registry: manifests round-trip, missing parts and foreign manifests are refused."""

import json

import pytest

from gretriever_neo4j.errors import ConfigError
from gretriever_neo4j.artifacts.registry import TrainedModels, check_embedder, load_trained, models_dir


def test_manifest_round_trip_and_missing_parts(tmp_path, monkeypatch):
    monkeypatch.setenv("GQA_HOME", str(tmp_path))
    assert load_trained("kg/one") is None
    models = TrainedModels(graph="kg/one", dataset="d", embedder="e").with_part("reader", "reader.pt", {"x": 1})
    models.save()
    assert load_trained("kg/one") is not None and load_trained("kg/one").reader is None  # the file is not there
    (models_dir("kg/one") / "reader.pt").write_bytes(b"x")
    loaded = load_trained("kg/one")
    assert loaded.reader == "reader.pt" and loaded.details == {"reader": {"x": 1}}
    assert models_dir("kg/one").parent == tmp_path / "models"  # one folder, the name made safe
    with pytest.raises(ConfigError, match="'e'"):
        check_embedder(loaded, "another-embedder")


def test_a_manifest_of_another_graph_or_format_is_refused(tmp_path, monkeypatch):
    monkeypatch.setenv("GQA_HOME", str(tmp_path))
    TrainedModels(graph="a", dataset="d", embedder="e").save()
    folder = models_dir("b")
    folder.mkdir(parents=True)
    (folder / "manifest.json").write_text((models_dir("a") / "manifest.json").read_text())
    with pytest.raises(ConfigError, match="belongs to graph 'a'"):
        load_trained("b")
    (folder / "manifest.json").write_text(json.dumps({"format": "other"}))
    with pytest.raises(ConfigError, match="not a gqa models manifest"):
        load_trained("b")

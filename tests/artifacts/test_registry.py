"""The trained-models registry: manifests round-trip, missing parts and foreign manifests are refused."""

import json

import pytest

from gretriever_neo4j.artifacts.registry import TrainedModels, check_embedder, load_trained, models_dir
from gretriever_neo4j.errors import ConfigError


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


def test_a_graphs_signature_weights_round_trip_and_the_reader_uses_them(tmp_path, monkeypatch):
    import dataclasses

    from gretriever_neo4j.answering.answering import Answering
    from gretriever_neo4j.reader.signature_weights import ZERO_SHOT, SignatureWeights

    from fakes import FakeEmbedder

    monkeypatch.setenv("GQA_HOME", str(tmp_path))
    weights = dataclasses.replace(ZERO_SHOT, reading=0.5, matcher=0.01)
    models = TrainedModels(graph="g", dataset="d", embedder="fake").with_part("signature_weights",
                                                                              "signature_weights.json")
    models.save()
    weights.save(models_dir("g") / "signature_weights.json")
    loaded = load_trained("g")
    assert SignatureWeights.load(loaded.path("signature_weights")) == weights
    assert "signature_weights" in loaded.describe()
    answering = Answering(FakeEmbedder(), use_llm=False)
    reader = answering.reader("g")
    assert reader.name == "zero-shot reader (the graph's weights)"
    # the walk matcher reads MiniLM's vectors only: with another embedder its weight is 0 and it is not loaded
    assert reader.weights == dataclasses.replace(weights, matcher=0.0) and reader.matcher is None
    assert answering.reader("other").name == "zero-shot reader"  # no general weights ship: the hand-set ones
    rules = Answering(FakeEmbedder(), use_llm=False, reader="rules").reader("g")
    assert rules.weights == ZERO_SHOT and rules.name == "zero-shot reader"

"""A long-running process (`gqa serve`) keeps one reader per graph, and loads it anew when `gqa train` wrote the
graph's models again meanwhile (its manifest's stamp: one stat per question), with the generators it loaded from
that graph's folder let go. Variants of an `Answering` share the readers. A fake embedder: no Neo4j, no model."""

from __future__ import annotations

import dataclasses
import os

import pytest

from gretriever_neo4j.answering import answering as answering_module
from gretriever_neo4j.answering.answering import Answering
from gretriever_neo4j.artifacts.registry import MANIFEST, TrainedModels, models_dir
from gretriever_neo4j.reader.signature_weights import ZERO_SHOT

from fakes import FakeEmbedder

GRAPH = "restaurants"


@pytest.fixture(autouse=True)
def gqa_home(tmp_path, monkeypatch):
    monkeypatch.setenv("GQA_HOME", str(tmp_path / "home"))


@pytest.fixture()
def loads(monkeypatch) -> list[str]:
    """The graphs whose manifest the reader was made from, one entry per (re)load."""
    made: list[str] = []
    load = answering_module.load_trained

    def counted(graph):
        made.append(graph)
        return load(graph)

    monkeypatch.setattr(answering_module, "load_trained", counted)
    return made


def train(at_s: int, reading: float = 0.5) -> None:
    """What `gqa train` leaves: the graph's signature weights and, last, its manifest (at a time of its own)."""
    folder = models_dir(GRAPH)
    folder.mkdir(parents=True, exist_ok=True)
    dataclasses.replace(ZERO_SHOT, reading=reading).save(folder / "signature_weights.json")
    TrainedModels(graph=GRAPH, dataset=GRAPH, embedder=FakeEmbedder.name, signature_weights="signature_weights.json",
                  created=f"2026-11-28T10:00:{at_s % 60:02d}+0000",
                  details={"reader_choice": {"reader": "zero-shot"}}).save()
    os.utime(folder / MANIFEST, ns=(at_s * 10**9, at_s * 10**9))


def test_the_reader_is_kept_until_the_graphs_models_change(loads):
    answering = Answering(FakeEmbedder(), use_llm=False)
    before = answering.reader(GRAPH)
    assert answering.reader(GRAPH) is before and loads == [GRAPH]  # kept: one load
    assert "the graph's weights" not in before.name

    train(1_800_000_000)
    trained = answering.reader(GRAPH)
    assert trained is not before and trained.name == "zero-shot reader (the graph's weights)"
    assert trained.weights.reading == 0.5 and loads == [GRAPH, GRAPH]
    never = answering.variant(llm_when="never")
    assert never.reader(GRAPH) is trained and answering.reader(GRAPH) is trained and len(loads) == 2

    train(1_800_000_060, reading=0.25)  # trained again
    assert never.reader(GRAPH).weights.reading == 0.25 and answering.reader(GRAPH) is never.reader(GRAPH)
    assert len(loads) == 3

    (models_dir(GRAPH) / MANIFEST).unlink()  # its models removed: back to the weights every graph has
    assert "the graph's weights" not in answering.reader(GRAPH).name and len(loads) == 4


def test_other_graphs_keep_their_readers(loads):
    answering = Answering(FakeEmbedder(), use_llm=False)
    other = answering.reader("other")
    train(1_800_000_000)
    answering.reader(GRAPH)
    assert answering.reader("other") is other


def test_generators_loaded_from_the_graphs_folder_are_let_go_with_its_reader():
    answering = Answering(FakeEmbedder(), use_llm=False)
    answering.reader(GRAPH)
    own = (str(models_dir(GRAPH) / "generator"), None, "auto")
    elsewhere = ("/checkpoints/eg/best", None, "auto")
    llm_alone = (None, None, "auto")
    answering._generators.update({own: object(), elsewhere: object(), llm_alone: object()})
    answering.reader(GRAPH)
    assert own in answering._generators  # nothing changed: kept
    train(1_800_000_000)
    answering.reader(GRAPH)
    assert own not in answering._generators and {elsewhere, llm_alone} <= set(answering._generators)


def test_an_explicit_reader_choice_is_kept_across_trainings():
    rules = Answering(FakeEmbedder(), use_llm=False, reader="rules")
    first = rules.reader(GRAPH)
    train(1_800_000_000)
    again = rules.reader(GRAPH)
    assert again.weights == ZERO_SHOT and again.name == first.name == "zero-shot reader"


@pytest.mark.slow
def test_a_graphs_own_walk_encoder_is_read_where_its_models_name_one():
    from gretriever_neo4j.reader.learned import GENERAL, general_walk_encoder
    from gretriever_neo4j.reader.walk_encoder import WalkEncoderConfig, read_saved, save, with_lora
    from gretriever_neo4j.train.walk_encoder import load_encoder

    folder = models_dir(GRAPH)
    config, state = read_saved(GENERAL)  # the general adapters, as `gqa train` starts from them
    model = with_lora(load_encoder(), config, state)
    with_training = WalkEncoderConfig(**{**config.to_dict(), "training": {"questions": 12}})
    save(model, with_training, folder / "walk_encoder-20261128100000")
    TrainedModels(graph=GRAPH, dataset=GRAPH, embedder=FakeEmbedder.name, walk_encoder="walk_encoder-20261128100000",
                  details={"reader_choice": {"reader": "zero-shot"}}).save()
    reader = Answering(FakeEmbedder(), use_llm=False).reader(GRAPH)
    assert reader.walk_encoder is not general_walk_encoder()
    assert reader.walk_encoder.config.training == {"questions": 12}
    assert reader.name == "zero-shot reader (walk encoder tuned on 12 questions of the graph)"
    texts = ["what's on the menu at X", "what is served at X"]
    assert abs(reader.walk_encoder.similarities(texts[0], [texts[1]])[0]
               - general_walk_encoder().similarities(texts[0], [texts[1]])[0]) < 2e-3  # the same adapters
    assert list((folder / "walk_encoder-20261128100000").glob("*.onnx"))  # its export goes with its folder

"""The hop reader as the reader reads it: the feature `hop_reading` from a walk's hop count, the reader following
it, the saved form read back, and the hop reader that ships; its value head likewise (`value_reading`)."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest
import torch
from restaurant_kg import RESTAURANTS

from gretriever_neo4j.errors import ConfigError
from gretriever_neo4j.reader import ZeroShotReader
from gretriever_neo4j.reader.coverage import SignatureTable
from gretriever_neo4j.reader.hop_reading import (
    CONFIG_FILE,
    HEAD_FILE,
    HOPS,
    VALUE_HEAD_FILE,
    HopReader,
    HopReaderConfig,
    add_hop_reading,
    add_value_reading,
    walk_hops,
    write,
    write_value_head,
)
from gretriever_neo4j.reader.learned import GENERAL, HOP_READER, general_hop_reader
from gretriever_neo4j.reader.signature_weights import FEATURES, ZERO_SHOT
from gretriever_neo4j.reader.walk_encoder import LAYERS_FILE, WalkEncoderConfig, tuned_state, with_lora
from gretriever_neo4j.train.walk_encoder import load_encoder

from toy_kg import view_of

COLUMN = list(FEATURES).index("hop_reading")
HOPS_COLUMN = list(FEATURES).index("extra_hops")


class _Sure:
    """A hop reader sure the question asks `hops` hops."""

    def __init__(self, hops: int):
        self.config = HopReaderConfig()
        self.probability = np.full(HOPS, 0.001)
        self.probability[hops - 1] = 1.0 - 0.001 * (HOPS - 1)
        self.asked: list[str] = []

    def probabilities(self, masked):
        self.asked.append(masked)
        return self.probability

    def value_probability(self, masked):  # no value head
        return None


def test_hop_reading_is_the_log_probability_of_each_walks_hop_count_three_or_more_as_one():
    features = np.zeros((4, len(FEATURES)))
    features[:, HOPS_COLUMN] = [0, 1, 2, 3]  # 1, 2, 3 and 4 named hops
    assert walk_hops(features).tolist() == [1, 2, 3, 3]
    table = SignatureTable(used=np.arange(4), features=features, shortlisted=np.ones(4, dtype=bool))
    reader = _Sure(2)
    add_hop_reading(reader, table, "who is the father of X's teacher")
    floor = reader.config.floor
    assert reader.asked == ["who is the father of X's teacher"]
    assert np.allclose(table.features[:, COLUMN], np.log(reader.probability[[0, 1, 2, 2]] + floor))
    assert table.features[1, COLUMN] > table.features[0, COLUMN] + 5


def test_the_reader_takes_the_longer_walk_where_the_question_asks_more_hops(embedder):
    view = view_of(RESTAURANTS, embedder)
    question, anchor = "Anna Pike trained at a restaurant: which street is it on?", view.node_texts.index("Anna Pike")
    vectors = embedder.embed(["X trained at a restaurant: which street is it on?"])[0], embedder.embed([question])[0]
    weights = dataclasses.replace(ZERO_SHOT, hop_reading=1.0)

    def answers(hop_reader):
        reading = ZeroShotReader(embedder.embed, weights=weights, hop_reader=hop_reader).read(
            question, view, [anchor], *vectors)
        return sorted(view.node_texts[n] for n in reading.answers)

    assert answers(_Sure(1)) == ["Red Lantern"]
    assert answers(_Sure(2)) == ["Mill Lane"]
    unweighed = ZeroShotReader(embedder.embed, weights=dataclasses.replace(ZERO_SHOT, hop_reading=0.0),
                               hop_reader=_Sure(2))
    assert unweighed.read(question, view, [anchor], *vectors).answers == ZeroShotReader(embedder.embed).read(
        question, view, [anchor], *vectors).answers


def test_a_hop_reader_written_is_read_back_as_it_reads(tmp_path):
    torch.manual_seed(0)
    adapters = WalkEncoderConfig(adapter="lora", rank=2, alpha=4, candidates=1)
    model = with_lora(load_encoder(), adapters)
    head = torch.nn.Linear(384, HOPS)
    text = "who is the father of X's teacher"
    with torch.no_grad():
        expected = torch.softmax(head(3.0 * model.encode([text], convert_to_tensor=True,
                                                            normalize_embeddings=True)), -1).numpy()[0]
    write(tmp_path, adapters, tuned_state(model, adapters),
          {k: v.detach().numpy() for k, v in head.state_dict().items()}, HopReaderConfig(scale=3.0))
    loaded = HopReader.load(tmp_path, onnx=False)
    assert loaded.config.scale == 3.0
    assert np.allclose(loaded.probabilities(text), expected, atol=2e-3)
    (tmp_path / CONFIG_FILE).write_text(json.dumps({"scale": -1}))
    with pytest.raises(ConfigError, match="scale"):
        HopReader.load(tmp_path, onnx=False)
    (tmp_path / CONFIG_FILE).write_text("{}")
    (tmp_path / HEAD_FILE).write_bytes(b"not safetensors")
    with pytest.raises(ConfigError, match="hop reader"):
        HopReader.load(tmp_path, onnx=False)


def test_the_shipped_hop_reader_is_small_and_reads_hops_from_the_words():
    folder = GENERAL / HOP_READER
    assert sum((folder / name).stat().st_size for name in (CONFIG_FILE, HEAD_FILE, LAYERS_FILE)) <= 2_000_000
    reader = general_hop_reader()
    assert reader is not None and ZERO_SHOT.hop_reading > 0
    one, two, three = (reader.probabilities(q) for q in (
        "who is X's father", "who is the father of X's teacher", "where was the father of X's teacher born"))
    assert one.argmax() == 0 and two.argmax() == 1 and three.argmax() == 2
    assert np.isclose(one.sum(), 1.0)


VALUE_COLUMN = list(FEATURES).index("value_reading")


class _ValueSure(_Sure):
    """A hop reader with a value head: `value` the probability that the question asks for a number or date."""

    def __init__(self, value: float | None):
        super().__init__(1)
        self.value = value

    def value_probability(self, masked):
        self.asked.append(masked)
        return self.value


def test_value_reading_is_the_log_probability_of_a_value_where_the_walk_ends_on_values_only():
    table = SignatureTable(used=np.array([4, 7, 9]), features=np.zeros((3, len(FEATURES))),
                           shortlisted=np.ones(3, dtype=bool))
    reader = _ValueSure(0.9)
    add_value_reading(reader, table, "what year did X open", {7})
    floor = reader.config.floor
    assert np.allclose(table.features[:, VALUE_COLUMN], np.log(np.array([0.1, 0.9, 0.1]) + floor))
    untouched = SignatureTable(used=np.array([4]), features=np.zeros((1, len(FEATURES))),
                               shortlisted=np.ones(1, dtype=bool))
    add_value_reading(_ValueSure(None), untouched, "what year did X open", {4})  # no value head: nothing read
    assert not untouched.features.any()


def test_the_reader_answers_a_value_only_where_the_question_asks_for_one(embedder):
    triples = [("Blue Door", "opened", "1998"), ("Blue Door", "run by", "Harbor Foods"),
               ("Red Lantern", "opened", "2004"), ("Red Lantern", "run by", "Mill Holdings")]
    view = view_of(triples, embedder)
    question, anchor = "tell me about Blue Door", view.node_texts.index("Blue Door")
    vectors = embedder.embed(["tell me about X"])[0], embedder.embed([question])[0]
    weights = dataclasses.replace(ZERO_SHOT, value_reading=5.0)

    def answers(hop_reader, weighed=weights):
        reading = ZeroShotReader(embedder.embed, weights=weighed, hop_reader=hop_reader).read(
            question, view, [anchor], *vectors)
        return view.node_texts[reading.answers[0]]

    assert answers(_ValueSure(0.999)) == "1998"
    assert answers(_ValueSure(0.001)) == "Harbor Foods"
    unweighed = dataclasses.replace(weights, value_reading=0.0)
    assert answers(_ValueSure(0.999), unweighed) == answers(_ValueSure(0.001), unweighed)


def test_a_value_head_written_is_read_back_and_a_broken_one_is_refused(tmp_path):
    torch.manual_seed(0)
    adapters = WalkEncoderConfig(adapter="lora", rank=2, alpha=4, candidates=1)
    model = with_lora(load_encoder(), adapters)
    write(tmp_path, adapters, tuned_state(model, adapters),
          {"weight": np.zeros((HOPS, 384), np.float32), "bias": np.zeros(HOPS, np.float32)}, HopReaderConfig())
    assert HopReader.load(tmp_path, onnx=False).value_probability("what year did X open") is None
    weight = np.random.default_rng(0).normal(size=384) / 10
    write_value_head(tmp_path, weight, -1.5, {"questions": 3})
    loaded = HopReader.load(tmp_path, onnx=False)
    text = "what year did X open"
    vector = model.encode([text], normalize_embeddings=True)[0]
    expected = 1 / (1 + np.exp(-(weight @ (loaded.config.scale * vector) - 1.5)))
    assert abs(loaded.value_probability(text) - expected) < 2e-3
    (tmp_path / VALUE_HEAD_FILE).write_bytes(b"not safetensors")
    with pytest.raises(ConfigError, match="value head"):
        HopReader.load(tmp_path, onnx=False)


def test_the_shipped_value_head_reads_a_number_or_date_asked_from_the_words():
    reader = general_hop_reader()
    assert reader.value_probability("what year did X open") > 0.5
    assert reader.value_probability("how many seats does X have") > 0.5
    assert reader.value_probability("which company puts out X") < 0.2
    assert reader.value_probability("X is an episode of what podcast") < 0.2
    assert ZERO_SHOT.value_reading > 0

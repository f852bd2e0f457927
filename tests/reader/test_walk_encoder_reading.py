"""The walk encoder as the reader reads it: the tuned layers saved and loaded over the embedder's own, the feature
`tuned_reading` on a question's few best walks only, and the encoder that ships."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest
import torch
from restaurant_kg import RESTAURANTS
from safetensors.torch import save_file

from gretriever_neo4j.errors import ConfigError, InputError
from gretriever_neo4j.reader import ZeroShotReader
from gretriever_neo4j.reader.coverage import SignatureTable
from gretriever_neo4j.reader.learned import GENERAL, general_walk_encoder, read_collected
from gretriever_neo4j.reader.signature_weights import FEATURES, ZERO_SHOT
from gretriever_neo4j.reader.walk_encoder import (
    CONFIG_FILE,
    LAYERS_FILE,
    WalkEncoder,
    WalkEncoderConfig,
    add_tuned_reading,
    save,
    tuned_layers,
    with_lora,
)
from gretriever_neo4j.train.walk_encoder import load_encoder

from toy_kg import view_of

COLUMN = list(FEATURES).index("tuned_reading")


class _Fixed:
    """An encoder that finds the walks naming `word` the question's paraphrase."""

    def __init__(self, word: str, candidates: int = 8):
        self.word, self.config, self.asked = word, WalkEncoderConfig(candidates=candidates), []

    def similarities(self, masked, walks):
        self.asked.append(list(walks))
        return np.asarray([1.0 if self.word in w else 0.0 for w in walks])


def test_tuned_layers_saved_in_float16_load_over_the_embedders_own(tmp_path):
    model = load_encoder()
    texts = ["what is on the menu at X", "what is served at X"]
    frozen = model.encode(texts, normalize_embeddings=True)
    with torch.no_grad():
        for parameter in tuned_layers(model, 1)[0].parameters():
            parameter.mul_(1.3)
    tuned = model.encode(texts, normalize_embeddings=True)
    save(model, WalkEncoderConfig(layers=1, training={"epochs": 0}), tmp_path)
    loaded = WalkEncoder.load(tmp_path)
    assert loaded.config.layers == 1 and loaded.config.training == {"epochs": 0}
    assert np.isclose(loaded.similarities(texts[0], [texts[1]])[0], float(tuned[0] @ tuned[1]), atol=2e-3)
    assert not np.isclose(float(frozen[0] @ frozen[1]), float(tuned[0] @ tuned[1]), atol=2e-3)
    (tmp_path / CONFIG_FILE).write_text(json.dumps({"layers": 0}))
    with pytest.raises(InputError, match="layers"):
        WalkEncoder.load(tmp_path)
    (tmp_path / LAYERS_FILE).write_bytes(b"not safetensors")
    (tmp_path / CONFIG_FILE).write_text("{}")
    with pytest.raises(ConfigError, match="walk encoder"):
        WalkEncoder.load(tmp_path)


def test_low_rank_adapters_saved_small_merge_at_load_into_the_embedders_weights(tmp_path):
    model = load_encoder()
    texts = ["what is on the menu at X", "what is served at X"]
    frozen = model.encode(texts, normalize_embeddings=True)
    config = WalkEncoderConfig(adapter="lora", rank=4, alpha=8, training={"epochs": 0})
    torch.manual_seed(0)  # the adapters' A matrices are drawn from torch's own generator
    model = with_lora(model, config)
    generator = torch.Generator().manual_seed(0)
    with torch.no_grad():  # adapters start at zero (B = 0): give them something to carry
        for name, parameter in model.named_parameters():
            if "lora_B" in name:
                parameter.copy_(0.05 * torch.randn(parameter.shape, generator=generator))
    tuned = model.encode(texts, normalize_embeddings=True)
    save(model, config, tmp_path)
    assert (tmp_path / LAYERS_FILE).stat().st_size < 400_000  # rank 4 over 37 maps (the pooler too), float16
    loaded = WalkEncoder.load(tmp_path)
    assert loaded.config.adapter == "lora" and loaded.config.targets == config.targets
    assert np.isclose(loaded.similarities(texts[0], [texts[1]])[0], float(tuned[0] @ tuned[1]), atol=2e-3)
    assert np.abs(frozen - tuned).max() > 0.01  # the adapters change what it reads
    (tmp_path / CONFIG_FILE).write_text(json.dumps({**config.to_dict(), "adapter": "prefix"}))
    with pytest.raises(InputError, match="adapter"):
        WalkEncoder.load(tmp_path)
    (tmp_path / CONFIG_FILE).write_text(json.dumps(config.to_dict()))
    save_file({"encoder.layer.9.attention.self.query.lora_A.weight": torch.zeros(4, 384),
               "encoder.layer.9.attention.self.query.lora_B.weight": torch.zeros(384, 4)}, str(tmp_path / LAYERS_FILE))
    with pytest.raises(ConfigError, match="does not fit"):  # adapters of a deeper model than the embedder
        WalkEncoder.load(tmp_path)


def test_tuned_reading_is_read_on_the_best_shortlisted_walks_by_the_other_features():
    features = np.zeros((5, len(FEATURES)))
    features[:, list(FEATURES).index("explained")] = [0.9, 0.1, 0.5, 0.7, 2.0]
    table = SignatureTable(used=np.asarray([0, 1, 2, 3, 4]), features=features,
                           shortlisted=np.asarray([True, True, True, True, False]))
    encoder = _Fixed("walk", candidates=2)
    signatures = [[(r, 0)] for r in range(5)]
    add_tuned_reading(encoder, table, ZERO_SHOT, "what is X", signatures, [f"walk {r}" for r in range(5)])
    assert len(encoder.asked) == 1 and len(encoder.asked[0]) == 2
    assert table.features[:, COLUMN].tolist() == [1.0, 0.0, 0.0, 1.0, 0.0]  # rows 0 and 3; 4 is not shortlisted


def test_the_reader_follows_the_walk_the_encoder_reads_as_the_question(embedder):
    view = view_of(RESTAURANTS, embedder)
    question, anchor = "what's on the menu at Blue Door?", view.node_texts.index("Blue Door")
    vectors = embedder.embed(["what's on the menu at X?"])[0], embedder.embed([question])[0]
    dishes = ["Lemon Tart", "Mushroom Risotto"]
    plain = ZeroShotReader(embedder.embed).read(question, view, [anchor], *vectors)
    assert sorted(view.node_texts[n] for n in plain.answers) != dishes
    reader = ZeroShotReader(embedder.embed, walk_encoder=_Fixed("served"),
                            weights=dataclasses.replace(ZERO_SHOT, tuned_reading=4.0))
    reading = reader.read(question, view, [anchor], *vectors)
    assert sorted(view.node_texts[n] for n in reading.answers) == dishes
    unweighed = ZeroShotReader(embedder.embed, walk_encoder=_Fixed("served"),
                               weights=dataclasses.replace(ZERO_SHOT, tuned_reading=0.0))
    assert unweighed.read(question, view, [anchor], *vectors).answers == plain.answers


def test_a_file_collected_before_a_feature_existed_reads_zero_for_it(tmp_path):
    path = tmp_path / "old.npz"
    np.savez(path, features=np.ones((3, len(FEATURES) - 1)), graph=np.asarray("g"))
    data = read_collected(path)
    assert data["features"].shape == (3, len(FEATURES)) and not data["features"][:, -1].any()
    np.savez(path, features=np.ones((3, len(FEATURES) + 1)), graph=np.asarray("g"))
    with pytest.raises(InputError, match="features"):
        read_collected(path)


def test_the_shipped_encoder_is_small_and_tuned():
    sizes = sum((GENERAL / name).stat().st_size for name in (CONFIG_FILE, LAYERS_FILE))
    assert sizes <= 10_000_000
    encoder = general_walk_encoder()
    assert encoder is not None and encoder.config.base == "sentence-transformers/all-MiniLM-L6-v2"
    assert ZERO_SHOT.tuned_reading > 0
    texts = ["what's on the menu at X", "what is served at X"]
    frozen = load_encoder().encode(texts, normalize_embeddings=True)
    tuned = encoder.similarities(texts[0], [texts[1]])[0]
    assert abs(tuned - float(frozen[0] @ frozen[1])) > 0.01
    # read through ONNX Runtime where it exports, as PyTorch reads it; never through the embedder's own export
    plain = encoder.model.encode(texts, normalize_embeddings=True)
    assert abs(tuned - float(plain[0] @ plain[1])) < 1e-3

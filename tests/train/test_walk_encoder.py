"""`train.walk_encoder`: the embedder's last layer (or low-rank adapters over all of it) tuned on questions whose
answering walk is known learns a phrasing the frozen embedder does not relate to its walk, and the measure picks
walks by score plus similarity."""

from __future__ import annotations

import numpy as np
import pytest

from gretriever_neo4j.train.walk_encoder import (
    EncoderConfig,
    WalkQuestion,
    choice_hit,
    fine_tune,
    load_encoder,
    similarities,
    trainable,
)

WALKS = ["what is the principal investigator of X", "what is the funder of X", "what is the topic of X"]


def _question(masked: str, answering: int) -> WalkQuestion:
    f1 = np.zeros(len(WALKS))
    f1[answering] = 1.0
    return WalkQuestion(masked, list(WALKS), f1, np.zeros(len(WALKS)), "toy")


def test_choice_hit_adds_the_weighted_similarity_to_the_reader_score():
    q = WalkQuestion("q", ["a", "b"], np.array([0.0, 1.0]), np.array([1.0, 0.5]), "toy")
    assert choice_hit([q], [np.array([0.0, 1.0])], 0.0) == 0.0  # the reader alone picks the wrong walk
    assert choice_hit([q], [np.array([0.0, 1.0])], 1.0) == 1.0  # the similarity turns it


@pytest.mark.slow
@pytest.mark.parametrize("config", [EncoderConfig(adapter="layers", layers=1, epochs=8, batch=1, learning_rate=1e-4),
                                    EncoderConfig(adapter="lora", rank=8, epochs=8, batch=1, learning_rate=1e-3)],
                         ids=["last-layer", "lora"])
def test_tuning_teaches_a_phrasing_and_leaves_the_frozen_layers_alone(config):
    train = [_question(text, 0) for text in ("who heads X", "who is in charge of X", "who leads X")] + \
            [_question(text, 1) for text in ("who pays for X", "who bankrolls X")]
    asked = [_question("who runs X", 0), _question("who pays the bills of X", 1)]
    model = load_encoder()
    frozen_first = next(model[0].auto_model.embeddings.parameters()).detach().clone()
    before = similarities(model, train)
    model = fine_tune(trainable(model, config), train, config)
    after = similarities(model, train)
    margin = lambda sims, qs: np.mean([s[int(np.argmax(q.f1))] - np.delete(s, int(np.argmax(q.f1))).max()  # noqa: E731
                                       for s, q in zip(sims, qs)])
    assert margin(after, train) > margin(before, train) + 0.05
    assert choice_hit(train, after, 1.0) == 1.0
    assert choice_hit(asked, similarities(model, asked), 1.0) >= 0.5  # a sense of the new phrasings, not all
    assert np.array_equal(next(model[0].auto_model.embeddings.parameters()).detach(), frozen_first)


@pytest.mark.slow
def test_tuning_the_last_layers_alone_reads_the_lower_ones_once_and_changes_nothing_below():
    """`fine_tune(top=2)` runs the last two layers on what the four below computed once: the vectors are the whole
    model's (texts of other lengths padded together), states already read are not read again (the folds of a
    cross-validation share them), only the last two layers' adapters move, and the model has all its layers again
    afterwards."""
    import torch

    from gretriever_neo4j.train.walk_encoder import _LowerLayers

    config = EncoderConfig(adapter="lora", rank=8, epochs=4, batch=2, learning_rate=1e-3)
    model = trainable(load_encoder(), config).eval()
    texts = ["who heads X", "what is the principal investigator of the project that X funds", *WALKS]
    whole = model.encode(texts, convert_to_tensor=True)
    with _LowerLayers(model, 2, texts) as lower, torch.no_grad():
        features = model.preprocess(texts)
        lower.feed(texts, features)
        assert len(model[0].auto_model.encoder.layer) == 2
        alone = model(features)["sentence_embedding"]
    assert torch.allclose(whole, alone, atol=1e-5)
    read = dict(lower.states)
    again = _LowerLayers(model, 2, texts[:2] + ["who funds X"], lower.states)  # folds share what was read
    assert again.states is lower.states and all(again.states[t] is read[t] for t in read)
    assert set(again.states) == {*read, "who funds X"}
    before = {name: p.detach().clone() for name, p in model.named_parameters() if "lora" in name}
    train = [_question("who heads X", 0), _question("who pays for X", 1), _question("who leads X", 0)]
    fine_tune(model, train, config, log=False, top=2)
    assert len(model[0].auto_model.encoder.layer) == 6
    moved = {name for name, p in model.named_parameters() if name in before and not torch.equal(p, before[name])}
    assert moved and all(".layer.4." in name or ".layer.5." in name for name in moved), sorted(moved)[:4]
    assert any(".layer.5." in name for name in moved)

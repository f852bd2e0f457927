import pytest
import torch

from gretriever_neo4j.errors import InputError
from gretriever_neo4j.model.label_scoring import (
    class_weights_for,
    label_choice_loss,
    label_log_likelihoods,
    label_token_ids,
)
from gretriever_neo4j.model.sample import collate
from gretriever_neo4j.train.evaluation import predict, predict_labels

from model_toys import random_sample, toy_model


def questions(count=12):
    return [random_sample(i, 2 + i % 3, label="cat", question=f"item {i} {'?' * (i % 4)}") for i in range(count)]


@pytest.mark.parametrize("labels", [("cat", "dog"), ("sun", "sea"), ("sea", "seas", "sun"), ("a", "b", "c")])
@pytest.mark.parametrize("variant", ["g-retriever", "inference-only"])
def test_label_scoring_chooses_what_constrained_generation_says(labels, variant):
    samples = questions()
    for seed in range(3):  # random toy weights: different seeds, different choices
        model = toy_model(variant, seed=seed)
        generated = predict(model, samples, batch_size=5, labels=labels)
        scored = predict_labels(model, samples, labels, batch_size=5)
        assert scored == generated


def test_one_token_labels_take_one_pass_and_agree_with_full_scoring():
    model = toy_model("g-retriever", seed=1)
    batch = collate(questions(6))
    assert [len(t) for t in label_token_ids(model, ("a", "b"))] == [1, 1]
    scores = label_log_likelihoods(model, batch, ("a", "b"))
    logits = model.logits(batch, with_labels=False)[:, -1]
    ids = [t[0] for t in label_token_ids(model, ("a", "b"))]
    expected = torch.log_softmax(logits, -1)[:, ids]
    assert torch.allclose(scores, expected, atol=1e-4)


def test_label_choice_loss_is_differentiable_and_weighted():
    model = toy_model("g-retriever", seed=0)
    batch = collate([random_sample(i, 3, label=("cat", "dog")[i % 2]) for i in range(4)])
    loss = label_choice_loss(model, batch, ("cat", "dog"), class_weights=[1.0, 3.0])
    loss.backward()
    assert loss.item() > 0
    assert any(p.grad is not None and p.grad.abs().sum() > 0 for p in model.projector.parameters())
    assert class_weights_for(["cat", "cat", "cat", "dog"], ["cat", "dog"]) == pytest.approx([2 / 3, 2.0])
    with pytest.raises(InputError):
        label_choice_loss(model, batch, ("sun", "sea"))
    with pytest.raises(InputError):
        label_token_ids(model, ("cat",))

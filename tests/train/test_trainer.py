import math

import pytest
import torch

from gretriever_neo4j.errors import ConfigError, InputError
from gretriever_neo4j.model.checkpoint import load_checkpoint, read_checkpoint
from gretriever_neo4j.train.trainer import TrainConfig, epoch_order, evaluate_loss, lr_at, predict, train

from model_toys import WORDS, random_sample, toy_model


def fast(**changes) -> TrainConfig:
    values = dict(lr=1e-2, min_lr=1e-3, batch_size=2, grad_accum=1, epochs=3, warmup_epochs=0, patience=2)
    values.update(changes)
    return TrainConfig(**values)


def train_set(count=4):
    return [random_sample(i, 3, label=WORDS[i % len(WORDS)]) for i in range(count)]


def contradicting_val_set(count=4):
    """The training inputs with other labels: fitting the training set makes the validation loss rise."""
    return [random_sample(i, 3, label=WORDS[(i + 2) % len(WORDS)][::-1]) for i in range(count)]


def test_schedule_is_warmup_then_half_cosine():
    kwargs = dict(lr=1e-4, min_lr=1e-5, warmup_epochs=1, epochs=5)
    assert lr_at(0.5, **kwargs) == pytest.approx(5e-5)
    assert lr_at(1.0, **kwargs) == pytest.approx(1e-4)
    assert lr_at(3.0, **kwargs) == pytest.approx((1e-4 + 1e-5) / 2)
    assert lr_at(5.0, **kwargs) == pytest.approx(1e-5)
    assert lr_at(0.0, lr=1e-4, min_lr=1e-5, warmup_epochs=0, epochs=5) == pytest.approx(1e-4)
    assert lr_at(5.0, lr=1e-6, min_lr=5e-6, warmup_epochs=0, epochs=5) == pytest.approx(1e-6)  # floor <= lr


def test_epoch_order_depends_only_on_seed_and_epoch():
    assert epoch_order(10, 0, 3) == epoch_order(10, 0, 3)
    assert sorted(epoch_order(10, 0, 3)) == list(range(10))
    assert epoch_order(10, 0, 3) != epoch_order(10, 0, 4)


def test_history_best_checkpoint_and_progress(tmp_path):
    model = toy_model("g-retriever")
    events = []
    history = train(model, train_set(), train_set()[:2], fast(), tmp_path, progress=events.append)
    assert [e.epoch for e in history.epochs] == [0, 1, 2]
    assert all(e.seconds > 0 and e.peak_rss_mib > 50 and e.batches == 2 for e in history.epochs)
    assert [e.steps for e in history.epochs] == [2, 4, 6] and history.steps == 6
    assert history.epochs[0].train_loss > history.epochs[-1].train_loss
    val_losses = [e.val_loss for e in history.epochs]
    assert history.best_loss == min(val_losses) and history.best_epoch == val_losses.index(min(val_losses))
    assert history.stop_reason == "epochs"
    best = load_checkpoint(history.best_checkpoint, device="cpu")
    assert read_checkpoint(history.best_checkpoint).epoch == history.best_epoch
    assert evaluate_loss(best, train_set()[:2]) == pytest.approx(history.best_loss, abs=1e-5)
    assert len(predict(best, train_set(3), batch_size=2)) == 3
    stages = [p.stage for p in events]
    assert stages[0] == "training" and stages[-1] == "done" and stages.count("step") == 6
    assert [p.info["record"] for p in events if p.stage == "epoch"] == history.epochs
    assert [p.done for p in events if p.stage == "step"] == [1, 2, 3, 4, 5, 6]


def test_early_stopping_after_patience(tmp_path):
    model = toy_model("g-retriever")
    history = train(model, train_set(), contradicting_val_set(), fast(epochs=12, min_lr=1e-2), tmp_path)
    assert history.stop_reason == "early-stopping"
    assert len(history.epochs) == history.best_epoch + 1 + 2
    assert len(history.epochs) < 12
    assert history.best_loss == min(e.val_loss for e in history.epochs)


def test_without_validation_the_training_loss_selects(tmp_path):
    history = train(toy_model("prompt-tuning"), train_set(), [], fast(epochs=2), tmp_path)
    assert all(e.val_loss is None for e in history.epochs)
    assert history.best_loss == min(e.train_loss for e in history.epochs)


def test_gradient_accumulation_counts_optimizer_steps(tmp_path):
    history = train(toy_model("prompt-tuning"), train_set(5), [], fast(epochs=2, batch_size=2, grad_accum=2),
                    tmp_path)
    # 3 micro-batches per epoch: one full window of 2, then a short window of 1.
    assert [e.steps for e in history.epochs] == [2, 4]


def test_max_steps_caps_training(tmp_path):
    history = train(toy_model("prompt-tuning"), train_set(6), [], fast(epochs=5, max_steps=4), tmp_path)
    assert history.steps == 4 and history.stop_reason == "max-steps"
    assert [e.batches for e in history.epochs] == [3, 1]


def test_resume_continues_exactly_where_training_stopped(tmp_path):
    samples, val = train_set(6), train_set(2)
    config = fast(epochs=3, batch_size=2, grad_accum=2, seed=5)
    straight = toy_model("g-retriever-lora", seed=3)
    reference = train(straight, samples, val, config, tmp_path / "straight")

    interrupted = toy_model("g-retriever-lora", seed=3)
    first = train(interrupted, samples, val, TrainConfig(**{**config.to_dict(), "max_steps": 3}), tmp_path / "cut")
    assert first.stop_reason == "max-steps" and first.steps == 3
    resumed_model = toy_model("g-retriever-lora", seed=99)  # different initial weights: all must come from `last`
    resumed = train(resumed_model, samples, val, TrainConfig(**{**config.to_dict(), "resume": True}), tmp_path / "cut")
    assert resumed.resumed_from == tmp_path / "cut" / "last"
    assert resumed.steps == reference.steps == 6
    for (name, a), (_, b) in zip(straight.named_parameters(), resumed_model.named_parameters()):
        if a.requires_grad:
            assert torch.allclose(a, b, atol=1e-6), name
    assert resumed.epochs[-1].val_loss == pytest.approx(reference.epochs[-1].val_loss, abs=1e-6)


def test_resume_refuses_another_configuration(tmp_path):
    train(toy_model("g-retriever"), train_set(), [], fast(epochs=1), tmp_path)
    with pytest.raises(ConfigError, match="gnn"):
        train(toy_model("g-retriever", gnn="gcn"), train_set(), [], fast(epochs=2, resume=True), tmp_path)


def test_nothing_to_train_and_no_samples(tmp_path):
    with pytest.raises(ConfigError, match="inference-only"):
        train(toy_model("inference-only"), train_set(), [], fast(), tmp_path)
    with pytest.raises(InputError):
        train(toy_model("g-retriever"), [], [], fast(), tmp_path)


def test_train_config_validation():
    with pytest.raises(ConfigError, match="batch_size"):
        TrainConfig(batch_size=0)
    with pytest.raises(ConfigError, match="max_steps"):
        TrainConfig(max_steps=0)
    assert TrainConfig.from_dict(fast(seed=3).to_dict()) == fast(seed=3)
    with pytest.raises(ConfigError, match="learning_rate"):
        TrainConfig.from_dict({"learning_rate": 1.0})
    defaults = TrainConfig()
    assert (defaults.lr, defaults.weight_decay, defaults.patience, defaults.grad_clip) == (1e-5, 0.05, 2, 0.1)
    assert math.isclose(defaults.min_lr, 5e-6)

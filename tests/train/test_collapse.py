"""Collapse detection: a model that answers everything alike is flagged, one that learned is not."""

from gretriever_neo4j.train.trainer import TrainConfig, collapse_warning, evaluate, train

from model_toys import random_sample, toy_model


def test_collapse_warning_rule():
    assert collapse_warning({"support": 1.0}, {"support": 0.6, "counter": 0.4}) is not None
    assert collapse_warning({"support": 0.95}, {"support": 0.9, "counter": 0.1}) is None  # the data is like that
    assert collapse_warning({"support": 0.6, "counter": 0.4}, {"support": 0.55, "counter": 0.45}) is None
    assert collapse_warning({}, {}) is None


def test_a_toy_set_built_to_collapse_is_flagged(tmp_path):
    # Labels carry no signal the model can see (same text, random graphs), 70/30: it can only learn the prior.
    samples = [random_sample(i, 3, label="yes" if i % 10 < 7 else "no", question="well?", desc="")
               for i in range(40)]
    model = toy_model("lora", seed=0)
    history = train(model, samples[:30], samples[30:], TrainConfig(lr=1e-2, min_lr=3e-3, batch_size=5, grad_accum=1,
                                                                    epochs=4, warmup_epochs=0, patience=9), tmp_path)
    last = history.epochs[-1]
    assert last.val_predicted == {"y": 1.0} and last.val_gold == {"y": 0.7, "n": 0.3}  # the majority, for all
    assert last.collapse is not None and "100% of validation answers start with 'y'" in last.collapse


def test_a_model_that_learned_is_not_flagged(tmp_path):
    """Trains until the toy has learned its eight samples (each question says its label) — by construction, not
    by a fixed number of steps whose outcome depends on a library's numerics — then checks it is not flagged."""
    samples = [random_sample(i, 3, label="yes" if i % 2 else "no", question=f"say {'yes' if i % 2 else 'no'}")
               for i in range(8)]
    model = toy_model("lora", seed=0)
    config = TrainConfig(lr=1e-2, min_lr=1e-2, batch_size=4, grad_accum=1, epochs=4, warmup_epochs=0, patience=20)
    for round_ in range(15):
        train(model, samples, [], config, tmp_path / f"round{round_}")
        validation = evaluate(model, samples, batch_size=4)
        if validation.predicted_shares == {"n": 0.5, "y": 0.5}:
            break
    assert validation.predicted_shares == {"n": 0.5, "y": 0.5}, f"not learned in {round_ + 1} rounds"
    assert validation.collapse is None


def test_balanced_draw_gives_every_label_an_equal_share():
    from collections import Counter

    from gretriever_neo4j.train.trainer import balanced_draw

    labels = ["support"] * 70 + ["counter"] * 30
    drawn = balanced_draw(labels, seed=0, epoch=0)
    assert len(drawn) == len(labels)
    assert Counter(labels[i] for i in drawn) == {"support": 50, "counter": 50}
    assert set(i for i in drawn if labels[i] == "counter") == set(range(70, 100))  # every minority sample is seen
    assert len(set(drawn)) == 80  # majority subsampled without repeats, minority repeated
    assert drawn == balanced_draw(labels, seed=0, epoch=0) and drawn != balanced_draw(labels, seed=0, epoch=1)


def test_balancing_trains_on_an_equal_share_of_each_label(tmp_path):
    samples = [random_sample(i, 3, label="yes" if i % 10 < 7 else "no", question="well?", desc="")
               for i in range(30)]
    model = toy_model("lora", seed=0)
    seen: list[str] = []
    forward = model.forward

    def recording(batch, *args, **kwargs):
        seen.extend(batch.labels)
        return forward(batch, *args, **kwargs)

    model.forward = recording
    train(model, samples, [], TrainConfig(lr=1e-2, batch_size=5, grad_accum=1, epochs=1, warmup_epochs=0,
                                          balance_labels=True), tmp_path)
    assert sorted(seen) == ["no"] * 15 + ["yes"] * 15


def test_training_writes_its_loss_curves_beside_the_checkpoints(tmp_path):
    samples = [random_sample(i, 3, label="yes" if i % 2 else "no", question=f"say {'yes' if i % 2 else 'no'}")
               for i in range(8)]
    history = train(toy_model("lora", seed=0), samples, samples[:4],
                    TrainConfig(lr=1e-2, batch_size=4, grad_accum=1, epochs=2, warmup_epochs=0), tmp_path)
    assert history.curves == tmp_path / "curves.png"
    assert history.curves.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and history.curves.stat().st_size > 5_000


def test_graph_training_curves_have_a_line_per_model(tmp_path):
    from gretriever_neo4j.train.curves import write_loss_curves

    path = write_loss_curves({"retriever loss": [0.9, 0.5, 0.3], "reader loss": [1.2, 0.4], "generator loss": []},
                             tmp_path / "curves.png", title="gqa train --graph g")
    assert path.read_bytes()[:4] == b"\x89PNG"
    assert write_loss_curves({"retriever loss": []}, tmp_path / "none.png") is None

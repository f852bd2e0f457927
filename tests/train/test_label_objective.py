import pytest

from gretriever_neo4j.errors import ConfigError
from gretriever_neo4j.train.trainer import TrainConfig, parameter_groups, train

from kill_worker import config, samples
from model_toys import toy_model


def test_label_objective_needs_a_label_set_and_known_choices():
    with pytest.raises(ConfigError):
        TrainConfig(objective="labels")
    with pytest.raises(ConfigError):
        TrainConfig(select_on="accuracy", label_set=("support",))
    with pytest.raises(ConfigError):
        TrainConfig(objective="generate", label_set=("a", "b"))
    assert TrainConfig.from_dict(TrainConfig(label_set=["a", "b"]).to_dict()).label_set == ("a", "b")


def test_the_graph_side_learns_at_its_own_rate_and_the_llm_side_at_lr():
    model = toy_model("g-retriever-lora")
    groups = parameter_groups(model, TrainConfig(lr=1e-4, graph_lr=1e-2))
    assert [g["peak_lr"] for g in groups] == [1e-4, 1e-2]
    names = {id(p): n for n, p in model.named_parameters()}
    assert all(names[id(p)].startswith("llm.") and "lora" in names[id(p)] for p in groups[0]["params"])
    assert all(not names[id(p)].startswith("llm.") for p in groups[1]["params"])


def test_every_epoch_records_validation_accuracy_and_predicted_labels(tmp_path):
    history = train(toy_model("g-retriever", seed=3), samples(), samples()[:4], config(epochs=2), tmp_path)
    for record in history.epochs:
        assert 0.0 <= record.val_accuracy <= 1.0
        assert set(record.val_predicted) <= {"support", "counter"}
        assert record.val_gold == {"counter": 0.5, "support": 0.5}
    best = max(history.epochs, key=lambda r: r.val_accuracy)
    assert history.best_accuracy == best.val_accuracy
    assert (tmp_path / "history.json").is_file()

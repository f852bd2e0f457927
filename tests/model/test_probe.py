import torch

from gretriever_neo4j.model.probe import GraphProbe, ProbeConfig, probe_accuracy, train_probe, warm_start
from gretriever_neo4j.model.sample import QASample

from model_toys import EMBED_DIM, toy_config, toy_model

NOT = torch.randn(EMBED_DIM, generator=torch.Generator().manual_seed(7))


def stance_graph(index: int) -> QASample:
    """Nodes alike in both classes; the class is in the relations: a negated relation ('not ...') on the
    middle edge of a path of four nodes makes it 'counter'. Only a model that reads edge features can tell."""
    generator = torch.Generator().manual_seed(index)
    negated = index % 2 == 1
    x = torch.randn(4, EMBED_DIM, generator=generator)
    edges = torch.tensor([[0, 1, 2], [1, 2, 3]])
    relation = torch.randn(3, EMBED_DIM, generator=generator) * 0.3
    relation[1] += -2 * NOT if negated else 2 * NOT
    label = "counter" if negated else "support"
    return QASample(qid=f"g{index}", question="?", desc="", label=label, answers=[label], x=x,
                    edge_index=edges, edge_attr=relation)


def test_the_probe_learns_a_toy_graph_classification_set_to_100_percent():
    labels = ("support", "counter")
    train, val = [stance_graph(i) for i in range(32)], [stance_graph(100 + i) for i in range(16)]
    torch.manual_seed(0)
    probe = GraphProbe(toy_config(), len(labels))
    history = train_probe(probe, train, val, labels, ProbeConfig(lr=3e-3, epochs=60, batch_size=8, patience=60))
    assert probe_accuracy(probe, train, labels)[0] == 1.0
    assert probe_accuracy(probe, val, labels)[0] == 1.0
    assert history.best_val_accuracy == 1.0 and history.epochs[0]["seconds"] < 5


def test_warm_start_copies_the_probe_encoder_into_g_retriever():
    torch.manual_seed(1)
    probe = GraphProbe(toy_config(), 2)
    model = toy_model("g-retriever", seed=2)
    copied = warm_start(model, probe)
    assert copied and all(name.startswith("gnn.") for name in copied)
    for key, value in probe.gnn.state_dict().items():
        assert torch.equal(model.gnn.state_dict()[key], value)

import pytest
import torch

from gretriever_neo4j.errors import InputError
from gretriever_neo4j.model.sample import QASample, answers_label, collate, format_question

from model_toys import EMBED_DIM, random_sample


def empty_sample(qid="empty", width=None):
    x = torch.zeros(0, width) if width is not None else torch.empty(0)
    return QASample(qid=qid, question="q", desc="", label="a", answers=["a"], x=x, edge_index=torch.empty(0))


def test_empty_graph_is_legal():
    sample = empty_sample()
    assert (sample.node_count, sample.edge_count) == (0, 0)
    assert tuple(sample.edge_index.shape) == (2, 0)


def test_collate_mixes_empty_and_non_empty_graphs():
    batch = collate([random_sample(0, 3), empty_sample(), random_sample(1, 5), empty_sample(width=EMBED_DIM)])
    assert len(batch) == 4
    assert batch.node_counts.tolist() == [3, 0, 5, 0]
    assert tuple(batch.graph.x.shape) == (8, EMBED_DIM)
    assert batch.graph.num_graphs == 4
    assert batch.graph.batch.tolist() == [0, 0, 0, 2, 2, 2, 2, 2]
    assert batch.graph.edge_index.shape[1] == 3 + 5
    assert batch.qids == ["q0", "empty", "q1", "empty"]


def test_an_empty_graphs_declared_width_does_not_matter():
    batch = collate([random_sample(0, 2), empty_sample(width=7)])
    assert tuple(batch.graph.x.shape) == (2, EMBED_DIM)
    assert batch.node_counts.tolist() == [2, 0]


def test_collate_of_only_empty_graphs():
    batch = collate([empty_sample("a"), empty_sample("b")])
    assert batch.graph.x.shape[0] == 0
    assert batch.node_counts.tolist() == [0, 0]


def test_mixed_embedding_widths_are_refused():
    other = random_sample(0, 2)
    narrow = QASample(qid="n", question="q", desc="", label="a", answers=[], x=torch.zeros(2, 4),
                      edge_index=torch.zeros(2, 0, dtype=torch.long))
    with pytest.raises(InputError, match=r"\[4, 16\]"):
        collate([other, narrow])


@pytest.mark.parametrize("kwargs, field", [
    ({"x": torch.zeros(3)}, "x"),
    ({"edge_index": torch.zeros(3, 2, dtype=torch.long)}, "edge_index"),
    ({"edge_index": torch.tensor([[0], [7]]), "edge_attr": torch.zeros(1, 4)}, "edge_index"),
    ({"edge_index": torch.tensor([[0], [1]]), "edge_attr": None}, "edge_attr"),
    ({"edge_index": torch.tensor([[0], [1]]), "edge_attr": torch.zeros(2, 4)}, "edge_attr"),
    ({"edge_index": torch.tensor([[0], [1]]), "edge_attr": torch.zeros(1, 5)}, "edge_attr"),
    ({"x": torch.full((2, 4), float("nan"))}, "x"),
])
def test_bad_tensors_raise_input_errors_naming_the_field(kwargs, field):
    values = dict(qid="bad", question="q", desc="", label="a", answers=[], x=torch.zeros(2, 4),
                  edge_index=torch.zeros(2, 0, dtype=torch.long), edge_attr=torch.zeros(0, 4))
    values.update(kwargs)
    with pytest.raises(InputError) as caught:
        QASample(**values)
    assert caught.value.field == field
    assert "bad" in str(caught.value)


def test_reference_prompt_helpers():
    assert format_question("who?") == "Question: who?\nAnswer: "
    assert answers_label(["Paris", "Lyon"]) == "paris|lyon"

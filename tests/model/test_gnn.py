import pytest
import torch

from gretriever_neo4j.errors import ConfigError
from gretriever_neo4j.model.gnn import GraphEncoder, build_graph_encoder, mean_pool
from gretriever_neo4j.model.sample import collate

from model_toys import EMBED_DIM, random_sample


@pytest.mark.parametrize("kind", ["graph-transformer", "gat", "gcn"])
@pytest.mark.parametrize("layers", [1, 2, 4])
def test_encoders_map_nodes_to_out_dim(kind, layers):
    torch.manual_seed(0)
    encoder = build_graph_encoder(kind, in_dim=EMBED_DIM, hidden=32, out_dim=24, layers=layers, heads=4)
    batch = collate([random_sample(0, 3), random_sample(1, 4)])
    out = encoder(batch.graph.x, batch.graph.edge_index, batch.graph.edge_attr)
    assert tuple(out.shape) == (7, 24)
    assert len(encoder.convs) == layers and len(encoder.norms) == layers - 1
    assert torch.isfinite(out).all()


def test_edge_features_reach_attention_but_not_gcn():
    torch.manual_seed(0)
    batch = collate([random_sample(0, 4)])
    g = batch.graph
    for kind, should_change in (("graph-transformer", True), ("gat", True), ("gcn", False)):
        encoder = build_graph_encoder(kind, in_dim=EMBED_DIM, hidden=32, out_dim=32, layers=2, heads=4).eval()
        changed = not torch.allclose(encoder(g.x, g.edge_index, g.edge_attr),
                                     encoder(g.x, g.edge_index, g.edge_attr * 3 + 1))
        assert changed == should_change, kind


def test_single_node_batch_trains_without_batchnorm_error():
    encoder = GraphEncoder("graph-transformer", in_dim=EMBED_DIM, hidden=32, out_dim=32, layers=3, heads=4)
    encoder.train()
    batch = collate([random_sample(0, 1)])
    out = encoder(batch.graph.x, batch.graph.edge_index, batch.graph.edge_attr)
    out.sum().backward()
    assert tuple(out.shape) == (1, 32)


def test_mean_pool_gives_zero_rows_for_empty_graphs():
    nodes = torch.tensor([[1.0, 2.0], [3.0, 4.0], [10.0, 10.0]])
    pooled = mean_pool(nodes, torch.tensor([0, 0, 2]), num_graphs=4)
    assert pooled.tolist() == [[2.0, 3.0], [0.0, 0.0], [10.0, 10.0], [0.0, 0.0]]
    assert mean_pool(torch.zeros(0, 2), torch.zeros(0, dtype=torch.long), 3).tolist() == [[0.0, 0.0]] * 3


def test_transformer_width_must_split_over_heads():
    with pytest.raises(ConfigError, match="heads"):
        build_graph_encoder("graph-transformer", in_dim=8, hidden=32, out_dim=30, layers=2, heads=4)

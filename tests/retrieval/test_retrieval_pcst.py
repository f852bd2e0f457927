"""PCST: faithfulness to G-Retriever's retrieval_via_pcst, prizes, special cases."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from gretriever_neo4j.errors import InputError
from gretriever_neo4j.retrieval.candidates import CandidateGraph
from gretriever_neo4j.retrieval.pcst import (
    DEFAULTS,
    PcstParams,
    _checked_solver,
    edge_prizes,
    node_prizes,
    pcst_subgraph,
)


def transcribed_reference(x: torch.Tensor, edge_index: torch.Tensor, edge_attr: torch.Tensor, q: torch.Tensor,
                          topk: int, topk_e: int, cost_e: float) -> tuple[set[int], set[int]]:
    """A line-by-line transcription of the reference algorithm (float32 torch, as there).

    Returns (selected node indices, selected edge indices) of the original graph.
    """
    pcst_fast = _checked_solver()
    num_nodes, num_edges = x.shape[0], edge_index.shape[1]
    c = 0.01
    if num_nodes == 0 or num_edges == 0:
        return set(range(num_nodes)), set(range(num_edges))
    if topk > 0:
        n_prizes = torch.nn.CosineSimilarity(dim=-1)(q, x)
        topk = min(topk, num_nodes)
        _, top_nodes = torch.topk(n_prizes, topk, largest=True)
        n_prizes = torch.zeros_like(n_prizes)
        n_prizes[top_nodes] = torch.arange(topk, 0, -1).float()
    else:
        n_prizes = torch.zeros(num_nodes)
    if topk_e > 0:
        e_prizes = torch.nn.CosineSimilarity(dim=-1)(q, edge_attr)
        topk_e = min(topk_e, e_prizes.unique().size(0))
        top_values, _ = torch.topk(e_prizes.unique(), topk_e, largest=True)
        e_prizes[e_prizes < top_values[-1]] = 0.0
        last_value = topk_e
        for k in range(topk_e):
            indices = e_prizes == top_values[k]
            value = min((topk_e - k) / sum(indices), last_value)
            e_prizes[indices] = value
            last_value = value * (1 - c)
    else:
        e_prizes = torch.zeros(num_edges)

    costs, edges, virtual_prizes, virtual_edges, virtual_costs = [], [], [], [], []
    mapping_n, mapping_e = {}, {}
    for i, (src, dst) in enumerate(edge_index.T.numpy()):
        prize = e_prizes[i]  # a float32 tensor: comparison and subtraction below happen in float32
        if prize <= cost_e:
            mapping_e[len(edges)] = i
            edges.append((src, dst))
            costs.append(float(cost_e - prize))
        else:
            virtual_id = num_nodes + len(virtual_prizes)
            mapping_n[virtual_id] = i
            virtual_edges += [(src, virtual_id), (virtual_id, dst)]
            virtual_costs += [0, 0]
            virtual_prizes.append(float(prize - cost_e))
    prizes = np.concatenate([n_prizes.numpy().astype(np.float64), np.array(virtual_prizes, dtype=np.float64)])
    num_real = len(edges)
    vertices, chosen = pcst_fast(np.array(edges + virtual_edges, dtype=np.int64).reshape(-1, 2), prizes,
                                 np.array(costs + virtual_costs, dtype=np.float64), -1, 1, "gw", 0)
    selected_nodes = {int(v) for v in vertices if v < num_nodes}
    selected_edges = {mapping_e[int(e)] for e in chosen if e < num_real}
    selected_edges |= {mapping_n[int(v)] for v in vertices if v >= num_nodes}
    for e in selected_edges:
        selected_nodes |= {int(edge_index[0, e]), int(edge_index[1, e])}
    return selected_nodes, selected_edges


def random_case(seed: int) -> tuple[CandidateGraph, np.ndarray, PcstParams]:
    """Graphs with shared relation embeddings (tied edge similarities), isolated nodes, sometimes
    zero-vector edges (similarity exactly 0), and a spread of parameters."""
    rng = np.random.default_rng(1000 + seed)
    num_nodes = int(rng.integers(2, 40))
    num_edges = int(rng.integers(1, 80))
    used_nodes = max(1, num_nodes - int(rng.integers(0, 4)))  # the rest stay isolated
    dim = 12
    relations = rng.standard_normal((int(rng.integers(1, 8)), dim)).astype(np.float32)
    if seed % 5 == 0:
        relations[0] = 0.0
    relation = rng.integers(0, len(relations), num_edges)
    params = [PcstParams(3, 5, 0.5), PcstParams(3, 3, 0.5), PcstParams(3, 3, 1.0), PcstParams(0, 5, 0.5),
              PcstParams(5, 0, 0.5), PcstParams(50, 10, 0.3), PcstParams(1, 1, 0.05)][seed % 7]
    graph = CandidateGraph(
        node_keys=[f"k{i}" for i in range(num_nodes)],
        node_texts=[f"t{i}" for i in range(num_nodes)],
        node_embeddings=rng.standard_normal((num_nodes, dim)).astype(np.float32),
        edge_src=rng.integers(0, used_nodes, num_edges),
        edge_dst=rng.integers(0, used_nodes, num_edges),
        edge_texts=[f"r{r}" for r in relation],
        edge_embeddings=relations[relation],
    )
    return graph, rng.standard_normal(dim).astype(np.float32), params


@pytest.mark.parametrize("seed", range(56))
def test_pcst_matches_transcribed_reference(seed):
    graph, q, params = random_case(seed)
    expected_nodes, expected_edges = transcribed_reference(
        torch.from_numpy(graph.node_embeddings), torch.from_numpy(np.stack([graph.edge_src, graph.edge_dst])),
        torch.from_numpy(graph.edge_embeddings), torch.from_numpy(q), params.topk, params.topk_e, params.cost_e)
    selection = pcst_subgraph(graph, q, topk=params.topk, topk_e=params.topk_e, cost_e=params.cost_e)
    assert selection.node_indices.tolist() == sorted(expected_nodes)
    assert selection.edge_indices.tolist() == sorted(expected_edges)
    assert not selection.whole_graph


def test_random_cases_cover_ties_isolated_nodes_and_nonempty_selections():
    """Guards the faithfulness test against degenerate inputs: it must exercise what it claims to."""
    tied = isolated = zero_similarity = nonempty = 0
    for seed in range(56):
        graph, q, params = random_case(seed)
        tied += len(set(graph.edge_texts)) < graph.num_edges
        isolated += graph.num_nodes > len(set(graph.edge_src.tolist()) | set(graph.edge_dst.tolist()))
        zero_similarity += bool((graph.edge_embeddings == 0).all(axis=1).any())
        nonempty += len(pcst_subgraph(graph, q, topk=params.topk, topk_e=params.topk_e,
                                      cost_e=params.cost_e).edge_indices) > 0
    assert tied >= 40 and isolated >= 20 and zero_similarity >= 8 and nonempty >= 30


def test_edge_prize_tiers_share_value_and_decay():
    sims = np.array([0.9, 0.1, 0.9, 0.8, 0.7, 0.6])
    prizes = edge_prizes(sims, topk_e=3)
    # tier 0.9: 3 shared by 2 -> 1.5; tier 0.8: min(2, 1.5*0.99); tier 0.7: min(1, 1.485*0.99); rest 0.
    # float32 arithmetic, as the reference's tensors.
    assert prizes.tolist() == [1.5, 0.0, 1.5, float(np.float32(1.5) * np.float32(0.99)), 1.0, 0.0]
    assert prizes[3] == pytest.approx(1.485, abs=1e-7)


def test_edge_prize_tiers_never_exceed_more_than_exist():
    assert edge_prizes(np.array([0.3, 0.3, 0.3]), topk_e=5).tolist() == [float(np.float32(1 / 3))] * 3
    assert edge_prizes(np.array([0.3, 0.2]), topk_e=0).tolist() == [0.0, 0.0]


def test_edges_below_the_last_tier_join_a_tier_of_exactly_zero_as_in_the_reference():
    prizes = edge_prizes(np.array([0.5, 0.0, -0.4, -0.7]), topk_e=2)
    # -0.4 and -0.7 are zeroed first, then match the 0.0 tier: 1 shared by three edges.
    assert prizes.tolist() == [2.0] + [float(np.float32(1 / 3))] * 3


def test_node_prizes_rank_and_break_ties_by_key():
    sims = np.array([0.2, 0.9, 0.5, 0.9, 0.1])
    prizes = node_prizes(sims, ["e", "d", "c", "b", "a"], topk=3)
    assert prizes.tolist() == [0.0, 2.0, 1.0, 3.0, 0.0]
    assert node_prizes(sims, ["e", "d", "c", "b", "a"], topk=10).tolist() == [2.0, 4.0, 3.0, 5.0, 1.0]


def test_high_prize_edge_is_selected_through_its_virtual_node():
    # A path a - b - c; only the edge b->c matches the question; node a matches best.
    q = np.array([1, 0, 0, 0], dtype=np.float32)
    graph = CandidateGraph.from_records(
        [("a", "a", [0, 0, 1, 0]), ("b", "b", [0, 1, 0, 0]), ("c", "c", [0, 0, 0, 1])],
        [("a", "x", "b", [0, 0, 0, 1]), ("b", "y", "c", [1, 0, 0, 0])])
    selection = pcst_subgraph(graph, q, topk=0, topk_e=1, cost_e=0.5)
    assert selection.edge_prizes.tolist() == [0.0, 1.0]
    assert selection.node_indices.tolist() == [1, 2]
    assert selection.edge_indices.tolist() == [1]


def test_zero_prizes_return_the_whole_graph_unlike_the_solver_on_its_own():
    graph, q, _ = random_case(3)
    reference_nodes, reference_edges = transcribed_reference(
        torch.from_numpy(graph.node_embeddings), torch.from_numpy(np.stack([graph.edge_src, graph.edge_dst])),
        torch.from_numpy(graph.edge_embeddings), torch.from_numpy(q), 0, 0, 0.5)
    assert len(reference_nodes) == 1 and reference_edges == set()  # what retrieval_via_pcst would do
    selection = pcst_subgraph(graph, q, topk=0, topk_e=0, cost_e=0.5)  # what the paper does for k = 0
    assert selection.whole_graph
    assert selection.node_indices.tolist() == list(range(graph.num_nodes))
    assert selection.edge_indices.tolist() == list(range(graph.num_edges))


def test_graph_without_edges_is_returned_whole():
    graph = CandidateGraph.from_records([("a", "a", [1, 0]), ("b", "b", [0, 1])], [])
    selection = pcst_subgraph(graph, np.array([1, 0], dtype=np.float32), topk=3, topk_e=5, cost_e=0.5)
    assert selection.whole_graph
    assert selection.node_indices.tolist() == [0, 1] and selection.edge_indices.tolist() == []
    assert selection.node_prizes.tolist() == [2.0, 1.0]


def test_empty_graph():
    selection = pcst_subgraph(CandidateGraph.empty(dim=4), np.ones(4, dtype=np.float32), topk=3, topk_e=5,
                              cost_e=0.5)
    assert selection.whole_graph
    assert selection.to_dict() == {"node_indices": [], "edge_indices": [], "node_prizes": [],
                                   "edge_prizes": [], "whole_graph": True}


def test_defaults_are_the_reference_scripts_values():
    assert DEFAULTS["webqsp"] == PcstParams(topk=3, topk_e=5, cost_e=0.5)
    assert DEFAULTS["scenegraphs"] == PcstParams(topk=3, topk_e=3, cost_e=0.5)
    assert DEFAULTS["explagraphs"] == PcstParams(topk=0, topk_e=0, cost_e=0.5)


@pytest.mark.parametrize("bad", [dict(topk=-1, topk_e=0, cost_e=0.5), dict(topk=0, topk_e=-2, cost_e=0.5),
                                 dict(topk=0, topk_e=0, cost_e=float("nan"))])
def test_bad_params_name_the_field(bad):
    with pytest.raises(InputError) as error:
        PcstParams(**bad)
    assert error.value.field == next(k for k, v in bad.items() if v != dict(topk=0, topk_e=0, cost_e=0.5)[k])


def test_solver_is_sound():
    """Fails (ConfigError) where the numpy-2-broken pcst_fast 1.0.10 wheel is installed."""
    solver = _checked_solver()
    vertices, edges = solver(np.array([[0, 1], [1, 2], [2, 3]], dtype=np.int64), np.array([5.0, 0, 0, 5.0]),
                             np.array([1.0, 1.0, 1.0]), -1, 1, "gw", 0)
    assert sorted(vertices.tolist()) == [0, 1, 2, 3] and sorted(edges.tolist()) == [0, 1, 2]

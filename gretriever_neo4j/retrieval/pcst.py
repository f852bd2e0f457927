"""Prize-collecting Steiner tree subgraph selection, as G-Retriever's `retrieval_via_pcst` does it.

Faithful to the reference (XiaoxinHe/G-Retriever, src/dataset/utils/retrieval.py) in prizes, costs,
virtual nodes, solver call and edge order handed to the solver. Deliberate differences, all documented:

* Ties among node similarities are broken by node key (the reference's `torch.topk` breaks them
  arbitrarily); similarities are float64 instead of float32 (prize and cost arithmetic stays float32).
* `topk == 0 and topk_e == 0` returns the whole graph. The reference would hand the solver all-zero prizes
  and get back a single arbitrary node; the paper never does that: for ExplaGraphs (k = 0) its dataset
  class skips retrieval and uses the whole graph, which is what this reproduces.
* Selected edge indices are returned sorted; the reference lists solver-picked edges in solver order,
  then the edges that became virtual nodes. The sets are the same.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

import numpy as np

from gretriever_neo4j.errors import ConfigError, InputError
from gretriever_neo4j.retrieval.candidates import CandidateGraph
from gretriever_neo4j.retrieval.seeds import rank_top

TIER_DECAY = 0.01  # the reference's c: each prize tier is at most (1 - c) times the tier above it
ROOT = -1  # unrooted
NUM_CLUSTERS = 1
PRUNING = "gw"


@dataclass(frozen=True)
class PcstParams:
    topk: int  # nodes that get prizes k, k-1, ..., 1 by similarity rank
    topk_e: int  # distinct edge-similarity values (tiers) that get prizes
    cost_e: float  # cost of each edge

    def __post_init__(self) -> None:
        if self.topk < 0:
            raise InputError(f"must be >= 0, got {self.topk}", field="topk")
        if self.topk_e < 0:
            raise InputError(f"must be >= 0, got {self.topk_e}", field="topk_e")
        if not np.isfinite(self.cost_e) or self.cost_e < 0:
            raise InputError(f"must be a finite number >= 0, got {self.cost_e}", field="cost_e")


# From the reference's dataset scripts (src/dataset/webqsp.py, scene_graphs.py, expla_graphs.py).
# SceneGraphs' cost is 0.5 there. ExplaGraphs never runs PCST in the reference (k = 0: whole graph).
# MetaQA is not in the paper; it is a knowledge graph like WebQSP's and gets WebQSP's values.
DEFAULTS: dict[str, PcstParams] = {
    "webqsp": PcstParams(topk=3, topk_e=5, cost_e=0.5),
    "scenegraphs": PcstParams(topk=3, topk_e=3, cost_e=0.5),
    "explagraphs": PcstParams(topk=0, topk_e=0, cost_e=0.5),
    "metaqa": PcstParams(topk=3, topk_e=5, cost_e=0.5),
}


@dataclass(frozen=True, eq=False)
class Selection:
    node_indices: np.ndarray  # sorted int64 indices into the candidate graph's nodes
    edge_indices: np.ndarray  # sorted int64 indices into its edges
    node_prizes: np.ndarray  # (N,) float64, for inspection
    edge_prizes: np.ndarray  # (E,) float64, before subtracting edge costs
    whole_graph: bool  # True when a special case returned every node and edge without solving

    def to_dict(self) -> dict:
        return {
            "node_indices": self.node_indices.tolist(),
            "edge_indices": self.edge_indices.tolist(),
            "node_prizes": self.node_prizes.tolist(),
            "edge_prizes": self.edge_prizes.tolist(),
            "whole_graph": self.whole_graph,
        }


def node_prizes(similarity: np.ndarray, keys: Sequence[str], topk: int) -> np.ndarray:
    """The `topk` most similar nodes get topk, topk-1, ..., 1; all others 0."""
    prizes = np.zeros(len(keys), dtype=np.float64)
    top = rank_top(similarity, keys, topk)
    prizes[top] = np.arange(len(top), 0, -1, dtype=np.float64)
    return prizes


def edge_prizes(similarity: np.ndarray, topk_e: int) -> np.ndarray:
    """Prizes by tiers over the `topk_e` highest distinct similarity values.

    Tier k (0 = best) is worth topk_e - k, shared equally among its edges, and at most (1 - c) times the
    per-edge prize of the tier above. Edges below the lowest tier get 0. As in the reference, those edges
    are zeroed before tiers are matched, so if a tier's similarity is exactly 0 they join that tier.
    Prize arithmetic is float32 (see `build_problem`); the result is float64 holding float32 values.
    """
    prizes = np.asarray(similarity, dtype=np.float64).copy()
    if topk_e <= 0 or prizes.size == 0:
        return np.zeros_like(prizes)
    tiers = np.unique(prizes)[::-1][:topk_e]
    prizes[prizes < tiers[-1]] = 0.0
    ceiling = np.float32(len(tiers))
    for rank, tier in enumerate(tiers.tolist()):
        members = prizes == tier
        value = min(np.float32(len(tiers) - rank) / np.float32(members.sum()), ceiling)
        prizes[members] = value
        ceiling = value * np.float32(1 - TIER_DECAY)
    return prizes


@dataclass(frozen=True, eq=False)
class PcstProblem:
    """The solver's input, built as the reference builds it, plus the maps back to real edges."""

    edges: np.ndarray  # (M, 2) int64: real edges first (graph order), then two per virtual node
    prizes: np.ndarray  # (N + V,) float64
    costs: np.ndarray  # (M,) float64
    real_edges: np.ndarray  # solver edge i < len(real_edges) is graph edge real_edges[i]
    virtual_edges: np.ndarray  # solver vertex N + j stands for graph edge virtual_edges[j]
    num_nodes: int


def build_problem(edge_src: np.ndarray, edge_dst: np.ndarray, num_nodes: int, n_prizes: np.ndarray,
                  e_prizes: np.ndarray, cost_e: float) -> PcstProblem:
    """An edge whose prize exceeds its cost becomes a virtual node worth the difference, joined to both
    endpoints by free edges; every other edge costs cost_e minus its prize.

    Prizes, costs and their comparison are float32, as in the reference's torch tensors: the solver breaks
    ties between equal event times by input order, so even 1e-8 differences change which subgraph wins.
    """
    e_prizes = np.asarray(e_prizes, dtype=np.float32)
    n_prizes = np.asarray(n_prizes, dtype=np.float32)
    cost = np.float32(cost_e)
    real = np.flatnonzero(e_prizes <= cost)
    virtual = np.flatnonzero(e_prizes > cost)
    virtual_ids = num_nodes + np.arange(len(virtual), dtype=np.int64)
    virtual_pairs = np.stack([edge_src[virtual], virtual_ids, virtual_ids, edge_dst[virtual]], axis=1)
    edges = np.concatenate([np.stack([edge_src[real], edge_dst[real]], axis=1), virtual_pairs.reshape(-1, 2)])
    costs = np.concatenate([cost - e_prizes[real], np.zeros(2 * len(virtual), dtype=np.float32)])
    prizes = np.concatenate([n_prizes, e_prizes[virtual] - cost])
    return PcstProblem(edges=edges.astype(np.int64), prizes=prizes.astype(np.float64),
                       costs=costs.astype(np.float64), real_edges=real, virtual_edges=virtual,
                       num_nodes=num_nodes)


def solve(problem: PcstProblem) -> tuple[np.ndarray, np.ndarray]:
    """Selected (graph node indices, graph edge indices), both sorted."""
    pcst_fast = _checked_solver()
    vertices, solver_edges = pcst_fast(problem.edges, problem.prizes, problem.costs, ROOT, NUM_CLUSTERS,
                                       PRUNING, 0)
    vertices, solver_edges = np.asarray(vertices, np.int64), np.asarray(solver_edges, np.int64)
    n = problem.num_nodes
    picked_real = problem.real_edges[solver_edges[solver_edges < len(problem.real_edges)]]
    picked_virtual = problem.virtual_edges[vertices[vertices >= n] - n]
    edges = np.unique(np.concatenate([picked_real, picked_virtual]))
    return vertices[vertices < n], edges


def pcst_subgraph(graph: CandidateGraph, question_embedding: np.ndarray, *, topk: int, topk_e: int,
                  cost_e: float) -> Selection:
    """The connected subgraph PCST selects from `graph` for the question (see module docstring)."""
    PcstParams(topk, topk_e, cost_e)  # validates
    n_prizes = node_prizes(graph.node_similarity(question_embedding), graph.node_keys, topk)
    e_prizes = edge_prizes(graph.edge_similarity(question_embedding), topk_e)
    # As the reference: a graph without nodes or without edges is returned whole.
    if graph.num_nodes == 0 or graph.num_edges == 0 or (topk == 0 and topk_e == 0):
        return Selection(node_indices=np.arange(graph.num_nodes, dtype=np.int64),
                         edge_indices=np.arange(graph.num_edges, dtype=np.int64),
                         node_prizes=n_prizes, edge_prizes=e_prizes, whole_graph=True)
    problem = build_problem(graph.edge_src, graph.edge_dst, graph.num_nodes, n_prizes, e_prizes, cost_e)
    solver_nodes, edges = solve(problem)
    nodes = np.unique(np.concatenate([solver_nodes, graph.edge_src[edges], graph.edge_dst[edges]]))
    return Selection(node_indices=nodes.astype(np.int64), edge_indices=edges.astype(np.int64),
                     node_prizes=n_prizes, edge_prizes=e_prizes, whole_graph=False)


def pcst_with_params(graph: CandidateGraph, question_embedding: np.ndarray, params: PcstParams) -> Selection:
    return pcst_subgraph(graph, question_embedding, topk=params.topk, topk_e=params.topk_e,
                         cost_e=params.cost_e)


@cache
def _checked_solver():
    """pcst_fast, once proven to solve a known instance: the PyPI wheel of pcst_fast 1.0.10 silently returns
    garbage (every index the same) under numpy >= 2 (fraenkel-lab/pcst_fast#16)."""
    try:
        from pcst_fast import pcst_fast
    except ImportError as error:
        raise ConfigError("the PCST solver is missing: pip install pcst-fast2") from error
    path = np.array([[0, 1], [1, 2]], dtype=np.int64)
    vertices, edges = pcst_fast(path, np.array([1.0, 0.0, 1.0]), np.array([0.5, 0.5]), ROOT, NUM_CLUSTERS,
                                PRUNING, 0)
    if sorted(np.asarray(vertices).tolist()) != [0, 1, 2] or sorted(np.asarray(edges).tolist()) != [0, 1]:
        raise ConfigError("the installed pcst_fast returns corrupted results (pcst_fast 1.0.10 with "
                          "numpy >= 2); replace it: pip uninstall -y pcst_fast && pip install pcst-fast2")
    return pcst_fast

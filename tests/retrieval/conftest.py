"""Graph builders for the retrieval tests: random embeddings with fixed seeds, no encoder model."""

from __future__ import annotations

import numpy as np
import pytest

from gretriever_neo4j.retrieval.candidates import CandidateGraph

DIM = 16


def unit_rows(rng: np.random.Generator, count: int, dim: int = DIM) -> np.ndarray:
    rows = rng.standard_normal((count, dim)).astype(np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def random_kg(seed: int, num_nodes: int = 60, num_edges: int = 200, num_relations: int = 4) -> CandidateGraph:
    """A knowledge-graph-like graph: few relation texts shared by many edges (so many exact ties)."""
    rng = np.random.default_rng(seed)
    node_embeddings = unit_rows(rng, num_nodes)
    relation_embeddings = unit_rows(rng, num_relations)
    relation = rng.integers(0, num_relations, num_edges)
    return CandidateGraph(
        node_keys=[f"n{i:03d}" for i in range(num_nodes)],
        node_texts=[f"entity {i}" for i in range(num_nodes)],
        node_embeddings=node_embeddings,
        edge_src=rng.integers(0, num_nodes, num_edges),
        edge_dst=rng.integers(0, num_nodes, num_edges),
        edge_texts=[f"relation_{r}" for r in relation],
        edge_embeddings=relation_embeddings[relation],
    )


def shuffled(graph: CandidateGraph, seed: int) -> CandidateGraph:
    """The same graph with nodes and edges stored in another order."""
    rng = np.random.default_rng(seed)
    node_order = rng.permutation(graph.num_nodes)
    edge_order = rng.permutation(graph.num_edges)
    new_index = np.empty_like(node_order)
    new_index[node_order] = np.arange(graph.num_nodes)
    return CandidateGraph(
        node_keys=[graph.node_keys[i] for i in node_order],
        node_texts=[graph.node_texts[i] for i in node_order],
        node_embeddings=graph.node_embeddings[node_order],
        edge_src=new_index[graph.edge_src[edge_order]],
        edge_dst=new_index[graph.edge_dst[edge_order]],
        edge_texts=[graph.edge_texts[i] for i in edge_order],
        edge_embeddings=graph.edge_embeddings[edge_order],
    )


@pytest.fixture
def kg() -> CandidateGraph:
    return random_kg(seed=7)


@pytest.fixture
def make_kg():
    return random_kg


@pytest.fixture
def shuffle():
    return shuffled


@pytest.fixture
def make_unit_rows():
    return unit_rows

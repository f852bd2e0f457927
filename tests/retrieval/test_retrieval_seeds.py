"""Similarities and deterministic top-k ranking."""

from __future__ import annotations

import numpy as np
import pytest

from gretriever_neo4j.errors import InputError
from gretriever_neo4j.retrieval.seeds import (
    cosine_from_neo4j_score,
    cosine_to_query,
    edge_rank_key,
    rank_top,
    seed_nodes,
)


def test_cosine_matches_definition_and_zero_vector_scores_zero():
    rows = np.array([[3, 4], [0, 0], [-1, 0], [1, 1]], dtype=np.float32)
    scores = cosine_to_query(rows, np.array([1, 0], dtype=np.float32))
    assert scores.dtype == np.float64
    assert scores.tolist() == pytest.approx([0.6, 0.0, -1.0, 2 ** -0.5], abs=1e-12)


def test_identical_rows_get_bit_identical_scores(make_unit_rows):
    rng = np.random.default_rng(3)
    pool = make_unit_rows(rng, 3, 384)
    rows = pool[rng.integers(0, 3, 5000)]
    scores = cosine_to_query(rows, make_unit_rows(rng, 1, 384)[0])
    assert len(set(scores.tolist())) == 3


def test_cosine_rejects_dimension_mismatch_and_accepts_empty():
    with pytest.raises(InputError) as error:
        cosine_to_query(np.ones((2, 3), dtype=np.float32), np.ones(4, dtype=np.float32))
    assert error.value.field == "question_embedding"
    assert cosine_to_query(np.zeros((0, 3), dtype=np.float32), np.ones(4, dtype=np.float32)).shape == (0,)


def test_rank_top_orders_by_score_then_key():
    scores = [0.5, 0.9, 0.5, 0.7, 0.5]
    keys = ["d", "z", "b", "y", "c"]
    assert rank_top(scores, keys, 4).tolist() == [1, 3, 2, 4]
    assert rank_top(scores, keys, 10).tolist() == [1, 3, 2, 4, 0]
    assert rank_top(scores, keys, 0).tolist() == []


def test_rank_top_rounds_scores_so_float_noise_cannot_flip_ties():
    # Differences below 5e-7 are noise (Java vs numpy); the key decides.
    scores = [0.30000012, 0.30000004, 0.2999998]
    assert rank_top(scores, ["c", "b", "a"], 3).tolist() == [2, 1, 0]
    # Real differences still count.
    assert rank_top([0.300001, 0.300002], ["a", "b"], 2).tolist() == [1, 0]


def test_rank_top_is_independent_of_input_order():
    rng = np.random.default_rng(11)
    scores = np.round(rng.random(300), 1)  # many ties
    keys = [f"k{i:03d}" for i in range(300)]
    expected = [keys[i] for i in rank_top(scores, keys, 40)]
    order = rng.permutation(300)
    shuffled_keys = [keys[i] for i in order]
    assert [shuffled_keys[i] for i in rank_top(scores[order], shuffled_keys, 40)] == expected


def test_rank_top_empty_and_mismatch():
    assert rank_top([], [], 5).tolist() == []
    with pytest.raises(InputError):
        rank_top([0.1, 0.2], ["a"], 1)


def test_seed_nodes_orders_nodes_then_edge_endpoints_without_duplicates():
    seeds = seed_nodes(
        ["a", "b", "c", "d"], [0.9, 0.1, 0.8, 0.2],
        ["x", "c", "b", "q"], ["r", "r", "r", "s"], ["y", "w", "a", "p"], [0.5, 0.5, 0.5, 0.1],
        k_nodes=2, k_edges=3)
    # Nodes a, c; then the three tied edges by (src, text, dst): b->a, c->w, x->y.
    assert seeds == ["a", "c", "b", "w", "x", "y"]


def test_seed_nodes_empty():
    assert seed_nodes([], [], [], [], [], [], k_nodes=5, k_edges=5) == []


def test_edge_rank_key_orders_like_the_triple():
    triples = [("a", "r", "b"), ("a b", "r", "a"), ("a", "r x", "a"), ("a", "r", "a")]
    assert sorted(triples, key=lambda t: edge_rank_key(*t)) == sorted(triples)


def test_cosine_from_neo4j_score():
    assert cosine_from_neo4j_score(np.array([1.0, 0.5, 0.0])).tolist() == [1.0, 0.0, -1.0]


def test_top_edges_by_distinct_row_equals_ranking_every_edge():
    """A KG's edges share relation vectors; ranking per distinct row must equal ranking every edge, ties across
    rows with equal rounded scores included."""
    import numpy as np

    from gretriever_neo4j.retrieval.candidates import CandidateGraph
    from gretriever_neo4j.retrieval.seeds import rank_top_by_rank

    rng = np.random.default_rng(3)
    relations = np.array([[1, 1, 0], [1, 0, 1], [0, 1, 1], [0.2, 0.9, 0.1]], dtype=np.float32)  # rows 0, 1 tie for q
    keys = [f"n{i:02d}" for i in range(12)]
    src, dst, rel = rng.integers(0, 12, 60), rng.integers(0, 12, 60), rng.integers(0, 4, 60)
    graph = CandidateGraph(node_keys=keys, node_texts=keys, node_embeddings=rng.normal(size=(12, 3)).astype(np.float32),
                           edge_src=src, edge_dst=dst, edge_texts=[f"r{r}" for r in rel],
                           edge_embeddings=relations[rel])
    q = np.array([1, 0, 0], dtype=np.float32)
    for k in (0, 1, 5, 17, 40, 60, 99):
        expected = rank_top_by_rank(graph.edge_similarity(q), graph.edge_rank_key_ranks, k)
        assert graph.top_edges(q, k).tolist() == expected.tolist()


def test_prepared_rows_score_the_best_rows_exactly_and_copy_no_node_vectors():
    from gretriever_neo4j.retrieval.seeds import EXACT_TOP, PreparedRows, cosine_to_query

    rng = np.random.default_rng(5)
    matrix = rng.normal(size=(EXACT_TOP * 2 + 100, 16)).astype(np.float32)
    matrix[7] = matrix[3]  # equal vectors (two nodes with one text) must tie exactly
    prepared = PreparedRows(matrix)
    assert prepared.rows is matrix  # mostly distinct rows: the matrix is its own table
    query = rng.normal(size=16).astype(np.float32)
    got, want = prepared.cosine(query), cosine_to_query(matrix, query)
    best = np.argsort(-want)[:EXACT_TOP - 1]
    assert np.array_equal(got[best], want[best])  # seeds and prizes come from here: exact
    assert np.abs(got - want).max() < 1e-5  # the rest: float32 products
    assert got[7] == got[3]


@pytest.mark.parametrize("one_thread", [True, False])
def test_a_large_product_split_over_threads_equals_one_product(monkeypatch, one_thread):
    """Where numpy's BLAS runs one thread (`threads.one_blas_thread`), a graph of many rows is scored in parts on
    several threads; the parts are the same numbers as one product, and `PreparedRows` ranks as before."""
    from gretriever_neo4j.retrieval import seeds

    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "1" if one_thread else "2")
    monkeypatch.setattr(seeds.os, "cpu_count", lambda: 2)
    monkeypatch.setattr(seeds, "_parts", None)
    rng = np.random.default_rng(9)
    matrix = rng.normal(size=(seeds._SPLIT_ROWS + 1001, 8)).astype(np.float32)
    query = rng.normal(size=8).astype(np.float32)
    assert np.array_equal(seeds._float32_dots(matrix, query), matrix @ query)
    assert (seeds._parts is not None) == one_thread  # split only where BLAS would not spread it itself
    got, want = seeds.PreparedRows(matrix).cosine(query), seeds.cosine_to_query(matrix, query)
    best = np.argsort(-want)[:seeds.EXACT_TOP - 1]
    assert np.array_equal(got[best], want[best])

"""CandidateGraph: validation, construction, sub-graphs, stable edge ids."""

from __future__ import annotations

import numpy as np
import pytest

from gretriever_neo4j.errors import InvariantError
from gretriever_neo4j.retrieval.candidates import CandidateGraph, content_edge_id


def small_graph(**overrides) -> CandidateGraph:
    fields = dict(
        node_keys=["a", "b", "c"], node_texts=["A", "B", "C"], node_embeddings=np.eye(3, dtype=np.float32),
        edge_src=np.array([0, 1]), edge_dst=np.array([1, 2]), edge_texts=["r", "s"],
        edge_embeddings=np.eye(3, dtype=np.float32)[:2])
    fields.update(overrides)
    return CandidateGraph(**fields)


def test_valid_graph_normalises_types():
    graph = small_graph(node_embeddings=np.eye(3), edge_src=[0, 1], edge_dst=np.array([1, 2], dtype=np.int32))
    assert graph.node_embeddings.dtype == np.float32 and graph.edge_src.dtype == np.int64
    assert graph.edge_dst.dtype == np.int64
    assert (graph.num_nodes, graph.num_edges, graph.dim) == (3, 2, 3)


@pytest.mark.parametrize("overrides, field", [
    (dict(node_texts=["A", "B"]), "node_texts"),
    (dict(node_embeddings=np.eye(2, 3)), "node_embeddings"),
    (dict(edge_dst=np.array([1, 3])), "edge_dst"),
    (dict(edge_src=np.array([-1, 0])), "edge_src"),
    (dict(edge_src=np.array([0.0, 1.0])), "edge_src"),
    (dict(edge_texts=["r"]), "edge_texts"),
    (dict(edge_embeddings=np.ones((2, 4))), "edge_embeddings"),
    (dict(node_embeddings=np.full((3, 3), np.nan)), "node_embeddings"),
    (dict(node_keys=["a", "b", "a"]), "node_keys"),
    (dict(node_refs=["1"]), "node_refs"),
    (dict(edge_refs=["e", "e"]), "edge_refs"),
    (dict(node_texts=["A", None, "C"]), "node_texts"),
])
def test_invalid_graph_names_the_field(overrides, field):
    with pytest.raises(InvariantError) as error:
        small_graph(**overrides)
    assert error.value.field == field


def test_empty_graph_is_legal():
    graph = CandidateGraph.empty(dim=8)
    assert (graph.num_nodes, graph.num_edges, graph.dim) == (0, 0, 8)
    assert graph.edge_ids == [] and graph.incidence.offsets.tolist() == [0]
    bare = CandidateGraph([], [], np.zeros((0, 0)), [], [], [], np.zeros((0, 0)))
    assert bare.num_nodes == 0 and bare.subgraph([], []).num_edges == 0


def test_from_records_and_unknown_endpoint():
    graph = CandidateGraph.from_records([("a", "A", [1, 0]), ("b", "B", [0, 1])],
                                        [("a", "likes", "b", [1, 1]), ("b", "likes", "b", [1, 1])],
                                        edge_refs=["r1", "r2"])
    assert graph.edge_src.tolist() == [0, 1] and graph.edge_dst.tolist() == [1, 1]
    assert graph.edge_ids == ["r1", "r2"]
    with pytest.raises(InvariantError) as error:
        CandidateGraph.from_records([("a", "A", [1, 0])], [("a", "likes", "zz", [1, 1])])
    assert error.value.field == "edges[0]" and "'zz'" in str(error.value)
    with pytest.raises(InvariantError) as error:
        CandidateGraph.from_records([("a", "A", [1, 0]), ("b", "B", [1])], [])
    assert error.value.field == "nodes[1]"


def test_content_edge_ids_are_unique_and_order_free():
    graph = CandidateGraph.from_records(
        [("a", "A", [1.0]), ("b", "B", [1.0])],
        [("a", "r", "b", [1.0]), ("b", "r", "a", [1.0]), ("a", "r", "b", [1.0])])
    assert graph.edge_ids == [content_edge_id("a", "r", "b", 0), content_edge_id("b", "r", "a", 0),
                              content_edge_id("a", "r", "b", 1)]
    assert graph.edge_id_to_index[content_edge_id("a", "r", "b", 1)] == 2


def test_subgraph_renumbers_in_the_given_order():
    graph = small_graph(node_refs=["n0", "n1", "n2"], edge_refs=["e0", "e1"])
    sub = graph.subgraph([2, 1], [1])
    assert sub.node_keys == ["c", "b"] and sub.node_refs == ["n2", "n1"]
    assert sub.edge_src.tolist() == [1] and sub.edge_dst.tolist() == [0] and sub.edge_refs == ["e1"]
    assert sub.node_embeddings.tolist() == [[0, 0, 1], [0, 1, 0]]
    with pytest.raises(InvariantError):
        graph.subgraph([0], [0])


def test_incidence_lists_each_edge_under_both_ends_and_self_loops_once():
    graph = CandidateGraph.from_records(
        [("a", "A", [1.0]), ("b", "B", [1.0]), ("c", "C", [1.0])],
        [("a", "r", "b", [1.0]), ("b", "r", "b", [1.0]), ("c", "r", "a", [1.0])])
    incidence = graph.incidence
    edges, neighbours = incidence.of(0)
    assert edges.tolist() == [0, 2] and neighbours.tolist() == [1, 2]
    edges, neighbours = incidence.of(1)
    assert edges.tolist() == [0, 1] and neighbours.tolist() == [0, 1]
    assert incidence.of(2)[0].tolist() == [2]


def _kg_with_vectors():
    from gretriever_neo4j.retrieval.kg import KnowledgeGraph

    rng = np.random.default_rng(3)
    triples = [(f"m{i}", ("directed_by", "starred_actors", "release_year")[i % 3], f"p{i % 7}") for i in range(60)]
    kg = KnowledgeGraph.from_triples(triples)
    import dataclasses

    return dataclasses.replace(kg, node_embeddings=rng.normal(size=(kg.num_nodes, 8)).astype(np.float32),
                               relation_embeddings=rng.normal(size=(len(kg.relation_texts), 8)).astype(np.float32))


def test_a_kgs_candidate_graph_holds_one_vector_per_relation_and_reads_like_the_matrix():
    from gretriever_neo4j.retrieval.candidates import RowTable

    kg = _kg_with_vectors()
    compact = kg.to_whole_candidate_graph()
    assert isinstance(compact.edge_embeddings, RowTable)
    assert compact.edge_embeddings.table.shape == (3, 8)  # three relations, not sixty copies
    matrix = np.asarray(compact.edge_embeddings)
    assert matrix.shape == compact.edge_embeddings.shape == (60, 8)
    assert np.array_equal(matrix, kg.relation_embeddings[kg.relation])
    assert np.array_equal(compact.edge_embeddings[[5, 1]], matrix[[5, 1]])
    assert np.array_equal(compact.edge_embeddings[7], matrix[7])
    dense = CandidateGraph(node_keys=compact.node_keys, node_texts=compact.node_texts,
                           node_embeddings=compact.node_embeddings, edge_src=compact.edge_src,
                           edge_dst=compact.edge_dst, edge_texts=compact.edge_texts, edge_embeddings=matrix)
    for got, want in zip(compact.distinct_edge_embeddings, dense.distinct_edge_embeddings):
        assert np.array_equal(got, want)
    question = np.random.default_rng(4).normal(size=8).astype(np.float32)
    assert np.array_equal(compact.edge_similarity(question), dense.edge_similarity(question))
    assert np.array_equal(compact.top_edges(question, 10), dense.top_edges(question, 10))
    assert np.array_equal(compact.subgraph([0, 1], [0]).edge_embeddings, dense.subgraph([0, 1], [0]).edge_embeddings)


def test_a_row_table_refuses_rows_out_of_range():
    from gretriever_neo4j.retrieval.candidates import RowTable

    with pytest.raises(InvariantError):
        RowTable(np.zeros((2, 4), np.float32), np.asarray([0, 2]))

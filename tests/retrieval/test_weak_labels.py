"""Weak labels on hand-made knowledge graphs with exactly known answers."""

import numpy as np
import pytest

from gretriever_neo4j.errors import InputError, InvariantError
from gretriever_neo4j.retrieval.kg import UNREACHED, KnowledgeGraph
from gretriever_neo4j.retrieval.weak_labels import (
    BACKWARD,
    FORWARD,
    describe_pattern,
    path_patterns,
    pattern_edges,
    shortest_path_edges,
)

# Two shortest paths A-B-D and A-C-D (the second one against the edge's direction), a longer one A-E-F-D,
# a distractor A-G, a duplicate of A-B, and an isolated pair H-I.
DIAMOND = [
    ("A", "r1", "B"),  # 0
    ("B", "r2", "D"),  # 1
    ("A", "r1", "C"),  # 2
    ("D", "r2", "C"),  # 3  reversed: still on the undirected path A-C-D
    ("A", "r3", "E"),  # 4
    ("E", "r3", "F"),  # 5
    ("F", "r3", "D"),  # 6
    ("A", "r4", "G"),  # 7
    ("A", "r1", "B"),  # 8  duplicate triple: a second stored edge
    ("H", "r1", "I"),  # 9
]


@pytest.fixture
def diamond() -> KnowledgeGraph:
    return KnowledgeGraph.from_triples(DIAMOND)


def labelled(kg: KnowledgeGraph, sources, answers, max_hops=3):
    result = shortest_path_edges(kg, kg.indices(sources), kg.indices(answers), max_hops)
    return sorted(result.edges.tolist()), result.answers_reached


def test_csr_incidence_and_distances(diamond):
    a = diamond.key_to_index["A"]
    incident = diamond.incident(np.array([a]))
    assert sorted(incident.edge.tolist()) == [0, 2, 4, 7, 8]
    assert incident.outgoing.all()
    dist = diamond.distances(np.array([a]), 3)
    assert {key: int(dist[i]) for i, key in enumerate(diamond.node_keys)} == {
        "A": 0, "B": 1, "C": 1, "E": 1, "G": 1, "D": 2, "F": 2, "H": UNREACHED, "I": UNREACHED}
    assert dict(zip(diamond.node_keys, diamond.degree.tolist())) == {
        "A": 5, "B": 3, "C": 2, "D": 3, "E": 2, "F": 2, "G": 1, "H": 1, "I": 1}


def test_every_shortest_path_is_labelled(diamond):
    assert labelled(diamond, ["A"], ["D"]) == ([0, 1, 2, 3, 8], 1)


def test_answers_at_different_distances_take_the_union(diamond):
    assert labelled(diamond, ["A"], ["B", "D"]) == ([0, 1, 2, 3, 8], 2)
    assert labelled(diamond, ["A"], ["G"]) == ([7], 1)


def test_no_path_gives_no_labels(diamond):
    assert labelled(diamond, ["A"], ["H"]) == ([], 0)
    assert labelled(diamond, ["A"], ["D"], max_hops=1) == ([], 0)


def test_answer_that_is_the_topic_gives_no_labels(diamond):
    assert labelled(diamond, ["A"], ["A"]) == ([], 0)
    assert labelled(diamond, ["A"], ["A", "G"]) == ([7], 1)


def test_several_sources_measure_from_the_nearest(diamond):
    # From F as well, D is one hop away: only F-D is a shortest path to it.
    assert labelled(diamond, ["A", "F"], ["D"]) == ([6], 1)


def test_bad_indices_and_hops_are_input_errors(diamond):
    with pytest.raises(InputError, match="sources"):
        shortest_path_edges(diamond, [99], [0], 2)
    with pytest.raises(InputError, match="max_hops"):
        shortest_path_edges(diamond, [0], [1], -1)


# "Which years were the films that share actors with T released?" T shares actor X with M1 and M2, and the
# genre G (a hub) with M3 and M4. Every answer year is 3 hops away through X, and Y1 also through G.
MOVIES = [
    ("T", "starred", "X"),    # 0
    ("M1", "starred", "X"),   # 1
    ("M2", "starred", "X"),   # 2
    ("T", "genre", "G"),      # 3
    ("M3", "genre", "G"),     # 4
    ("M4", "genre", "G"),     # 5
    ("M1", "year", "Y1"),     # 6
    ("M2", "year", "Y2"),     # 7
    ("M3", "year", "Y1"),     # 8
    ("M4", "year", "Y3"),     # 9
    ("T", "year", "Y0"),      # 10
]


@pytest.fixture
def movies() -> KnowledgeGraph:
    return KnowledgeGraph.from_triples(MOVIES)


def test_shortest_paths_include_the_hub_detour(movies):
    result = shortest_path_edges(movies, movies.indices(["T"]), movies.indices(["Y1", "Y2"]), 3)
    assert sorted(result.edges.tolist()) == [0, 1, 2, 3, 4, 6, 7, 8]


def test_path_patterns_are_the_shortest_paths_relation_sequences(movies):
    patterns = path_patterns(movies, movies.indices(["T"]), movies.indices(["Y1", "Y2"]), 3)
    assert sorted(describe_pattern(movies, p) for p in patterns) == [
        "genre> <genre year>", "starred> <starred year>"]
    starred = movies.relation_texts.index("starred")
    assert (starred, FORWARD) in patterns[0] + patterns[1] and (starred, BACKWARD) in patterns[0] + patterns[1]


def test_pattern_labels_keep_the_pattern_that_matches_the_answers(movies):
    # starred> <starred year> reaches {Y0, Y1, Y2}: F1 = 0.8; the genre pattern reaches {Y0, Y1, Y3}: F1 = 0.4.
    result = pattern_edges(movies, movies.indices(["T"]), movies.indices(["Y1", "Y2"]), 3)
    assert sorted(result.edges.tolist()) == [0, 1, 2, 6, 7]
    assert [describe_pattern(movies, p) for p in result.patterns] == ["starred> <starred year>"]
    assert result.pattern_f1 == pytest.approx(0.8)
    assert result.answers_reached == 2


def test_pattern_labels_keep_near_ties(movies):
    result = pattern_edges(movies, movies.indices(["T"]), movies.indices(["Y1", "Y2"]), 3, keep_ratio=0.5)
    assert sorted(result.edges.tolist()) == [0, 1, 2, 3, 4, 6, 7, 8]
    assert len(result.patterns) == 2


def test_pattern_labels_without_a_path_are_empty(movies, diamond):
    assert pattern_edges(movies, movies.indices(["T"]), movies.indices(["T"]), 3).edges.size == 0
    assert pattern_edges(diamond, diamond.indices(["A"]), diamond.indices(["H"]), 3).edges.size == 0
    with pytest.raises(InputError, match="keep_ratio"):
        pattern_edges(movies, [0], [1], 3, keep_ratio=0.0)


def test_pattern_labels_on_the_diamond_keep_both_equal_paths(diamond):
    # r1> r2> reaches {D} through B (and B twice), <r2 through C: both patterns reach exactly {D}.
    result = pattern_edges(diamond, diamond.indices(["A"]), diamond.indices(["D"]), 3)
    assert sorted(result.edges.tolist()) == [0, 1, 2, 3, 8]
    assert sorted(describe_pattern(diamond, p) for p in result.patterns) == ["r1> <r2", "r1> r2>"]


# -- the in-memory KG itself -------------------------------------------------------------------------------

def test_kg_from_loader_records_merges_batches_and_keeps_isolated_nodes():
    from gretriever_neo4j.records import Edge, GraphRecord, Node, QuestionRecord

    records = [
        GraphRecord("g", "d", "kg", nodes=[Node("a", "Alpha"), Node("b", "Beta")], edges=[Edge("a", "r", "b")]),
        QuestionRecord("q1", "d", "?", ["b"], "train", "g"),
        GraphRecord("g", "d", "kg", nodes=[Node("b", "Beta"), Node("c", "Gamma")], edges=[Edge("b", "s", "c")]),
        GraphRecord("other", "d", "kg", nodes=[Node("z", "Zeta")]),
        GraphRecord("g", "d", "kg", nodes=[Node("lonely", "Lonely")]),
    ]
    kg = KnowledgeGraph.from_records(records, graph_id="g")
    assert kg.node_keys == ["a", "b", "c", "lonely"]
    assert kg.node_texts == ["Alpha", "Beta", "Gamma", "Lonely"]
    assert kg.relation_texts == ["r", "s"]
    assert kg.degree.tolist() == [1, 2, 1, 0]


def test_kg_refuses_bad_triples_and_embeddings():
    with pytest.raises(InputError, match=r"triples\[1\]"):
        KnowledgeGraph.from_triples([("a", "r", "b"), ("a", "r")])
    kg = KnowledgeGraph.from_triples([("a", "r", "b")])
    with pytest.raises(InvariantError, match="node_embeddings"):
        kg.with_embeddings(np.zeros((3, 4)), np.zeros((1, 4)))
    with pytest.raises(InvariantError, match="node_embeddings"):
        _ = kg.dim


def test_kg_to_candidate_graph_shares_relation_vectors():
    kg = KnowledgeGraph.from_triples(DIAMOND[:4]).with_embeddings(
        np.eye(4, dtype=np.float32), np.array([[1, 0, 0, 0], [0, 1, 0, 0]], dtype=np.float32))
    candidate = kg.to_candidate_graph(kg.indices(["A", "B", "D"]), np.array([0, 1]))
    assert candidate.node_keys == ["A", "B", "D"]
    assert candidate.edge_texts == ["r1", "r2"]
    assert candidate.edge_src.tolist() == [0, 1] and candidate.edge_dst.tolist() == [1, 2]
    assert candidate.edge_embeddings.tolist() == [[1, 0, 0, 0], [0, 1, 0, 0]]
    assert candidate.edge_refs == ["0", "1"]
    with pytest.raises(InvariantError, match="endpoint"):
        kg.to_candidate_graph(kg.indices(["A"]), np.array([0]))

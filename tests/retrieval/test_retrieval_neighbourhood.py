"""Bounded neighbourhood expansion: the contract in `expand`'s docstring, and the in-memory ordering."""

from __future__ import annotations

import math

import numpy as np
import pytest

from gretriever_neo4j.errors import InputError
from gretriever_neo4j.retrieval.candidates import CandidateGraph, content_edge_id
from gretriever_neo4j.retrieval.neighbourhood import (
    IncidentEdge,
    InMemoryIncidence,
    expand,
    expand_indices,
    incident_sort_key,
    order_incident,
)
from gretriever_neo4j.retrieval.seeds import cosine_to_query

Q = np.array([1, 0], dtype=np.float32)


def angle(degrees: float) -> list[float]:
    """A unit vector whose cosine to Q falls as the angle grows."""
    return [math.cos(math.radians(degrees)), math.sin(math.radians(degrees))]


def star(leaves: int, extra_edges=()) -> CandidateGraph:
    """Hub 'h' joined to leaves l0..l{n-1}; leaf i is less similar to Q the larger i is."""
    nodes = [("h", "hub", angle(90))] + [(f"l{i}", f"leaf {i}", angle(5 * i)) for i in range(leaves)]
    edges = [("h", "r", f"l{i}", angle(45)) for i in range(leaves)]
    edges += [(s, "r", d, angle(45)) for s, d in extra_edges]
    return CandidateGraph.from_records(nodes, edges)


def triples(graph: CandidateGraph, edge_ids) -> list[tuple[str, str, str]]:
    out = []
    for edge_id in edge_ids:
        e = graph.edge_id_to_index[edge_id]
        out.append((graph.node_keys[graph.edge_src[e]], graph.edge_texts[e], graph.node_keys[graph.edge_dst[e]]))
    return out


def test_hops_bound_the_distance():
    path = CandidateGraph.from_records([(k, k, angle(0)) for k in "abcde"],
                                       [(s, "next", d, angle(0)) for s, d in zip("abcd", "bcde")])
    for hops, reach in ((0, "a"), (1, "ab"), (2, "abc"), (9, "abcde")):
        nodes, edges = expand(["a"], hops, 50, 500, 2000, InMemoryIncidence(path, Q, 50))
        assert nodes == list(reach)
        assert triples(path, edges) == [(s, "next", d) for s, d in zip(reach, reach[1:])]


def test_fanout_keeps_the_best_scoring_incident_edges():
    graph = star(10)
    nodes, edges = expand(["h"], 1, 3, 500, 2000, InMemoryIncidence(graph, Q, 3))
    assert nodes == ["h", "l0", "l1", "l2"]
    assert triples(graph, edges) == [("h", "r", "l0"), ("h", "r", "l1"), ("h", "r", "l2")]


def test_max_nodes_is_honoured_and_edges_between_visited_nodes_still_count():
    graph = star(10, extra_edges=[("l0", "l1"), ("l1", "l5")])
    nodes, edges = expand(["h"], 2, 50, 3, 2000, InMemoryIncidence(graph, Q, 50))
    assert nodes == ["h", "l0", "l1"]
    assert triples(graph, edges) == [("h", "r", "l0"), ("h", "r", "l1"), ("l0", "r", "l1")]


def test_a_hop_that_begins_with_the_node_budget_spent_ranks_only_edges_inside_it():
    # Rule 6: with 'h' and 'l3' visited and the budget (2) spent, the best edges of both (to l0) cannot be kept;
    # a fanout of 1 goes to the best edge that can, h-l3, instead of being spent on an edge to l0 and keeping nothing.
    graph = star(6, extra_edges=[("l3", "l0"), ("l3", "l1")])
    for backend in (InMemoryIncidence(graph, Q, 1), None):
        if backend is None:
            nodes, edges = expand_indices(graph, [graph.key_to_index[k] for k in ("h", "l3")], 1, 1, 2, 10,
                                          graph.node_similarity(Q), graph.edge_similarity(Q))
            nodes, edges = [graph.node_keys[i] for i in nodes], [graph.edge_ids[e] for e in edges]
        else:
            nodes, edges = expand(["h", "l3"], 1, 1, 2, 10, backend)
        assert nodes == ["h", "l3"]
        assert triples(graph, edges) == [("h", "r", "l3")]
    # While the budget is not spent, a node's list is its best edges overall, whatever is visited.
    nodes, edges = expand(["h", "l3"], 1, 1, 3, 10, InMemoryIncidence(graph, Q, 1))
    assert nodes == ["h", "l3", "l0"] and triples(graph, edges) == [("h", "r", "l0"), ("l3", "r", "l0")]


def test_a_backend_is_told_what_is_visited_only_once_the_budget_is_spent():
    backend = ScriptedBackend({"s": [("e1", "s", "r", "a"), ("e2", "s", "r", "b")],
                               "a": [("e3", "a", "r", "b"), ("e4", "a", "r", "c")], "b": []})
    nodes, edges = expand(["s"], 2, 5, 3, 10, backend)
    assert backend.calls == [["s"], ["a", "b"]] and backend.within == [None, {"s", "a", "b"}]
    assert nodes == ["s", "a", "b"] and edges == ["e1", "e2", "e3"]


def test_max_edges_is_honoured_exactly():
    graph = star(10, extra_edges=[("l0", "l1")])
    for cap in range(0, 13):
        nodes, edges = expand(["h"], 2, 50, 500, cap, InMemoryIncidence(graph, Q, 50))
        assert len(edges) == min(cap, 11)
        assert nodes == ["h"] + [f"l{i}" for i in range(min(cap, 10))]


def test_incident_order_breaks_ties_by_neighbour_then_text_then_edge_id():
    same = angle(30)
    graph = CandidateGraph.from_records(
        [("h", "hub", same), ("a", "a", same), ("b", "b", same), ("c", "c", same)],
        [("h", "r2", "b", same), ("h", "r1", "b", same), ("a", "r9", "h", same), ("h", "r1", "c", same),
         ("h", "r1", "b", same), ("b", "r1", "h", same)])
    listed = InMemoryIncidence(graph, Q, 50).edges_of("h")
    assert [(e.neighbour_key, e.text, e.edge_id) for e in listed] == [
        ("a", "r9", content_edge_id("a", "r9", "h")),
        ("b", "r1", content_edge_id("b", "r1", "h")),
        ("b", "r1", content_edge_id("h", "r1", "b", 0)),
        ("b", "r1", content_edge_id("h", "r1", "b", 1)),
        ("b", "r2", content_edge_id("h", "r2", "b")),
        ("c", "r1", content_edge_id("h", "r1", "c")),
    ]
    assert [e.edge_id for e in InMemoryIncidence(graph, Q, 2).edges_of("h")] == [e.edge_id for e in listed[:2]]


def test_score_adds_edge_and_neighbour_similarity():
    # Neighbour x is closer to Q than y, but y's edge is much closer: y first.
    graph = CandidateGraph.from_records(
        [("h", "h", angle(90)), ("x", "x", angle(10)), ("y", "y", angle(40))],
        [("h", "far", "x", angle(80)), ("h", "near", "y", angle(0))])
    assert [e.neighbour_key for e in InMemoryIncidence(graph, Q, 50).edges_of("h")] == ["y", "x"]


def test_order_incident_agrees_with_in_memory_ordering(make_kg):
    graph = make_kg(seed=5, num_nodes=30, num_edges=150, num_relations=3)
    rng = np.random.default_rng(0)
    q = rng.standard_normal(graph.dim).astype(np.float32)
    incidence = InMemoryIncidence(graph, q, fanout=7)
    node_sim = cosine_to_query(graph.node_embeddings, q)
    edge_sim = cosine_to_query(graph.edge_embeddings, q)
    for key in graph.node_keys:
        edges, neighbours = graph.incidence.of(graph.key_to_index[key])
        unordered = [IncidentEdge(graph.edge_ids[e], graph.node_keys[graph.edge_src[e]],
                                  graph.node_keys[graph.edge_dst[e]], graph.edge_texts[e], graph.node_keys[n])
                     for e, n in zip(edges.tolist(), neighbours.tolist())]
        scores = (edge_sim[edges] + node_sim[neighbours]).tolist()
        reverse = list(range(len(unordered)))[::-1]
        expected = order_incident([unordered[i] for i in reverse], [scores[i] for i in reverse], 7)
        assert incidence.edges_of(key) == expected
        assert expected == sorted(unordered, key=lambda e: incident_sort_key(
            scores[unordered.index(e)], e.neighbour_key, e.text, e.edge_id))[:7]


# Unbounded, this expansion reaches 32 nodes and 42 edges; the first two cases bind one cap each.
@pytest.mark.parametrize("max_nodes, max_edges, expected", [(25, 2000, (25, 36)), (500, 30, (26, 30)),
                                                            (500, 2000, (32, 42))])
def test_expansion_is_independent_of_storage_order(make_kg, shuffle, max_nodes, max_edges, expected):
    graph = make_kg(seed=9)
    other = shuffle(graph, seed=1)
    q = np.random.default_rng(2).standard_normal(graph.dim).astype(np.float32)
    seeds = ["n000", "n017", "n042"]
    results = []
    for g in (graph, other):
        nodes, edges = expand(seeds, 2, 4, max_nodes, max_edges, InMemoryIncidence(g, q, 4))
        results.append((nodes, triples(g, edges)))
    assert results[0] == results[1]
    nodes, edges = results[0]
    assert (len(nodes), len(edges)) == expected


class CountingIncidence(InMemoryIncidence):
    """The in-memory backend, counting the nodes it listed in full and inside the visited set."""

    def __init__(self, *args):
        super().__init__(*args)
        self.full = self.inside = 0

    def __call__(self, frontier_keys, within=None):
        if within is None:
            self.full += len(frontier_keys)
        else:
            self.inside += len(frontier_keys)
        return super().__call__(frontier_keys, within)


@pytest.mark.parametrize("max_nodes, max_edges", [(6, 2000), (25, 2000), (40, 60), (500, 2000)])
def test_asking_in_parts_gives_the_same_expansion_with_fewer_full_lists(make_kg, max_nodes, max_edges):
    graph = make_kg(seed=21, num_nodes=80, num_edges=400)
    q = np.random.default_rng(3).standard_normal(graph.dim).astype(np.float32)
    seeds = ["n000", "n011", "n052"]
    whole, parts = CountingIncidence(graph, q, 4), CountingIncidence(graph, q, 4)
    expected = expand(seeds, 3, 4, max_nodes, max_edges, whole)
    assert expand(seeds, 3, 4, max_nodes, max_edges, parts, in_parts=True) == expected
    nodes, edges = expand_indices(graph, [graph.key_to_index[k] for k in seeds], 3, 4, max_nodes, max_edges,
                                  graph.node_similarity(q), graph.edge_similarity(q))
    assert ([graph.node_keys[i] for i in nodes], [graph.edge_ids[e] for e in edges]) == expected
    assert parts.full <= whole.full
    if max_nodes == 25:  # the budget runs out part way through a hop: fewer nodes are listed in full
        assert parts.full < whole.full and parts.inside > 0


class ScriptedBackend:
    """An `incident` callback over fixed, already ordered lists, recording what it was asked."""

    def __init__(self, lists: dict[str, list[tuple[str, str, str, str]]]):
        self.lists = lists
        self.calls: list[list[str]] = []
        self.within: list[set[str] | None] = []

    def __call__(self, frontier: list[str], within=None) -> dict[str, list[IncidentEdge]]:
        self.calls.append(list(frontier))
        self.within.append(None if within is None else set(within))
        listed = {key: [IncidentEdge(edge_id=i, src_key=s, dst_key=d, text=t, neighbour_key=d if s == key else s)
                        for i, s, t, d in self.lists.get(key, [])] for key in frontier}
        return {key: [e for e in edges if within is None or e.neighbour_key in within] for key, edges in listed.items()}


def test_frontiers_follow_order_of_first_visit_and_shared_edges_count_once():
    backend = ScriptedBackend({
        "s": [("e1", "s", "r", "b"), ("e2", "a", "r", "s")],
        "t": [("e3", "t", "r", "a"), ("e4", "t", "r", "c")],
        "b": [("e1", "s", "r", "b"), ("e5", "b", "r", "d")],
        "a": [("e3", "t", "r", "a"), ("e6", "a", "r", "b")],
        "c": [], "d": [("e7", "d", "r", "x")],
    })
    nodes, edges = expand(["s", "t", "s"], 2, 5, 500, 2000, backend)
    assert backend.calls == [["s", "t"], ["b", "a", "c"]]
    assert nodes == ["s", "t", "b", "a", "c", "d"]
    assert edges == ["e1", "e2", "e3", "e4", "e5", "e6"]


def test_backend_lists_longer_than_fanout_are_cut():
    backend = ScriptedBackend({"s": [(f"e{i}", "s", "r", f"n{i}") for i in range(6)]})
    nodes, edges = expand(["s"], 1, 2, 500, 2000, backend)
    assert nodes == ["s", "n0", "n1"] and edges == ["e0", "e1"]


def test_seeds_beyond_max_nodes_are_dropped_and_zero_hops_call_nothing():
    backend = ScriptedBackend({})
    assert expand(["a", "b", "c"], 2, 5, 2, 10, backend) == (["a", "b"], [])
    assert backend.calls == [["a", "b"]]
    backend = ScriptedBackend({})
    assert expand(["a"], 0, 5, 2, 10, backend) == (["a"], []) and backend.calls == []


def test_incident_edge_that_misses_its_node_is_rejected():
    with pytest.raises(InputError) as error:
        expand(["s"], 1, 5, 10, 10, ScriptedBackend({"s": [("e1", "x", "r", "y")]}))
    assert error.value.field == "incident"


def test_negative_bounds_are_rejected():
    with pytest.raises(InputError) as error:
        expand(["s"], 1, -1, 10, 10, ScriptedBackend({}))
    assert error.value.field == "fanout"


def test_empty_graph_and_no_seeds():
    empty = CandidateGraph.empty(dim=2)
    incidence = InMemoryIncidence(empty, Q, 5)
    assert incidence(["x"]) == {"x": []}
    assert expand([], 2, 5, 10, 10, incidence) == ([], [])
    assert expand(["x"], 2, 5, 10, 10, incidence) == (["x"], [])
    assert order_incident([], [], 3) == []


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("hops, fanout, max_nodes, max_edges", [(2, 3, 500, 2000), (2, 50, 12, 2000),
                                                                 (3, 5, 500, 17), (2, 0, 500, 2000), (0, 5, 500, 50)])
def test_expansion_by_index_is_the_keyed_contract(make_kg, seed, hops, fanout, max_nodes, max_edges):
    # few relation texts (exact ties) and hubs with more incident edges than the fanout
    graph = make_kg(seed, num_nodes=40, num_edges=400, num_relations=3)
    question = np.random.default_rng(seed).standard_normal(graph.node_embeddings.shape[1]).astype(np.float32)
    node_sim, edge_sim = graph.node_similarity(question), graph.edge_similarity(question)
    seeds = [graph.node_keys[i] for i in (3, 7, 3, 11)]
    keyed = expand(seeds, hops, fanout, max_nodes, max_edges, InMemoryIncidence(graph, question, fanout,
                                                                                 (node_sim, edge_sim)))
    nodes, edges = expand_indices(graph, [graph.key_to_index[k] for k in seeds], hops, fanout, max_nodes, max_edges,
                                  node_sim, edge_sim)
    assert [graph.node_keys[i] for i in nodes] == keyed[0]
    assert [graph.edge_ids[e] for e in edges] == keyed[1]

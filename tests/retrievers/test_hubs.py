"""Hubs a Neo4j-path retriever keeps (`retrievers.hubs`): ranked in memory as `cypher/neighbourhood_incident` ranks
them, let go when the graph's version moves, and bounded. The same reads through the real server, compared with
the reference path, are in tests/retrievers/test_retriever.py (`test_neo4j_path_equals_reference_path`, hub=1)."""

from __future__ import annotations

import numpy as np
import pytest

from gretriever_neo4j.retrievers.hubs import Hub, HubReads


def _row(key: str, spokes: int, texts=("likes", "knows")) -> dict:
    """A star: `key` with `spokes` edges; spoke i's vector leans towards (1, 0) as i grows."""
    incident = [{"edge_id": f"{key}-e{i}", "src": key, "dst": f"{key}-s{i}", "text": texts[i % len(texts)],
                 "neighbour": f"{key}-s{i}", "neighbour_text": f"spoke {i}", "neighbour_ref": f"{key}-n{i}",
                 "neighbour_embedding": [float(i), float(spokes - i)]} for i in range(spokes)]
    return {"key": key, "text": key.upper(), "ref": f"{key}-ref", "embedding": [1.0, 1.0], "incident": incident}


class CountingStore:
    def __init__(self):
        self.asked: list[tuple[str, ...]] = []

    def hub_incident(self, graph, keys):
        self.asked.append(tuple(keys))
        return {key: _row(key, 10) for key in keys}


def test_the_best_edges_by_text_and_far_end_cosines_with_ties_kept_in_key_order():
    hub = Hub.from_row(_row("h", 10))
    question = np.asarray([1.0, 0.0])
    best = hub.best(question, {"likes": 0.5, "knows": 0.0}, 3)
    totals = [e["edge_cos"] + e["neighbour_cos"] for e in best]
    assert totals == sorted(totals, reverse=True)
    assert [e["neighbour"] for e in best] == ["h-s8", "h-s6", "h-s4"]  # "likes" (even spokes) lifts s4 over s9
    assert best[0]["neighbour_cos"] == 8 / np.hypot(8, 2)
    assert hub.best(question, {"likes": 0.5}, 3) is None  # a text with no known cosine: Cypher scores it
    twins = Hub.from_row({**_row("t", 2), "incident": [{**e, "neighbour_embedding": [1.0, 1.0]}
                                                      for e in _row("t", 2, texts=("x",))["incident"]]})
    assert [e["neighbour"] for e in twins.best(question, {"x": 0.1}, 1)] == ["t-s0"]  # a tie: the smaller key


def test_the_edges_that_stay_inside_the_visited_nodes_with_their_text_cosines():
    hub = Hub.from_row(_row("h", 6))
    inside = hub.within({"h-s1", "h-s4", "elsewhere"}, {"likes": 0.5, "knows": 0.0})
    assert [(e["neighbour"], e["text"]) for e in inside] == [("h-s1", "knows"), ("h-s4", "likes")]
    assert inside[1]["edge_cos"] == pytest.approx(0.5) and inside[0]["edge_cos"] == pytest.approx(0.0, abs=1e-12)
    assert hub.within({"h-s1"}, {"likes": 0.5}) is None  # a text with no known cosine: Cypher scores it


def test_a_hub_is_read_once_and_let_go_when_the_graph_version_moves():
    store, hubs = CountingStore(), HubReads(hub=5)
    assert hubs.held("g", 1, ["a"]) == {}
    hubs.keep(store, "g", 1, ["a"])
    hubs.keep(store, "g", 1, ["a"])
    assert store.asked == [("a",)] and set(hubs.held("g", 1, ["a", "b"])) == {"a"}
    assert hubs.held("g", 2, ["a"]) == {}  # a write since
    hubs.keep(store, "g", 1, ["a"])  # read for a version no longer current: not kept
    assert hubs.held("g", 2, ["a"]) == {}


def test_the_least_recently_used_hubs_go_first_past_the_capacity():
    store, hubs = CountingStore(), HubReads(hub=5, capacity=25)
    hubs.keep(store, "g", 1, ["a", "b"])
    hubs.held("g", 1, ["a"])  # 'a' used last
    hubs.keep(store, "g", 1, ["c"])
    assert set(hubs.held("g", 1, ["a", "b", "c"])) == {"a", "c"}
    assert Hub.from_row({**_row("m", 3), "embedding": None}) is None  # a vector being re-embedded: not kept

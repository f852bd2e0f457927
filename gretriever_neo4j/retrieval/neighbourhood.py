"""Bounded neighbourhood expansion around seed nodes, written once for every backend.

The backend is reached only through an `incident` callback, so the in-memory reference and the Neo4j
store differ only in how they fetch (and order) incident edges, never in what expansion keeps.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Hashable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from gretriever_neo4j.errors import InputError
from gretriever_neo4j.retrieval.candidates import CandidateGraph
from gretriever_neo4j.retrieval.seeds import round_scores


@dataclass(frozen=True)
class IncidentEdge:
    edge_id: str  # the backend's stable id (Neo4j element id, or CandidateGraph.edge_ids)
    src_key: str
    dst_key: str
    text: str
    neighbour_key: str  # the endpoint that is not the frontier node (the node itself for a self-loop)


# incident(frontier, within=None): `within`, when given, is the set of visited keys and only edges whose other end
# is one of them are listed (ranked and capped the same way) — see rule 6 of `expand`.
IncidentFn = Callable[..., Mapping[str, Sequence[IncidentEdge]]]


def incident_sort_key(score: float, neighbour_key: str, text: str, edge_id: str) -> tuple:
    """The order every backend must give incident edges, as a Python sort key.

    score = cos(edge embedding, q) + cos(neighbour embedding, q), rounded to 6 decimals, descending;
    then neighbour key, edge text and edge id ascending.
    """
    return (-float(round_scores(score)), neighbour_key, text, edge_id)


def order_incident(edges: Sequence[IncidentEdge], scores: Sequence[float], fanout: int) -> list[IncidentEdge]:
    """Sort one node's incident edges by `incident_sort_key` and keep the first `fanout`.

    For a backend that fetches unordered rows with both cosines and orders them client-side.
    """
    if len(edges) != len(scores):
        raise InputError(f"{len(edges)} edges but {len(scores)} scores", field="scores")
    rounded = round_scores(scores).tolist()
    order = sorted(range(len(edges)),
                   key=lambda i: (-rounded[i], edges[i].neighbour_key, edges[i].text, edges[i].edge_id))
    return [edges[i] for i in order[:max(fanout, 0)]]


def expand(seed_keys: Sequence[str], hops: int, fanout: int, max_nodes: int, max_edges: int,
           incident: IncidentFn, *, in_parts: bool = False) -> tuple[list[str], list[str]]:
    """Grow a bounded neighbourhood around the seeds; returns (node keys, edge ids), both in order of adding.

    The contract, identical for every backend:

    1. `visited` starts as the seeds, in order, without duplicates, cut to the first `max_nodes`.
       The first frontier is `visited`.
    2. Each hop (at most `hops`) asks `incident(frontier)` for the frontier's lists. For each frontier node it
       returns the node's incident edges (both directions; a self-loop once) ordered by score =
       cos(edge embedding, q) + cos(neighbour embedding, q), rounded to 6 decimals, descending, then
       neighbour key ascending, then edge text ascending, then edge id ascending; capped to `fanout`.
       (Lists longer than `fanout` are cut here as well, so the cap holds whatever the backend returns.)
    3. Frontier nodes are processed in their order of first visit; each node's incident edges in the
       given order. An edge already kept is skipped. An edge is kept if both endpoints are visited, or if
       its new endpoint can still be added without `visited` exceeding `max_nodes`, in which case that
       endpoint is visited now and joins the next frontier. Otherwise the edge is skipped.
    4. Once `max_edges` edges are kept, nothing more is added and expansion stops.
    5. The next frontier is the nodes first visited during this hop, in order of visit; expansion stops
       early when it is empty.
    6. A frontier node whose turn comes once `visited` holds `max_nodes` nodes can add only edges between
       visited nodes, so its list is of those edges alone (`incident(nodes, within=visited)`), ranked and capped
       as in 2: its fanout is spent on edges that can be kept. (A backend then reads only the edges inside
       the neighbourhood, not every edge of a hub.)

    `incident` is asked once a hop for the whole frontier, and once more for the nodes left when the budget runs
    out part way; `in_parts`: for only as many nodes at a time as could still fill the budget, so that a backend
    lists fewer nodes in full (a database round trip per part). The result is the same.
    """
    def keyed(frontier: list[str], within: Collection[str] | None) -> Callable[[str], Iterator[tuple[str, str | None]]]:
        incident_by_node = incident(frontier) if within is None else incident(frontier, within=within)

        def pairs_of(node: str) -> Iterator[tuple[str, str | None]]:
            for edge in list(incident_by_node.get(node, ()))[:fanout]:
                yield edge.edge_id, edge.neighbour_key if node in (edge.src_key, edge.dst_key) else None
        return pairs_of

    return _grow(seed_keys, hops, fanout, max_nodes, max_edges, keyed, in_parts=in_parts)


def expand_indices(graph: CandidateGraph, seeds: Sequence[int], hops: int, fanout: int, max_nodes: int,
                   max_edges: int, node_similarity: np.ndarray, edge_similarity: np.ndarray
                   ) -> tuple[list[int], list[int]]:
    """`expand` over a CandidateGraph by node and edge index (what `InMemoryIncidence` + `expand` give, with
    keys), without key strings or edge objects per incident edge; each node's list is ranked when its turn comes."""
    def by_index(frontier: list[int], within: Collection[int] | None) -> Callable[[int], Iterator[tuple[int, int]]]:
        mask = None
        if within is not None:
            mask = np.zeros(graph.num_nodes, dtype=bool)
            mask[np.fromiter(within, dtype=np.int64, count=len(within))] = True

        def pairs_of(node: int) -> Iterator[tuple[int, int]]:
            edges, neighbours = ranked_incident(graph, node, node_similarity, edge_similarity, fanout, mask)
            return zip(edges.tolist(), neighbours.tolist())
        return pairs_of

    return _grow([int(i) for i in seeds], hops, fanout, max_nodes, max_edges, by_index)


def _grow(seeds: Sequence[Hashable], hops: int, fanout: int, max_nodes: int, max_edges: int,
          incident_pairs: Callable[[list, Collection | None], Callable[[Any], Iterable[tuple[Any, Any]]]],
          *, in_parts: bool = False) -> tuple[list, list]:
    """The contract's loop (`expand`), written once: `incident_pairs(nodes, within)` gives, for each of those
    frontier nodes, its (edge id, neighbour) pairs in the contract's order, at most `fanout` (a neighbour of None:
    the backend gave an edge that does not touch the node); `within` is the visited set once it is full (rule 6),
    else None."""
    _check_bounds(hops, fanout, max_nodes, max_edges)
    visited = dict.fromkeys(list(dict.fromkeys(seeds))[:max_nodes])
    kept: dict = {}
    frontier = list(visited)
    listed = added = 0  # frontier nodes listed in full so far, and the nodes they added (for `in_parts`)
    for _ in range(hops):
        if not frontier or len(kept) >= max_edges:
            break
        next_frontier: list = []
        done = 0
        while done < len(frontier):
            full = len(visited) >= max_nodes
            part = frontier[done:]
            if in_parts and not full:  # as many as would fill the budget at the rate seen so far
                rate = max(added / listed if listed else fanout, 1.0)
                part = part[:max(4, math.ceil((max_nodes - len(visited)) / rate))]
            pairs_of = incident_pairs(part, visited.keys() if full else None)
            for node in part:
                if not full and len(visited) >= max_nodes:
                    break  # the budget ran out within this part: the rest are listed again, inside it (rule 6)
                done += 1
                listed += not full
                before = len(visited)
                for edge, neighbour in pairs_of(node):
                    if len(kept) >= max_edges:
                        return list(visited), list(kept)
                    if edge in kept:
                        continue
                    if neighbour is None:
                        raise InputError(f"incident edge {edge!r} does not touch {node!r}", field="incident")
                    if neighbour not in visited:
                        if len(visited) >= max_nodes:
                            continue
                        visited[neighbour] = None
                        next_frontier.append(neighbour)
                    kept[edge] = None
                added += len(visited) - before
        frontier = next_frontier
    return list(visited), list(kept)


def _check_bounds(hops: int, fanout: int, max_nodes: int, max_edges: int) -> None:
    for name, value in (("hops", hops), ("fanout", fanout), ("max_nodes", max_nodes), ("max_edges", max_edges)):
        if value < 0:
            raise InputError(f"must be >= 0, got {value}", field=name)


def ranked_incident(graph: CandidateGraph, node: int, node_similarity: np.ndarray, edge_similarity: np.ndarray,
                    fanout: int, within: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """A node's incident (edge, neighbour) indices in `incident_sort_key` order (the graph's precomputed string
    ranks), the first `fanout`; with `within` (a boolean mask over nodes), only edges to those nodes. A hub's edges
    are ranked only among those scoring at or above its `fanout`-th best (ties kept, so the order is the same)."""
    edges, neighbours = graph.incidence.of(node)
    if within is not None:
        inside = within[neighbours]
        edges, neighbours = edges[inside], neighbours[inside]
    scores = round_scores(edge_similarity[edges] + node_similarity[neighbours])
    if 0 < fanout < len(edges):
        kth = np.partition(-scores, fanout - 1)[fanout - 1]
        within = np.flatnonzero(-scores <= kth)
        edges, neighbours, scores = edges[within], neighbours[within], scores[within]
    order = np.lexsort((graph.edge_id_ranks[edges], graph.edge_text_ranks[edges],
                        graph.node_key_ranks[neighbours], -scores))[:fanout]
    return edges[order], neighbours[order]


class InMemoryIncidence:
    """The `incident` callback over a CandidateGraph, ordering with numpy (used by the reference path).

    Question-independent structure (incidence lists, string ranks) is cached on the graph; build one
    instance per (graph, question).
    """

    def __init__(self, graph: CandidateGraph, question_embedding: np.ndarray, fanout: int,
                 similarities: tuple[np.ndarray, np.ndarray] | None = None):
        self.graph = graph
        self.fanout = fanout
        self.node_similarity, self.edge_similarity = similarities or (graph.node_similarity(question_embedding),
                                                                      graph.edge_similarity(question_embedding))

    def __call__(self, frontier_keys: list[str],
                 within: Collection[str] | None = None) -> dict[str, list[IncidentEdge]]:
        mask = None
        if within is not None:
            mask = np.zeros(self.graph.num_nodes, dtype=bool)
            mask[[self.graph.key_to_index[k] for k in within if k in self.graph.key_to_index]] = True
        return {key: self.edges_of(key, mask) for key in frontier_keys}

    def edges_of(self, key: str, within: np.ndarray | None = None) -> list[IncidentEdge]:
        node = self.graph.key_to_index.get(key)
        if node is None:  # like a database query for an unknown key: no rows
            return []
        graph = self.graph
        edges, neighbours = ranked_incident(graph, node, self.node_similarity, self.edge_similarity, self.fanout,
                                            within)
        return [IncidentEdge(edge_id=graph.edge_ids[e], src_key=graph.node_keys[graph.edge_src[e]],
                             dst_key=graph.node_keys[graph.edge_dst[e]], text=graph.edge_texts[e],
                             neighbour_key=graph.node_keys[n])
                for e, n in zip(edges.tolist(), neighbours.tolist())]

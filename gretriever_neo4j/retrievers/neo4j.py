"""Retrieval on Neo4j: question -> seeds (vector indexes) -> bounded neighbourhood (Cypher) -> PCST -> text.

Only data access differs from the in-memory reference (`retrieval.in_memory`): seeds come from the vector
indexes, incident edges from `cypher/neighbourhood_incident.cypher`; expansion, PCST and textualisation are
the same pure functions. Every retrieval is recorded as a `(:Retrieval)` node so that a person can open
exactly its subgraph in Neo4j Browser (`retrievers.base.Recorder`).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Collection, Mapping
from typing import Any

import numpy as np

from gretriever_neo4j.errors import DatabaseError
from gretriever_neo4j.retrieval.candidates import CandidateGraph, ScoredCandidateGraph
from gretriever_neo4j.retrieval.in_memory import RetrievalResult, retrieve_from_candidates
from gretriever_neo4j.retrieval.neighbourhood import IncidentEdge, expand, order_incident
from gretriever_neo4j.retrieval.params import RetrievalParams, params_for, with_overrides
from gretriever_neo4j.retrieval.seeds import round_scores, seed_nodes
from gretriever_neo4j.retrievers.base import Retrieval, RetrievalContext, ms_since, retried_once
from gretriever_neo4j.retrievers.hubs import HubReads

# Extra incident edges fetched per node beyond `fanout`, so that the exact client-side ordering decides
# the cut even where Java and numpy round a cosine differently in its last bits.
_FANOUT_MARGIN = 8


class StaticRetriever:
    """The paper's retrieval (seeds, bounded neighbourhood, PCST) with Neo4j doing the data access."""

    kind = "static"
    description = "static (PCST, the paper's)"

    def __init__(self, context: RetrievalContext, hubs: HubReads | None = None):
        self.context = context
        self.store, self.embedder = context.store, context.embedder
        self.hubs = hubs if hubs is not None else HubReads()
        self._relations: dict[str, _Relations] = {}
        self._relations_lock = threading.Lock()

    @retried_once
    def retrieve(self, question: str, *, graph: str | None = None, params: RetrievalParams | None = None,
                 overrides: Mapping[str, Any] | None = None, record: bool = True) -> Retrieval:
        asked = self.context.question(question)
        vector = asked.vector
        timings: dict[str, float] = {}
        graph, info = self._scope(graph, vector, timings)
        params = with_overrides(params or params_for(info["dataset"], info["kind"]), overrides)

        if params.whole_graph:
            started = time.perf_counter()
            candidate = self.whole_graph(graph)
            timings["fetch"] = ms_since(started)
            seeds: list[str] = []
        else:
            started = time.perf_counter()
            relations = self._relations_of(graph, info.get("version"))  # for seeds, neighbourhood and fetch
            relation_cos = relations.cosines(vector)
            seeds = self._seeds(vector, graph, params, relations, relation_cos)
            timings["vector_search"] = timings.get("vector_search", 0.0) + ms_since(started)
            started = time.perf_counter()
            candidate = self._neighbourhood(graph, vector, seeds, params,
                                            dict(zip(relations.texts, relation_cos.tolist())), info.get("version"))
            timings["neighbourhood"] = ms_since(started)

        result = retrieve_from_candidates(candidate, vector, params, seed_keys=seeds)
        timings["pcst"] = result.timings_ms["pcst"]
        timings["textualize"] = result.timings_ms["textualize"]
        if isinstance(candidate, ScoredCandidateGraph):
            started = time.perf_counter()
            self._fill_selected(graph, candidate, result, relations.vectors)
            timings["fetch"] = ms_since(started)
        return self.context.finish(asked, graph=graph, dataset=info["dataset"], params=params, result=result,
                                   timings_ms=timings, kind=self.kind, record=record)

    # -- stages -----------------------------------------------------------------------------------
    def _scope(self, graph: str | None, vector: np.ndarray, timings: dict[str, float]) -> tuple[str, dict]:
        """The graph to search: the one named, or else the graph of the node most similar to the question."""
        if graph is None:
            started = time.perf_counter()
            hits = self.store.seed_nodes(vector, 1, None)
            timings["vector_search"] = ms_since(started)
            if not hits:
                raise DatabaseError("no node is stored yet (or the vector index is still populating)")
            graph = hits[0]["graph"]
        info = self.context.graph_info(graph)
        self.context.check_readable(graph, info)
        return graph, info

    def _seeds(self, vector: np.ndarray, graph: str, params: RetrievalParams, relations: _Relations,
               relation_cos: np.ndarray) -> list[str]:
        nodes = self.store.seed_nodes(vector, params.seed_k, graph)
        edges = self._seed_edges(graph, relations, relation_cos, params.seed_k_edges)
        return seed_nodes([n["key"] for n in nodes], [n["cos"] for n in nodes],
                          [e["src"] for e in edges], [e["text"] for e in edges], [e["dst"] for e in edges],
                          [e["cos"] for e in edges], k_nodes=params.seed_k, k_edges=params.seed_k_edges)

    def _seed_edges(self, graph: str, relations: _Relations, cos: np.ndarray, k: int) -> list[dict[str, Any]]:
        """The contenders for the top `k` edges: the edges of a relation text tie, so it is enough to take the first
        `k` of each text (in `seeds.edge_rank_key` order) from the best texts down, a whole group of equal scores
        at a time, until `k` are in hand; `seed_nodes` ranks them. Those first edges are kept per graph version."""
        if k <= 0:
            return []
        groups: dict[float, list[str]] = {}
        for text, score in zip(relations.texts, round_scores(cos).tolist()):
            groups.setdefault(score, []).append(text)
        by_text = dict(zip(relations.texts, cos.tolist()))
        edges: list[dict[str, Any]] = []
        for score in sorted(groups, reverse=True):
            for text in groups[score]:
                edges += [{**row, "cos": by_text[text]} for row in relations.first_edges(self.store, graph, text, k)]
            if len(edges) >= k:
                break
        return edges

    def _relations_of(self, graph: str, version: Any) -> _Relations:
        """The graph's relation texts and vectors (one (:Relation) each), read again only when the graph's
        version (read with the graph's record, once a question) moved: a write since. A text they lack is scored
        in Cypher (`neighbourhood_incident`), so a table a write behind is never wrong, only slower."""
        with self._relations_lock:
            known = self._relations.get(graph)
        if known is None or known.version != version:
            known = _Relations(version, self.store.graph_relations(graph))
            with self._relations_lock:
                self._relations[graph] = known
        return known

    def _neighbourhood(self, graph: str, vector: np.ndarray, seeds: list[str], params: RetrievalParams,
                       relation_cos: Mapping[str, float] | None = None, version: Any = None) -> ScoredCandidateGraph:
        """Expansion with similarities computed in Cypher (relation texts' from `relation_cos` where given), except
        for hubs met before, ranked here from what `self.hubs` holds: no vector travels to the client for PCST."""
        unit_question = np.asarray(vector, dtype=np.float64).reshape(-1)
        unit_question = unit_question / max(float(np.linalg.norm(unit_question)), 1e-12)
        keep_hubs = version is not None and relation_cos is not None  # a version says when what is held went stale
        nodes: dict[str, tuple[str, float, str]] = {}  # key -> (text, cos, element id)
        edges: dict[str, tuple[str, str, str, float]] = {}  # ref -> (src, text, dst, cos)

        def ranked(rows: list[dict[str, Any]], neighbour_cos: Callable[[dict[str, Any]], float]) -> list[IncidentEdge]:
            """One node's rows as the contract's list (`order_incident`), their edges remembered for the result."""
            for e in rows:
                edges.setdefault(e["edge_id"], (e["src"], e["text"], e["dst"], e["edge_cos"]))
            listed = [IncidentEdge(edge_id=e["edge_id"], src_key=e["src"], dst_key=e["dst"], text=e["text"],
                                   neighbour_key=e["neighbour"]) for e in rows]
            return order_incident(listed, [e["edge_cos"] + neighbour_cos(e) for e in rows], params.fanout)

        def incident(frontier: list[str], within: Collection[str] | None = None) -> dict[str, list[IncidentEdge]]:
            if within is not None:
                return incident_within(frontier, within)
            limit = params.fanout + _FANOUT_MARGIN
            rows = {}
            held = self.hubs.held(graph, version, frontier) if keep_hubs else {}
            for key, hub in held.items():
                best = hub.best(unit_question, relation_cos, limit)
                if best is not None:  # else an edge text is newer than the client's table: Cypher scores it
                    rows[key] = {"text": hub.text, "cos": hub.cos(unit_question), "ref": hub.ref, "incident": best}
            read = self.store.incident_edges(graph, [key for key in frontier if key not in rows], vector, limit,
                                             relation_cos)
            rows.update(read)
            for key, row in rows.items():
                nodes[key] = (row["text"], row["cos"], row["ref"])
                for e in row["incident"]:
                    nodes.setdefault(e["neighbour"], (e["neighbour_text"], e["neighbour_cos"], e["neighbour_ref"]))
            ranked_rows = {key: ranked(rows[key]["incident"], lambda e: e["neighbour_cos"])
                           for key in frontier if key in rows}
            met = [key for key, row in read.items() if row["degree"] >= self.hubs.hub]
            if met and keep_hubs:
                self.hubs.keep(self.store, graph, version, met)  # for the questions after this one
            return ranked_rows

        def incident_within(frontier: list[str], within: Collection[str]) -> dict[str, list[IncidentEdge]]:
            """Rule 6 of `expand`: a visited node was listed by an earlier hop with its cosine (seeds that filled
            the budget alone are scored here), so only the edges inside the neighbourhood are read, and ranked here."""
            unscored = [key for key in within if key not in nodes]
            nodes.update({key: (row["text"], row["cos"], row["ref"])
                          for key, row in self.store.scored_nodes(graph, unscored, vector).items()})
            inside = [k for k in within if k in nodes]
            rows = {}
            if keep_hubs:  # a hub's edges are all held: those that stay inside are picked here, not read again
                inside_set = set(inside)
                for key, hub in self.hubs.held(graph, version, frontier).items():
                    listed = hub.within(inside_set, relation_cos)
                    if listed is not None:
                        rows[key] = listed
            rows.update(self.store.incident_edges_within(graph, [key for key in frontier if key not in rows],
                                                         [nodes[key][2] for key in inside], vector, relation_cos))
            return {key: ranked(listed, lambda e: nodes[e["neighbour"]][1]) for key, listed in rows.items()}

        node_keys, edge_ids = expand(seeds, params.hops, params.fanout, params.max_nodes, params.max_edges, incident,
                                     in_parts=True)
        unscored = [key for key in node_keys if key not in nodes]
        nodes.update({key: (row["text"], row["cos"], row["ref"])
                      for key, row in self.store.scored_nodes(graph, unscored, vector).items()})
        node_keys = [key for key in node_keys if key in nodes]  # a seed deleted meanwhile has no row
        index = {key: i for i, key in enumerate(node_keys)}
        dim = self.embedder.dim
        return ScoredCandidateGraph(
            node_keys=node_keys, node_texts=[nodes[k][0] for k in node_keys],
            node_embeddings=np.zeros((len(node_keys), dim), dtype=np.float32),
            edge_src=np.asarray([index[edges[e][0]] for e in edge_ids], dtype=np.int64),
            edge_dst=np.asarray([index[edges[e][2]] for e in edge_ids], dtype=np.int64),
            edge_texts=[edges[e][1] for e in edge_ids],
            edge_embeddings=np.zeros((len(edge_ids), dim), dtype=np.float32),
            node_refs=[nodes[k][2] for k in node_keys], edge_refs=list(edge_ids),
            node_scores=[nodes[k][1] for k in node_keys], edge_scores=[edges[e][3] for e in edge_ids])

    def _fill_selected(self, graph: str, candidate: ScoredCandidateGraph, result: RetrievalResult,
                       relation_vectors: Mapping[str, Any]) -> None:
        """Vectors (and element ids) of the selected nodes and edges only: what generation reads."""
        sub = result.subgraph
        keys = [candidate.node_keys[i] for i in sub.node_indices]
        refs = [candidate.edge_refs[i] for i in sub.edge_indices]
        node_rows = {row["key"]: row for row in self.store.graph_nodes(graph, keys)}
        edge_rows = {row["ref"]: row for row in self.store.graph_edges(graph, refs, relation_vectors)}
        candidate.fill_embeddings({i: node_rows[k]["embedding"] for i, k in zip(sub.node_indices, keys)},
                                  {i: edge_rows[r]["embedding"] for i, r in zip(sub.edge_indices, refs)})

    def whole_graph(self, graph: str) -> CandidateGraph:
        """A stored graph held in memory with its vectors, as the reference path (and per-sample retrieval) reads it."""
        nodes = self.store.graph_nodes(graph)
        edges = self.store.graph_edges(graph)
        return CandidateGraph.from_records(
            [(n["key"], n["text"], n["embedding"]) for n in nodes],
            [(e["src"], e["text"], e["dst"], e["embedding"]) for e in edges],
            dim=self.embedder.dim, node_refs=[n["ref"] for n in nodes], edge_refs=[e["ref"] for e in edges])


class _Relations:
    """One graph's relation texts with unit vectors, and the first edges of each text in tie-break order, fetched
    as seeds ask for them; valid for one graph version."""

    MIN_FIRST = 16  # edges fetched per text at least, so that a larger seed_k_edges rarely needs a second read

    def __init__(self, version: Any, vectors: Mapping[str, Any]):
        self.version = version
        self.vectors = {t: v for t, v in vectors.items() if v is not None}  # as stored, for the selected edges
        self.texts = sorted(self.vectors)
        rows = np.asarray([vectors[t] for t in self.texts], dtype=np.float64)
        rows = rows.reshape(len(self.texts), -1) if self.texts else np.zeros((0, 0))  # a graph without edges
        self.rows = rows / np.maximum(np.linalg.norm(rows, axis=1, keepdims=True), 1e-12)
        self._first: dict[str, tuple[list[dict[str, Any]], bool]] = {}  # text -> (first edges, all of them?)
        self._lock = threading.Lock()

    def cosines(self, vector: np.ndarray) -> np.ndarray:
        if not self.texts:
            return np.zeros(0)
        query = np.asarray(vector, dtype=np.float64).reshape(-1)
        return self.rows @ (query / max(float(np.linalg.norm(query)), 1e-12))

    def first_edges(self, store, graph: str, text: str, k: int) -> list[dict[str, Any]]:
        with self._lock:
            rows, complete = self._first.get(text, ([], False))
        if len(rows) < k and not complete:
            asked = max(k, self.MIN_FIRST)
            rows = store.relation_edges(graph, text, asked)
            with self._lock:
                self._first[text] = (rows, len(rows) < asked)
        return rows[:k]

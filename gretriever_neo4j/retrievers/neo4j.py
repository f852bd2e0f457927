"""Retrieval on Neo4j: question -> seeds (vector indexes) -> bounded neighbourhood (Cypher) -> PCST -> text.

Only data access differs from the in-memory reference (`retrieval.in_memory`): seeds come from the vector
indexes, incident edges from `cypher/neighbourhood_incident.cypher`; expansion, PCST and textualisation are
the same pure functions. Every retrieval is recorded as a `(:Retrieval)` node so that a person can open
exactly its subgraph in Neo4j Browser.
"""

from __future__ import annotations

import json
import time
import urllib.parse
import uuid
from dataclasses import dataclass, field, replace

import numpy as np

from gretriever_neo4j import cypher
from gretriever_neo4j.errors import ConfigError, DatabaseError, InputError, unknown_graph
from gretriever_neo4j.retrieval.candidates import CandidateGraph, ScoredCandidateGraph
from gretriever_neo4j.retrieval.neighbourhood import IncidentEdge, expand, order_incident
from gretriever_neo4j.retrieval.pcst import DEFAULTS
from gretriever_neo4j.retrieval.in_memory import RetrievalParams, RetrievalResult, params_to_dict, retrieve_from_candidates
from gretriever_neo4j.retrieval.seeds import seed_nodes
from gretriever_neo4j.retrieval.textualize import count_tokens
from gretriever_neo4j.store.graph_store import GraphStore

# Extra incident edges fetched per node beyond `fanout`, so that the exact client-side ordering decides
# the cut even where Java and numpy round a cosine differently in its last bits.
_FANOUT_MARGIN = 8


def params_for(dataset: str | None, kind: str | None) -> RetrievalParams:
    """The paper's settings: per-sample graphs are searched whole, knowledge graphs expanded from seeds."""
    pcst = DEFAULTS.get(dataset or "", DEFAULTS["webqsp"])
    return RetrievalParams(pcst=pcst, whole_graph=kind == "per-sample")


@dataclass
class Retrieval:
    """A retrieval as the user sees it: the result plus where to look at it in Neo4j Browser."""

    id: str
    question: str
    graph: str
    dataset: str
    params: RetrievalParams
    result: RetrievalResult
    timings_ms: dict[str, float]
    tokens: int
    warnings: list[str] = field(default_factory=list)
    browser_url: str = ""
    browser_statement: str = ""
    retriever: str = "static"  # which retriever made it: "static" (the paper's PCST) or "learned"

    @property
    def text(self) -> str:
        return self.result.text

    def to_dict(self) -> dict:
        sub = self.result.subgraph
        return {
            "id": self.id,
            "question": self.question,
            "graph": self.graph,
            "dataset": self.dataset,
            "retriever": self.retriever,
            "params": params_to_dict(self.params),
            "nodes": [{"id": i, "key": key, "text": self.result.candidate.node_texts[index], "ref": ref}
                      for i, (key, index, ref) in enumerate(zip(sub.node_keys, sub.node_indices,
                                                                sub.node_refs or [None] * len(sub.node_keys)))],
            "edges": [{"src": e.src, "text": e.text, "dst": e.dst, "ref": e.ref} for e in sub.edges],
            "seeds": list(self.result.seed_keys),
            "textualized": self.text,
            "tokens": self.tokens,
            "timings_ms": self.timings_ms,
            "warnings": self.warnings,
            "browser_url": self.browser_url,
            "browser_statement": self.browser_statement,
        }


class Retriever:
    def __init__(self, store: GraphStore, embedder, *, browser_url: str | None = None):
        self.store = store
        self.embedder = embedder
        self.browser_url = browser_url
        self._checked_schema = False

    def retrieve(self, question: str, *, graph: str | None = None, params: RetrievalParams | None = None,
                 record: bool = True, **overrides) -> Retrieval:
        """`overrides` replace single fields of the graph's default parameters (seed_k, hops, fanout, …)."""
        if not isinstance(question, str) or not question.strip():
            raise InputError("the question is empty", field="question")
        question = question.strip()
        self._check_schema()
        timings: dict[str, float] = {}
        warnings: list[str] = []

        started = time.perf_counter()
        query = self.embedder.embed_query(question)
        timings["embed"] = _ms(started)
        if query.truncated:
            warnings.append(f"the question has {query.tokens} tokens; the embedder reads only the first "
                            f"{self.embedder.max_seq_length}")
        vector = query.vector

        graph, info = self._scope(graph, vector, timings)
        if params is None:
            params = params_for(info["dataset"], info["kind"])
        if overrides:
            params = replace(params, **{k: v for k, v in overrides.items() if v is not None})

        if params.whole_graph:
            started = time.perf_counter()
            candidate = self.whole_graph(graph)
            timings["fetch"] = _ms(started)
            seeds: list[str] = []
        else:
            started = time.perf_counter()
            seeds = self._seeds(vector, graph, params)
            timings["vector_search"] = timings.get("vector_search", 0.0) + _ms(started)
            started = time.perf_counter()
            candidate = self._neighbourhood(graph, vector, seeds, params)
            timings["neighbourhood"] = _ms(started)

        result = retrieve_from_candidates(candidate, vector, params, seed_keys=seeds)
        timings["pcst"] = result.timings_ms["pcst"]
        timings["textualize"] = result.timings_ms["textualize"]
        if isinstance(candidate, ScoredCandidateGraph):
            started = time.perf_counter()
            self._fill_selected(graph, candidate, result)
            timings["fetch"] = _ms(started)
        tokens = count_tokens(result.text, getattr(self.embedder, "tokenizer", None))
        timings["total"] = sum(timings.values())

        retrieval = Retrieval(id=f"r-{uuid.uuid4().hex[:12]}", question=question, graph=graph,
                              dataset=info["dataset"], params=params,
                              result=result, timings_ms=timings, tokens=tokens, warnings=warnings)
        if record:
            self._record(retrieval)
        return retrieval

    # -- stages -----------------------------------------------------------------------------------
    def _check_schema(self) -> None:
        if self._checked_schema:
            return
        stored = self.store.embedder_info()
        if stored is None:
            raise DatabaseError("the database holds no graph yet: load one with `gqa ingest …`")
        name, dim = stored
        if dim != self.embedder.dim:
            raise ConfigError(f"the stored vectors are {dim}-d ('{name}'), the embedder '{self.embedder.name}' "
                              f"makes {self.embedder.dim}-d ones: use --embedder '{name}'")
        self._checked_schema = True

    def _scope(self, graph: str | None, vector: np.ndarray, timings: dict[str, float]) -> tuple[str, dict]:
        """The graph to search: the one named, or else the graph of the node most similar to the question."""
        if graph is None:
            started = time.perf_counter()
            hits = self.store.seed_nodes(vector, 1, None)
            timings["vector_search"] = _ms(started)
            if not hits:
                raise DatabaseError("no node is stored yet (or the vector index is still populating)")
            graph = hits[0]["graph"]
        info = self.store.graph_info(graph)
        if info is None:
            raise unknown_graph(graph)
        return graph, info

    def _seeds(self, vector: np.ndarray, graph: str, params: RetrievalParams) -> list[str]:
        nodes = self.store.seed_nodes(vector, params.seed_k, graph)
        edges = self.store.seed_edges(vector, params.seed_k_edges, graph)
        return seed_nodes([n["key"] for n in nodes], [n["cos"] for n in nodes],
                          [e["src"] for e in edges], [e["text"] for e in edges], [e["dst"] for e in edges],
                          [e["cos"] for e in edges], k_nodes=params.seed_k, k_edges=params.seed_k_edges)

    def _neighbourhood(self, graph: str, vector: np.ndarray, seeds: list[str],
                       params: RetrievalParams) -> ScoredCandidateGraph:
        """Expansion with similarities computed in Cypher: no vector travels to the client for PCST."""
        nodes: dict[str, tuple[str, float, str]] = {}  # key -> (text, cos, element id)
        edges: dict[str, tuple[str, str, str, float]] = {}  # ref -> (src, text, dst, cos)

        def incident(frontier: list[str]) -> dict[str, list[IncidentEdge]]:
            rows = self.store.incident_edges(graph, frontier, vector, params.fanout + _FANOUT_MARGIN)
            ordered = {}
            for key, row in rows.items():
                nodes[key] = (row["text"], row["cos"], row["ref"])
                for e in row["incident"]:
                    nodes.setdefault(e["neighbour"], (e["neighbour_text"], e["neighbour_cos"], e["neighbour_ref"]))
                    edges.setdefault(e["edge_id"], (e["src"], e["text"], e["dst"], e["edge_cos"]))
                incident_edges = [IncidentEdge(edge_id=e["edge_id"], src_key=e["src"], dst_key=e["dst"],
                                               text=e["text"], neighbour_key=e["neighbour"]) for e in row["incident"]]
                ordered[key] = order_incident(incident_edges, [e["edge_cos"] + e["neighbour_cos"]
                                                               for e in row["incident"]], params.fanout)
            return ordered

        node_keys, edge_ids = expand(seeds, params.hops, params.fanout, params.max_nodes, params.max_edges, incident)
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

    def _fill_selected(self, graph: str, candidate: ScoredCandidateGraph, result: RetrievalResult) -> None:
        """Vectors (and element ids) of the selected nodes and edges only: what generation reads."""
        sub = result.subgraph
        keys = [candidate.node_keys[i] for i in sub.node_indices]
        refs = [candidate.edge_refs[i] for i in sub.edge_indices]
        node_rows = {row["key"]: row for row in self.store.graph_nodes(graph, keys)}
        edge_rows = {row["ref"]: row for row in self.store.graph_edges(graph, refs)}
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

    def _record(self, retrieval: Retrieval) -> None:
        sub = retrieval.result.subgraph
        if sub.node_refs is not None:
            node_refs = list(sub.node_refs)
        else:
            found = self.store.node_refs(retrieval.graph, sub.node_keys)
            node_refs = [found[k] for k in sub.node_keys if k in found]
        self.store.record_retrieval(
            id=retrieval.id, question=retrieval.question, graph=retrieval.graph,
            params=json.dumps(params_to_dict(retrieval.params)), node_refs=node_refs,
            rel_refs=[e.ref for e in sub.edges if e.ref is not None], textualized=retrieval.text,
            timings=json.dumps(retrieval.timings_ms))
        retrieval.browser_statement = browser_statement(retrieval.id)
        if self.browser_url:
            retrieval.browser_url = browser_link(self.browser_url, retrieval.browser_statement)


def browser_statement(retrieval_id: str) -> str:
    """The statement that shows exactly one retrieval's subgraph; the id is ours (hex), written as a literal
    so that it can be pasted into Browser as it is."""
    if not retrieval_id.replace("-", "").isalnum():
        raise InputError(f"not a retrieval id: {retrieval_id!r}", field="retrieval id")
    return cypher.load("retrieval_subgraph").text.replace("$id", json.dumps(retrieval_id))


def browser_link(browser_url: str, statement: str) -> str:
    """Neo4j Browser opens with the statement in its editor (`?cmd=edit&arg=…`)."""
    return f"{browser_url.rstrip('/')}/?cmd=edit&arg={urllib.parse.quote(statement)}"


def _ms(started: float) -> float:
    return (time.perf_counter() - started) * 1000.0

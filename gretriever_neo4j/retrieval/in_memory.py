"""The whole retrieval over an in-memory graph: seeds -> bounded neighbourhood -> PCST -> text.

This is the reference the Neo4j path is checked against. Only data access differs there: it finds seeds
with vector indexes (then `seed_nodes`), expands with its own `incident` callback (then `expand`), fetches
the candidate graph, and hands it to `retrieve_from_candidates`, exactly as `retrieve` does here.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np

from gretriever_neo4j.retrieval.candidates import CandidateGraph
from gretriever_neo4j.retrieval.neighbourhood import expand_indices
from gretriever_neo4j.retrieval.params import RetrievalParams
from gretriever_neo4j.retrieval.pcst import Selection, pcst_with_params
from gretriever_neo4j.retrieval.seeds import rank_top_by_rank
from gretriever_neo4j.retrieval.textualize import TextualizedSubgraph, textualize

STAGES = ("seeds", "neighbourhood", "pcst", "textualize")


@dataclass(frozen=True, eq=False)
class RetrievalResult:
    seed_keys: list[str]
    candidate: CandidateGraph
    selection: Selection
    subgraph: TextualizedSubgraph
    timings_ms: dict[str, float]
    # (relation text, direction) steps whose values are categories, when the question asks for one
    categorical: frozenset[tuple[str, int]] = frozenset()

    @property
    def text(self) -> str:
        return self.subgraph.text

    def to_dict(self) -> dict:
        """JSON-serialisable; the candidate graph without its embeddings."""
        candidate = self.candidate
        return {
            "seed_keys": list(self.seed_keys),
            "candidate": {
                "node_keys": list(candidate.node_keys),
                "node_texts": list(candidate.node_texts),
                "node_refs": None if candidate.node_refs is None else list(candidate.node_refs),
                "edges": [{"src": int(s), "text": t, "dst": int(d),
                           "ref": None if candidate.edge_refs is None else candidate.edge_refs[i]}
                          for i, (s, t, d) in enumerate(zip(candidate.edge_src.tolist(), candidate.edge_texts,
                                                             candidate.edge_dst.tolist()))],
            },
            "selection": self.selection.to_dict(),
            "subgraph": self.subgraph.to_dict(),
            "timings_ms": {stage: float(ms) for stage, ms in self.timings_ms.items()},
        }


@contextmanager
def _timed(timings: dict[str, float], stage: str) -> Iterator[None]:
    start = time.perf_counter()
    yield
    timings[stage] = timings.get(stage, 0.0) + (time.perf_counter() - start) * 1000.0


def find_seeds(graph: CandidateGraph, question_embedding: np.ndarray, params: RetrievalParams,
               similarities: tuple[np.ndarray, np.ndarray] | None = None) -> list[str]:
    """Seed keys by exhaustive similarity over the whole graph (the Neo4j path asks its vector indexes); the
    order of `seeds.seed_nodes`, ties broken by precomputed key ranks."""
    node_sim, edge_sim = similarities or (graph.node_similarity(question_embedding),
                                          graph.edge_similarity(question_embedding))
    keys = graph.node_keys
    top_nodes = rank_top_by_rank(node_sim, graph.node_key_ranks, params.seed_k)
    if params.seed_k_edges <= 0 or not graph.num_edges:
        top_edges = np.zeros(0, dtype=np.int64)
    elif similarities is not None and len(graph.prepared_edges.rows) < graph.num_edges // 2:
        top_edges = graph.top_edges(question_embedding, params.seed_k_edges)  # blocks of tied relation edges
    else:
        top_edges = rank_top_by_rank(edge_sim, graph.edge_rank_key_ranks, params.seed_k_edges)
    ordered = [keys[i] for i in top_nodes.tolist()]
    for e in top_edges.tolist():
        ordered += [keys[int(graph.edge_src[e])], keys[int(graph.edge_dst[e])]]
    return list(dict.fromkeys(ordered))


def candidate_graph(graph: CandidateGraph, question_embedding: np.ndarray, seed_keys: list[str],
                    params: RetrievalParams, similarities: tuple[np.ndarray, np.ndarray] | None = None
                    ) -> CandidateGraph:
    """The bounded neighbourhood of the seeds, nodes and edges in the order `expand` added them."""
    node_similarity, edge_similarity = similarities or (graph.node_similarity(question_embedding),
                                                        graph.edge_similarity(question_embedding))
    nodes, edges = expand_indices(graph, [graph.key_to_index[k] for k in seed_keys], params.hops, params.fanout,
                                  params.max_nodes, params.max_edges, node_similarity, edge_similarity)
    return graph.subgraph(nodes, edges)


def retrieve_from_candidates(candidate: CandidateGraph, question_embedding: np.ndarray,
                             params: RetrievalParams, *, seed_keys: list[str],
                             timings_ms: dict[str, float] | None = None) -> RetrievalResult:
    """PCST and textualisation over a candidate graph, however it was obtained."""
    timings = dict(timings_ms or {})
    with _timed(timings, "pcst"):
        selection = pcst_with_params(candidate, question_embedding, params.pcst)
    with _timed(timings, "textualize"):
        subgraph = textualize(candidate, selection.node_indices, selection.edge_indices)
    return RetrievalResult(seed_keys=list(seed_keys), candidate=candidate, selection=selection,
                           subgraph=subgraph, timings_ms={stage: timings.get(stage, 0.0) for stage in STAGES})


def retrieve(graph: CandidateGraph, question_embedding: np.ndarray, params: RetrievalParams) -> RetrievalResult:
    """Retrieve the subgraph of `graph` relevant to the question and its text for the LLM."""
    question_embedding = np.asarray(question_embedding, dtype=np.float32).reshape(-1)
    timings: dict[str, float] = {}
    if params.whole_graph:
        seed_keys: list[str] = []
        candidate = graph
    else:
        with _timed(timings, "seeds"):
            similarities = (graph.node_similarity(question_embedding), graph.edge_similarity(question_embedding))
            seed_keys = find_seeds(graph, question_embedding, params, similarities)
        with _timed(timings, "neighbourhood"):
            candidate = candidate_graph(graph, question_embedding, seed_keys, params, similarities)
    return retrieve_from_candidates(candidate, question_embedding, params, seed_keys=seed_keys,
                                    timings_ms=timings)

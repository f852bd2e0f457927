"""Inference with a trained scorer (`LearnedRetriever`): seeds by linking, the bounded beam hop by hop
(`beam` -> `BeamResult`), the budget's connected edges (`choose`/`select`), and the paper's `RetrievalResult`
with per-stage timings (`LEARNED_STAGES`)."""

from __future__ import annotations

import copy
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from gretriever_neo4j.errors import ConfigError, InputError
from gretriever_neo4j.retrieval.in_memory import RetrievalResult
from gretriever_neo4j.retrieval.kg import UNREACHED
from gretriever_neo4j.retrieval.learned.checkpoint import load_checkpoint
from gretriever_neo4j.retrieval.learned.config import RetrieverConfig
from gretriever_neo4j.retrieval.learned.scorer import ScorerWeights, scoring_text, structure_features
from gretriever_neo4j.retrieval.learned.sources import KnowledgeGraphSource, as_source
from gretriever_neo4j.retrieval.linking import MentionPrior, link_seeds
from gretriever_neo4j.retrieval.pcst import Selection
from gretriever_neo4j.retrieval.textualize import textualize

LEARNED_STAGES = ("seeds", "embed_masked", "scoring", "selection", "textualize")


@dataclass(frozen=True, eq=False)
class BeamResult:
    edges: np.ndarray  # every scored edge, in order of scoring
    logits: np.ndarray  # (n, 2): their relevance and answer logits
    via: np.ndarray  # the frontier node each was scored from
    parent: dict[int, tuple[int, int]]  # admitted node -> (edge that admitted it, the node it came from)

    @property
    def relevance(self) -> np.ndarray:
        return self.logits[:, 0]

    @property
    def answer(self) -> np.ndarray:
        return self.logits[:, 1]


class LearnedRetriever:
    """Retrieval with a trained scorer over a graph source (a KnowledgeGraph, or StoreGraphSource)."""

    def __init__(self, model, config: RetrieverConfig, graph, *, embedder_name: str | None = None,
                 prior: MentionPrior | None = None, linking=None, graph_name: str | None = None,
                 embed: Callable[[list[str]], np.ndarray] | None = None):
        if config.mask_topics and embed is None:
            raise ConfigError("this retriever scores with the masked question's vector: pass embed= (the "
                              "embedder's embed function, the model named in the checkpoint)")
        self.config = config
        self.embed = embed
        self.weights = ScorerWeights.from_module(model)
        self.source = as_source(graph)
        self.embedder_name = embedder_name
        self.prior = prior
        self.graph_name = graph_name if graph_name is not None else getattr(self.source, "graph", None)
        self.linking = linking if linking is not None else self.source.linking()
        self._node_projection: dict[str, np.ndarray] = {}
        self._relation_projection: np.ndarray | None = None
        if isinstance(self.source, KnowledgeGraphSource):  # small enough to project every node once
            kg = self.source.kg
            self._node_projection = {"head": kg.node_embeddings @ self.weights.head.T,
                                     "tail": kg.node_embeddings @ self.weights.tail.T}
            self._relation_projection = kg.relation_embeddings @ self.weights.relation.T

    @classmethod
    def from_checkpoint(cls, path: str | Path, graph, **options) -> LearnedRetriever:
        model, config, embedder_name, prior = load_checkpoint(path)
        return cls(model, config, graph, embedder_name=embedder_name, prior=prior, **options)

    def over(self, graph, linking=None) -> LearnedRetriever:
        """The same trained scorer over another source (and `linking`, else the source's own). A
        `StoreGraphSource` grows as the beam meets nodes, so a server gives each request its own and shares only
        this retriever's weights."""
        other = copy.copy(self)
        other.source = as_source(graph)
        other.linking = linking if linking is not None else other.source.linking()
        other.graph_name = getattr(other.source, "graph", self.graph_name)
        if not isinstance(other.source, KnowledgeGraphSource):
            other._node_projection, other._relation_projection = {}, None
        return other

    # projections: precomputed for an in-memory graph, computed per call for a store-backed one
    def _project(self, part: str, nodes: np.ndarray) -> np.ndarray:
        if part in self._node_projection:
            return self._node_projection[part][nodes]
        weight = self.weights.head if part == "head" else self.weights.tail
        distinct, position = np.unique(nodes, return_inverse=True)  # a hop's frontier node ends many triples
        return (self.source.node_vectors(distinct) @ weight.T)[position]

    def _project_relations(self, relations: np.ndarray) -> np.ndarray:
        if self._relation_projection is not None:
            return self._relation_projection[relations]
        distinct, position = np.unique(relations, return_inverse=True)  # a KG has few relation texts
        return (self.source.relation_vectors(distinct) @ self.weights.relation.T)[position]

    def score_triples(self, question_projection: np.ndarray, head: np.ndarray, relation: np.ndarray,
                      tail: np.ndarray, head_distance: np.ndarray, tail_distance: np.ndarray) -> np.ndarray:
        source = self.source
        structure = structure_features(head_distance, tail_distance, source.degrees(head), source.degrees(tail),
                                       self.config)
        first = (question_projection + self._project("head", head) + self._project_relations(relation)
                 + self._project("tail", tail) + structure @ self.weights.structure.T)
        return self.weights.logits(first)

    def seeds_for(self, question: str, question_vector: np.ndarray | None) -> list[str]:
        config = self.config
        link = link_seeds(question, question_vector, self.linking, self.graph_name, k=max(config.seed_fallback, 1),
                          prior=self.prior)
        return link.preferred(config.seed_fallback, config.seed_min_ratio)[:config.max_seeds]

    def beam(self, seeds: np.ndarray, question_vector: np.ndarray) -> BeamResult:
        """Score hop by hop from the seeds, expanding the `beam_nodes` best new nodes each hop."""
        config = self.config
        q = (self.weights.question @ np.asarray(question_vector, dtype=np.float32).reshape(-1)
             + self.weights.question_bias)
        seeds = np.asarray(list(dict.fromkeys(np.asarray(seeds, dtype=np.int64).tolist())), dtype=np.int64)
        hop_of = np.full(self.source.num_nodes, UNREACHED, dtype=np.int64)  # hop at which a node was admitted
        hop_of[seeds] = 0
        parent: dict[int, tuple[int, int]] = {}
        scored = np.zeros(0, dtype=np.int64)
        all_edges, all_via, all_logits = [], [], []
        frontier = seeds
        for hop in range(1, config.max_hops + 1):
            if frontier.size == 0:
                break
            incident = self.source.incident(frontier)
            hop_of = _grown(hop_of, self.source.num_nodes)  # a store-backed source meets new nodes as it goes
            count = min(len(incident.edge), config.max_scored_per_hop)  # owners come best frontier node first
            edge, owner_pos = incident.edge[:count], incident.owner[:count]
            fresh = ~np.isin(edge, scored)
            edge, first = np.unique(edge[fresh], return_index=True)  # an edge between frontier nodes comes twice
            if edge.size == 0:
                break
            via = frontier[owner_pos[fresh][first]]
            head, relation, tail = self.source.triples(edge)
            distance = lambda nodes, hop=hop, hop_of=hop_of: np.where(hop_of[nodes] == UNREACHED, hop, hop_of[nodes])
            logits = self.score_triples(q, head, relation, tail, distance(head), distance(tail))
            scored = np.union1d(scored, edge)
            all_edges.append(edge)
            all_via.append(via)
            all_logits.append(logits)
            other = np.where(head == via, tail, head)
            frontier = self._admit(other, edge, via, logits[:, 0], hop_of, parent, hop)  # expansion by relevance
        if not all_edges:
            empty = np.zeros(0, np.int64)
            return BeamResult(edges=empty, logits=np.zeros((0, 2)), via=empty, parent=parent)
        return BeamResult(edges=np.concatenate(all_edges), logits=np.concatenate(all_logits),
                          via=np.concatenate(all_via), parent=parent)

    def _admit(self, other: np.ndarray, edge: np.ndarray, via: np.ndarray, scores: np.ndarray, hop_of: np.ndarray,
               parent: dict[int, tuple[int, int]], hop: int) -> np.ndarray:
        """The best `beam_nodes` nodes not reached before, each with the best-scoring edge that reaches it
        (equal scores: lower edge id). Marks them in `hop_of` and records their parent edge."""
        new = np.flatnonzero(hop_of[other] == UNREACHED)
        order = new[np.lexsort((edge[new], -scores[new]))]  # best first
        nodes, first = np.unique(other[order], return_index=True)  # each node's best edge
        best = np.sort(first)[:self.config.beam_nodes]  # positions in `order`, best nodes first
        admitted = other[order[best]]
        hop_of[admitted] = hop
        for node, e, v in zip(admitted.tolist(), edge[order[best]].tolist(), via[order[best]].tolist()):
            parent[node] = (e, v)
        return admitted

    def choose(self, beam: BeamResult, max_edges: int) -> list[int]:
        """The budget's edges by the configured rule: by the answer head, by the relevance head, or "mixed":
        the first `answer_share` of the budget by the answer head (paths to the likeliest answers), the rest
        by relevance (the question's paths, whatever they end at)."""
        config = self.config
        if config.selection == "answer":
            return self.select(beam, beam.answer, max_edges)
        if config.selection == "relevance":
            return self.select(beam, beam.relevance, max_edges)
        first = self.select(beam, beam.answer, int(round(config.answer_share * max_edges)))
        return self.select(beam, beam.relevance, max_edges, chosen=first)

    @staticmethod
    def select(beam: BeamResult, priority: np.ndarray, max_edges: int, chosen: Sequence[int] = ()) -> list[int]:
        """Edges by `priority` (best first; equal: lower edge id), each with the chain that connects it to a
        seed, appended to `chosen` (already connected) until `max_edges`; an edge whose chain does not fit is
        skipped. Parents always precede their children in the result."""
        chosen = dict.fromkeys(chosen)
        if max_edges <= len(chosen):
            return list(chosen)
        order = np.lexsort((beam.edges, -np.asarray(priority)))
        for i in order.tolist():
            if len(chosen) >= max_edges:
                break
            edge = int(beam.edges[i])
            if edge in chosen:
                continue
            chain, node = [edge], int(beam.via[i])
            while node in beam.parent:
                parent_edge, node = beam.parent[node]
                if parent_edge in chosen:
                    break
                chain.append(parent_edge)
            if len(chosen) + len(chain) <= max_edges:
                for e in reversed(chain):
                    chosen[e] = None
        return list(chosen)

    def retrieve(self, question: str, question_vector: np.ndarray, *, seeds: Sequence[str] | None = None,
                 max_edges: int | None = None) -> RetrievalResult:
        """The connected subgraph for `question` (at most `max_edges` triples, default the config's), with its
        text. `seeds` (node keys) skip linking."""
        budget = self.config.max_edges if max_edges is None else max_edges
        if budget < 0:
            raise InputError(f"must be >= 0, got {budget}", field="max_edges")
        question_vector = np.asarray(question_vector, dtype=np.float32).reshape(-1)
        timings: dict[str, float] = {}
        started = time.perf_counter()
        seed_keys = list(seeds) if seeds is not None else self.seeds_for(question, question_vector)
        seed_ids = self.source.node_ids(seed_keys)
        timings["seeds"] = _ms_since(started)
        started = time.perf_counter()
        if self.config.mask_topics:
            masked = scoring_text(question, self.source.node_texts(seed_ids), self.config)
            question_vector = np.asarray(self.embed([masked]), dtype=np.float32)[0]
        timings["embed_masked"] = _ms_since(started)
        started = time.perf_counter()
        beam = self.beam(seed_ids, question_vector)
        timings["scoring"] = _ms_since(started)
        started = time.perf_counter()
        edges = np.asarray(self.choose(beam, budget), dtype=np.int64)
        head, _, tail = self.source.triples(edges) if edges.size else (np.zeros(0, np.int64),) * 3
        nodes = np.asarray(list(dict.fromkeys(seed_ids.tolist() + np.stack([head, tail], 1).reshape(-1).tolist())),
                           dtype=np.int64)
        candidate = self.source.candidate_graph(nodes, edges)
        score_of = dict(zip(beam.edges.tolist(), beam.relevance.tolist()))
        selection = Selection(node_indices=np.arange(candidate.num_nodes, dtype=np.int64),
                              edge_indices=np.arange(candidate.num_edges, dtype=np.int64),
                              node_prizes=np.zeros(candidate.num_nodes),
                              edge_prizes=np.asarray([score_of[e] for e in edges.tolist()], dtype=np.float64),
                              whole_graph=False)
        timings["selection"] = _ms_since(started)
        started = time.perf_counter()
        subgraph = textualize(candidate, selection.node_indices, selection.edge_indices)
        timings["textualize"] = _ms_since(started)
        return RetrievalResult(seed_keys=[k for k in seed_keys if k in set(candidate.node_keys)], candidate=candidate,
                               selection=selection, subgraph=subgraph, timings_ms=timings)


def _grown(array: np.ndarray, size: int) -> np.ndarray:
    if len(array) >= size:
        return array
    return np.concatenate([array, np.full(size - len(array), UNREACHED, dtype=array.dtype)])


def _ms_since(started: float) -> float:
    return (time.perf_counter() - started) * 1000.0

"""Small fakes for unit tests of answering/ and qa/: no Neo4j, no model download, deterministic.

- `FakeEmbedder`: character-trigram hashing into a fixed width, so "invent" is near "invented" (a stand-in for
  a sentence encoder that a zero-shot reader can work with), `embed_query` shaped like the real one's result.
- `FakeStore`: the few store methods the retrieval context and `QA` call (graph_info, embedder_info, node_refs,
  record_retrieval, record_answer), recording what was written.
- `FakeRetriever`: the `retrievers.base.Retriever` protocol over an in-memory graph: the whole graph is the
  subgraph, assembled and recorded by the real `RetrievalContext`.
- `toy_kg()`: Benjamin Franklin's inventions and birthplace, and Thomas Edison's phonograph.

tests/conftest.py puts this folder on sys.path: `from fakes import FakeEmbedder, …`.
"""

from __future__ import annotations

import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from gretriever_neo4j.retrieval.candidates import CandidateGraph
from gretriever_neo4j.retrieval.in_memory import RetrievalResult
from gretriever_neo4j.retrieval.params import RetrievalParams
from gretriever_neo4j.retrieval.pcst import Selection
from gretriever_neo4j.retrieval.textualize import textualize
from gretriever_neo4j.retrievers.base import Retrieval, RetrievalContext

DIM = 64


@dataclass(frozen=True)
class Query:
    vector: np.ndarray
    truncated: bool
    tokens: int


class FakeEmbedder:
    """Deterministic: a text's vector is the normalised sum of its character trigrams' hashed one-hots."""

    name = "fake-trigrams"
    dim = DIM
    max_seq_length = 32  # words; a longer question is "truncated" as the real embedder's would be
    tokenizer = None

    def __init__(self):
        self.calls: list[list[str]] = []

    def _vector(self, text: str) -> np.ndarray:
        vector = np.zeros(self.dim, np.float32)
        for word in text.lower().split():
            padded = f"  {word} "
            for i in range(len(padded) - 2):
                vector[zlib.crc32(padded[i:i + 3].encode()) % self.dim] += 1.0
        norm = float(np.linalg.norm(vector))
        return vector / norm if norm else vector

    def embed(self, texts: list[str]) -> np.ndarray:
        self.calls.append(list(texts))
        return np.stack([self._vector(t) for t in texts]) if texts else np.zeros((0, self.dim), np.float32)

    def embed_query(self, text: str) -> Query:
        words = len(text.split())
        return Query(vector=self._vector(text), truncated=words > self.max_seq_length, tokens=words)


class FakeStore:
    """`graphs`: name -> the graph_info dict (`kind`, `dataset`); what was recorded is in `recorded`."""

    def __init__(self, graphs: Mapping[str, dict] | None = None, embedder: tuple[str, int] | None = None):
        self.graphs = dict(graphs or {})
        self.embedder = embedder
        self.recorded: list[dict] = []
        self.answered: list[dict] = []  # record_answer's fields

    def graph_info(self, graph: str) -> dict | None:
        info = self.graphs.get(graph)
        return None if info is None else {"graph": graph, **info}

    def embedder_info(self) -> tuple[str, int] | None:
        return self.embedder

    def check_layout(self) -> None:
        pass

    def node_refs(self, graph: str, keys) -> dict[str, str]:
        return {key: f"node:{graph}:{key}" for key in keys}

    def record_retrieval(self, **fields) -> None:
        self.recorded.append(fields)

    def record_answer(self, **fields) -> bool:
        self.answered.append(fields)
        return True


def toy_kg(embedder: FakeEmbedder) -> CandidateGraph:
    nodes = ["Benjamin Franklin", "Bifocals", "Lightning rod", "Boston", "Thomas Edison", "Phonograph"]
    edges = [(0, "invented", 1), (0, "invented", 2), (0, "born_in", 3), (4, "invented", 5)]
    return CandidateGraph(
        node_keys=[f"n{i}" for i in range(len(nodes))], node_texts=nodes, node_embeddings=embedder.embed(nodes),
        edge_src=np.asarray([s for s, _, _ in edges], np.int64),
        edge_dst=np.asarray([d for _, _, d in edges], np.int64),
        edge_texts=[t for _, t, _ in edges], edge_embeddings=embedder.embed([t for _, t, _ in edges]))


def whole_graph(graph: CandidateGraph, seeds: list[str] | None = None) -> RetrievalResult:
    """A retrieval result holding all of `graph` (what PCST would give for a graph this small)."""
    nodes, edges = np.arange(graph.num_nodes), np.arange(graph.num_edges)
    selection = Selection(node_indices=nodes, edge_indices=edges, node_prizes=np.zeros(graph.num_nodes),
                          edge_prizes=np.zeros(graph.num_edges), whole_graph=True)
    return RetrievalResult(seed_keys=list(seeds or []), candidate=graph, selection=selection,
                           subgraph=textualize(graph, nodes, edges), timings_ms={})


def empty_graph(embedder: FakeEmbedder) -> CandidateGraph:
    return CandidateGraph(node_keys=[], node_texts=[], node_embeddings=np.zeros((0, embedder.dim), np.float32),
                          edge_src=np.zeros(0, np.int64), edge_dst=np.zeros(0, np.int64), edge_texts=[],
                          edge_embeddings=np.zeros((0, embedder.dim), np.float32))


class FakeRetriever:
    """A `Retriever`: returns the whole of its graph, through the real `RetrievalContext` (question checked and
    embedded, `Retrieval` assembled and recorded); remembers every call."""

    kind = "static"
    description = "fake: the whole toy graph"

    def __init__(self, context: RetrievalContext, graph: CandidateGraph, dataset: str = "toy"):
        self.context = context
        self.graph = graph
        self.dataset = dataset
        self.calls: list[dict] = []

    def retrieve(self, question: str, *, graph: str | None = None, params: RetrievalParams | None = None,
                 overrides: Mapping[str, Any] | None = None, record: bool = True) -> Retrieval:
        self.calls.append({"question": question, "graph": graph, "overrides": overrides, "record": record})
        asked = self.context.question(question)
        return self.context.finish(asked, graph=graph or "toy", dataset=self.dataset,
                                   params=params or RetrievalParams(), result=whole_graph(self.graph),
                                   timings_ms={"fake": 0.0}, kind=self.kind, record=record)

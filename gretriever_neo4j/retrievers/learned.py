"""The learned retriever (the question-conditioned triple scorer of `retrieval.learned`) over a stored KG, behind
the one `Retriever` protocol: `gqa ask`, `gqa eval`, `gqa train` and the service take `--retriever learned` and
the generator consumes its subgraphs unchanged. Training it is `train.learned_retriever`.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from gretriever_neo4j.errors import ConfigError
from gretriever_neo4j.retrieval.learned import LearnedRetriever, StoreGraphSource
from gretriever_neo4j.retrieval.linking import StoreLinking
from gretriever_neo4j.retrieval.params import RetrievalParams
from gretriever_neo4j.retrievers.base import Retrieval, RetrievalContext, ms_since, unused_parameters
from gretriever_neo4j.retrievers.cached import GraphCache, learned_over_cache


class LearnedKGRetriever:
    """`retrieve(question, graph=…)` with the learned scorer over the store (or over the graph cached in memory);
    recorded like static retrievals."""

    kind = "learned"

    def __init__(self, context: RetrievalContext, checkpoint: Path, cache: GraphCache | None = None):
        """`cache` (a `retrievers.cached.GraphCache`): score over the graph held in memory once it is loaded (a
        serving process); until then, and without one, over Neo4j."""
        if not Path(checkpoint).is_file():
            raise ConfigError(f"no learned retriever at {checkpoint}: train one with `gqa train-retriever`")
        self.context = context
        self.store, self.embedder = context.store, context.embedder
        self.checkpoint = Path(checkpoint)
        self.description = f"learned {self.checkpoint}"
        self.cache = cache
        self._trained: LearnedRetriever | None = None  # the weights, loaded once, shared by every request
        self._lock = threading.Lock()

    def _embed(self, texts: list[str]) -> np.ndarray:
        return np.stack([self.embedder.embed_query(t).vector for t in texts])

    def _learned(self, graph: str) -> LearnedRetriever:
        """The trained scorer over a source of this request's own: a store-backed source fills as the beam goes,
        and requests run in several threads of a server."""
        source = StoreGraphSource(_VectorsWhileWalking(self.store), graph)
        linking = StoreLinking(self.store)
        with self._lock:
            if self._trained is None:
                self._trained = LearnedRetriever.from_checkpoint(self.checkpoint, source, embed=self._embed,
                                                                 linking=linking)
        return self._trained.over(source, linking)

    def retrieve(self, question: str, *, graph: str | None = None, params: RetrievalParams | None = None,
                 overrides: Mapping[str, Any] | None = None, record: bool = True) -> Retrieval:
        if graph is None:
            raise ConfigError("--retriever learned needs --graph (the KG it was trained for)")
        asked = self.context.question(question, strip_markers=True)
        info = self.context.graph_info(graph)
        started = time.perf_counter()
        learned = None
        if self.cache is not None:
            learned = learned_over_cache(self.cache, graph, self.checkpoint, self._embed)
        result = (learned or self._learned(graph)).retrieve(asked.text, asked.vector)
        return self.context.finish(asked, graph=graph, dataset=info["dataset"], params=RetrievalParams(),
                                   result=result, timings_ms={"learned": ms_since(started)}, kind=self.kind,
                                   record=record, warnings=unused_parameters(self.kind, params, overrides))


class _VectorsWhileWalking:
    """What `StoreGraphSource` asks of the store, with each incident triple's far end read in the same statement
    (`GraphStore.kg_incident_vectors`): the beam scores every triple it meets with both ends' vectors, which would
    otherwise be a second statement and a lookup by key per neighbour."""

    def __init__(self, store):
        self.store = store
        self.nodes: dict[str, dict[str, Any]] = {}

    def kg_incident(self, graph: str, keys, limit: int):
        by_key = self.store.kg_incident_vectors(graph, keys, limit)
        for rows in by_key.values():
            for row in rows:
                if row["neighbour"] not in self.nodes:
                    self.nodes[row["neighbour"]] = {"key": row["neighbour"], "text": row["neighbour_text"],
                                                    "embedding": row["neighbour_embedding"],
                                                    "degree": row["neighbour_degree"]}
        return by_key

    def kg_node_vectors(self, graph: str, keys):
        missing = [k for k in keys if k not in self.nodes]
        if missing:  # seeds: not met through an incident edge yet
            self.nodes.update((row["key"], row) for row in self.store.kg_node_vectors(graph, missing))
        return [self.nodes[k] for k in keys if k in self.nodes]

    def kg_relation_vectors(self, graph: str, texts):
        return self.store.kg_relation_vectors(graph, texts)

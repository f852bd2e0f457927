"""The learned retriever as a product feature: train it on a stored KG, and use it where static retrieval is used.

`train_learned_retriever` reads the KG and its training questions from Neo4j, trains the scorer of
`retrieval.learned` on weak labels, and saves one checkpoint (config, weights, embedder, mention prior).
`LearnedRetrievalAdapter` answers like `Retriever.retrieve`, so `gqa ask`, `gqa eval` and `gqa train` take
`--retriever learned` and the generator consumes its subgraphs unchanged.
"""

from __future__ import annotations

import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

from gretriever_neo4j.errors import ConfigError, unknown_graph
from gretriever_neo4j.retrieval.learned import (LearnedRetriever, RetrieverConfig, StoreGraphSource, TrainingQuestion,
                                save_checkpoint, train_retriever)
from gretriever_neo4j.retrieval.linking import InMemoryLinking, MentionPrior, strip_topic_markers
from gretriever_neo4j.retrieval.in_memory import RetrievalParams
from gretriever_neo4j.retrievers.neo4j import Retrieval, Retriever
from gretriever_neo4j.settings import gqa_home


def default_checkpoint(graph: str) -> Path:
    """Where `gqa train-retriever` saves the retriever of a graph (`QA` finds it there)."""
    return gqa_home() / "retrievers" / f"{graph}.pt"


@dataclass
class TrainedRetriever:
    path: Path
    questions: int
    seconds: float
    history: object


def train_learned_retriever(store, embedder, dataset: str, *, graph: str | None = None, limit: int | None = None,
                            epochs: int = 8, max_edges: int = 200, out: Path | None = None,
                            progress: Callable[[str, dict], None] | None = None) -> TrainedRetriever:
    """Trains on the dataset's "train" questions over `graph` (default: the graph of its first question) that
    have answers and topic entities; nothing in it knows any relation name or dataset."""
    from gretriever_neo4j.retrieval.kg import KnowledgeGraph

    questions = [q for q in store.questions(dataset, "train") if q["answers"] and q["topic_entities"]]
    graph = graph or (questions[0]["graph"] if questions else None)
    questions = [q for q in questions if q["graph"] == graph]
    if not questions:
        raise ConfigError(f"no 'train' questions with answers and topic entities for dataset {dataset!r}"
                          + (f" over graph {graph!r}" if graph else "") + ": ingest a KG with questions first "
                          "(`gqa ingest questions --graph NAME --source FILE`)")
    if store.graph_info(graph) is None:
        raise unknown_graph(graph)
    questions = questions[:limit] if limit else questions
    started = time.perf_counter()
    kg = KnowledgeGraph.from_store(store, graph)
    training = [TrainingQuestion(strip_topic_markers(q["text"]), q["topic_entities"], q["answers"]) for q in questions]
    config = RetrieverConfig(epochs=epochs, max_edges=max_edges)
    model, history = train_retriever(kg, training, embedder, config, progress=progress)
    prior = MentionPrior.fit([(q["text"], q["topic_entities"]) for q in questions], InMemoryLinking(kg), None)
    path = save_checkpoint(out or default_checkpoint(graph), model, config, embedder.name, prior)
    return TrainedRetriever(path=path, questions=len(training), seconds=time.perf_counter() - started,
                            history=history)


class LearnedRetrievalAdapter:
    """`retrieve(question, graph=…)` with the learned scorer over the store; recorded like static retrievals."""

    def __init__(self, retriever: Retriever, checkpoint: Path, cache=None):
        """`cache` (a `graph_cache.GraphCache`): score over the graph held in memory once it is loaded (a
        serving process); until then, and without one, over Neo4j."""
        if not Path(checkpoint).is_file():
            raise ConfigError(f"no learned retriever at {checkpoint}: train one with `gqa train-retriever`")
        self.static = retriever
        self.store, self.embedder = retriever.store, retriever.embedder
        self.checkpoint = Path(checkpoint)
        self.cache = cache
        self._trained: LearnedRetriever | None = None  # the weights, loaded once, shared by every request
        self._lock = threading.Lock()

    def _embed(self, texts: list[str]) -> np.ndarray:
        return np.stack([self.embedder.embed_query(t).vector for t in texts])

    def _learned(self, graph: str) -> LearnedRetriever:
        """The trained scorer over a source of this request's own: a store-backed source fills as the beam goes,
        and requests run in several threads of a server."""
        source = StoreGraphSource(self.store, graph)
        with self._lock:
            if self._trained is None:
                self._trained = LearnedRetriever.from_checkpoint(self.checkpoint, source, embed=self._embed)
        return self._trained.over(source)

    def retrieve(self, question: str, *, graph: str | None = None, record: bool = True, **_ignored) -> Retrieval:
        from gretriever_neo4j.retrieval.textualize import count_tokens

        if graph is None:
            raise ConfigError("--retriever learned needs --graph (the KG it was trained for)")
        info = self.store.graph_info(graph)
        if info is None:
            raise unknown_graph(graph)
        started = time.perf_counter()
        query = self.embedder.embed_query(strip_topic_markers(question))
        embed_ms = (time.perf_counter() - started) * 1000
        started = time.perf_counter()
        learned = None
        if self.cache is not None:
            from gretriever_neo4j.retrievers.cached import learned_over_cache

            learned = learned_over_cache(self.cache, graph, self.checkpoint, self._embed)
        result = (learned or self._learned(graph)).retrieve(question, query.vector)
        timings = {"embed": embed_ms, "learned": (time.perf_counter() - started) * 1000}
        timings["total"] = sum(timings.values())
        retrieval = Retrieval(id=f"r-{uuid.uuid4().hex[:12]}", question=question.strip(), graph=graph,
                              dataset=info["dataset"], params=RetrievalParams(), result=result, timings_ms=timings,
                              tokens=count_tokens(result.text, self.embedder.tokenizer), retriever="learned")
        if record:
            self.static._record(retrieval)
        return retrieval

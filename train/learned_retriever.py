"""Training the learned retriever on a stored KG (`gqa train-retriever`): its questions read from Neo4j, the
scorer of `retrieval.learned` trained on weak labels, one checkpoint saved (config, weights, embedder, mention
prior) where `QA` finds it."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from ..artifacts.registry import legacy_retriever
from ..errors import ConfigError, unknown_graph
from ..progress import OnProgress
from ..retrieval.learned import RetrieverConfig, TrainingQuestion, save_checkpoint, train_retriever
from ..retrieval.linking import InMemoryLinking, MentionPrior, strip_topic_markers


def default_checkpoint(graph: str) -> Path:
    """Where `gqa train-retriever` saves the retriever of a graph (`QA` finds it there)."""
    return legacy_retriever(graph)


@dataclass
class TrainedRetriever:
    path: Path
    questions: int
    seconds: float
    history: object


def train_learned_retriever(store, embedder, dataset: str, *, graph: str | None = None, limit: int | None = None,
                            epochs: int = 8, max_edges: int = 200, out: Path | None = None,
                            progress: OnProgress | None = None) -> TrainedRetriever:
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

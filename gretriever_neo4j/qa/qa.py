"""Question answering as one library call, for the CLI and the service alike: retrieve, then answer.

`QA` holds what is expensive to make (the embedder, retrievers per graph, the `Answering` with its readers and
generators) and chooses per graph what `gqa train` trained for it (`registry`): the learned retriever where one
exists and training measured it the better one ("auto"), else, over a knowledge graph, zero-shot relation-path
retrieval (`path_retrieval`), and the paper's static retrieval (PCST) for per-sample graphs or no --graph. The
choice is read from the graph's manifest on every question, and a learned retriever is loaded anew when its
checkpoint file changes, so a `gqa train` run while a server is up is used from the next question on.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gretriever_neo4j.answering.answering import Answer, Answering
from gretriever_neo4j.artifacts.freshness import file_stamp
from gretriever_neo4j.artifacts.registry import check_embedder, legacy_retriever, load_trained
from gretriever_neo4j.errors import ConfigError
from gretriever_neo4j.retrievers.base import Retrieval, RetrievalContext, Retriever
from gretriever_neo4j.retrievers.cached import CachedStaticRetriever, GraphCache
from gretriever_neo4j.retrievers.learned import LearnedKGRetriever
from gretriever_neo4j.retrievers.neo4j import StaticRetriever
from gretriever_neo4j.retrievers.paths import PathKGRetriever

if TYPE_CHECKING:
    from gretriever_neo4j.embedding.embedder import Embedder
    from gretriever_neo4j.store.graph_store import GraphStore

RETRIEVER_KINDS = ("auto", "static", "learned", "paths")


@dataclass
class QAResult:
    retrieval: Retrieval
    answer: Answer | None
    retriever: str  # what retrieved, in words

    def to_dict(self) -> dict:
        data = self.retrieval.to_dict()
        data["retriever_model"] = self.retriever
        if self.answer is not None:
            data["answer"] = self.answer.to_dict()
        return data


class QA:
    def __init__(self, store: GraphStore, embedder: Embedder, *, browser_url: str | None = None,
                 answering: Answering | None = None, cache: GraphCache | None = None):
        """`cache` (a `retrievers.cached.GraphCache`, for long-running processes): retrieve over graphs held in
        memory."""
        self.store = store
        self.embedder = embedder
        self.context = RetrievalContext(store, embedder, browser_url=browser_url)
        self.cache = cache
        if cache is not None:
            self.static: Retriever = CachedStaticRetriever(self.context, cache)
        else:
            self.static = StaticRetriever(self.context)
        self.answering = answering or Answering(embedder)
        self._learned: dict[tuple[Path, Any], Retriever] = {}  # (checkpoint, its file's stamp) -> retriever
        self._paths: Retriever | None = None
        self._learned_lock = threading.Lock()  # requests of a server share the retrievers

    @property
    def browser_url(self) -> str | None:
        return self.context.browser_url

    def learned_checkpoint(self, graph: str | None) -> Path | None:
        """The learned retriever trained for `graph`: `gqa train`'s, else `gqa train-retriever`'s."""
        if graph is None:
            return None
        trained = load_trained(graph)
        if trained is not None and trained.retriever:
            check_embedder(trained, self.embedder.name)
            return trained.path("retriever")
        # `gqa train-retriever` saves under the graph's name (earlier versions: the dataset's, which was the graph's
        # name for every KG dataset; a user's graphs share the dataset "triples" or "csv").
        legacy = legacy_retriever(graph)
        return legacy if legacy.is_file() else None

    def path_retriever(self) -> Retriever:
        with self._learned_lock:
            if self._paths is None:
                self._paths = PathKGRetriever(self.context, cache=self.cache)
            return self._paths

    def _prefers_paths(self, graph: str | None) -> bool:
        """Auto over a KG: relation paths unless `gqa train` measured its learned retriever better there."""
        if graph is None:
            return False
        info = self.store.graph_info(graph)
        if info is None or info.get("kind") != "kg":
            return False
        trained = load_trained(graph)
        if trained is None or not trained.retriever:
            return self.learned_checkpoint(graph) is None
        return trained.chosen_retriever == "paths"

    def retriever(self, graph: str | None, kind: str = "auto", checkpoint: Path | None = None) -> Retriever:
        """`kind`: auto (learned when trained for the graph and measured better there, else relation paths over a
        KG, else static), static, learned, or paths."""
        if kind not in RETRIEVER_KINDS:
            raise ConfigError(f"--retriever must be one of {', '.join(RETRIEVER_KINDS)}, not {kind!r}")
        if kind == "static":
            return self.static
        if kind == "paths" or (kind == "auto" and checkpoint is None and self._prefers_paths(graph)):
            if graph is None:
                raise ConfigError("--retriever paths needs --graph naming a stored knowledge graph")
            return self.path_retriever()
        path = Path(checkpoint) if checkpoint else self.learned_checkpoint(graph)
        if path is None:
            if kind == "learned":
                if graph is None:
                    raise ConfigError("--retriever learned needs --graph naming a stored KG (or "
                                      "--retriever-checkpoint)")
                raise ConfigError(f"no learned retriever is trained for graph {graph!r}: run `gqa train --dataset "
                                  f"…` (or `gqa train-retriever`), or use --retriever static")
            return self.static
        # One per checkpoint file as it is now: `gqa train` run while a server holds the retriever rewrites the same
        # path, and the next question is retrieved with the new weights (one stat per question).
        key = (path, file_stamp(path))
        with self._learned_lock:
            if key not in self._learned:
                for stale in [held for held in self._learned if held[0] == path]:
                    del self._learned[stale]
                self._learned[key] = LearnedKGRetriever(self.context, path, cache=self.cache)
            return self._learned[key]

    def retrieve(self, question: str, *, graph: str | None = None, retriever: str = "auto",
                 checkpoint: Path | None = None, record: bool = True,
                 overrides: Mapping[str, Any] | None = None) -> Retrieval:
        """`retriever`: auto | static | learned | paths (`RETRIEVER_KINDS`); `overrides`: single retrieval
        parameters (seed_k, hops, …) over the graph's defaults."""
        return self.retriever(graph, retriever, checkpoint).retrieve(question, graph=graph, overrides=overrides,
                                                                     record=record)

    def ask(self, question: str, *, graph: str | None = None, retriever: str = "auto",
            checkpoint: Path | None = None, answer: bool = True, record: bool = True,
            history: list[tuple[str, str]] | None = None, overrides: Mapping[str, Any] | None = None) -> QAResult:
        """Retrieve (`retriever`: auto | static | learned | paths), then answer unless `answer` is false."""
        chosen = self.retriever(graph, retriever, checkpoint)
        retrieval = chosen.retrieve(question, graph=graph, overrides=overrides, record=record)
        if not answer:
            return QAResult(retrieval, None, chosen.description)
        return QAResult(retrieval, self.answer(retrieval, history=history), chosen.description)

    def answer(self, retrieval: Retrieval, *, answering: Answering | None = None,
               history: list[tuple[str, str]] | None = None, streamer=None, cancel=None) -> Answer:
        """Answer from a retrieval (`answering`: a variant of `self.answering`, e.g. another LLM policy). The answer
        of a recorded retrieval is kept with it, for feedback on it to refer to."""
        if not retrieval.result.subgraph.node_keys:
            raise ConfigError(f"nothing to answer from: graph {retrieval.graph!r} gave no candidate node for this "
                              f"question (retrieval {retrieval.id})")
        answer = (answering or self.answering).answer(retrieval, history=history, streamer=streamer, cancel=cancel)
        self.context.recorder.record_answer(retrieval, answer)
        return answer

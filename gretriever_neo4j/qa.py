"""Question answering as one library call, for the CLI and the service alike: retrieve, then answer.

`QA` holds what is expensive to make (the embedder, retrievers per graph, the `Answering` with its readers and
generators) and chooses per graph what `gqa train` trained for it (`registry`): the learned retriever where one
exists ("auto"), else the paper's static retrieval.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .answer import Answer, Answering
from .errors import ConfigError
from .retriever import Retrieval, Retriever

RETRIEVER_KINDS = ("auto", "static", "learned")


@dataclass
class Asked:
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
    def __init__(self, store, embedder, *, browser_url: str | None = None, answering: Answering | None = None,
                 cache=None):
        """`cache` (a `graph_cache.GraphCache`, for long-running processes): retrieve over graphs held in memory."""
        self.store = store
        self.embedder = embedder
        self.static = Retriever(store, embedder, browser_url=browser_url)
        self.cache = cache
        if cache is not None:
            from .graph_cache import CachedStaticRetriever

            self.static_retriever = CachedStaticRetriever(self.static, cache)
        else:
            self.static_retriever = self.static
        self.answering = answering or Answering(embedder)
        self._learned: dict[Path, object] = {}

    def learned_checkpoint(self, graph: str | None) -> Path | None:
        """The learned retriever trained for `graph`: `gqa train`'s, else `gqa train-retriever`'s."""
        from .registry import check_embedder, legacy_retriever, load_trained

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

    def retriever(self, graph: str | None, kind: str = "auto", checkpoint: Path | None = None):
        """(retriever, description). `kind`: auto (learned when trained for the graph), static, or learned."""
        from .learned_retrieval import LearnedRetrievalAdapter

        if kind not in RETRIEVER_KINDS:
            raise ConfigError(f"--retriever must be one of {', '.join(RETRIEVER_KINDS)}, not {kind!r}")
        if kind == "static":
            return self.static_retriever, "static (PCST, the paper's)"
        path = Path(checkpoint) if checkpoint else self.learned_checkpoint(graph)
        if path is None:
            if kind == "learned":
                if graph is None:
                    raise ConfigError("--retriever learned needs --graph naming a stored KG (or "
                                      "--retriever-checkpoint)")
                raise ConfigError(f"no learned retriever is trained for graph {graph!r}: run `gqa train --dataset "
                                  f"…` (or `gqa train-retriever`), or use --retriever static")
            return self.static_retriever, "static (PCST, the paper's)"
        if path not in self._learned:
            self._learned[path] = LearnedRetrievalAdapter(self.static, path, cache=self.cache)
        return self._learned[path], f"learned {path}"

    def retrieve(self, question: str, *, graph: str | None = None, kind: str = "auto",
                 checkpoint: Path | None = None, record: bool = True, **overrides) -> tuple[Retrieval, str]:
        retriever, described = self.retriever(graph, kind, checkpoint)
        if retriever is self.static_retriever:
            return retriever.retrieve(question, graph=graph, record=record, **overrides), described
        if graph is None:
            raise ConfigError("the learned retriever needs --graph (the KG it was trained for)")
        return retriever.retrieve(question, graph=graph, record=record), described

    def ask(self, question: str, *, graph: str | None = None, kind: str = "auto", checkpoint: Path | None = None,
            answer: bool = True, record: bool = True, history: list[tuple[str, str]] | None = None,
            **overrides) -> Asked:
        retrieval, described = self.retrieve(question, graph=graph, kind=kind, checkpoint=checkpoint, record=record,
                                              **overrides)
        if not answer:
            return Asked(retrieval, None, described)
        if not retrieval.result.subgraph.node_keys:
            raise ConfigError(f"nothing to answer from: graph {retrieval.graph!r} gave no candidate node for this "
                              f"question (retrieval {retrieval.id})")
        return Asked(retrieval, self.answering.answer(retrieval, history=history), described)

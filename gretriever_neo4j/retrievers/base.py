"""What every retriever is, and what they all share.

`Retriever` is the one protocol: `retrieve(question, graph=…, params=…, overrides=…, record=…) -> Retrieval`.
The static (PCST over Neo4j or over a cached graph), learned and relation-path retrievers implement it, so `QA`,
the CLI and the service never ask which one they hold. `RetrievalContext` is what they share: the question checked
and embedded once, the graph looked up, the `Retrieval` assembled (id, timings, tokens, warnings) and recorded
by the one `Recorder` as a `(:Retrieval)` node that opens in Neo4j Browser.
"""

from __future__ import annotations

import functools
import json
import logging
import threading
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np

from gretriever_neo4j.errors import ConfigError, DatabaseError, GraphChangingError, InputError, unknown_graph
from gretriever_neo4j.retrieval.in_memory import RetrievalResult
from gretriever_neo4j.retrieval.linking import strip_topic_markers
from gretriever_neo4j.retrieval.params import RetrievalParams, params_to_dict
from gretriever_neo4j.retrieval.textualize import count_tokens
from gretriever_neo4j.retrievers.browser import browser_link, browser_statement
from gretriever_neo4j.store.graph_store import DROPPING

if TYPE_CHECKING:  # annotations only: the store and the embedder are passed in
    from gretriever_neo4j.embedding.embedder import Embedder
    from gretriever_neo4j.store.graph_store import GraphStore

log = logging.getLogger(__name__)


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
    retriever: str = "static"  # which kind of retriever made it: "static" (the paper's PCST), "learned" or "paths"
    recorded: bool = False  # stored as a (:Retrieval) that feedback can name (`Recorder`)
    held: bool = False  # read from the copy of the graph a process holds in memory (`GraphCache`), not from Neo4j

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
            "held": self.held,
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


@runtime_checkable
class Retriever(Protocol):
    kind: str  # "static", "learned" or "paths": what `Retrieval.retriever` says
    description: str  # in words, for people

    def retrieve(self, question: str, *, graph: str | None = None, params: RetrievalParams | None = None,
                 overrides: Mapping[str, Any] | None = None, record: bool = True) -> Retrieval:
        """`params`: all parameters (static retrieval); `overrides`: single fields over the graph's defaults
        (seed_k, hops, fanout, …). A retriever that has no use for them says so in `Retrieval.warnings`."""
        ...


@dataclass(frozen=True)
class Question:
    text: str  # as asked, stripped
    vector: np.ndarray  # the embedding of `embedded`
    embedded: str
    embed_ms: float
    warnings: tuple[str, ...] = ()


class Recorder:
    """Stores a retrieval (its question, parameters, timings, text and the element ids of its subgraph) as a
    `(:Retrieval)` node, and gives it the statement and the Browser link that show exactly that subgraph."""

    def __init__(self, store: GraphStore, browser_url: str | None = None):
        self.store = store
        self.browser_url = browser_url

    def record(self, retrieval: Retrieval) -> None:
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
        retrieval.recorded = True
        retrieval.browser_statement = browser_statement(retrieval.id)
        if self.browser_url:
            retrieval.browser_url = browser_link(self.browser_url, retrieval.browser_statement)

    def record_answer(self, retrieval: Retrieval, answer) -> None:
        """Keeps with a recorded retrieval the answer (an `answering.Answer`) a person is shown: its nodes' keys,
        its text, the keys of the nodes the question names, and how sure it was (`confidence`, `unsure`). Feedback
        on the retrieval (`gqa feedback`) refers to it; the least sure answers are the first offered for feedback
        (`GET /api/feedback/unsure`). A Neo4j gone meanwhile loses only this note (logged), not the answer."""
        if not retrieval.recorded:
            return
        keys = retrieval.result.subgraph.node_keys
        anchors = [keys[i] for i in answer.anchors if 0 <= i < len(keys)]
        confidence = getattr(answer, "confidence", None)
        try:
            self.store.record_answer(id=retrieval.id, answer_keys=[node.key for node in answer.nodes],
                                     answer_text=answer.text, anchor_keys=anchors,
                                     confidence=None if confidence is None else float(confidence),
                                     unsure=bool(getattr(answer, "unsure", False)))
        except DatabaseError as error:
            log.warning("the answer of retrieval %s was not recorded: %s", retrieval.id, error)


class RetrievalContext:
    """The store, the embedder and the recorder every retriever of a process shares (thread-safe: the embedder
    locks itself, the store's driver is shared by design, the schema check is idempotent)."""

    def __init__(self, store: GraphStore, embedder: Embedder, *, browser_url: str | None = None):
        self.store = store
        self.embedder = embedder
        self.recorder = Recorder(store, browser_url)
        self._checked_schema = False
        self._seen = threading.local()  # graph_record: (graph, record) as this thread's retrieval last read it

    @property
    def browser_url(self) -> str | None:
        return self.recorder.browser_url

    def check_schema(self) -> None:
        """The stored vectors and the embedder agree in width (else every similarity would be wrong), in the
        layout this version reads."""
        if self._checked_schema:
            return
        self.store.check_layout()
        stored = self.store.embedder_info()
        if stored is None:
            raise DatabaseError("the database holds no graph yet: load one with `gqa ingest …`")
        name, dim = stored
        if dim != self.embedder.dim:
            raise ConfigError(f"the stored vectors are {dim}-d ('{name}'), the embedder '{self.embedder.name}' "
                              f"makes {self.embedder.dim}-d ones: use --embedder '{name}'")
        self._checked_schema = True

    def question(self, question: str, *, strip_markers: bool = False) -> Question:
        """The question checked (non-empty text) and embedded; `strip_markers`: embed it without the [topic]
        brackets of MetaQA-style questions (the KG retrievers link those entities themselves)."""
        if not isinstance(question, str) or not question.strip():
            raise InputError("the question is empty", field="question")
        text = question.strip()
        self.check_schema()
        embedded = strip_topic_markers(text) if strip_markers else text
        started = time.perf_counter()
        query = self.embedder.embed_query(embedded)
        embed_ms = ms_since(started)
        warnings = (f"the question has {query.tokens} tokens; the embedder reads only the first "
                    f"{self.embedder.max_seq_length}",) if query.truncated else ()
        return Question(text=text, vector=query.vector, embedded=embedded, embed_ms=embed_ms, warnings=warnings)

    def graph_info(self, graph: str) -> dict:
        """The graph's record (`GraphStore.graph_info`), remembered for this thread's retrieval (`retried_once`).
        A graph whose first change is still under way (an ingest writing a graph not stored before, or again
        after a drop) is not stored yet as far as readers go: unknown, like a graph never written."""
        info = self.store.graph_info(graph)
        if info is None or (info.get("state") and info.get("version") is None):
            raise unknown_graph(graph)
        self._seen.graph_record = (graph, info)
        return info

    def check_readable(self, graph: str, info: Mapping[str, Any]) -> None:
        """Through Neo4j (no copy of the graph held in memory), a graph being dropped is not read: its nodes and
        edges vanish batch by batch, so the request is told to retry, and finds the graph gone once the drop is
        done. A graph being written is read as it stands: what is committed so far (only a held copy answers from
        the version before the change)."""
        if info.get("state") == DROPPING:
            raise GraphChangingError(f"graph {graph!r} is being dropped; try again shortly")

    def finish(self, question: Question, *, graph: str, dataset: str, params: RetrievalParams,
               result: RetrievalResult, timings_ms: Mapping[str, float], kind: str, record: bool,
               warnings: list[str] | tuple[str, ...] = (), held: bool = False) -> Retrieval:
        """The `Retrieval`: a fresh id, the embedding time first and the total last, the subgraph's tokens;
        recorded unless `record` is false; `held`: read from a graph held in memory."""
        timings = {"embed": question.embed_ms, **{stage: float(ms) for stage, ms in timings_ms.items()}}
        timings["total"] = sum(timings.values())
        retrieval = Retrieval(id=f"r-{uuid.uuid4().hex[:12]}", question=question.text, graph=graph, dataset=dataset,
                              params=params, result=result, timings_ms=timings,
                              tokens=count_tokens(result.text, getattr(self.embedder, "tokenizer", None)),
                              warnings=[*question.warnings, *warnings], retriever=kind,
                              held=held)
        if record:
            self.recorder.record(retrieval)
        return retrieval


def retried_once(retrieve):
    """Wraps a `Retriever.retrieve` that reads a graph through Neo4j: a retrieval that fails on a node or edge
    vanishing under it (a lookup error, an inconsistent candidate graph) while the graph's record shows a change (one
    under way, or a version other than the one the retrieval read) is run once more, on what the graph is then; if
    that fails the same way, `GraphChangingError` (503, retry). A failure with no change to explain it is ours and
    propagates as it is; a graph whose drop completed meanwhile is unknown (404)."""

    @functools.wraps(retrieve)
    def retrieving(self, question, **kwargs):
        seen = self.context._seen
        for attempt in range(2):
            seen.graph_record = None
            try:
                return retrieve(self, question, **kwargs)
            except (LookupError, ValueError) as error:
                if seen.graph_record is None:
                    raise
                graph, before = seen.graph_record
                now = self.context.store.graph_info(graph)
                if now is None:
                    raise unknown_graph(graph) from error
                if not now.get("state") and now.get("version") == before.get("version"):
                    raise
                if attempt:
                    raise GraphChangingError(f"graph {graph!r} changed while it was read; try again") from error
        raise AssertionError("unreachable")

    return retrieving


def unused_parameters(kind: str, params: RetrievalParams | None, overrides: Mapping[str, Any] | None) -> list[str]:
    """A warning when a retriever without PCST parameters is given some (rather than dropping them silently)."""
    given = sorted(name for name, value in (overrides or {}).items() if value is not None)
    if params is not None:
        given.append("params")
    if not given:
        return []
    return [f"the {kind} retriever does not use {', '.join(given)} (they apply to static retrieval, "
            f"--retriever static)"]


def ms_since(started: float) -> float:
    return (time.perf_counter() - started) * 1000.0

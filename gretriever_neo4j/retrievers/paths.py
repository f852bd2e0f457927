"""Zero-shot relation-path retrieval over a stored KG, behind the one `Retriever` protocol.

The algorithm is `retrieval.relation_paths` (link the question's entities, follow the relations whose texts best
match the question). Over Neo4j it reads only the incident edges it expands, through a `StoreGraphSource` made
fresh for every request (a source caches what it fetched, so one per request keeps requests independent); a
serving process with a `retrievers.cached.GraphCache` runs it over the graph held in memory instead. The embedded
relation texts are shared by all requests (they depend on the relation text alone).
"""

from __future__ import annotations

import os
import re
import threading
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from gretriever_neo4j.errors import ConfigError
from gretriever_neo4j.retrieval.linking import StoreLinking, relation_name_words
from gretriever_neo4j.retrieval.params import RetrievalParams
from gretriever_neo4j.retrieval.relation_paths import PathConfig, PathRetriever
from gretriever_neo4j.retrieval.relation_vectors import RelationTexts
from gretriever_neo4j.retrieval.texts import HUMANIZED_VERSION
from gretriever_neo4j.retrievers.base import Retrieval, RetrievalContext, ms_since, retried_once, unused_parameters

if TYPE_CHECKING:
    from gretriever_neo4j.retrievers.cached import GraphCache


def relation_cache_path(embedder: str):
    from gretriever_neo4j.settings import gqa_home

    # versioned by how relation names are read (`texts.humanize_relation`): a change is a fresh cache
    name = re.sub(r"[^A-Za-z0-9_.-]+", "_", embedder) + f".v{HUMANIZED_VERSION}.npz"
    return gqa_home() / "cache" / "relation_texts" / name


DESCRIPTION = "relation paths (zero-shot: linked entities, then the relations that match the question)"

# The beam follows a relation a word of the question names by a shared stem or word family ("directed" /
# `directed_by`, "border" / `adjoins`: the zero-shot reader's `wording.same_stems`) as if the embedder rated it at
# least this similar: MiniLM rates such pairs barely above unrelated ones, and a path the retrieval drops the reader
# cannot choose.
NAMED_FLOOR = 0.6


def named_by_words(masked_question: str, relation_texts: list[str]) -> np.ndarray:
    """Per relation text, `NAMED_FLOOR` where a word of the question names it by itself, else 0."""
    from gretriever_neo4j.reader.wording import same_stems

    return NAMED_FLOOR * same_stems([masked_question], relation_texts)[0]


class _TextsWhileWalking:
    """What `StoreGraphSource` asks of the store, answered with node texts while the beam walks: incident triples
    come with the texts of their ends (`GraphStore.kg_incident_texts`), and a node is registered without its
    vector, which `TextsFirstSource.node_vectors` fetches for the chosen subgraph only."""

    def __init__(self, store):
        self.store = store
        self.texts: dict[str, str] = {}

    def kg_incident(self, graph: str, keys, limit: int):
        by_key = self.store.kg_incident_texts(graph, keys, limit)
        for rows in by_key.values():
            for row in rows:
                self.texts[row["src"]] = row["src_text"] or ""
                self.texts[row["dst"]] = row["dst_text"] or ""
        return by_key

    def kg_node_vectors(self, graph: str, keys):
        missing = [k for k in keys if k not in self.texts]
        if missing:  # seeds: not met through an incident edge yet
            for row in self.store.kg_node_vectors(graph, missing):
                self.texts[row["key"]] = row["text"] or ""
        return [{"key": k, "text": self.texts[k], "embedding": None, "degree": 0} for k in keys if k in self.texts]

    def kg_relation_vectors(self, graph: str, texts):
        return self.store.kg_relation_vectors(graph, texts)


def texts_first_source(store, graph: str):
    from gretriever_neo4j.retrieval.learned import StoreGraphSource

    class TextsFirstSource(StoreGraphSource):
        def node_vectors(self, nodes: np.ndarray) -> np.ndarray:
            ids = np.asarray(nodes, dtype=np.int64).tolist()
            missing = [n for n in dict.fromkeys(ids) if self._node_vectors[n].ndim == 0]
            if missing:
                rows = {row["key"]: row for row in store.kg_node_vectors(graph, [self._node_keys[n] for n in missing])}
                for n in missing:
                    self._node_vectors[n] = np.asarray(rows[self._node_keys[n]]["embedding"], dtype=np.float32)
            return super().node_vectors(nodes)

        def candidate_graph(self, nodes: np.ndarray, edges: np.ndarray):
            if self._node_keys:  # the vectors of the chosen nodes (and of node 0, which tells the width)
                self.node_vectors(np.concatenate([[0], np.asarray(nodes, dtype=np.int64).reshape(-1)]))
            return super().candidate_graph(nodes, edges)

    return TextsFirstSource(_TextsWhileWalking(store), graph)


class PathKGRetriever:
    """Zero-shot retrieval over a stored KG (no training): the `Retriever` protocol over `PathRetriever`."""

    kind = "paths"
    description = DESCRIPTION

    def __init__(self, context: RetrievalContext, config: PathConfig = PathConfig(), cache: GraphCache | None = None):
        self.context = context
        self.store, self.embedder = context.store, context.embedder
        self.config = config
        self.cache = cache
        self.relations = RelationTexts.shared(self.embedder.embed)
        # per graph, at the version they were read at: a graph that changed (or was dropped and written again)
        # is read again
        self._warmed: dict[str, Any] = {}
        self._relation_words: dict[str, frozenset[str]] = {}
        self._relation_values: dict[str, tuple[Any, dict[str, tuple[int, int, int]]]] = {}
        self._lock = threading.Lock()

    def warm(self, graph: str) -> None:
        """What a first question would pay for, paid now (a server's preload)."""
        info = self.store.graph_info(graph)
        if info is not None:
            self._warm(graph, info.get("version"))

    def _warm(self, graph: str, version: Any) -> None:
        """Every relation text of the graph embedded once (per graph version), in batches, and kept on disk
        between processes (GQA_HOME/cache/relation_texts/<embedder>.npz): a first question then embeds nothing
        but itself."""
        with self._lock:
            if graph in self._warmed and self._warmed[graph] == version:
                return
            path = relation_cache_path(self.embedder.name)
            if not self.relations.known and path.is_file():
                try:
                    with np.load(path, allow_pickle=False) as data:
                        self.relations.known.update(zip(data["texts"].tolist(), data["vectors"]))
                except (OSError, ValueError, KeyError):
                    pass  # a damaged cache is rebuilt
            texts = self.store.kg_relation_texts(graph)
            self._relation_words[graph] = relation_name_words(texts)
            if self.relations.warm(texts):
                path.parent.mkdir(parents=True, exist_ok=True)
                texts = list(self.relations.known)
                partial = path.with_name(f".{path.name}.{os.getpid()}.npz")
                np.savez(partial, texts=np.asarray(texts), vectors=np.stack([self.relations.known[t] for t in texts]))
                partial.replace(path)
            self._warmed[graph] = version

    def _embed(self, texts: list[str]) -> np.ndarray:
        return np.asarray(self.embedder.embed(list(texts)), dtype=np.float32)

    def _retriever(self, graph: str, info: Mapping[str, Any]) -> tuple[PathRetriever, bool]:
        """Over the copy of the graph held in memory at the version `info` (its record) names (and True), else
        over Neo4j (and False). Both give the same subgraph (`relation_paths.beam_paths` orders by key)."""
        version = info.get("version")
        self._warm(graph, version)
        if self.cache is not None:
            cached = self.cache.get(graph, record=info)
            if cached is not None:
                with cached.extras_lock:
                    key = ("paths",)
                    if key not in cached.extras:
                        cached.extras[key] = PathRetriever(cached.kg, self._embed, self.config,
                                                           relations=self.relations, graph_name=graph,
                                                           relation_naming=named_by_words)
                    return cached.extras[key], True
        self.context.check_readable(graph, info)
        return PathRetriever(texts_first_source(self.store, graph), self._embed, self.config, relations=self.relations,
                             graph_name=graph, linking=StoreLinking(self.store,
                                                                    relation_words=self._relation_words.get(graph)),
                             relation_values=lambda: self._values(graph, version),
                             relation_naming=named_by_words), False

    def _values(self, graph: str, version: Any) -> dict[str, tuple[int, int, int]]:
        """The graph's relation value counts, read once per graph version (only when a question asks for a
        category)."""
        with self._lock:
            if graph not in self._relation_values or self._relation_values[graph][0] != version:
                self._relation_values[graph] = (version, self.store.kg_relation_values(graph))
            return self._relation_values[graph][1]

    @retried_once
    def retrieve(self, question: str, *, graph: str | None = None, params: RetrievalParams | None = None,
                 overrides: Mapping[str, Any] | None = None, record: bool = True) -> Retrieval:
        if graph is None:
            raise ConfigError("relation-path retrieval needs --graph (a stored knowledge graph)")
        asked = self.context.question(question, strip_markers=True)
        info = self.context.graph_info(graph)
        if info["kind"] != "kg":
            raise ConfigError(f"graph {graph!r} is a per-sample dataset; relation paths need a knowledge graph "
                              f"(use --retriever static)")
        started = time.perf_counter()
        retriever, held = self._retriever(graph, info)
        result = retriever.retrieve(asked.embedded, asked.vector)
        return self.context.finish(asked, graph=graph, dataset=info["dataset"], params=RetrievalParams(),
                                   result=result, timings_ms={"paths": ms_since(started)}, kind=self.kind,
                                   record=record, warnings=unused_parameters(self.kind, params, overrides),
                                   held=held)

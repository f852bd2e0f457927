"""The learned retriever (the question-conditioned triple scorer of `retrieval.learned`) over a stored KG, behind
the one `Retriever` protocol: `gqa ask`, `gqa eval`, `gqa train` and the service take `--retriever learned` and
the generator consumes its subgraphs unchanged. Training it is `train.learned_retriever`.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from gretriever_neo4j.errors import ConfigError
from gretriever_neo4j.retrieval.learned import LearnedRetriever, StoreGraphSource
from gretriever_neo4j.retrieval.linking import StoreLinking, relation_name_words
from gretriever_neo4j.retrieval.params import RetrievalParams
from gretriever_neo4j.retrievers.base import Retrieval, RetrievalContext, ms_since, retried_once, unused_parameters
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
        self.reads = StoredReads()
        self._lock = threading.Lock()

    def _embed(self, texts: list[str]) -> np.ndarray:
        return np.stack([self.embedder.embed_query(t).vector for t in texts])

    def _learned(self, graph: str, version: Any) -> LearnedRetriever:
        """The trained scorer over a source of this request's own: a store-backed source fills as the beam goes,
        and requests run in several threads of a server (they share `reads`)."""
        source = StoreGraphSource(_ReadsThroughMemory(self.store, self.reads, version), graph)
        linking = StoreLinking(self.store, relation_words=self.reads.relation_words(self.store, graph, version))
        with self._lock:
            if self._trained is None:
                self._trained = LearnedRetriever.from_checkpoint(self.checkpoint, source, embed=self._embed,
                                                                 linking=linking)
        return self._trained.over(source, linking)

    @retried_once
    def retrieve(self, question: str, *, graph: str | None = None, params: RetrievalParams | None = None,
                 overrides: Mapping[str, Any] | None = None, record: bool = True) -> Retrieval:
        if graph is None:
            raise ConfigError("--retriever learned needs --graph (the KG it was trained for)")
        asked = self.context.question(question, strip_markers=True)
        info = self.context.graph_info(graph)
        started = time.perf_counter()
        learned = None
        if self.cache is not None:
            learned = learned_over_cache(self.cache, graph, self.checkpoint, self._embed, record=info)
        if learned is None:
            self.context.check_readable(graph, info)
        result = (learned or self._learned(graph, info.get("version"))).retrieve(asked.text, asked.vector)
        return self.context.finish(asked, graph=graph, dataset=info["dataset"], params=RetrievalParams(),
                                   result=result, timings_ms={"learned": ms_since(started)}, kind=self.kind,
                                   record=record, warnings=unused_parameters(self.kind, params, overrides),
                                   held=learned is not None)


class StoredReads:
    """What learned retrievals over Neo4j read of a graph, kept for the requests after (one per retriever, shared
    by a server's threads): node rows (text, vector, degree), the incident triples of hubs, relation vectors and
    the words of relation names. A KG's hubs make most questions meet the same nodes (50 MetaQA questions: 330k
    incident triples read, 90% of them hanging on 90 nodes), and reading and decoding far ends' vectors was most of
    a retrieval's time through Neo4j. Bounded: `capacity` node rows (2.0 KB each; the first read go first)
    and `incident_capacity` triples of nodes with at least `hub` (0.75 KB each; the least recently used node goes
    first): about 155 MB in all at the defaults. A graph's reads are let go when its version moves (every
    completed change draws a new one, never given before), so no request sees a text, vector, degree or edge a
    change made stale."""

    INLINE_BELOW = 0.5  # read far ends' rows with the triples while fewer nodes than this were held lately

    def __init__(self, capacity: int = 40_000, incident_capacity: int = 100_000, hub: int = 64):
        self.capacity, self.incident_capacity, self.hub = capacity, incident_capacity, hub
        self._rows: dict[str, dict[str, dict[str, Any]]] = {}  # graph -> key -> row, in order of reading
        self._row_count = 0
        self._incident: OrderedDict[tuple[str, str, int], list[dict[str, Any]]] = OrderedDict()
        self._incident_rows = 0
        self._relations: dict[str, dict[str, np.ndarray]] = {}
        self._words: dict[str, frozenset[str]] = {}
        self._versions: dict[str, Any] = {}
        self._held_rate: dict[str, float] = {}  # per graph: the share of nodes asked for lately that were held
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return self._row_count

    def _at(self, graph: str, version: Any) -> None:
        """Forgets the graph's reads if they were made at another version (lock held)."""
        if graph in self._versions and self._versions[graph] != version:
            self._row_count -= len(self._rows.pop(graph, {}))
            for key in [k for k in self._incident if k[0] == graph]:
                self._incident_rows -= len(self._incident.pop(key))
            self._relations.pop(graph, None)
            self._words.pop(graph, None)
        self._versions[graph] = version

    def _current(self, graph: str, version: Any) -> bool:
        """Whether reads made at `version` may be kept: no newer version arrived meanwhile (lock held)."""
        return self._versions.get(graph) == version

    def node_rows(self, store, graph: str, version: Any, keys) -> list[dict[str, Any]]:
        """Rows of the given keys (unknown keys left out), from memory where held, else in one statement."""
        with self._lock:
            self._at(graph, version)
            rows = self._rows.setdefault(graph, {})
            held = {key: rows[key] for key in keys if key in rows}
            self._seen(graph, len(held), len(keys))
        missing = [k for k in dict.fromkeys(keys) if k not in held]
        if missing:
            fetched = [{**row, "embedding": _frozen(row["embedding"])} for row in store.kg_node_vectors(graph, missing)]
            held.update((row["key"], row) for row in fetched)
            self._keep_rows(graph, version, fetched)
        return [held[k] for k in keys if k in held]

    def _seen(self, graph: str, held: int, asked: int) -> None:
        """How often a node asked for was held, lately (lock held)."""
        if asked:
            rate = self._held_rate.get(graph, 0.0)
            self._held_rate[graph] = rate + min(asked / 2000, 1.0) * (held / asked - rate)

    def _keep_rows(self, graph: str, version: Any, fetched: list[dict[str, Any]]) -> None:
        with self._lock:
            if not self._current(graph, version):
                return
            rows = self._rows.setdefault(graph, {})
            before = len(rows)
            rows.update((row["key"], row) for row in fetched)
            self._row_count += len(rows) - before
            while self._row_count > self.capacity and rows:  # first in, first out
                del rows[next(iter(rows))]
                self._row_count -= 1

    def incident(self, store, graph: str, version: Any, keys, limit: int) -> dict[str, list[dict[str, Any]]]:
        """`GraphStore.kg_incident` for the given frontier: a hub's triples (`hub` or more) from memory where held;
        the others read as keys, or, while few of the nodes asked for lately were held (a process's first
        questions), with their far ends' rows in the same statement (`kg_incident_vectors`), which are kept: a first
        question then costs one statement a hop, as with nothing kept, and later ones read only what they lack.
        Nine in ten of the triples a MetaQA beam meets hang on the 90 nodes of most edges."""
        with self._lock:
            self._at(graph, version)
            held = {}
            for key in keys:
                rows = self._incident.get((graph, key, limit))
                if rows is not None:
                    self._incident.move_to_end((graph, key, limit))
                    held[key] = rows
            inline = self._held_rate.get(graph, 0.0) < self.INLINE_BELOW
        missing = [k for k in dict.fromkeys(keys) if k not in held]
        if not missing:
            return {k: held[k] for k in keys if k in held}
        if not inline:
            slim = store.kg_incident(graph, missing, limit)
        else:
            fetched = store.kg_incident_vectors(graph, missing, limit)
            far_ends = {row["neighbour"]: {"key": row["neighbour"], "text": row["neighbour_text"],
                                           "embedding": _frozen(row["neighbour_embedding"]),
                                           "degree": row["neighbour_degree"]}
                        for rows in fetched.values() for row in rows}
            with self._lock:
                known = self._rows.get(graph, {})
                self._seen(graph, sum(1 for key in far_ends if key in known), len(far_ends))
            self._keep_rows(graph, version, list(far_ends.values()))
            slim = {key: [{name: row[name] for name in ("ref", "src", "text", "dst", "neighbour")} for row in rows]
                    for key, rows in fetched.items()}  # the far ends' rows are kept apart
        held.update(slim)
        hubs = {key: rows for key, rows in slim.items() if len(rows) >= self.hub}
        with self._lock:
            if hubs and self._current(graph, version):
                for key, rows in hubs.items():
                    if (graph, key, limit) not in self._incident:
                        self._incident[(graph, key, limit)] = rows
                        self._incident_rows += len(rows)
                while self._incident_rows > self.incident_capacity and self._incident:
                    self._incident_rows -= len(self._incident.popitem(last=False)[1])
        return {k: held[k] for k in keys if k in held}

    def relation_vectors(self, store, graph: str, version: Any, texts) -> dict[str, np.ndarray]:
        with self._lock:
            self._at(graph, version)
            held = dict(self._relations.get(graph, {}))
        missing = [t for t in dict.fromkeys(texts) if t not in held]
        if missing:
            fetched = {text: _frozen(vector) for text, vector in store.kg_relation_vectors(graph, missing).items()}
            held.update(fetched)
            with self._lock:
                if self._current(graph, version):
                    self._relations.setdefault(graph, {}).update(fetched)
        return {t: held[t] for t in texts if t in held}

    def relation_words(self, store, graph: str, version: Any) -> frozenset[str]:
        with self._lock:
            self._at(graph, version)
            words = self._words.get(graph)
        if words is None:
            words = relation_name_words(store.kg_relation_texts(graph))
            with self._lock:
                if self._current(graph, version):
                    self._words[graph] = words
        return words


def _frozen(vector) -> np.ndarray | None:
    if vector is None:
        return None
    array = np.asarray(vector, dtype=np.float32)
    array.flags.writeable = False  # shared by every request that meets the node
    return array


class _ReadsThroughMemory:
    """What `StoreGraphSource` asks of the store, answered through the process's `StoredReads`: a hop reads the
    frontier's triples not held (with their far ends' rows) in one statement, and far ends not held otherwise in
    another."""

    def __init__(self, store, reads: StoredReads, version: Any):
        self.store, self.reads, self.version = store, reads, version

    def kg_incident(self, graph: str, keys, limit: int):
        return self.reads.incident(self.store, graph, self.version, keys, limit)

    def kg_node_vectors(self, graph: str, keys):
        return self.reads.node_rows(self.store, graph, self.version, keys)

    def kg_relation_vectors(self, graph: str, texts):
        return self.reads.relation_vectors(self.store, graph, self.version, texts)

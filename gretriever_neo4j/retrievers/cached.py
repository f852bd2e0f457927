"""Knowledge graphs held in memory by a long-running process (`gqa serve`), kept consistent with Neo4j.

Retrieval through Neo4j pays a round trip per hop and scores hub neighbourhoods in Cypher (hundreds of ms on
MetaQA). A serving process can instead hold each KG's adjacency and vectors (`KnowledgeGraph` and its whole
`CandidateGraph`, with every question-independent structure precomputed) and run the very algorithms of the
in-memory reference path, which the parity tests hold equal to the Neo4j path.

Consistency: a graph changes in one step as readers see it (`GraphStore.begin_change` / `end_change`): its
(:Graph) record says `writing` or `dropping` while a change is under way and names the last completed version,
which never repeats for other contents. Every retrieval reads the record once and hands it to `GraphCache.get`:
the copy held of that version answers, also while a change is under way (readers get the graph as it was until
the change completes); a copy of another version is let go. No copy is loaded while a change is under way, and a
load that met a change is thrown away. Without a copy (not loaded yet, or reloading after a change completed)
retrieval goes through Neo4j: the new version once the change is done (`RetrievalContext.check_readable` says
what is read while one is under way).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from gretriever_neo4j.retrieval.candidates import CandidateGraph
from gretriever_neo4j.retrieval.in_memory import retrieve as retrieve_in_memory
from gretriever_neo4j.retrieval.kg import KnowledgeGraph
from gretriever_neo4j.retrieval.params import RetrievalParams, params_for, with_overrides
from gretriever_neo4j.retrievers.base import Retrieval, RetrievalContext
from gretriever_neo4j.retrievers.neo4j import StaticRetriever
from gretriever_neo4j.store.graph_store import GraphStore

log = logging.getLogger(__name__)


@dataclass
class CachedGraph:
    graph: str
    version: Any
    kg: KnowledgeGraph
    candidate: CandidateGraph
    info: dict
    loaded_at: float = field(default_factory=time.time)
    extras: dict = field(default_factory=dict)  # per-graph objects built on it (learned retrievers…)
    extras_lock: threading.Lock = field(default_factory=threading.Lock, repr=False)


# The question-independent structures of a whole candidate graph (cached properties), computed at load.
PREPARED = ("prepared_nodes", "prepared_edges", "node_key_ranks", "edge_rank_key_ranks", "incidence",
            "edge_text_ranks", "edge_id_ranks", "key_to_index", "edge_id_to_index")


def _release_freed_memory() -> None:
    """Loading streams millions of rows through short-lived Python objects; glibc keeps the pages they freed
    unless asked to hand them back. Elsewhere: nothing."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


def warm(candidate: CandidateGraph) -> None:
    """Compute the question-independent structures once, before the first question pays for them."""
    for name in PREPARED:
        getattr(candidate, name)


_READ = object()  # `GraphCache.get` without a record: read it


class GraphCache:
    def __init__(self, store: GraphStore):
        self.store = store
        self._graphs: dict[str, CachedGraph] = {}
        self._loading: set[str] = set()
        self._lock = threading.Lock()
        self.loads = 0

    def load(self, graph: str) -> CachedGraph | None:
        """Read `graph` from Neo4j (blocking) and hold it. None for graphs that are not knowledge graphs, graphs
        under a change, and a load that a change met (the record read after it is not the one read before)."""
        info = self.store.graph_info(graph)
        if info is None or info["kind"] != "kg" or info.get("state"):
            return None
        version = info["version"]
        started = time.perf_counter()
        kg = KnowledgeGraph.from_store(self.store, graph)
        candidate = kg.to_whole_candidate_graph()
        warm(candidate)
        _release_freed_memory()
        after = self.store.graph_info(graph)
        if after is None or after.get("state") or after["version"] != version:
            log.info("graph %s changed while it was being cached (version %s); the next request loads it again",
                     graph, version)
            return None
        cached = CachedGraph(graph=graph, version=version, kg=kg, candidate=candidate, info=info)
        with self._lock:
            self._graphs[graph] = cached
            self.loads += 1
        log.info("cached graph %s (version %s): %d nodes, %d edges in %.1f s", graph, version, kg.num_nodes,
                 kg.num_edges, time.perf_counter() - started)
        return cached

    def load_in_background(self, graph: str) -> None:
        with self._lock:
            if graph in self._loading:
                return
            self._loading.add(graph)

        def run() -> None:
            try:
                self.load(graph)
            except Exception:  # the Neo4j path keeps answering; the next request tries again
                log.exception("caching graph %s failed", graph)
            finally:
                with self._lock:
                    self._loading.discard(graph)

        threading.Thread(target=run, name=f"cache-{graph}", daemon=True).start()

    def get(self, graph: str, *, record: Any = _READ, wait: bool = False) -> CachedGraph | None:
        """The copy that answers for `graph` now, given its record as the request read it (`GraphStore.graph_info`;
        read here when not given): the copy of the record's version, while a change is under way too. Otherwise
        None, and unless a change is under way a load starts in the background (with `wait`: runs, and its copy
        is returned)."""
        if record is _READ:
            record = self.store.graph_info(graph)
        with self._lock:
            cached = self._graphs.get(graph)
            if cached is not None and (record is None or record["version"] != cached.version):
                del self._graphs[graph]  # dropped, or a change completed since it was loaded
                cached = None
        if cached is not None or record is None or record["kind"] != "kg" or record.get("state"):
            return cached
        if wait:
            return self.load(graph)
        self.load_in_background(graph)
        return None

    def cached_graphs(self) -> dict[str, dict]:
        with self._lock:
            return {name: {"version": c.version, "nodes": c.kg.num_nodes, "edges": c.kg.num_edges,
                           "loaded_at": c.loaded_at} for name, c in self._graphs.items()}


class CachedStaticRetriever:
    """The paper's static retrieval over cached graphs, answering like `StaticRetriever` (and recorded the same
    way); graphs not cached (yet), per-sample graphs and unscoped questions go through Neo4j."""

    kind = StaticRetriever.kind
    description = StaticRetriever.description

    def __init__(self, context: RetrievalContext, cache: GraphCache):
        self.context = context
        self.neo4j = StaticRetriever(context)
        self.cache = cache

    def retrieve(self, question: str, *, graph: str | None = None, params: RetrievalParams | None = None,
                 overrides: Mapping[str, Any] | None = None, record: bool = True) -> Retrieval:
        cached = None
        if graph is not None:
            cached = self.cache.get(graph, record=self.context.graph_info(graph))
        if cached is None:
            return self.neo4j.retrieve(question, graph=graph, params=params, overrides=overrides, record=record)
        asked = self.context.question(question)
        params = with_overrides(params or params_for(cached.info["dataset"], cached.info["kind"]), overrides)
        result = retrieve_in_memory(cached.candidate, asked.vector, params)
        return self.context.finish(asked, graph=graph, dataset=cached.info["dataset"], params=params, result=result,
                                   timings_ms=result.timings_ms, kind=self.kind, record=record, held=True)


def learned_over_cache(cache: GraphCache, graph: str, checkpoint, embed, record: Any = _READ) -> Any:
    """A `LearnedRetriever` over the cached graph (built once per graph version), or None when not cached;
    `record`: the graph's record as the request read it (`GraphCache.get`)."""
    cached = cache.get(graph, record=record)
    if cached is None:
        return None
    from gretriever_neo4j.artifacts.freshness import file_stamp

    key = ("learned", str(checkpoint), file_stamp(checkpoint))  # a checkpoint rewritten (`gqa train`) loads anew
    with cached.extras_lock:
        if key not in cached.extras:
            from gretriever_neo4j.retrieval.learned import LearnedRetriever

            for stale in [held for held in cached.extras if held[:2] == key[:2]]:
                del cached.extras[stale]
            cached.extras[key] = LearnedRetriever.from_checkpoint(checkpoint, cached.kg, graph_name=graph,
                                                                  embed=embed)
        return cached.extras[key]

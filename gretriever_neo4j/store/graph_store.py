"""`GraphStore`, the one class that runs statements on Neo4j, and `connected` (a store over a fresh driver).

A `GraphStore` wraps a driver that the caller creates once per process (`open_driver`, in `store.driver`, which
also turns a server that went away into a `DatabaseError` in every method) and passes in, as
neo4j-graphrag-python does. Every statement comes from `cypher/*.cypher` by name, with its declared parameters
bound through `CypherQuery.bind`: user text only ever travels as a parameter. Reads are routed as reads. What
rows and parameters look like: `store.rows`; the statistics tallied from their rows: `store.statistics`.
`GraphStore` is written in three modules, each readable in one sitting: this one (plumbing, schema, the reads that
answer a question, retrieval records, statistics), `store.changes` (`GraphChanges`: ingest's reads and writes, the
change bracket, removal) and `store.kg_reads` (`KgReads`: a graph as the learned models read it), mixins it inherits.

Stored model:
  (:Node {graph, key, dataset, text, embedding})         unique on (graph, key)
  (:Node)-[:REL {graph, dataset, text}]->(:Node)          identified by (src, text, dst)
  (:Relation {graph, text, dataset, embedding})           unique on (graph, text): the one vector every edge
                                                          with that text in that graph shares (layout 2)
  (:Graph {id, dataset, kind, version, state})            one per stored graph, empty graphs included; version:
                                                          the last completed change's, drawn from the store-wide
                                                          GqaMeta.graph_versions (never repeated); state:
                                                          'writing' / 'dropping' while a change is under way;
                                                          source, source_query, source_element_ids: what the
                                                          last ingest read (`ingest.graphs.GraphSource`);
                                                          feedback_at: the last feedback (`store.feedback`)
  (:Question {dataset, qid, text, answers, split, graph, topic_entities})   those feedback made: also source
                                                          'feedback', not_answers, votes (`store.feedback`)
  (:Retrieval {id, question, graph, params, created, node_ids, rel_ids})   one per `gqa ask`; answer_keys,
                                                          answer_text, anchor_keys, confidence, unsure: the
                                                          answer shown and how sure it was (`record_answer`);
                                                          feedback on it: `store.feedback`
  (:GqaMeta {id: 'schema', embedder, dim, layout})        which embedder made the stored vectors; layout 2
                                                          (null: edges carry vectors, `gqa db migrate`);
                                                          graph_versions: the highest graph version given
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, TypeVar

import numpy as np

from gretriever_neo4j.errors import ConfigError, InputError
from gretriever_neo4j.settings import Neo4jSettings
from gretriever_neo4j.store.changes import DROPPING, WRITING, GraphChanges
from gretriever_neo4j.store.driver import open_driver, said_unavailable
from gretriever_neo4j.store.kg_reads import KgReads
from gretriever_neo4j.store.rows import (
    WriteBatch,
    cos_of_score,
    natural_key,
    record_dict,
    statement,
    vectors_param,
    with_cos,
)
from gretriever_neo4j.store.statistics import tally_statistics

__all__ = ["DROPPING", "FULLTEXT_INDEX", "LAYOUT", "NODE_VECTOR_INDEX", "RELATION_VECTOR_INDEX", "WRITING",
           "GraphStore", "WriteBatch", "connected", "needs_migration", "open_driver", "vectors_param"]

NODE_VECTOR_INDEX = "node_embedding"
RELATION_VECTOR_INDEX = "relation_embedding"
FULLTEXT_INDEX = "node_text"
LAYOUT = 2  # one vector per (graph, relation text) on a (:Relation); 1 (stored as null): a vector on every edge

T = TypeVar("T")


def needs_migration(layout: int | None) -> bool:
    """A store written in an earlier layout (`gqa db migrate`); an empty one (None) needs nothing."""
    return layout not in (None, LAYOUT)


_SCHEMA_STATEMENTS = (
    "schema_node_key", "schema_graph_id", "schema_question_key", "schema_retrieval_id",
    "schema_node_graph_index", "schema_node_dataset_index", "schema_rel_graph_index",
    "schema_question_split_index", "schema_node_fulltext", "schema_relation_key", "schema_rel_text_index",
    "schema_retrieval_graph_index",
)
_MAX_INDEX_CANDIDATES = 4096  # the most hits asked of a vector or fulltext index before scanning instead
# The node vector index's HNSW build settings. An ingest pays each node's insertion at commit, and that insertion
# (Lucene's search for the new vector's neighbours, `ef_construction` wide) is the largest part of the server's
# write work, and a narrower build inserts much faster than Neo4j's default 100. The narrower graph is then searched
# wider (`NODE_INDEX_ASK`): asked for 256 hits, it finds more of the exact 10 best nodes than the default build asked
# for 128, for a few ms more per query. Relation texts are few and keep the default build.
NODE_INDEX_BUILD = {"vector.hnsw.m": 16, "vector.hnsw.ef_construction": 32}
NODE_INDEX_ASK = (32, 256)  # hits asked of the node index for k seeds: max(32 k, 256), more if the graph has few
NODE_INDEX_KEEP = (16, 128)  # of which the graph's best max(16 k, 128) are returned, as many as before the wider ask


class GraphStore(GraphChanges, KgReads):
    def __init__(self, driver, database: str = "neo4j"):
        self._driver = driver
        self.database = database

    # -- plumbing ---------------------------------------------------------------------------------
    def read(self, name: str, **params: Any) -> list[dict[str, Any]]:
        import neo4j

        records, _, _ = self._driver.execute_query(*statement(name, params), database_=self.database,
                                                   routing_=neo4j.RoutingControl.READ)
        return [record_dict(record) for record in records]

    def write(self, name: str, **params: Any) -> list[dict[str, Any]]:
        import neo4j

        records, _, _ = self._driver.execute_query(*statement(name, params), database_=self.database,
                                                   routing_=neo4j.RoutingControl.WRITE)
        return [record_dict(record) for record in records]

    # -- schema -----------------------------------------------------------------------------------
    def embedder_info(self) -> tuple[str, int] | None:
        rows = self.read("schema_meta_get")
        return (rows[0]["embedder"], int(rows[0]["dim"])) if rows else None

    def layout(self) -> int | None:
        """The stored layout (`LAYOUT`: relation vectors shared), 1 for a store written before it, None: empty."""
        rows = self.read("schema_meta_get")
        return (rows[0]["layout"] or 1) if rows else None

    def needs_migration(self) -> bool:
        return needs_migration(self.layout())

    def check_layout(self) -> None:
        """A store whose edges still carry their own vectors is read by nothing here until migrated."""
        if self.needs_migration():
            raise ConfigError("this database keeps a vector on every edge (written by an earlier version of gqa): "
                              "run `gqa db migrate` once to share one vector per relation text")

    def ensure_schema(self, embedder: str, dim: int, *, reembed: bool = False) -> bool:
        """Creates constraints and indexes. Returns True when stored vectors were cleared for a new embedder."""
        self.check_layout()
        self.ensure_structure()
        existing = self.embedder_info()
        cleared = False
        if existing is not None and existing != (embedder, dim):
            if not reembed:
                raise ConfigError(
                    f"the stored graphs were embedded with '{existing[0]}' ({existing[1]}-d), "
                    f"not '{embedder}' ({dim}-d): "
                    f"use --embedder '{existing[0]}', or --reembed to re-embed every stored text with the new model")
            self.write("schema_drop_node_vector_index")
            self.write("schema_drop_relation_vector_index")
            self._clear_embeddings()
            cleared = True
        self.ensure_vector_indexes(dim)
        self.write("schema_meta_set", embedder=embedder, dim=int(dim), layout=LAYOUT)
        return cleared

    def ensure_structure(self) -> None:
        """Constraints, property and fulltext indexes (idempotent)."""
        for name in _SCHEMA_STATEMENTS:
            self.write(name)

    def transaction(self, work: Callable[[Callable[..., list[dict[str, Any]]]], T]) -> T:
        """`work(run)` as one write transaction: `run(name, **params)` runs a shipped statement in it and returns its
        rows. All of it commits, or none of it: an exception `work` raises rolls back and propagates. The driver runs
        `work` again after a transient failure (a deadlock), so it must touch the store only through `run`."""

        def unit(tx) -> T:
            return work(lambda name, **params: [record_dict(r) for r in tx.run(*statement(name, params))])

        with self._driver.session(database=self.database) as session:
            return session.execute_write(unit)

    def run_in_transactions(self, name: str, **params: Any) -> None:
        """An auto-commit statement (`CALL {…} IN TRANSACTIONS`): too large for one transaction, it commits its
        batches as it goes."""
        with self._driver.session(database=self.database) as session:
            session.run(*statement(name, params)).consume()

    def ensure_vector_indexes(self, dim: int, node_build: Mapping[str, Any] = NODE_INDEX_BUILD) -> None:
        """Creates the vector indexes if missing; `node_build`: the node index's HNSW settings."""
        # Unquantised: exact scores keep the Neo4j path equal to the in-memory reference.
        config = {"vector.dimensions": int(dim), "vector.similarity_function": "cosine",
                  "vector.quantization.enabled": False}
        self.write("schema_node_vector_index", options={"indexConfig": {**config, **node_build}})
        self.write("schema_relation_vector_index", options={"indexConfig": config})

    def node_index_outdated(self) -> bool:
        """Whether the node vector index was built with other HNSW settings than `NODE_INDEX_BUILD` (a store made
        by an earlier gqa: its reads are as good, its writes slower; `gqa db migrate` rebuilds it)."""
        for row in self.index_states():
            if row["name"] == NODE_VECTOR_INDEX:
                config = (row.get("options") or {}).get("indexConfig") or {}
                return any(config.get(key) != value for key, value in NODE_INDEX_BUILD.items())
        return False

    def rebuild_node_index(self, dim: int, build: Mapping[str, Any] = NODE_INDEX_BUILD, seconds: int = 3600) -> None:
        """Drops the node vector index and builds it again with `build` (this version's settings), waiting until it
        is online (the nodes' vectors stay; until then vector seeds are not found)."""
        self.write("schema_drop_node_vector_index")
        self.ensure_vector_indexes(dim, build)
        self.await_indexes(seconds)

    def _clear_embeddings(self, batch: int = 10_000) -> None:
        for name in ("embeddings_clear_nodes", "embeddings_clear_relations"):
            while self.write(name, batch=batch)[0]["cleared"]:
                pass

    def await_indexes(self, seconds: int = 300) -> None:
        self.write("schema_await_indexes", seconds=int(seconds))

    def index_states(self) -> list[dict[str, Any]]:
        return self.read("index_states")

    # -- retrieval --------------------------------------------------------------------------------
    def graph_version(self, graph: str) -> int | None:
        """The last completed change's version, never repeated for other contents, a dropped graph's included
        (None: unknown graph, one whose first change is under way, or one written before versions existed)."""
        rows = self.read("graph_version", graph=graph)
        return rows[0]["version"] if rows else None

    def graph_info(self, graph: str) -> dict[str, Any] | None:
        """id, dataset, kind, version (`graph_version`) and state (None, or `WRITING` / `DROPPING` while a change
        is under way); None for an unknown graph."""
        rows = self.read("graph_info", graph=graph)
        return rows[0] if rows else None

    def seed_nodes(self, vector: np.ndarray, k: int, graph: str | None) -> list[dict[str, Any]]:
        """Up to k best nodes by cosine (as `cos`, in [-1, 1]). The index ranks across all stored graphs, so it is
        asked for more until k hits fall in `graph`; past that, an exact scan of the graph answers."""
        return self._seeds("seed_nodes_vector", "seed_nodes_exact", vector, k, graph)

    def relation_edges(self, graph: str, text: str, k: int) -> list[dict[str, Any]]:
        """The first `k` edges with one relation text in (source key, target key) order: src, text, dst, ref."""
        return self.read("relation_edges", graph=graph, text=text, k=int(k))

    def _seeds(self, by_index: str, by_scan: str, vector, k: int, graph) -> list[dict[str, Any]]:
        if k <= 0:
            return []
        query_vector = vectors_param(np.asarray(vector)[None, :])[0]
        asked = max(NODE_INDEX_ASK[0] * k, NODE_INDEX_ASK[1])
        keep = max(NODE_INDEX_KEEP[0] * k, NODE_INDEX_KEEP[1])
        while True:
            rows = self.read(by_index, k=asked, keep=keep, vector=query_vector, graph=graph)
            if len(rows) >= k or asked >= _MAX_INDEX_CANDIDATES or graph is None:
                break
            asked *= 8
        if len(rows) >= k or graph is None:
            return [with_cos(row) for row in rows]
        return [with_cos(row) for row in self.read(by_scan, k=k, vector=query_vector, graph=graph)]

    def incident_edges(self, graph: str, frontier: Sequence[str], vector: np.ndarray,
                       fanout: int, relation_cos: Mapping[str, float] | None = None) -> dict[str, dict[str, Any]]:
        """For each frontier node: its text and cosine to the question, and its best `fanout` incident edges with
        the cosines of the edge and of the neighbour (ordering in cypher/neighbourhood_incident).
        `relation_cos`: the question's cosine to relation texts the caller already knows (not read again)."""
        if not frontier:
            return {}
        scores = None if relation_cos is None else {t: (1.0 + float(c)) / 2.0 for t, c in relation_cos.items()}
        rows = self.read("neighbourhood_incident", graph=graph, frontier=list(frontier),
                         vector=vectors_param(np.asarray(vector)[None, :])[0], fanout=int(fanout),
                         relation_scores=scores)
        return {row["key"]: {
            "text": row["text"], "ref": row["ref"], "cos": cos_of_score(row["score"]), "degree": row["degree"],
            "incident": [{**e, "edge_cos": cos_of_score(e["edge_score"]),
                          "neighbour_cos": cos_of_score(e["neighbour_score"])}
                         for e in row["incident"]]} for row in rows}

    def hub_incident(self, graph: str, keys: Sequence[str]) -> dict[str, dict[str, Any]]:
        """For each node: its text, element id and vector, and all its incident edges (edge_id, src, dst, text) with
        the far end's key, text, element id and vector (`neighbour_embedding`)."""
        if not keys:
            return {}
        return {row["key"]: row for row in self.read("hub_incident", graph=graph, keys=list(keys))}

    def incident_edges_within(self, graph: str, frontier: Sequence[str], within_refs: Sequence[str],
                              vector: np.ndarray,
                              relation_cos: Mapping[str, float] | None = None) -> dict[str, list[dict[str, Any]]]:
        """For each frontier node: every incident edge whose other end is one of the nodes `within_refs` names (by
        element id), unordered, with the cosine of its text (`cypher/neighbourhood_within`); the caller knows the
        nodes' cosines."""
        if not frontier:
            return {}
        scores = None if relation_cos is None else {t: (1.0 + float(c)) / 2.0 for t, c in relation_cos.items()}
        rows = self.read("neighbourhood_within", graph=graph, frontier=list(frontier), within=list(within_refs),
                         vector=vectors_param(np.asarray(vector)[None, :])[0], relation_scores=scores)
        return {row["key"]: [{**e, "edge_cos": cos_of_score(e["edge_score"])} for e in row["incident"]]
                for row in rows}

    def scored_nodes(self, graph: str, keys: Sequence[str], vector: np.ndarray) -> dict[str, dict[str, Any]]:
        if not keys:
            return {}
        rows = self.read("nodes_scored", graph=graph, keys=list(keys),
                         vector=vectors_param(np.asarray(vector)[None, :])[0])
        return {row["key"]: {"text": row["text"], "ref": row["ref"], "cos": cos_of_score(row["score"])} for row in rows}

    def graph_nodes(self, graph: str, keys: Sequence[str] | None = None) -> list[dict[str, Any]]:
        """Nodes with text, vector and element id (`ref`): those keys in their order, or else the whole graph in
        natural key order ("2" before "10")."""
        if keys is not None:
            return self.read("nodes_by_key", graph=graph, keys=list(keys)) if keys else []
        return sorted(self.read("graph_nodes", graph=graph), key=lambda row: natural_key(row["key"]))

    def node_refs(self, graph: str, keys: Sequence[str]) -> dict[str, str]:
        """key -> element id of the given nodes (no vectors travel)."""
        if not keys:
            return {}
        return {row["key"]: row["ref"] for row in self.read("node_refs", graph=graph, keys=list(keys))}

    def graph_edges(self, graph: str, refs: Sequence[str] | None = None,
                    relation_vectors: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
        """Edges with their relation's vector, by element id in the order given, or else every edge of the graph
        in natural order. `relation_vectors`: the vectors of texts the caller already holds (only the others are
        read; without it, every relation text of the graph is)."""
        if refs is not None:
            rows = self.read("edges_by_ref", refs=list(refs)) if refs else []
        else:
            rows = sorted(self.read("graph_edges", graph=graph),
                          key=lambda row: (natural_key(row["src"]), natural_key(row["dst"]), row["text"]))
        if rows:
            if relation_vectors is None:
                vectors = self.graph_relations(graph)
            else:
                missing = sorted({row["text"] for row in rows} - relation_vectors.keys())
                vectors = {**relation_vectors, **self.kg_relation_vectors(graph, missing)}
            for row in rows:
                row["embedding"] = vectors.get(row["text"])
        return rows

    def graph_relations(self, graph: str) -> dict[str, list[float] | None]:
        """text -> vector of every relation text of one graph."""
        return {row["text"]: row["embedding"] for row in self.read("graph_relations", graph=graph)}

    def record_retrieval(self, *, id: str, question: str, graph: str, params: str, node_refs: list[str],
                         rel_refs: list[str], textualized: str, timings: str) -> str:
        return self.write("retrieval_record", id=id, question=question, graph=graph, params=params,
                          node_refs=node_refs, rel_refs=rel_refs, textualized=textualized, timings=timings)[0]["id"]

    def record_answer(self, *, id: str, answer_keys: list[str], answer_text: str, anchor_keys: list[str],
                      confidence: float | None = None, unsure: bool = False) -> bool:
        """Keeps the answer shown for a recorded retrieval (what feedback on it refers to) and how sure it was
        (`confidence`: the calibrated probability that it is right, None where nothing estimated it; `unsure`);
        False: no such retrieval (its graph was dropped meanwhile)."""
        return bool(self.write("retrieval_answer_set", id=id, answer_keys=answer_keys, answer_text=answer_text,
                               anchor_keys=anchor_keys, confidence=None if confidence is None else float(confidence),
                               unsure=bool(unsure)))

    def retrieval(self, id: str) -> dict[str, Any] | None:
        rows = self.read("retrieval_get", id=id)
        return rows[0] if rows else None

    def retrieval_subgraph(self, id: str) -> tuple[set[str], set[str]]:
        """Element ids of the nodes and relationships that the Browser statement of a retrieval returns: its own,
        and for a graph `gqa ingest neo4j` read from this database, the source nodes behind them."""
        import neo4j

        records, _, _ = self._driver.execute_query(*statement("retrieval_subgraph", {"id": id}),
                                                   database_=self.database, routing_=neo4j.RoutingControl.READ)
        nodes, rels = set(), set()
        for record in records:
            nodes.add(record["n"].element_id)
            if record["e"] is not None:
                rels.add(record["e"].element_id)
                nodes.add(record["m"].element_id)
            if record["s"] is not None:
                nodes.add(record["s"].element_id)
        return nodes, rels

    def questions(self, dataset: str, split: str | None = None) -> list[dict[str, Any]]:
        return self.read("questions_by_split", dataset=dataset, split=split)

    def question_datasets(self, graph: str) -> list[dict[str, Any]]:
        """(dataset, questions) of the questions asked over `graph`, most first."""
        return self.read("question_datasets", graph=graph)

    # -- what is stored: `gqa drop`'s counts, `gqa stats` --------------------------------------------
    def graph_counts(self, graph: str) -> dict[str, Any]:
        """Nodes, edges, questions and retrievals of `graph`, and whether a (:Graph) record names it."""
        return self.read("graph_counts", graph=graph)[0]

    def fingerprint(self) -> tuple:
        """Cheap (count store + graph versions): changes whenever what `stats` reports may have changed."""
        row = self.read("store_fingerprint")[0]
        return tuple(row[k] for k in ("nodes", "edges", "questions", "graphs", "versions"))

    def stats(self) -> dict[str, dict[str, Any]]:
        """Per dataset: graphs, nodes, edges, embedded texts and questions per split."""
        return self.statistics()["datasets"]

    def statistics(self) -> dict[str, dict[str, dict[str, Any]]]:
        """{"graphs": per graph, "datasets": per dataset}, from one scan of nodes, edges and questions."""
        return tally_statistics(self.read("stats_graph_records"), self.read("stats_graph_nodes"),
                                self.read("stats_graph_edges"), self.read("stats_graph_questions"))

    # -- linking (learned retrieval's reads: `KgReads`) ----------------------------------------------
    def fulltext_nodes(self, query: str, graph: str | None, limit: int) -> list[dict[str, Any]]:
        """Up to `limit` nodes of `graph` matching a Lucene `query` in the `node_text` index, best first
        (key, text, graph, score, ref). The index spans all graphs: more hits are asked for until `limit`
        fall in `graph` or the index has no more."""
        from neo4j.exceptions import ClientError
        fetch = max(2 * limit, 16)
        while limit > 0:
            try:
                row = self.read("linking_fulltext", query=query, graph=graph, fetch=fetch)[0]
            except ClientError as error:
                raise InputError(f"the fulltext index rejected a query: {error.message}", field="query") from None
            hits = sorted(row["rows"], key=lambda hit: (-hit["score"], hit["key"]))
            if len(hits) >= limit or row["fetched"] < fetch or fetch >= _MAX_INDEX_CANDIDATES:
                return hits[:limit]
            fetch *= 4
        return []

    def fulltext_nodes_many(self, queries: Sequence[str], graph: str | None, limit: int) -> list[list[dict[str, Any]]]:
        """`fulltext_nodes` for several queries in one round trip per widening; one list per query."""
        from neo4j.exceptions import ClientError
        if limit <= 0 or not queries:
            return [[] for _ in queries]
        out: list[list[dict[str, Any]] | None] = [None] * len(queries)
        fetch = max(2 * limit, 16)
        todo = list(range(len(queries)))
        while todo:
            try:
                rows = self.read("linking_fulltext_many", queries=[queries[i] for i in todo], graph=graph, fetch=fetch)
            except ClientError as error:
                raise InputError(f"the fulltext index rejected a query: {error.message}", field="query") from None
            widen = []
            for row in rows:
                i = todo[row["i"]]
                hits = sorted(row["rows"], key=lambda hit: (-hit["score"], hit["key"]))
                out[i] = hits[:limit]
                if len(hits) < limit and row["fetched"] >= fetch and fetch < _MAX_INDEX_CANDIDATES:
                    widen.append(i)
            todo, fetch = widen, fetch * 4
        return [hits or [] for hits in out]


# Every method, the mixins' included, set on `GraphStore` itself with its driver errors said (`said_unavailable`).
_methods = {name: method for base in reversed(GraphStore.__mro__[:-1]) for name, method in vars(base).items()}
for _name, _method in _methods.items():
    if callable(_method) and not _name.startswith("__") and not isinstance(_method, (staticmethod, classmethod)):
        setattr(GraphStore, _name, said_unavailable(_method))


@contextmanager
def connected(settings: Neo4jSettings) -> Iterator[GraphStore]:
    driver = open_driver(settings)
    try:
        yield GraphStore(driver, settings.database)
    finally:
        driver.close()

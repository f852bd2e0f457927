"""The one module that talks to Neo4j.

A `GraphStore` wraps a driver that the caller creates once per process (`open_driver`) and passes in, as
neo4j-graphrag-python does. Every statement comes from `cypher/*.cypher` by name, with its declared parameters
bound through `CypherQuery.bind`: user text only ever travels as a parameter. Reads are routed as reads.

Stored model:
  (:Node {graph, key, dataset, text, embedding})         unique on (graph, key)
  (:Node)-[:REL {graph, dataset, text, embedding}]->(:Node)  identified by (src, text, dst)
  (:Graph {id, dataset, kind})                            one per stored graph, empty graphs included
  (:Question {dataset, qid, text, answers, split, graph, topic_entities})
  (:Retrieval {id, question, graph, params, created, node_ids, rel_ids})   one per `gqa ask`
  (:GqaMeta {id: 'schema', embedder, dim})                which embedder made the stored vectors
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Iterator

import numpy as np

from gretriever_neo4j import cypher
from gretriever_neo4j.errors import ConfigError, DatabaseError, driver_unavailable
from gretriever_neo4j.settings import Neo4jSettings

NODE_VECTOR_INDEX = "node_embedding"
REL_VECTOR_INDEX = "rel_embedding"
FULLTEXT_INDEX = "node_text"

_SCHEMA_STATEMENTS = (
    "schema_node_key", "schema_graph_id", "schema_question_key", "schema_retrieval_id",
    "schema_node_graph_index", "schema_node_dataset_index", "schema_rel_graph_index",
    "schema_question_split_index", "schema_node_fulltext",
)


def open_driver(settings: Neo4jSettings, *, retry_s: float | None = None):
    """One driver per process; fails early with a message that says what to do.

    `retry_s` bounds how long a statement is retried while the server is unreachable (the driver's default is
    30 s): a service would rather answer 503 at once and let the client retry."""
    import neo4j
    from neo4j.exceptions import AuthError, ServiceUnavailable

    if not settings.password:
        raise DatabaseError("no Neo4j password: set NEO4J_PASSWORD (or start the bundled server with `gqa db start`)")
    bounded = {} if retry_s is None else {"max_transaction_retry_time": retry_s, "connection_timeout": retry_s,
                                          "connection_acquisition_timeout": retry_s}
    driver = neo4j.GraphDatabase.driver(
        settings.uri, auth=(settings.user, settings.password),
        # "label does not exist" warnings on a fresh database are expected, not news for the user.
        notifications_min_severity=neo4j.NotificationMinimumSeverity.OFF, **bounded)
    try:
        driver.verify_connectivity()
    except AuthError:
        driver.close()
        raise DatabaseError(f"Neo4j at {settings.uri} refused user '{settings.user}': wrong NEO4J_USER/NEO4J_PASSWORD") from None
    except (ServiceUnavailable, OSError, ValueError) as exc:
        driver.close()
        raise DatabaseError(f"Neo4j is not reachable at {settings.uri} ({exc.__class__.__name__}); "
                            "start it with `gqa db start` or set NEO4J_URI") from None
    return driver


@contextmanager
def connected(settings: Neo4jSettings) -> Iterator["GraphStore"]:
    driver = open_driver(settings)
    try:
        yield GraphStore(driver, settings.database)
    finally:
        driver.close()


@dataclass
class WriteBatch:
    """Everything one transaction writes. Vectors are sent once per distinct text; rows point at them."""

    graphs: list[dict[str, Any]] = field(default_factory=list)
    nodes: list[dict[str, Any]] = field(default_factory=list)  # graph, dataset, key, text, vector
    node_vectors: list[list[float]] = field(default_factory=list)
    edges: list[dict[str, Any]] = field(default_factory=list)  # graph, dataset, src, text, dst, vector
    edge_vectors: list[list[float]] = field(default_factory=list)
    questions: list[dict[str, Any]] = field(default_factory=list)


class GraphStore:
    def __init__(self, driver, database: str = "neo4j"):
        self._driver = driver
        self.database = database

    # -- plumbing ---------------------------------------------------------------------------------
    def read(self, name: str, **params: Any) -> list[dict[str, Any]]:
        import neo4j

        query = cypher.load(name)
        records, _, _ = self._driver.execute_query(
            query.text, query.bind(**params), database_=self.database, routing_=neo4j.RoutingControl.READ)
        return [record.data() for record in records]

    def write(self, name: str, **params: Any) -> list[dict[str, Any]]:
        import neo4j

        query = cypher.load(name)
        records, _, _ = self._driver.execute_query(
            query.text, query.bind(**params), database_=self.database, routing_=neo4j.RoutingControl.WRITE)
        return [record.data() for record in records]

    # -- schema -----------------------------------------------------------------------------------
    def embedder_info(self) -> tuple[str, int] | None:
        rows = self.read("schema_meta_get")
        return (rows[0]["embedder"], int(rows[0]["dim"])) if rows else None

    def ensure_schema(self, embedder: str, dim: int, *, reembed: bool = False) -> bool:
        """Creates constraints and indexes. Returns True when stored vectors were cleared for a new embedder."""
        for name in _SCHEMA_STATEMENTS:
            self.write(name)
        existing = self.embedder_info()
        cleared = False
        if existing is not None and existing != (embedder, dim):
            if not reembed:
                raise ConfigError(
                    f"the stored graphs were embedded with '{existing[0]}' ({existing[1]}-d), not '{embedder}' ({dim}-d): "
                    f"use --embedder '{existing[0]}', or --reembed to re-embed every stored text with the new model")
            self.write("schema_drop_node_vector_index")
            self.write("schema_drop_rel_vector_index")
            self._clear_embeddings()
            cleared = True
        # Unquantised: exact scores keep the Neo4j path equal to the in-memory reference.
        options = {"indexConfig": {"vector.dimensions": int(dim), "vector.similarity_function": "cosine",
                                   "vector.quantization.enabled": False}}
        self.write("schema_node_vector_index", options=options)
        self.write("schema_rel_vector_index", options=options)
        self.write("schema_meta_set", embedder=embedder, dim=int(dim))
        return cleared

    def _clear_embeddings(self, batch: int = 10_000) -> None:
        for name in ("embeddings_clear_nodes", "embeddings_clear_rels"):
            while self.write(name, batch=batch)[0]["cleared"]:
                pass

    def await_indexes(self, seconds: int = 300) -> None:
        self.write("schema_await_indexes", seconds=int(seconds))

    def index_states(self) -> list[dict[str, Any]]:
        return self.read("index_states")

    # -- ingest -----------------------------------------------------------------------------------
    def embedded_nodes(self, rows: Sequence[dict[str, Any]]) -> set[int]:
        """Indices of rows (graph, key, text, i) already stored with that text and a vector."""
        if not rows:
            return set()
        return {r["i"] for r in self.read("nodes_embedded", rows=list(rows))}

    def embedded_edges(self, rows: Sequence[dict[str, Any]]) -> set[int]:
        if not rows:
            return set()
        return {r["i"] for r in self.read("edges_embedded", rows=list(rows))}

    def write_batch(self, batch: WriteBatch) -> None:
        """One transaction: a failure leaves nothing of the batch behind."""

        def work(tx) -> None:
            if batch.graphs:
                self._tx(tx, "graphs_upsert", graphs=batch.graphs)
            if batch.nodes:
                written = self._tx(tx, "nodes_upsert", rows=batch.nodes, vectors=batch.node_vectors)
                _expect(written, len(batch.nodes), "nodes")
            if batch.edges:
                written = self._tx(tx, "edges_upsert", rows=batch.edges, vectors=batch.edge_vectors)
                _expect(written, len(batch.edges), "edges (an endpoint is missing)")
            if batch.questions:
                self._tx(tx, "questions_upsert", rows=batch.questions)

        with self._driver.session(database=self.database) as session:
            session.execute_write(work)

    @staticmethod
    def _tx(tx, name: str, **params: Any) -> int:
        query = cypher.load(name)
        records = list(tx.run(query.text, query.bind(**params)))
        return int(records[0]["written"]) if records and "written" in records[0].keys() else 0

    def reembed(self, embed, batch: int = 2000) -> int:
        """Embeds every node and relationship text that has no vector (after an embedder change)."""
        done = 0
        for page_query, set_query in (("nodes_without_embedding", "nodes_set_embedding"),
                                      ("rels_without_embedding", "rels_set_embedding")):
            while rows := self.read(page_query, batch=batch):
                texts = list(dict.fromkeys(r["text"] or "" for r in rows))
                vectors = embed(texts)
                slot = {t: i for i, t in enumerate(texts)}
                self.write(set_query, rows=[{"id": r["id"], "vector": slot[r["text"] or ""]} for r in rows],
                           vectors=vectors_param(vectors))
                done += len(rows)
        return done

    # -- retrieval --------------------------------------------------------------------------------
    def graph_version(self, graph: str) -> int | None:
        """Bumped by every write to the graph (None: unknown graph, or written before versions existed)."""
        rows = self.read("graph_version", graph=graph)
        return rows[0]["version"] if rows else None

    def graph_info(self, graph: str) -> dict[str, Any] | None:
        rows = self.read("graph_info", graph=graph)
        return rows[0] if rows else None

    def seed_nodes(self, vector: np.ndarray, k: int, graph: str | None) -> list[dict[str, Any]]:
        """Up to k best nodes by cosine (as `cos`, in [-1, 1]). The index ranks across all stored graphs, so it is
        asked for more until k hits fall in `graph`; past that, an exact scan of the graph answers."""
        return self._seeds("seed_nodes_vector", "seed_nodes_exact", vector, k, graph)

    def seed_edges(self, vector: np.ndarray, k: int, graph: str | None) -> list[dict[str, Any]]:
        return self._seeds("seed_edges_vector", "seed_edges_exact", vector, k, graph)

    def _seeds(self, by_index: str, by_scan: str, vector, k: int, graph) -> list[dict[str, Any]]:
        if k <= 0:
            return []
        query_vector = vectors_param(np.asarray(vector)[None, :])[0]
        asked = max(16 * k, 128)
        while True:
            rows = self.read(by_index, k=asked, vector=query_vector, graph=graph)
            if len(rows) >= k or asked >= _MAX_INDEX_CANDIDATES or graph is None:
                break
            asked *= 8
        if len(rows) >= k or graph is None:
            return [_cosine(row) for row in rows]
        return [_cosine(row) for row in self.read(by_scan, k=k, vector=query_vector, graph=graph)]

    def incident_edges(self, graph: str, frontier: Sequence[str], vector: np.ndarray,
                       fanout: int) -> dict[str, dict[str, Any]]:
        """For each frontier node: its text and cosine to the question, and its best `fanout` incident edges with
        the cosines of the edge and of the neighbour (ordering in cypher/neighbourhood_incident)."""
        if not frontier:
            return {}
        rows = self.read("neighbourhood_incident", graph=graph, frontier=list(frontier),
                         vector=vectors_param(np.asarray(vector)[None, :])[0], fanout=int(fanout))
        return {row["key"]: {
            "text": row["text"], "ref": row["ref"], "cos": _cos(row["score"]),
            "incident": [{**e, "edge_cos": _cos(e["edge_score"]), "neighbour_cos": _cos(e["neighbour_score"])}
                         for e in row["incident"]]} for row in rows}

    def scored_nodes(self, graph: str, keys: Sequence[str], vector: np.ndarray) -> dict[str, dict[str, Any]]:
        if not keys:
            return {}
        rows = self.read("nodes_scored", graph=graph, keys=list(keys),
                         vector=vectors_param(np.asarray(vector)[None, :])[0])
        return {row["key"]: {"text": row["text"], "ref": row["ref"], "cos": _cos(row["score"])} for row in rows}

    def graph_nodes(self, graph: str, keys: Sequence[str] | None = None) -> list[dict[str, Any]]:
        """Nodes with text, vector and element id (`ref`): those keys in their order, or else the whole graph in
        natural key order ("2" before "10")."""
        if keys is not None:
            return self.read("graph_nodes", graph=graph, keys=list(keys))
        return sorted(self.read("graph_nodes", graph=graph, keys=None), key=lambda row: _natural(row["key"]))

    def node_refs(self, graph: str, keys: Sequence[str]) -> dict[str, str]:
        """key -> element id of the given nodes (no vectors travel)."""
        if not keys:
            return {}
        return {row["key"]: row["ref"] for row in self.read("node_refs", graph=graph, keys=list(keys))}

    def graph_edges(self, graph: str, refs: Sequence[str] | None = None) -> list[dict[str, Any]]:
        """Edges by element id in the order given, or else every edge of the graph in natural order."""
        if refs is not None:
            return self.read("edges_by_ref", refs=list(refs)) if refs else []
        rows = self.read("graph_edges", graph=graph)
        return sorted(rows, key=lambda row: (_natural(row["src"]), _natural(row["dst"]), row["text"]))

    def record_retrieval(self, *, id: str, question: str, graph: str, params: str, node_refs: list[str],
                         rel_refs: list[str], textualized: str, timings: str) -> str:
        return self.write("retrieval_record", id=id, question=question, graph=graph, params=params,
                          node_refs=node_refs, rel_refs=rel_refs, textualized=textualized, timings=timings)[0]["id"]

    def retrieval(self, id: str) -> dict[str, Any] | None:
        rows = self.read("retrieval_get", id=id)
        return rows[0] if rows else None

    def retrieval_subgraph(self, id: str) -> tuple[set[str], set[str]]:
        """Element ids of the nodes and relationships that the Browser statement of a retrieval returns."""
        import neo4j

        query = cypher.load("retrieval_subgraph")
        records, _, _ = self._driver.execute_query(query.text, query.bind(id=id), database_=self.database,
                                                   routing_=neo4j.RoutingControl.READ)
        nodes, rels = set(), set()
        for record in records:
            nodes.add(record["n"].element_id)
            if record["e"] is not None:
                rels.add(record["e"].element_id)
                nodes.add(record["m"].element_id)
        return nodes, rels

    def questions(self, dataset: str, split: str | None = None) -> list[dict[str, Any]]:
        return self.read("questions_by_split", dataset=dataset, split=split)

    def question_datasets(self, graph: str) -> list[dict[str, Any]]:
        """(dataset, questions) of the questions asked over `graph`, most first."""
        return self.read("question_datasets", graph=graph)

    def write_questions(self, rows: Sequence[dict[str, Any]], batch: int = 5000) -> int:
        """Upserts question rows (dataset, qid, text, answers, split, graph, topic_entities), one transaction per
        `batch` rows; returns how many were written."""
        written = 0
        for start in range(0, len(rows), batch):
            chunk = list(rows[start:start + batch])
            self.write_batch(WriteBatch(questions=chunk))
            written += len(chunk)
        return written

    # -- removal: `gqa drop`, `--sync` ------------------------------------------------------------------
    def graph_counts(self, graph: str) -> dict[str, Any]:
        """Nodes, edges, questions and retrievals of `graph`, and whether a (:Graph) record names it."""
        return self.read("graph_counts", graph=graph)[0]

    def bump_graph_version(self, graph: str) -> None:
        self.write("graph_bump_version", graph=graph)

    def drop_graph(self, graph: str, *, batch: int = 10_000,
                   on_progress: Callable[[str, int], None] | None = None) -> dict[str, int]:
        """Deletes everything of `graph`, each kind in transactions of at most `batch` items (a large graph never
        has to fit in one transaction), edges before nodes, the graph record last (so an interrupted drop can be
        run again). The version bump first tells caches to let go of the graph. Returns the counts deleted."""
        self.bump_graph_version(graph)
        deleted: dict[str, int] = {}
        for kind, name in (("edges", "drop_rels_batch"), ("nodes", "drop_nodes_batch"),
                           ("questions", "drop_questions_batch"), ("retrievals", "drop_retrievals_batch")):
            deleted[kind] = 0
            while count := int(self.write(name, graph=graph, batch=int(batch))[0]["deleted"]):
                deleted[kind] += count
                if on_progress:
                    on_progress(kind, deleted[kind])
        deleted["graph_records"] = int(self.write("drop_graph_record", graph=graph)[0]["deleted"])
        return deleted

    def delete_edges(self, graph: str, rows: Sequence[dict[str, Any]], batch: int = 5000) -> int:
        """Deletes edges given as (src, text, dst) rows, one transaction per `batch`."""
        return self._delete_in_batches("sync_delete_edges", "rows", rows, batch, graph=graph)

    def delete_nodes(self, graph: str, keys: Sequence[str], batch: int = 5000) -> int:
        return self._delete_in_batches("sync_delete_nodes", "keys", keys, batch, graph=graph)

    def question_ids(self, dataset: str, graph: str) -> set[str]:
        return {row["qid"] for row in self.read("question_ids", dataset=dataset, graph=graph)}

    def delete_questions(self, dataset: str, qids: Sequence[str], batch: int = 5000) -> int:
        return self._delete_in_batches("questions_delete", "qids", qids, batch, dataset=dataset)

    def delete_questions_except(self, dataset: str, graph: str, keep: set[str]) -> int:
        """--sync: deletes the questions of `dataset` over `graph` whose ids are not in `keep`."""
        return self.delete_questions(dataset, sorted(self.question_ids(dataset, graph) - keep))

    def _delete_in_batches(self, name: str, param: str, items: Sequence[Any], batch: int, **params: Any) -> int:
        """Runs the deleting query `name` over `items` passed as `param`, one transaction per `batch`; returns
        how many it deleted."""
        items = list(items)
        return sum(int(self.write(name, **params, **{param: items[start:start + batch]})[0]["deleted"])
                   for start in range(0, len(items), batch))

    def fingerprint(self) -> tuple:
        """Cheap (count store + graph versions): changes whenever what `stats` reports may have changed."""
        row = self.read("store_fingerprint")[0]
        return tuple(row[k] for k in ("nodes", "edges", "questions", "graphs", "versions"))

    def stats(self) -> dict[str, dict[str, Any]]:
        """Per dataset: graphs, nodes, edges, embedded texts and questions per split."""
        return self.statistics()["datasets"]

    def statistics(self) -> dict[str, dict[str, dict[str, Any]]]:
        """{"graphs": per graph, "datasets": per dataset}, from one scan of nodes, edges and questions."""
        graphs: dict[str, dict[str, Any]] = {}
        datasets: dict[str, dict[str, Any]] = {}

        def graph(name: str) -> dict[str, Any]:
            return graphs.setdefault(name, {"dataset": None, "kind": None, "nodes": 0, "edges": 0,
                                            "embedded_nodes": 0, "embedded_edges": 0, "questions": {}})

        def dataset(name: str) -> dict[str, Any]:
            return datasets.setdefault(name, {"kind": None, "graphs": 0, "nodes": 0, "edges": 0,
                                              "embedded_nodes": 0, "embedded_edges": 0, "questions": {}})

        for row in self.read("stats_graph_records"):
            g = graph(row["graph"])
            g["dataset"], g["kind"] = row["dataset"], row["kind"]
            d = dataset(row["dataset"])
            d["kind"], d["graphs"] = row["kind"], d["graphs"] + 1
        for row in self.read("stats_graph_nodes"):
            g, d = graph(row["graph"]), dataset(row["dataset"])
            g["dataset"] = g["dataset"] or row["dataset"]
            g["nodes"], g["embedded_nodes"] = row["nodes"], row["embedded"]
            d["nodes"] += row["nodes"]
            d["embedded_nodes"] += row["embedded"]
        for row in self.read("stats_graph_edges"):
            g, d = graph(row["graph"]), dataset(row["dataset"])
            g["edges"], g["embedded_edges"] = g["edges"] + row["edges"], g["embedded_edges"] + row["embedded"]
            d["edges"] += row["edges"]
            d["embedded_edges"] += row["embedded"]
        for row in self.read("stats_graph_questions"):
            d = dataset(row["dataset"])
            d["questions"][row["split"]] = d["questions"].get(row["split"], 0) + row["questions"]
            if row["graph"] is not None:
                per_graph = graph(row["graph"])["questions"]
                per_graph[row["split"]] = per_graph.get(row["split"], 0) + row["questions"]
        return {"graphs": dict(sorted(graphs.items())), "datasets": dict(sorted(datasets.items()))}

    # -- linking and learned retrieval ---------------------------------------------------------------
    def fulltext_nodes(self, query: str, graph: str | None, limit: int) -> list[dict[str, Any]]:
        """Up to `limit` nodes of `graph` matching a Lucene `query` in the `node_text` index, best first
        (key, text, graph, score, ref). The index spans all graphs: more hits are asked for until `limit`
        fall in `graph` or the index has no more."""
        from neo4j.exceptions import ClientError

        from gretriever_neo4j.errors import InputError

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

        from gretriever_neo4j.errors import InputError

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

    def kg_nodes(self, graph: str, *, with_embeddings: bool = True) -> Iterator[dict[str, Any]]:
        """Every node of `graph` (key, text, embedding), streamed."""
        return self._stream("kg_nodes", graph=graph, with_embeddings=bool(with_embeddings))

    def kg_triples(self, graph: str) -> Iterator[dict[str, Any]]:
        """Every triple of `graph` (src, text, dst, ref), streamed."""
        return self._stream("kg_triples", graph=graph)

    def kg_relation_vectors(self, graph: str, texts: Sequence[str]) -> dict[str, list[float]]:
        if not texts:
            return {}
        return {row["text"]: row["embedding"] for row in self.read("kg_relation_vectors", graph=graph, texts=list(texts))}

    def kg_node_vectors(self, graph: str, keys: Sequence[str]) -> list[dict[str, Any]]:
        """Key, text, embedding and degree of the given nodes; unknown keys are left out."""
        if not keys:
            return []
        return self.read("kg_node_vectors", graph=graph, keys=list(keys))

    def kg_incident(self, graph: str, keys: Sequence[str], limit: int) -> dict[str, list[dict[str, Any]]]:
        """For each node key: up to `limit` incident triples (ref, src, text, dst, neighbour), both directions."""
        if not keys:
            return {}
        rows = self.read("kg_incident", graph=graph, keys=list(keys), limit=int(limit))
        return {row["key"]: row["incident"] for row in rows}

    def kg_incident_texts(self, graph: str, keys: Sequence[str], limit: int) -> dict[str, list[dict[str, Any]]]:
        """As `kg_incident`, each triple also with the texts of its ends (src_text, dst_text)."""
        if not keys:
            return {}
        rows = self.read("kg_incident_texts", graph=graph, keys=list(keys), limit=int(limit))
        return {row["key"]: row["incident"] for row in rows}

    def kg_relation_texts(self, graph: str) -> list[str]:
        """The distinct relation texts of `graph`."""
        return [row["text"] for row in self.read("kg_relation_texts", graph=graph)]

    def _stream(self, name: str, **params: Any) -> Iterator[dict[str, Any]]:
        """Rows of a read statement as they arrive, for results too large to hold twice."""
        import neo4j

        query = cypher.load(name)
        with self._driver.session(database=self.database, default_access_mode=neo4j.READ_ACCESS,
                                  fetch_size=5000) as session:
            for record in session.run(query.text, query.bind(**params)):
                yield record.data()


def _unavailable(error: BaseException) -> DatabaseError:
    return DatabaseError(f"Neo4j became unreachable ({error.__class__.__name__}); is it running? "
                         "(`gqa db status`)")


def _said_unavailable(method):
    """A method whose driver errors for a server that went away become `DatabaseError` (the CLI's exit 1 with what
    to do, the service's 503), instead of escaping as failures of ours."""
    if inspect.isgeneratorfunction(method):
        @functools.wraps(method)
        def stream(*args, **kwargs):
            try:
                yield from method(*args, **kwargs)
            except Exception as error:
                if driver_unavailable(error):
                    raise _unavailable(error) from error
                raise
        return stream

    @functools.wraps(method)
    def call(*args, **kwargs):
        try:
            return method(*args, **kwargs)
        except Exception as error:
            if driver_unavailable(error):
                raise _unavailable(error) from error
            raise
    return call


for _name, _method in list(vars(GraphStore).items()):
    if callable(_method) and not _name.startswith("__") and not isinstance(_method, (staticmethod, classmethod)):
        setattr(GraphStore, _name, _said_unavailable(_method))


def vectors_param(vectors: np.ndarray) -> list[list[float]]:
    return np.asarray(vectors, dtype=np.float32).astype(np.float64).tolist()


_MAX_INDEX_CANDIDATES = 4096


def _natural(key: str) -> tuple:
    """Per-sample graphs number their nodes "0", "1", …, "10"; keep that order."""
    return (0, int(key), "") if key.isdigit() else (1, 0, key)


def _cos(score: float) -> float:
    """Neo4j reports cosine similarity normalised to [0, 1] as (1 + cos) / 2; we work with cos."""
    return 2.0 * float(score) - 1.0


def _cosine(row: dict[str, Any]) -> dict[str, Any]:
    return {**row, "cos": _cos(row["score"])}


def _expect(written: int, wanted: int, what: str) -> None:
    if written != wanted:
        raise DatabaseError(f"wrote {written} of {wanted} {what}; the batch was rolled back")

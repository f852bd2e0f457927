"""The one module that talks to Neo4j.

A `GraphStore` wraps a driver that the caller creates once per process (`open_driver`) and passes in, as
neo4j-graphrag-python does. Every statement comes from `cypher/*.cypher` by name, with its declared parameters
bound through `CypherQuery.bind`: user text only ever travels as a parameter. Reads are routed as reads.

Stored model:
  (:Node {graph, key, dataset, text, embedding})         unique on (graph, key)
  (:Node)-[:REL {graph, dataset, text, embedding}]->(:Node)  identified by (src, text, dst)
  (:Graph {id, dataset, kind})                            one per stored graph, empty graphs included
  (:Question {dataset, qid, text, answers, split, graph, topic_entities})
  (:Retrieval {id, question, params, created, node_ids, rel_ids})   one per `gqa ask`
  (:GqaMeta {id: 'schema', embedder, dim})                which embedder made the stored vectors
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Iterator

import numpy as np

from . import cypher
from .errors import ConfigError, DatabaseError
from .settings import Neo4jSettings

NODE_VECTOR_INDEX = "node_embedding"
REL_VECTOR_INDEX = "rel_embedding"
FULLTEXT_INDEX = "node_text"

_SCHEMA_STATEMENTS = (
    "schema_node_key", "schema_graph_id", "schema_question_key", "schema_retrieval_id",
    "schema_node_graph_index", "schema_node_dataset_index", "schema_rel_graph_index",
    "schema_question_split_index", "schema_node_fulltext",
)


def open_driver(settings: Neo4jSettings):
    """One driver per process; fails early with a message that says what to do."""
    import neo4j
    from neo4j.exceptions import AuthError, ServiceUnavailable

    if not settings.password:
        raise DatabaseError("no Neo4j password: set NEO4J_PASSWORD (or start the bundled server with `gqa db start`)")
    driver = neo4j.GraphDatabase.driver(
        settings.uri, auth=(settings.user, settings.password),
        # "label does not exist" warnings on a fresh database are expected, not news for the user.
        notifications_min_severity=neo4j.NotificationMinimumSeverity.OFF)
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

    # -- stats ------------------------------------------------------------------------------------
    def stats(self) -> dict[str, dict[str, Any]]:
        """Per dataset: graphs, nodes, edges, embedded texts and questions per split."""
        out: dict[str, dict[str, Any]] = {}

        def entry(dataset: str) -> dict[str, Any]:
            return out.setdefault(dataset, {"kind": None, "graphs": 0, "nodes": 0, "edges": 0,
                                            "embedded_nodes": 0, "embedded_edges": 0, "questions": {}})

        for row in self.read("stats_graphs"):
            e = entry(row["dataset"])
            e["kind"], e["graphs"] = row["kind"], row["graphs"]
        for row in self.read("stats_nodes"):
            e = entry(row["dataset"])
            e["nodes"], e["embedded_nodes"] = row["nodes"], row["embedded"]
        for row in self.read("stats_edges"):
            e = entry(row["dataset"])
            e["edges"], e["embedded_edges"] = row["edges"], row["embedded"]
        for row in self.read("stats_questions"):
            entry(row["dataset"])["questions"][row["split"]] = row["questions"]
        return dict(sorted(out.items()))


def vectors_param(vectors: np.ndarray) -> list[list[float]]:
    return np.asarray(vectors, dtype=np.float32).astype(np.float64).tolist()


def _expect(written: int, wanted: int, what: str) -> None:
    if written != wanted:
        raise DatabaseError(f"wrote {written} of {wanted} {what}; the batch was rolled back")

"""`KgReads`, the part of `GraphStore` that reads a stored graph as the learned models and `--sync` see it, with no
question to score against: a whole graph streamed (`kg_nodes`, `kg_triples`: training, sync), or the nodes, relation
vectors and incident triples of given node keys (learned retrieval, the path retriever, which keep them between
requests). The reads that rank by a question's vector stay in `graph_store`.

A mixin, apart from `graph_store` only so that each reads in one sitting: it holds no state and runs statements
only through the store it is mixed into (`read`, `_driver`, `database`), whose driver errors `said_unavailable`
turns into `DatabaseError` for these methods too.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from gretriever_neo4j.store.rows import record_dict, statement


class KgReads:
    def kg_nodes(self, graph: str, *, with_embeddings: bool = True) -> Iterator[dict[str, Any]]:
        """Every node of `graph` (key, text, embedding), streamed."""
        return self._stream("kg_nodes", graph=graph, with_embeddings=bool(with_embeddings))

    def kg_triples(self, graph: str) -> Iterator[dict[str, Any]]:
        """Every triple of `graph` (src, text, dst, ref), streamed."""
        return self._stream("kg_triples", graph=graph)

    def kg_relation_vectors(self, graph: str, texts: Sequence[str]) -> dict[str, list[float]]:
        if not texts:
            return {}
        return {row["text"]: row["embedding"]
                for row in self.read("kg_relation_vectors", graph=graph, texts=list(texts))}

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

    def kg_incident_vectors(self, graph: str, keys: Sequence[str], limit: int) -> dict[str, list[dict[str, Any]]]:
        """As `kg_incident`, each triple also with the text, vector and degree of its other end (neighbour_text,
        neighbour_embedding, neighbour_degree)."""
        if not keys:
            return {}
        rows = self.read("kg_incident_vectors", graph=graph, keys=list(keys), limit=int(limit))
        return {row["key"]: row["incident"] for row in rows}

    def kg_incident_texts(self, graph: str, keys: Sequence[str], limit: int) -> dict[str, list[dict[str, Any]]]:
        """As `kg_incident`, each triple also with the texts of its ends (src_text, dst_text)."""
        if not keys:
            return {}
        rows = self.read("kg_incident_texts", graph=graph, keys=list(keys), limit=int(limit))
        return {row["key"]: row["incident"] for row in rows}

    def kg_relation_values(self, graph: str) -> dict[str, tuple[int, int, int]]:
        """(edges, distinct heads, distinct tails) per relation text of one graph (a pass over its edges)."""
        return {row["text"]: (int(row["edges"]), int(row["heads"]), int(row["tails"]))
                for row in self.read("kg_relation_values", graph=graph)}

    def kg_relation_texts(self, graph: str) -> list[str]:
        """The distinct relation texts of `graph`."""
        return [row["text"] for row in self.read("kg_relation_texts", graph=graph)]

    def _stream(self, name: str, **params: Any) -> Iterator[dict[str, Any]]:
        """Rows of a read statement as they arrive, for results too large to hold twice."""
        import neo4j

        with self._driver.session(database=self.database, default_access_mode=neo4j.READ_ACCESS,
                                  fetch_size=5000) as session:
            for record in session.run(*statement(name, params)):
                yield record_dict(record)

"""A graph that already lives in Neo4j, read as the source of `gqa ingest neo4j`: strictly read-only.

`SourceGraph` reads one database of one server: gqa's own (every label and relationship type gqa does not own,
`GQA_LABELS` / `GQA_RELATIONSHIP_TYPES`), or another (`open_source`). Every session it opens is a read session,
so the server refuses any write, a user's `--query` included; rows are streamed, never held whole.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from gretriever_neo4j import cypher
from gretriever_neo4j.errors import DatabaseError, InputError
from gretriever_neo4j.settings import Neo4jSettings
from gretriever_neo4j.store.driver import open_driver, said_unavailable
from gretriever_neo4j.store.rows import driver_params

# What gqa itself writes (store.graph_store's model): never read as a source's graph.
GQA_LABELS = ("Node", "Graph", "Question", "Retrieval", "Relation", "GqaMeta")
GQA_RELATIONSHIP_TYPES = ("REL",)


class SourceGraph:
    """Read sessions on one database; `describe` names it in messages."""

    def __init__(self, driver, database: str, describe: str):
        self._driver = driver
        self.database = database
        self.describe = describe

    def _stream(self, text: str, params: dict[str, Any], what: str) -> Iterator[dict[str, Any]]:
        import neo4j
        from neo4j.exceptions import ClientError

        try:
            with self._driver.session(database=self.database, default_access_mode=neo4j.READ_ACCESS,
                                      fetch_size=5000) as session:
                result = session.run(text, params)
                keys = result.keys()
                for record in result:
                    yield dict(zip(keys, record.values()))
        except ClientError as error:
            if "DatabaseNotFound" in (error.code or ""):
                raise DatabaseError(f"the source {self.describe} has no database {self.database!r} "
                                    "(--database)") from None
            raise InputError(f"the source {self.describe} refused {what}: {error.message}",
                             field="--query" if what == "the query" else None) from None

    def _named(self, name: str, **params: Any) -> Iterator[dict[str, Any]]:
        query = cypher.load(name)
        return self._stream(query.text, driver_params(query.bind(**params)), f"the statement {name}")

    def labels(self) -> list[str]:
        """The node labels of the source, less gqa's own."""
        return [row["label"] for row in self._named("source_labels", own=list(GQA_LABELS))]

    def nodes(self, limit: int | None = None) -> Iterator[dict[str, Any]]:
        """(id, labels, properties) of every source node, in element id order; the first `limit` only."""
        return self._named("source_nodes", own=list(GQA_LABELS), limit=limit)

    def relationships(self) -> Iterator[dict[str, Any]]:
        """(id, src, type, properties, dst, dst_labels) of every source relationship."""
        return self._named("source_relationships", own=list(GQA_LABELS), own_types=list(GQA_RELATIONSHIP_TYPES))

    def query_rows(self, query: str) -> Iterator[tuple[int, list[Any]]]:
        """(row number from 1, values) of the user's own read-only statement."""
        for number, row in enumerate(self._stream(query, {}, "the query"), start=1):
            yield number, list(row.values())


for _name, _method in list(vars(SourceGraph).items()):
    if callable(_method) and not _name.startswith("__"):
        setattr(SourceGraph, _name, said_unavailable(_method))


@contextmanager
def open_source(settings: Neo4jSettings) -> Iterator[SourceGraph]:
    """A `SourceGraph` over a driver of its own for `settings`; an unreachable source is a `DatabaseError` naming
    it."""
    try:
        driver = open_driver(settings)
    except DatabaseError as error:
        why = "refused the user" if "refused" in str(error) else "is not reachable"
        raise DatabaseError(f"the source database at {settings.uri} {why} (--uri; NEO4J_SOURCE_USER, "
                            "NEO4J_SOURCE_PASSWORD)") from None
    try:
        yield SourceGraph(driver, settings.database, f"Neo4j at {settings.uri}")
    finally:
        driver.close()

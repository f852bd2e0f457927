"""The store: everything that reads or writes Neo4j. `GraphStore` runs the `cypher/*.cypher` statements by name
(`graph_store`), over a driver opened once per process (`driver.open_driver`); `connected(settings)` gives a
store over a fresh driver and closes it after. Loading datasets and questions is the `ingest` package's work."""

from gretriever_neo4j.store.driver import open_driver
from gretriever_neo4j.store.graph_store import GraphStore, connected

__all__ = ["GraphStore", "connected", "open_driver"]

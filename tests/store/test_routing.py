"""Neo4j clusters and Aura are reached through routing URIs (neo4j://, neo4j+s://): the driver asks the server for
its routing table and sends reads to readers and writes to the leader. A single server answers that protocol
too, so the routing scheme is exercised here against the local server: ingest (writes, retried by the driver's
managed transactions) and retrieval (reads routed as reads) through `neo4j://`."""

from __future__ import annotations

import dataclasses
import uuid

import pytest

from gretriever_neo4j.ingest.graphs import ingest
from gretriever_neo4j.records import Edge, GraphRecord, Node
from gretriever_neo4j.retrievers.base import RetrievalContext
from gretriever_neo4j.retrievers.neo4j import StaticRetriever
from gretriever_neo4j.store.graph_store import GraphStore, open_driver

pytestmark = pytest.mark.neo4j


def test_the_routing_scheme_reads_and_writes(neo4j_settings, embedder):
    if not neo4j_settings.uri.startswith("bolt://"):
        pytest.skip("the test server is already reached through another scheme")
    routed = dataclasses.replace(neo4j_settings, uri="neo4j://" + neo4j_settings.uri.split("://", 1)[1])
    driver = open_driver(routed)
    graph = f"t{uuid.uuid4().hex[:8]}-routed"
    try:
        store = GraphStore(driver, routed.database)
        store.ensure_schema(embedder.name, embedder.dim)
        record = GraphRecord(graph_id=graph, dataset=graph, kind="kg",
                             nodes=[Node("Heat", "Heat"), Node("Michael Mann", "Michael Mann")],
                             edges=[Edge("Heat", "directed_by", "Michael Mann")])
        report = ingest([record], store, embedder.embed, dataset=graph)
        assert (report.nodes_written, report.edges_written) == (2, 1)
        assert store.graph_info(graph)["kind"] == "kg" and store.graph_version(graph) >= 1
        retrieval = StaticRetriever(RetrievalContext(store, embedder)).retrieve("who directed Heat", graph=graph)
        assert {"Heat", "Michael Mann"} <= set(retrieval.result.subgraph.node_keys)
        assert store.retrieval(retrieval.id)["question"] == "who directed Heat"
        assert driver.get_server_info().address is not None
    finally:
        driver.execute_query("MATCH (n) WHERE n.graph = $g OR n.id = $g OR n.dataset = $g DETACH DELETE n", g=graph)
        driver.execute_query("MATCH (r:Retrieval {graph: $g}) DETACH DELETE r", g=graph)
        driver.close()

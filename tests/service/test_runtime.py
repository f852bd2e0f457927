"""The service's runtime over the real Neo4j: what it keeps between requests."""

from __future__ import annotations

import pytest

from gretriever_neo4j.ingest.graphs import ingest
from gretriever_neo4j.records import Edge, GraphRecord, Node
from gretriever_neo4j.service.runtime import Runtime, ServiceConfig

pytestmark = pytest.mark.neo4j


def test_graph_statistics_are_kept_until_the_store_changes(store, embedder):
    runtime = Runtime(ServiceConfig(), store, qa=None)
    scans = []
    full_scan = store.statistics
    store.statistics = lambda: scans.append(1) or full_scan()

    first = runtime.graphs()
    assert runtime.graphs() is first and len(scans) == 1  # nothing changed: no second scan
    assert store.test_prefix not in first["datasets"]

    record = GraphRecord(graph_id=f"{store.test_prefix}-g", dataset=store.test_prefix, kind="kg",
                         nodes=[Node("a", "Ada Lovelace"), Node("b", "Analytical Engine")],
                         edges=[Edge("a", "wrote notes on", "b")])
    ingest([record], store, embedder.embed, dataset=store.test_prefix)
    after = runtime.graphs()
    dataset = after["datasets"][store.test_prefix]
    assert len(scans) == 2 and dataset["nodes"] == 2 and dataset["edges"] == 1
    row = next(r for r in after["graphs"] if r["graph"] == f"{store.test_prefix}-g")  # the graph itself, by name
    assert row["kind"] == "kg" and row["nodes"] == 2 and row["edges"] == 1 and row["models"] == {}

    assert runtime.graphs(max_age_s=0) is not after and len(scans) == 3  # old enough: scanned again

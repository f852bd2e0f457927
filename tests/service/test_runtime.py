"""The service's runtime over the real Neo4j: what it keeps between requests."""

from __future__ import annotations

import pytest

from gretriever_neo4j.ingest import ingest
from gretriever_neo4j.records import Edge, GraphRecord, Node
from gretriever_neo4j.service.runtime import Runtime, ServiceConfig

pytestmark = pytest.mark.neo4j


def test_graph_statistics_are_kept_until_the_store_changes(store, embedder):
    runtime = Runtime(ServiceConfig(), store, qa=None)
    scans = []
    full_scan = store.stats
    store.stats = lambda: scans.append(1) or full_scan()

    first = runtime.graphs()
    assert runtime.graphs() is first and len(scans) == 1  # nothing changed: no second scan
    assert store.test_prefix not in first

    record = GraphRecord(graph_id=f"{store.test_prefix}-g", dataset=store.test_prefix, kind="kg",
                         nodes=[Node("a", "Ada Lovelace"), Node("b", "Analytical Engine")],
                         edges=[Edge("a", "wrote notes on", "b")])
    ingest([record], store, embedder.embed, dataset=store.test_prefix)
    after = runtime.graphs()
    assert len(scans) == 2 and after[store.test_prefix]["nodes"] == 2 and after[store.test_prefix]["edges"] == 1

    assert runtime.graphs(max_age_s=0) is not after and len(scans) == 3  # old enough: scanned again

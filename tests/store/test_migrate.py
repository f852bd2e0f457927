"""`gqa db migrate`: a store written with a vector on every edge (layout 1) becomes one vector per relation text,
counts checked, re-runnable; what was answerable stays answerable."""

from __future__ import annotations

import numpy as np
import pytest

from gretriever_neo4j.errors import ConfigError
from gretriever_neo4j.ingest.graphs import ingest
from gretriever_neo4j.records import Edge, GraphRecord, Node
from gretriever_neo4j.retrievers.base import RetrievalContext
from gretriever_neo4j.retrievers.neo4j import StaticRetriever
from gretriever_neo4j.store.graph_store import LAYOUT
from gretriever_neo4j.store.migrate import migrate

from cli_helpers import gqa

pytestmark = pytest.mark.neo4j

# What an earlier gqa wrote: every edge carries its text's vector, no (:Relation), no layout on the meta node.
_TO_LAYOUT_1 = """
MATCH (a:Node {graph: $graph})-[r:REL]->()
MATCH (t:Relation {graph: $graph, text: r.text})
CALL db.create.setRelationshipVectorProperty(r, 'embedding', t.embedding)
"""
_DROP_RELATIONS = "MATCH (t:Relation {graph: $graph}) DELETE t"
_UNSET_LAYOUT = "MATCH (m:GqaMeta {id: 'schema'}) REMOVE m.layout"
_EDGE_VECTORS = "MATCH ()-[r:REL {graph: $graph}]->() RETURN count(r) AS edges, count(r.embedding) AS vectors"


def _kg(graph: str, word: str = "") -> GraphRecord:
    """Twelve films with directors, years and actors; `word` starts every name, so that no other graph of the test
    store holds the same texts (the node index ranks all graphs together and breaks exact ties as it likes)."""
    films = [f"{word}film {i}" for i in range(12)]
    edges = [Edge(f, "directed_by", f"{word}director {i % 3}") for i, f in enumerate(films)]
    edges += [Edge(f, "release_year", str(1990 + i % 4)) for i, f in enumerate(films)]
    edges += [Edge(f, "starred_actors", f"{word}actor {i % 5}") for i, f in enumerate(films)]
    keys = sorted({k for e in edges for k in (e.src, e.dst)})
    return GraphRecord(graph_id=graph, dataset=graph, kind="kg", nodes=[Node(k, k) for k in keys], edges=edges)


def test_a_store_with_per_edge_vectors_migrates_with_counts_equal(store, embedder, neo4j_driver):
    graph = f"{store.test_prefix}-old"
    ingest([_kg(graph)], store, embedder.embed, dataset=graph)
    vectors = store.graph_relations(graph)
    before = StaticRetriever(RetrievalContext(store, embedder)).retrieve("who directed film 4", graph=graph)
    try:
        neo4j_driver.execute_query(_TO_LAYOUT_1, graph=graph)
        neo4j_driver.execute_query(_DROP_RELATIONS, graph=graph)
        neo4j_driver.execute_query(_UNSET_LAYOUT)
        assert store.layout() == 1 and store.graph_relations(graph) == {}
        assert neo4j_driver.execute_query(_EDGE_VECTORS, graph=graph).records[0].values() == [36, 36]
        with pytest.raises(ConfigError, match="gqa db migrate"):
            StaticRetriever(RetrievalContext(store, embedder)).retrieve("who directed film 4", graph=graph)

        # cut short after its first step, then run again (through the CLI)
        store.run_in_transactions("migrate_relations", batch=2)
        done = gqa("db", "migrate", "--batch-size", "5")
        assert done.returncode == 0, done.stderr[-2000:]
        assert "migrated" in done.stdout and store.layout() == LAYOUT
    finally:
        store.write("schema_layout_set", layout=LAYOUT)

    assert neo4j_driver.execute_query(_EDGE_VECTORS, graph=graph).records[0].values() == [36, 0]
    migrated = store.graph_relations(graph)
    assert migrated.keys() == vectors.keys() == {"directed_by", "release_year", "starred_actors"}
    for text, vector in vectors.items():
        assert np.allclose(migrated[text], vector)
    after = StaticRetriever(RetrievalContext(store, embedder)).retrieve("who directed film 4", graph=graph)
    assert after.result.subgraph.text == before.result.subgraph.text
    again = migrate(store)
    assert not again.migrated and again.layout_after == LAYOUT


def test_a_node_index_built_with_neo4j_defaults_is_rebuilt_and_finds_the_same_seeds(store, embedder):
    graph = f"{store.test_prefix}-index"
    ingest([_kg(graph, "quillon ")], store, embedder.embed, dataset=graph)
    dim = store.embedder_info()[1]
    vector = embedder.embed(["who directed quillon film 4"])[0]
    store.rebuild_node_index(dim, build={})  # what an earlier gqa built: Neo4j's default HNSW settings (ef 100)
    assert store.node_index_outdated()
    before = _best(store.seed_nodes(vector, 5, graph), 5)

    report = migrate(store)

    assert report.node_index_rebuilt and not store.node_index_outdated()
    config = next(r for r in store.index_states() if r["name"] == "node_embedding")["options"]["indexConfig"]
    assert config["vector.hnsw.ef_construction"] == 32 and config["vector.dimensions"] == dim
    assert _best(store.seed_nodes(vector, 5, graph), 5) == before and len(before) == 5
    assert not migrate(store).node_index_rebuilt


def _best(rows, k: int) -> list[str]:
    """The k best seeds' keys (the index may return more of the graph's nodes than asked for)."""
    return [row["key"] for row in sorted(rows, key=lambda row: (-row["cos"], row["key"]))[:k]]

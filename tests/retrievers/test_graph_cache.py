"""The serving process's in-memory graphs: retrieval over them equals retrieval through Neo4j, and a write to the
graph (its version bumped) is seen by the next retrieval."""

from __future__ import annotations

import time

import pytest
from test_retriever import QUESTIONS, _random_kg

from gretriever_neo4j.ingest.graphs import ingest
from gretriever_neo4j.records import Edge, GraphRecord, Node
from gretriever_neo4j.retrievers.base import RetrievalContext
from gretriever_neo4j.retrievers.cached import CachedStaticRetriever, GraphCache
from gretriever_neo4j.retrievers.neo4j import StaticRetriever

pytestmark = pytest.mark.neo4j


def _directed(graph: str, dataset: str) -> GraphRecord:
    """One film and its director: the smallest knowledge graph a cache holds."""
    return GraphRecord(graph_id=graph, dataset=dataset, kind="kg",
                       nodes=[Node("Heat", "Heat"), Node("Michael Mann", "Michael Mann")],
                       edges=[Edge("Heat", "directed_by", "Michael Mann")])


@pytest.mark.parametrize("seed", [0, 1])
def test_cached_retrieval_equals_the_neo4j_path(store, embedder, seed):
    graph = f"{store.test_prefix}-cache{seed}"
    ingest([_random_kg(seed, graph, store.test_prefix, edges=40)], store, embedder.embed, dataset=store.test_prefix)
    store.await_indexes()
    cache = GraphCache(store)
    assert cache.load(graph) is not None
    context = RetrievalContext(store, embedder)
    neo4j, cached = StaticRetriever(context), CachedStaticRetriever(context, cache)
    for question in QUESTIONS:
        a = neo4j.retrieve(question, graph=graph, record=False).result
        b = cached.retrieve(question, graph=graph, record=False).result
        assert a.seed_keys == b.seed_keys, question
        assert a.subgraph.node_keys == b.subgraph.node_keys and a.text == b.text, question
        assert [e.ref for e in a.subgraph.edges] == [e.ref for e in b.subgraph.edges]
    recorded = cached.retrieve(QUESTIONS[0], graph=graph)  # recorded with the stored element ids, no lookup
    nodes, rels = store.retrieval_subgraph(recorded.id)
    assert nodes == set(recorded.result.subgraph.node_refs) and len(rels) == len(recorded.result.subgraph.edges)


def test_a_write_bumps_the_version_and_the_cache_follows(store, embedder):
    graph = f"{store.test_prefix}-follow"
    ingest([_directed(graph, store.test_prefix)], store, embedder.embed, dataset=store.test_prefix)
    cache = GraphCache(store)
    assert cache.get(graph, wait=True).kg.num_edges == 1
    version = store.graph_version(graph)
    second = GraphRecord(graph_id=graph, dataset=store.test_prefix, kind="kg",
                         nodes=[Node("Heat", "Heat"), Node("1995", "1995")],
                         edges=[Edge("Heat", "release_year", "1995")])
    ingest([second], store, embedder.embed, dataset=store.test_prefix)
    assert store.graph_version(graph) > version
    assert cache.get(graph) is None  # stale: dropped, reloading in the background
    deadline = time.monotonic() + 60
    while (cached := cache.get(graph)) is None and time.monotonic() < deadline:
        time.sleep(0.2)
    assert cached is not None and cached.kg.num_edges == 2
    assert cache.get("no such graph", wait=True) is None


def test_a_change_is_one_step_for_the_cache_and_versions_never_repeat(store, embedder):
    graph = f"{store.test_prefix}-step"
    record = _directed(graph, store.test_prefix)
    ingest([record], store, embedder.embed, dataset=store.test_prefix)
    cache = GraphCache(store)
    held = cache.get(graph, wait=True)
    version = store.graph_version(graph)
    store.begin_change([{"id": graph}])  # a change under way: the copy of the last version keeps answering
    assert store.graph_info(graph)["state"] == "writing" and store.graph_version(graph) == version
    assert cache.get(graph) is held
    cache._graphs.clear()
    assert cache.get(graph, wait=True) is None and cache.load(graph) is None  # nothing loads mid-change
    store.end_change([graph], changed=False)  # nothing changed: the same version
    assert store.graph_info(graph)["state"] is None and store.graph_version(graph) == version

    store.drop_graph(graph)
    ingest([record], store, embedder.embed, dataset=store.test_prefix)  # the same graph again
    assert store.graph_version(graph) > version  # a version is never given twice, across a drop too


def test_relation_paths_over_the_held_graph_equal_those_through_neo4j(store, embedder):
    """`gqa serve` walks the graph it holds, `gqa ask` walks it through Neo4j, each numbering nodes its own way;
    where a hub passes `max_frontier` and `max_edges` binds, both keep the same nodes and edges."""
    from gretriever_neo4j.retrieval.relation_paths import PathConfig
    from gretriever_neo4j.retrievers.paths import PathKGRetriever

    graph = f"{store.test_prefix}-paths-held"
    guilds = [f"Guild {i:02d}" for i in range(15)]
    triples = [("Mira Vale", "member of", g) for g in reversed(guilds)]
    triples += [(g, "based in", f"Town {i % 4}") for i, g in enumerate(guilds)]
    triples += [(g, "founded by", f"Founder {i}") for i, g in enumerate(guilds)]
    names = sorted({x for h, _, t in triples for x in (h, t)}, key=lambda n: n[::-1])  # neither key nor edge order
    record = GraphRecord(graph_id=graph, dataset=store.test_prefix, kind="kg", nodes=[Node(n, n) for n in names],
                         edges=[Edge(h, r, t) for h, r, t in triples])
    ingest([record], store, embedder.embed, dataset=store.test_prefix)
    store.await_indexes()
    cache = GraphCache(store)
    assert cache.load(graph) is not None
    context, config = RetrievalContext(store, embedder), PathConfig(max_frontier=3, max_edges=10, max_edges_per_path=5)
    neo4j, held = PathKGRetriever(context, config), PathKGRetriever(context, config, cache=cache)
    for question in ("in which towns are the guilds Mira Vale is a member of based",
                     "who founded the guilds of Mira Vale", "what is Mira Vale a member of"):
        a = neo4j.retrieve(question, graph=graph, record=False).result
        b = held.retrieve(question, graph=graph, record=False).result
        assert a.seed_keys == b.seed_keys == ["Mira Vale"], question
        assert 1 < len(a.subgraph.node_keys) < len(names), question  # the caps bind
        assert a.subgraph.node_keys == b.subgraph.node_keys and a.text == b.text, question
        assert [e.ref for e in a.subgraph.edges] == [e.ref for e in b.subgraph.edges], question

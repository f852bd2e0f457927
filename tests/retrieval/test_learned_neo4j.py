"""Linking and learned retrieval through the real Neo4j server: fulltext escaping round trips, loading a stored
knowledge graph, and training + retrieving over the store."""

import numpy as np
import pytest

from gretriever_neo4j.errors import InputError
from gretriever_neo4j.ingest.graphs import ingest
from gretriever_neo4j.records import Edge, GraphRecord, Node
from gretriever_neo4j.retrieval.kg import KnowledgeGraph
from gretriever_neo4j.retrieval.learned import (
    LearnedRetriever,
    RetrieverConfig,
    StoreGraphSource,
    TrainingQuestion,
    answer_hit,
    save_checkpoint,
    train_retriever,
)
from gretriever_neo4j.retrieval.linking import MentionPrior, analyzer_tokens, link_seeds, phrase_query
from gretriever_neo4j.retrievers.base import RetrievalContext
from gretriever_neo4j.retrievers.learned import LearnedKGRetriever

pytestmark = pytest.mark.neo4j

AWKWARD_NAMES = [
    'Say "Anything..."', "AC/DC", "C++ Primer", "What?", "50~ish", "Star*", "[REC]", "back\\slash",
    "key: value", "(500) Days of Summer", "Rock && Roll || Jazz", "Hello {World}", "^Caret", "!Bang",
    "Tom AND Jerry", "NOT Guilty", "This OR That", "Plus+Minus-", "Tom Hanks",
]


def _graph(store, suffix: str) -> str:
    return f"{store.test_prefix}_{suffix}"


def _ingest(store, embedder, graph: str, names: list[str], triples: list[tuple[str, str, str]]) -> None:
    record = GraphRecord(graph_id=graph, dataset=store.test_prefix, kind="kg",
                         nodes=[Node(key=name, text=name) for name in names],
                         edges=[Edge(src=h, text=r, dst=t) for h, r, t in triples])
    ingest([record], store, embedder.embed, dataset=store.test_prefix)


@pytest.fixture
def awkward(store, embedder):
    graph = _graph(store, "names")
    _ingest(store, embedder, graph, AWKWARD_NAMES, [(AWKWARD_NAMES[0], "related", n) for n in AWKWARD_NAMES[1:]])
    # The same name in another graph must never be returned for this one.
    _ingest(store, embedder, _graph(store, "other"), ["Tom Hanks", "AC/DC"], [("Tom Hanks", "likes", "AC/DC")])
    return graph


def test_every_awkward_name_is_found_by_its_escaped_phrase(store, awkward):
    queries = [phrase_query(name) for name in AWKWARD_NAMES]
    hits = store.fulltext_nodes_many(queries, awkward, 5)
    for name, per_name in zip(AWKWARD_NAMES, hits):
        exact = [hit["key"] for hit in per_name if analyzer_tokens(hit["text"]) == analyzer_tokens(name)]
        assert exact == [name], (name, per_name)
        assert all(hit["graph"] == awkward for hit in per_name)
    single = store.fulltext_nodes(phrase_query("AC/DC"), awkward, 3)
    assert [hit["key"] for hit in single] == ["AC/DC"]


def test_fuzzy_phrase_finds_a_misspelling(store, awkward):
    hits = store.fulltext_nodes(phrase_query("Tom Hankz", fuzzy=True), awkward, 3)
    assert hits[0]["key"] == "Tom Hanks"


def test_fulltext_filters_by_graph(store, awkward):
    other = _graph(store, "other")
    assert [hit["key"] for hit in store.fulltext_nodes('"tom hanks"', other, 10)] == ["Tom Hanks"]
    assert {hit["graph"] for hit in store.fulltext_nodes('"tom hanks"', None, 50)} >= {awkward, other}
    assert store.fulltext_nodes_many([], awkward, 5) == []
    assert store.fulltext_nodes('"tom hanks"', awkward, 0) == []


def test_a_malformed_lucene_query_is_an_input_error(store, awkward):
    with pytest.raises(InputError, match="fulltext index rejected"):
        store.fulltext_nodes("AND (", awkward, 5)


def test_link_seeds_through_the_store_prefers_exact_names(store, embedder, awkward):
    question = "which songs did [AC/DC] and [Tom AND Jerry] record"
    result = link_seeds(question, embedder.embed([question])[0], store, awkward, k=4)
    assert result.exact == ["Tom AND Jerry", "AC/DC"]  # longer mention first
    assert result.seeds[:2] == ["Tom AND Jerry", "AC/DC"]
    assert len(result.seeds) == 4


def test_store_linking_says_each_hits_degree_and_the_graphs_relation_words(store, awkward):
    from gretriever_neo4j.retrieval.linking import StoreLinking

    linking = StoreLinking(store)
    first, last = linking.mention_hits([AWKWARD_NAMES[0], AWKWARD_NAMES[-1]], awkward, 5)
    degree = {hit.key: hit.degree for hit in first + last}
    assert degree[AWKWARD_NAMES[0]] == len(AWKWARD_NAMES) - 1  # related to every other name
    assert degree[AWKWARD_NAMES[-1]] == 1
    assert linking.relation_words(awkward) == {"related"}
    hub = store.read("kg_node_vectors", graph=awkward, keys=[AWKWARD_NAMES[0]])[0]["embedding"]
    nearest = linking.vector_hits(np.asarray(hub, np.float32), awkward, 3)[0]
    assert (nearest.key, nearest.text, nearest.degree) == (AWKWARD_NAMES[0], AWKWARD_NAMES[0], len(AWKWARD_NAMES) - 1)
    assert nearest.score == pytest.approx(1.0, abs=1e-4)
    assert StoreLinking(store, relation_words=frozenset({"given"})).relation_words(awkward) == {"given"}


# -- learned retrieval over the store ------------------------------------------------------------------------

MOVIES = 18


def movie_triples() -> list[tuple[str, str, str]]:
    triples = []
    for i in range(MOVIES):
        triples += [(f"Film {i}", "directed_by", f"Director {i % 5}"),
                    (f"Film {i}", "release_year", str(1990 + i % 4)),
                    (f"Film {i}", "has_genre", ["Drama", "Comedy"][i % 2])]
    return triples


def movie_questions(indices) -> list[TrainingQuestion]:
    out = []
    for i in indices:
        out.append(TrainingQuestion(f"who directed [Film {i}]", [f"Film {i}"], [f"Director {i % 5}"]))
        out.append(TrainingQuestion(f"when was [Film {i}] released", [f"Film {i}"], [str(1990 + i % 4)]))
        out.append(TrainingQuestion(f"which films share a director with [Film {i}]", [f"Film {i}"],
                                    [f"Film {j}" for j in range(MOVIES) if j % 5 == i % 5 and j != i]))
    return out


def test_the_store_counts_each_relations_edges_heads_and_tails(store, embedder):
    graph = _graph(store, "values")
    triples = movie_triples()
    _ingest(store, embedder, graph, sorted({t[0] for t in triples} | {t[2] for t in triples}), triples)
    assert store.kg_relation_values(graph) == {"directed_by": (MOVIES, MOVIES, 5), "release_year": (MOVIES, MOVIES, 4),
                                               "has_genre": (MOVIES, MOVIES, 2)}


def test_learned_retrieval_round_trip_through_neo4j(store, embedder, tmp_path):
    graph = _graph(store, "movies")
    triples = movie_triples()
    names = sorted({n for h, _, t in triples for n in (h, t)})
    _ingest(store, embedder, graph, names, triples)

    kg = KnowledgeGraph.from_store(store, graph)
    assert sorted(zip(kg.node_keys, kg.node_texts)) == [(n, n) for n in names]
    assert sorted((kg.node_keys[h], kg.relation_texts[r], kg.node_keys[t])
                  for h, r, t in zip(kg.head.tolist(), kg.relation.tolist(), kg.tail.tolist())) == sorted(triples)
    np.testing.assert_allclose(kg.node_embeddings[kg.key_to_index["Film 3"]], embedder.embed(["Film 3"])[0],
                               atol=1e-6)

    config = RetrieverConfig(max_hops=2, hidden=32, epochs=40, batch_size=64, learning_rate=1e-2, beam_nodes=8,
                             max_edges=3)
    training = movie_questions(range(14))
    model, history = train_retriever(kg, training, embedder, config, threads=1)
    assert history.questions_labelled == len(training)
    prior = MentionPrior.fit([(q.text, q.topic_keys) for q in training], store, graph)
    checkpoint = save_checkpoint(tmp_path / "retriever.pt", model, config, embedder.name, prior)

    through_store = LearnedRetriever.from_checkpoint(checkpoint, StoreGraphSource(store, graph), embed=embedder.embed)
    in_memory = LearnedRetriever.from_checkpoint(checkpoint, kg, linking=through_store.linking, graph_name=graph,
                                                 embed=embedder.embed)
    for question in movie_questions(range(14, MOVIES)):
        vector = embedder.embed([question.text])[0]
        result = through_store.retrieve(question.text, vector)
        assert result.seed_keys == question.topic_keys
        assert answer_hit(result, question.answer_keys), (question.text, result.text)
        assert len(result.subgraph.edges) <= 3
        assert set(result.candidate.edge_refs) <= set(kg.edge_refs)  # Neo4j element ids, carried through
        reference = in_memory.retrieve(question.text, vector)
        as_triples = lambda r: sorted((r.subgraph.node_keys[e.src], e.text, r.subgraph.node_keys[e.dst])
                                      for e in r.subgraph.edges)
        assert as_triples(result) == as_triples(reference)
        # The product's retriever reads through what it keeps between requests (`StoredReads`).
        served = LearnedKGRetriever(RetrievalContext(store, embedder), checkpoint).retrieve(question.text, graph=graph,
                                                                                           record=False)
        expected = through_store.retrieve(question.text, embedder.embed_query(question.text).vector)
        assert as_triples(served.result) == as_triples(expected)
        assert served.result.candidate.edge_refs == expected.candidate.edge_refs


def test_what_a_served_retriever_keeps_between_requests_equals_what_is_read_by_key(store, embedder):
    from gretriever_neo4j.retrievers.learned import StoredReads, _ReadsThroughMemory

    graph = _graph(store, "movies-walk")
    triples = movie_triples()
    _ingest(store, embedder, graph, sorted({n for h, _, t in triples for n in (h, t)}), triples)
    reads = StoredReads(hub=4)

    def walk(source):
        frontier = source.node_ids(["Film 3", "Director 1"])
        for _ in range(2):
            frontier = np.unique(source.incident(frontier).neighbour)
        return source

    version = store.graph_info(graph)["version"]
    by_key = walk(StoreGraphSource(store, graph))
    for _ in range(2):  # the second walk reads from memory what the first read
        kept = walk(StoreGraphSource(_ReadsThroughMemory(store, reads, version), graph))
        assert kept._node_keys == by_key._node_keys and len(kept._node_keys) > 10
        assert kept._edge_refs == by_key._edge_refs
        nodes = np.arange(kept.num_nodes)
        assert kept.degrees(nodes).tolist() == by_key.degrees(nodes).tolist()
        assert kept.degrees(nodes).max() > 1
        assert kept.node_texts(nodes) == by_key.node_texts(nodes)
        np.testing.assert_array_equal(kept.node_vectors(nodes), by_key.node_vectors(nodes))
    assert len(reads) > 10
    # A write bumps the version: the next request reads the hub again and meets the new edge.
    _ingest(store, embedder, graph, ["Drama", "Film 99"], [("Film 99", "has_genre", "Drama")])
    newer = store.graph_info(graph)["version"]
    assert newer != version
    source = StoreGraphSource(_ReadsThroughMemory(store, reads, newer), graph)
    drama = source.node_ids(["Drama"])
    assert source.degrees(drama).tolist() == [MOVIES // 2 + 1]
    assert "Film 99" in {source._node_keys[n] for n in source.incident(drama).neighbour.tolist()}


def test_an_empty_stored_graph_loads_as_an_empty_kg(store, embedder):
    graph = _graph(store, "empty")
    _ingest(store, embedder, graph, [], [])
    kg = KnowledgeGraph.from_store(store, graph)
    assert (kg.num_nodes, kg.num_edges) == (0, 0)
    assert kg.node_embeddings.shape == (0, 0)
    assert store.kg_incident(graph, ["nothing"], 10) == {}
    assert store.kg_node_vectors(graph, ["nothing"]) == []

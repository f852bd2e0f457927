"""Retrieval on the real Neo4j server: equal to the in-memory reference, recorded, viewable, injection-proof."""

from __future__ import annotations

import base64
import json
import urllib.request
from pathlib import Path

import numpy as np
import pytest

from gretriever_neo4j.errors import ConfigError, InputError
from gretriever_neo4j.ingest.graphs import ingest
from gretriever_neo4j.records import Edge, GraphRecord, Node
from gretriever_neo4j.retrieval.candidates import CandidateGraph
from gretriever_neo4j.retrieval.in_memory import retrieve
from gretriever_neo4j.retrieval.params import RetrievalParams
from gretriever_neo4j.retrieval.pcst import PcstParams
from gretriever_neo4j.retrievers.base import RetrievalContext
from gretriever_neo4j.retrievers.hubs import HubReads
from gretriever_neo4j.retrievers.neo4j import StaticRetriever

from cli_helpers import gqa

pytestmark = pytest.mark.neo4j
REPO = Path(__file__).resolve().parents[2]

PEOPLE = ["Benjamin Franklin", "Thomas Edison", "Marie Curie", "Ada Lovelace", "Nikola Tesla", "Alan Turing",
          "Isaac Newton", "Grace Hopper"]
THINGS = ["lightning rod", "bifocals", "glass harmonica", "phonograph", "light bulb", "radium", "polonium",
          "analytical engine notes", "alternating current motor", "Turing machine", "calculus", "reflecting telescope",
          "COBOL compiler", "Franklin stove", "motion picture camera"]
RELATIONS = ["invented", "discovered", "wrote about", "worked on", "is known for"]


def _random_kg(seed: int, graph: str, dataset: str, edges: int = 40) -> GraphRecord:
    rng = np.random.default_rng(seed)
    names = PEOPLE + THINGS
    triples = set()
    while len(triples) < edges:
        a, b = rng.choice(len(names), size=2, replace=False)
        triples.add((names[a], RELATIONS[rng.integers(len(RELATIONS))], names[b]))
    used = sorted({x for h, _, t in triples for x in (h, t)})
    return GraphRecord(graph_id=graph, dataset=dataset, kind="kg", nodes=[Node(n, n) for n in used],
                       edges=[Edge(h, r, t) for h, r, t in sorted(triples)])


def _stored_graph(store, graph: str, embedder) -> CandidateGraph:
    return StaticRetriever(RetrievalContext(store, embedder)).whole_graph(graph)


QUESTIONS = ["what else did ben franklin invent", "who discovered radium", "what is Alan Turing known for",
             "which telescope did newton build", "what did grace hopper work on"]


@pytest.mark.parametrize("seed,hub", [(0, 256), (1, 256), (2, 256), (0, 1), (2, 1)])
def test_neo4j_path_equals_reference_path(store, embedder, seed, hub, monkeypatch):
    """hub=1: every node met is kept after its first question and ranked in memory (`retrievers.hubs`) after."""
    within_calls = []  # the hops that begin with the node budget spent (rule 6 of neighbourhood.expand)
    read_within = store.incident_edges_within
    monkeypatch.setattr(store, "incident_edges_within", lambda *a, **k: within_calls.append(a) or read_within(*a, **k))
    hubs = HubReads(hub=hub)
    held_calls = []
    held = hubs.held
    monkeypatch.setattr(hubs, "held", lambda *a: held_calls.append(held(*a)) or held_calls[-1])
    graph = f"{store.test_prefix}-kg{seed}"
    ingest([_random_kg(seed, graph, store.test_prefix, edges=30 + 10 * seed)], store, embedder.embed,
           dataset=store.test_prefix)
    store.await_indexes()
    reference_graph = _stored_graph(store, graph, embedder)
    retriever = StaticRetriever(RetrievalContext(store, embedder), hubs=hubs)
    params = RetrievalParams(seed_k=3, seed_k_edges=3, hops=2, fanout=4 + seed, max_nodes=12, max_edges=20)
    for question in QUESTIONS + QUESTIONS:  # the second round meets nodes the first one kept
        ours = retriever.retrieve(question, graph=graph, params=params, record=False)
        expected = retrieve(reference_graph, embedder.embed_query(question).vector, params)
        assert ours.result.seed_keys == expected.seed_keys, question
        assert ours.result.candidate.node_keys == expected.candidate.node_keys, question
        assert list(ours.result.candidate.edge_refs) == list(expected.candidate.edge_refs), question
        assert ours.text == expected.text, question
        assert ours.result.subgraph.node_refs == expected.subgraph.node_refs
        # What generation reads: the selected nodes' and edges' vectors (edges': their relation text's).
        chosen_nodes, chosen_edges = ours.result.subgraph.node_indices, ours.result.subgraph.edge_indices
        np.testing.assert_array_equal(ours.result.candidate.node_embeddings[chosen_nodes],
                                      expected.candidate.node_embeddings[expected.subgraph.node_indices])
        np.testing.assert_array_equal(ours.result.candidate.edge_embeddings[chosen_edges],
                                      expected.candidate.edge_embeddings[expected.subgraph.edge_indices])
        assert len(chosen_edges) > 0, question
    assert within_calls, "no hop began with the node budget spent: rule 6 was not compared"
    assert any(held_calls) == (hub == 1), "nodes held in memory were compared only where every node is a hub"


def test_whole_graph_and_empty_graph_parity(store, embedder):
    per_sample = f"{store.test_prefix}-sample"
    empty = f"{store.test_prefix}-empty"
    record = GraphRecord(graph_id=per_sample, dataset=store.test_prefix, kind="per-sample",
                         nodes=[Node(str(i), t) for i, t in enumerate(["cats", "mice", "cheese", "dogs", "bones",
                                                                       "parks", "owners", "leashes", "fleas", "vets",
                                                                       "collars"])],
                         edges=[Edge("0", "chase", "1"), Edge("1", "eat", "2"), Edge("3", "chew", "4"),
                                Edge("3", "play in", "5"), Edge("6", "walk", "3"), Edge("10", "hold", "7")])
    ingest([record, GraphRecord(graph_id=empty, dataset=store.test_prefix, kind="per-sample")], store,
           embedder.embed, dataset=store.test_prefix)
    retriever = StaticRetriever(RetrievalContext(store, embedder))
    params = RetrievalParams(whole_graph=True, pcst=PcstParams(0, 0, 0.5))  # ExplaGraphs: the whole graph
    for graph in (per_sample, empty):
        ours = retriever.retrieve("do dogs chase cats?", graph=graph, params=params, record=False)
        expected = retrieve(_stored_graph(store, graph, embedder), embedder.embed_query("do dogs chase cats?").vector,
                            params)
        assert ours.text == expected.text
    assert ours.result.subgraph.node_keys == []
    whole = retriever.retrieve("do dogs chase cats?", graph=per_sample, params=params, record=False)
    assert whole.result.subgraph.node_keys == [str(i) for i in range(11)]  # numeric order, not "10" < "2"
    pcst = retriever.retrieve("do dogs chase cats?", graph=per_sample, record=False,
                              params=RetrievalParams(whole_graph=True, pcst=PcstParams(3, 3, 0.5)))
    assert 0 < len(pcst.result.subgraph.node_keys) < 11


def test_recorded_retrieval_statement_returns_exactly_its_subgraph(store, embedder, neo4j_settings):
    graph = f"{store.test_prefix}-rec"
    ingest([_random_kg(7, graph, store.test_prefix)], store, embedder.embed, dataset=store.test_prefix)
    retrieval = StaticRetriever(RetrievalContext(store, embedder)).retrieve(
        "what else did ben franklin invent", graph=graph)
    sub = retrieval.result.subgraph
    nodes, rels = store.retrieval_subgraph(retrieval.id)
    assert nodes == set(sub.node_refs) and rels == {e.ref for e in sub.edges}
    assert store.retrieval(retrieval.id)["textualized"] == retrieval.text

    # The statement a person pastes into Browser, through Neo4j's HTTP query API.
    body = json.dumps({"statement": retrieval.browser_statement}).encode()
    request = urllib.request.Request(f"{neo4j_settings.http_url}/db/{neo4j_settings.database}/query/v2", data=body,
                                     headers={"Content-Type": "application/json", "Accept": "application/json"})
    token = base64.b64encode(f"{neo4j_settings.user}:{neo4j_settings.password}".encode()).decode()
    request.add_header("Authorization", f"Basic {token}")
    with urllib.request.urlopen(request, timeout=30) as response:
        values = json.load(response)["data"]["values"]
    http_nodes = {row[0]["elementId"] for row in values} | {row[2]["elementId"] for row in values if row[2]}
    http_rels = {row[1]["elementId"] for row in values if row[1]}
    assert (http_nodes, http_rels) == (nodes, rels)
    assert sub.node_keys and "Benjamin Franklin" in sub.node_keys


HOSTILE = ['x"}) MATCH (n) DETACH DELETE n //', "`; DROP INDEX node_embedding; //",
           "{}} RETURN 1 UNION MATCH (n) RETURN n",
           "' OR 1=1 --", "CALL db.clearQueryCaches()"]


@pytest.mark.parametrize("text", HOSTILE)
def test_questions_and_graph_names_are_data(store, embedder, text):
    graph = f"{store.test_prefix}-safe"
    ingest([_random_kg(3, graph, store.test_prefix)], store, embedder.embed, dataset=store.test_prefix)
    before = store.stats()[store.test_prefix]
    retrieval = StaticRetriever(RetrievalContext(store, embedder)).retrieve(text, graph=graph)
    assert store.retrieval(retrieval.id)["question"] == text
    with pytest.raises(ConfigError, match="no stored graph"):
        StaticRetriever(RetrievalContext(store, embedder)).retrieve("what did franklin invent", graph=text)
    assert store.stats()[store.test_prefix] == before
    assert {row["name"] for row in store.index_states()} == {"node_embedding", "relation_embedding", "node_text"}


def test_bad_questions(store, embedder):
    graph = f"{store.test_prefix}-bad"
    ingest([_random_kg(4, graph, store.test_prefix)], store, embedder.embed, dataset=store.test_prefix)
    retriever = StaticRetriever(RetrievalContext(store, embedder))
    for empty in ("", "   \n\t"):
        with pytest.raises(InputError, match="empty"):
            retriever.retrieve(empty, graph=graph)
    long = retriever.retrieve("tell me about franklin " * 200, graph=graph, record=False)
    assert any("first 256" in w for w in long.warnings)


def test_other_dimension_embedder_is_refused(store, embedder):
    class Wider:
        name, dim, max_seq_length = "wide/model", 768, 512

    with pytest.raises(ConfigError, match="768"):
        StaticRetriever(RetrievalContext(store, Wider())).retrieve("anything")


def test_cli_ask_retrieve_only_ben_franklin(store):
    """The WebQSP sample (graph 'webqsp') answers the Quickstart question with Franklin's inventions."""
    sample = REPO / "gretriever_neo4j" / "samples" / "webqsp_sample.jsonl"
    ingested = gqa("ingest", "webqsp", "--source", str(sample))
    assert ingested.returncode == 0, ingested.stderr
    asked = gqa("ask", "--retrieve-only", "--retriever", "static", "--graph", "webqsp", "--json",
                "what else did ben franklin invent")
    assert asked.returncode == 0, asked.stderr
    data = json.loads(asked.stdout)
    texts = {node["text"] for node in data["nodes"]}
    assert "Benjamin Franklin" in texts and {"Lightning rod", "Bifocals", "Glass harmonica"} <= texts
    assert data["browser_url"].startswith("http://") and "MATCH (r:Retrieval" in data["browser_statement"]
    assert data["id"] in data["browser_statement"] and data["tokens"] > 0
    assert set(data["timings_ms"]) >= {"embed", "vector_search", "neighbourhood", "pcst", "textualize", "total"}
    shown = gqa("show", data["id"], "--json")
    assert shown.returncode == 0 and json.loads(shown.stdout)["textualized"] == data["textualized"]

    for args, message in ((("ask", "--retrieve-only", "   "), "empty"),
                          (("ask", "--retrieve-only", "--graph", "no such graph", "x"), "no stored graph"),
                          (("show", "r-000000000000"), "no retrieval")):
        failed = gqa(*args)
        assert failed.returncode == 1 and message in failed.stderr and "Traceback" not in failed.stderr


def test_cli_quickstart_retrieve_only(store, neo4j_settings, monkeypatch):
    """The README's main command, minus generation (the server is the test server, named by NEO4J_URI)."""
    monkeypatch.setenv("NEO4J_URI", neo4j_settings.uri)
    monkeypatch.setenv("NEO4J_PASSWORD", neo4j_settings.password)
    done = gqa("quickstart", "--retrieve-only")
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Benjamin Franklin" in done.stdout and "Bifocals" in done.stdout and "open in Neo4j Browser" in done.stdout


def test_a_graph_without_edges_retrieves_its_nodes(store, embedder):
    """No relation text at all: seeds are nodes only, nothing fails (a graph being built, or nodes-only CSV)."""
    graph = f"{store.test_prefix}-noedges"
    ingest([GraphRecord(graph_id=graph, dataset=store.test_prefix, kind="kg",
                        nodes=[Node("Heat", "Heat"), Node("Michael Mann", "Michael Mann")], edges=[])],
           store, embedder.embed, dataset=store.test_prefix)
    store.await_indexes()
    retrieval = StaticRetriever(RetrievalContext(store, embedder)).retrieve("who directed Heat", graph=graph,
                                                                           record=False)
    assert "Heat" in retrieval.result.seed_keys and retrieval.result.subgraph.edges == []

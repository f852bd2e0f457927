"""Concurrent asks at a real `gqa serve` whose graph is not in memory yet (every request on the Neo4j path, the
learned retriever's store-backed source included), and at one that is loading it (`--preload`): no errors."""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from gretriever_neo4j.ingest.graphs import ingest
from gretriever_neo4j.records import Edge, GraphRecord, Node, QuestionRecord
from gretriever_neo4j.store.graph_store import GraphStore

from cli_helpers import gqa
from service_helpers import Server

pytestmark = pytest.mark.neo4j

PEOPLE = [f"Director {i}" for i in range(30)]
MOVIES = [f"Movie {i}" for i in range(90)]
ACTORS = [f"Actor {i}" for i in range(45)]


def _questions(count: int) -> list[str]:
    kinds = ["who directed {}", "who starred in {}", "when was {} released", "which films did the director of {} make"]
    return [kinds[i % len(kinds)].format(MOVIES[(7 * i) % len(MOVIES)]) for i in range(count)]


@pytest.fixture(scope="module")
def trained_graph(neo4j_driver, neo4j_settings, embedder, tmp_path_factory):
    """A movie KG with a learned retriever trained for it, in a GQA_HOME of its own."""
    import uuid

    store = GraphStore(neo4j_driver, neo4j_settings.database)
    store.ensure_schema(embedder.name, embedder.dim)
    graph = f"t{uuid.uuid4().hex[:8]}-movies"
    edges = [Edge(m, "directed_by", PEOPLE[i % len(PEOPLE)]) for i, m in enumerate(MOVIES)]
    edges += [Edge(m, "starred_actors", ACTORS[(i * 3 + k) % len(ACTORS)]) for i, m in enumerate(MOVIES)
              for k in range(2)]
    edges += [Edge(m, "release_year", str(1980 + i % 20)) for i, m in enumerate(MOVIES)]
    nodes = [Node(n, n) for n in PEOPLE + MOVIES + ACTORS + [str(1980 + y) for y in range(20)]]
    records = [GraphRecord(graph_id=graph, dataset=graph, kind="kg", nodes=nodes, edges=edges)]
    for i, movie in enumerate(MOVIES):
        records.append(QuestionRecord(qid=f"q{i}", dataset=graph, text=f"who directed [{movie}]",
                                      answers=[PEOPLE[i % len(PEOPLE)]], split="train", graph_id=graph,
                                      topic_entities=[movie]))
    ingest(records, store, embedder.embed, dataset=graph)
    home = tmp_path_factory.mktemp("gqa-home")
    env = {**os.environ, "NEO4J_URI": neo4j_settings.uri, "NEO4J_PASSWORD": neo4j_settings.password,
           "GQA_HOME": str(home)}
    trained = gqa("train-retriever", "--graph", graph, "--dataset", graph, "--epochs", "2", env=env)
    assert trained.returncode == 0, trained.stderr[-3000:]
    yield graph, env
    store.drop_graph(graph)


def _ask_all(url: str, graph: str, questions: list[str]) -> list[httpx.Response]:
    def ask(question: str) -> httpx.Response:
        return httpx.post(f"{url}/api/ask", json={"question": question, "graph": graph, "llm_when": "never"},
                          timeout=300)

    with ThreadPoolExecutor(max_workers=len(questions)) as pool:
        return list(pool.map(ask, questions))


def _check(responses: list[httpx.Response]) -> None:
    failed = [(r.status_code, r.text[:300]) for r in responses if r.status_code != 200]
    assert not failed, failed
    assert all(r.json()["retriever_model"].startswith("learned") for r in responses)
    assert all(r.json()["nodes"] for r in responses)


@pytest.mark.parametrize("preload", [False, True], ids=["not-loaded", "preloading"])
def test_sixteen_concurrent_asks_all_succeed(trained_graph, preload):
    graph, env = trained_graph
    args = ["--llm", "tiny-random-llama", "--max-queue", "16"] + (["--preload", graph] if preload else [])
    server = Server(env, *args).wait()
    try:
        _check(_ask_all(server.url, graph, _questions(16)))
        _check(_ask_all(server.url, graph, _questions(32)[16:]))  # again, while the graph may be loading
    finally:
        server.stop()
    assert "Traceback" not in server.process.stderr.read()


def test_a_queue_of_n_admits_n_clients_asking_one_at_a_time(trained_graph):
    """Each of 4 clients asks again as soon as it has its answer; a limit of 4 never refuses them."""
    graph, env = trained_graph
    server = Server(env, "--llm", "tiny-random-llama", "--max-queue", "4").wait()

    def client(offset: int) -> list[int]:
        codes = []
        with httpx.Client(timeout=300) as http:
            for question in _questions(40)[offset::4]:
                codes.append(http.post(f"{server.url}/api/ask", json={"question": question, "graph": graph,
                                                                      "llm_when": "never"}).status_code)
        return codes

    try:
        with ThreadPoolExecutor(max_workers=4) as pool:
            codes = [code for batch in pool.map(client, range(4)) for code in batch]
    finally:
        server.stop()
    assert codes.count(200) == 40, codes

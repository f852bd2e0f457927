"""Feedback through a real `gqa serve` (a subprocess, with a token) over the real Neo4j: an answer asked for is
recorded with its retrieval, feedback on it becomes a train question, 8 clients' concurrent votes all count, bad
input is a 4xx naming what is wrong, and on the web page (real headless Chromium) an answer is marked wrong and the
right node picked in the drawing."""

from __future__ import annotations

import hashlib
import threading
import uuid

import httpx
import pytest

from gretriever_neo4j.ingest.feedback import list_feedback
from gretriever_neo4j.ingest.graphs import ingest
from gretriever_neo4j.store.graph_store import DROPPING, GraphStore

from feedback_kg import QUESTION
from movie_kg import movie_graph
from service_helpers import Server, click_node, neo4j_env
from test_web_page import ARTIFACTS, chromium

pytestmark = pytest.mark.neo4j
TOKEN = "feedback-test-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
GIVER = f"token:{hashlib.sha256(TOKEN.encode()).hexdigest()[:8]}"


@pytest.fixture(scope="module")
def module_store(neo4j_driver, neo4j_settings, embedder):
    store = GraphStore(neo4j_driver, neo4j_settings.database)
    store.ensure_schema(embedder.name, embedder.dim)
    return store


def _graph(store, embedder, movies: int = 12) -> str:
    graph = f"t{uuid.uuid4().hex[:8]}-feedback"
    ingest([movie_graph(graph, movies, directors=4)], store, embedder.embed, dataset=graph)
    return graph


@pytest.fixture(scope="module")
def graph(module_store, embedder):
    name = _graph(module_store, embedder)
    yield name
    module_store.drop_graph(name)  # its questions and retrievals with it


@pytest.fixture(scope="module")
def server(neo4j_settings, graph):
    server = Server(neo4j_env(neo4j_settings), "--token", TOKEN).wait()
    yield server
    server.stop()


def ask(server, graph: str, question: str = QUESTION) -> dict:
    response = httpx.post(f"{server.url}/api/ask", json={"question": question, "graph": graph, "llm_when": "never"},
                          headers=AUTH, timeout=180)
    assert response.status_code == 200, response.text
    return response.json()


def feedback(server, **body) -> httpx.Response:
    return httpx.post(f"{server.url}/api/feedback", json=body, headers=AUTH, timeout=60)


def test_feedback_on_an_answer_becomes_a_train_question(server, graph):
    asked = ask(server, graph)
    shown = [node["key"] for node in asked["answer"]["nodes"]]
    assert shown
    given = feedback(server, retrieval_id=asked["id"], verdict="right")
    assert given.status_code == 200, given.text
    question = given.json()["question"]
    assert (question["qid"], question["text"], question["graph"], question["split"]) == (
        asked["id"], QUESTION, graph, "train")
    assert question["answers"] == shown and question["given_by"] == [GIVER] and question["votes_right"] == 1
    listed = httpx.get(f"{server.url}/api/feedback", params={"graph": graph}, headers=AUTH).json()
    assert [q["qid"] for q in listed["questions"]] == [asked["id"]]


def test_eight_clients_voting_at_once_make_one_question_with_every_vote(server, graph):
    asked = ask(server, graph, "who directed Film B2")
    verdicts = ["right", "wrong"] * 4
    start = threading.Barrier(len(verdicts))
    statuses: list[int] = []

    def vote(verdict: str) -> None:
        start.wait()
        statuses.append(feedback(server, retrieval_id=asked["id"], verdict=verdict).status_code)

    threads = [threading.Thread(target=vote, args=(verdict,)) for verdict in verdicts]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert statuses == [200] * len(verdicts)
    mine = [q for q in httpx.get(f"{server.url}/api/feedback", params={"graph": graph}, headers=AUTH).json()
            ["questions"] if q["retrieval"] == asked["id"]]
    assert len(mine) == 1 and (mine[0]["votes_right"], mine[0]["votes_wrong"]) == (4, 4)


def test_bad_feedback_is_a_4xx_that_says_what_is_wrong(server, graph, module_store, embedder):
    asked = ask(server, graph, "who directed Film A3")
    rid = asked["id"]
    for body, status, wanted in [
        ({"retrieval_id": "r-000000000000", "verdict": "right"}, 404, "no retrieval 'r-000000000000'"),
        ({"retrieval_id": rid, "verdict": "wrong", "answer": "Nobody Atall"}, 422, "field 'answer': no node"),
        ({"retrieval_id": rid, "verdict": "wrong", "shown": ["Film A3"]}, 422, "field 'shown'"),
        ({"retrieval_id": "r-1; MATCH (n) DETACH DELETE n", "verdict": "right"}, 422, "field 'retrieval_id'"),
        ({"retrieval_id": rid, "verdict": "maybe"}, 422, "verdict"),
        ({"verdict": "right"}, 422, "retrieval_id"),
    ]:
        response = feedback(server, **body)
        assert response.status_code == status and wanted in str(response.json()["detail"]), (body, response.text)
    assert httpx.post(f"{server.url}/api/feedback", json={"retrieval_id": rid, "verdict": "right"}).status_code == 401
    assert [q for q in list_feedback(module_store, graph) if q.qid == rid] == []  # nothing half-written

    module_store.begin_change([{"id": graph}], DROPPING)  # a drop under way: refused, nothing kept
    try:
        response = feedback(server, retrieval_id=rid, verdict="right")
    finally:
        module_store.end_change([graph], changed=False)
    assert response.status_code == 409 and "being dropped" in response.json()["detail"]
    other = _graph(module_store, embedder, movies=4)
    gone = ask(server, other, "who directed Film A1")["id"]
    module_store.drop_graph(other)  # dropped once the answer was shown
    response = feedback(server, retrieval_id=gone, verdict="right")
    assert response.status_code == 404 and gone in response.json()["detail"]
    assert httpx.get(f"{server.url}/api/feedback", params={"graph": other}, headers=AUTH).status_code == 404


def test_names_complete_from_the_graphs_nodes(server, graph):
    found = httpx.get(f"{server.url}/api/nodes", params={"graph": graph, "q": "direc"}, headers=AUTH).json()
    assert {node["text"] for node in found["nodes"]} == {f"Director {i}" for i in range(4)}
    assert httpx.get(f"{server.url}/api/nodes", params={"graph": f"{graph}-none", "q": "x"},
                     headers=AUTH).status_code == 404


def test_on_the_page_an_answer_marked_wrong_and_the_right_node_picked_is_stored(server, graph, module_store):
    playwright = pytest.importorskip("playwright.sync_api")
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium(), args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 760})
            page.goto(f"{server.url}/?graph={graph}&llm=never#token={TOKEN}")
            page.fill("#question", "who directed Film C0")
            page.click("#submit")
            page.wait_for_selector("#answer-nodes li .fb-wrong", timeout=180_000)
            retrieval = page.evaluate("window.gqaView.retrieval")
            shown = page.evaluate("window.gqaView.answer.nodes.map(n => n.key)")
            page.click("#answer-nodes li:first-child .fb-wrong")
            assert page.get_attribute("#answer-nodes li:first-child", "class") == "fb-marked-wrong"
            # the right node: one the answer did not name, clicked in the drawing (the whole subgraph if need be)
            target = next(n for n in sorted(retrieval["nodes"], key=lambda n: not n["key"].startswith("Director"))
                          if n["key"] not in shown)
            click_node(page, target)
            assert page.input_value("#feedback-answer") == target["text"]
            page.click("#feedback-send")
            page.wait_for_function("window.gqaFeedback.last !== null", timeout=30_000)
            status = page.inner_text("#feedback-status")
            page.fill("#feedback-answer", "direc")  # typing offers the graph's names
            page.wait_for_function("document.querySelectorAll('#feedback-names option').length > 0", timeout=30_000)
            ARTIFACTS.mkdir(exist_ok=True)
            page.screenshot(path=str(ARTIFACTS / "web_page_feedback.png"))
        finally:
            browser.close()
    assert status.startswith("Thank you") and graph in status
    [stored] = [q for q in list_feedback(module_store, graph) if q.qid == retrieval["id"]]
    assert stored.answers == [target["key"]] and stored.not_answers == [shown[0]]
    assert (stored.votes_right, stored.votes_wrong, stored.split, stored.given_by) == (0, 1, "train", [GIVER])

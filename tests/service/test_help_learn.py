"""The "Help it learn" view and its API, over the real Neo4j: `GET /api/feedback/unsure` lists a graph's answers
that nobody judged yet, the least confident first (those nothing estimated last), then the newest, with what the
last `gqa train` learned from feedback (`taught`); bad input is a 404 or a 422 naming its field. On the web page
(real headless Chromium, a real `gqa serve`): an unsure answer shows its confidence and an "unsure" badge and asks
first whether it is right; the view lists the answers waiting, each judged with one click and then gone. Saves
tests/artifacts/web_page_help_learn.png."""

from __future__ import annotations

import json

import httpx
import pytest

from gretriever_neo4j.artifacts.registry import TrainedModels
from gretriever_neo4j.ingest.feedback import list_feedback
from gretriever_neo4j.ingest.graphs import ingest

from service_helpers import (
    KRIBBLE_ANSWER,
    KRIBBLE_QUESTION,
    Server,
    ask_in_page,
    home_of_its_own,
    in_process_app,
    menu_record,
    neo4j_env,
)
from test_web_page import ARTIFACTS, chromium

pytestmark = pytest.mark.neo4j
FEWSHOT = {"questions": 25, "feedback_questions": 3, "before": 0.62, "after": 0.84,
           "measured_on": "5-fold cross-validation on the graph's own questions", "adopted": True,
           "trained": "2026-11-28T10:00:00+0000"}
QUESTIONS = ["who owns Blue Door?", "where is Red Lantern?", "what is served at Green Gate?"]


@pytest.fixture()
def graph(store, embedder):
    name = f"{store.test_prefix}-menu"
    ingest([menu_record(name)], store, embedder.embed, dataset=name)
    return name


@pytest.fixture()
def client(store, embedder, graph, tmp_path, monkeypatch):
    for name, value in home_of_its_own(tmp_path / "home").items():
        monkeypatch.setenv(name, value)
    client, _ = in_process_app(store, embedder)
    with client:
        yield client


def set_confidence(store, retrieval_id: str, confidence: float | None, unsure: bool) -> None:
    """How sure an answer was, as a reader that estimates it would have recorded it (`record_answer`)."""
    store._driver.execute_query("MATCH (r:Retrieval {id: $id}) SET r.confidence = $confidence, r.unsure = $unsure",
                                id=retrieval_id, confidence=confidence, unsure=unsure, database_=store.database)


def trained(graph: str, embedder) -> None:
    TrainedModels(graph=graph, dataset=graph, embedder=embedder.name, created="2026-11-28T10:00:05+0000",
                  details={"fewshot": FEWSHOT}).save()


def test_the_answers_waiting_for_a_judgement_least_confident_first(client, store, graph, embedder):
    asked = []
    for question in QUESTIONS:
        response = client.post("/api/ask", json={"question": question, "graph": graph, "llm_when": "never"})
        assert response.status_code == 200, response.text
        asked.append(response.json())
    owner, place, dish = (a["id"] for a in asked)
    recorded = {a["retrieval_id"]: (a["confidence"], a["unsure"]) for a in
                client.get("/api/feedback/unsure", params={"graph": graph}).json()["answers"]}
    assert recorded == {a["id"]: (a["answer"]["confidence"], a["answer"]["unsure"]) for a in asked}  # as answered
    set_confidence(store, place, 0.35, True)
    set_confidence(store, dish, 0.8, False)
    set_confidence(store, owner, None, False)  # as a reader that estimates nothing records it

    listed = client.get("/api/feedback/unsure", params={"graph": graph})
    assert listed.status_code == 200, listed.text
    data = listed.json()
    assert data["graph"] == graph and data["taught"] is None  # nothing trained yet
    assert [a["retrieval_id"] for a in data["answers"]] == [place, dish, owner]
    first = data["answers"][0]
    assert set(first) == {"retrieval_id", "question", "answer_text", "answer_keys", "confidence", "unsure",
                          "created"}
    answer = asked[1]["answer"]
    assert (first["question"], first["confidence"], first["unsure"]) == (QUESTIONS[1], 0.35, True)
    assert first["answer_keys"] == [n["key"] for n in answer["nodes"]] and first["answer_text"] == answer["text"]
    assert data["answers"][2]["confidence"] is None and data["answers"][2]["unsure"] is False

    judged = client.post("/api/feedback", json={"retrieval_id": place, "verdict": "right"})
    assert judged.status_code == 200, judged.text
    waiting = client.get("/api/feedback/unsure", params={"graph": graph, "limit": 1}).json()["answers"]
    assert [a["retrieval_id"] for a in waiting] == [dish]  # judged: it waits no more

    trained(graph, embedder)
    taught = client.get("/api/feedback/unsure", params={"graph": graph}).json()["taught"]
    assert taught == {**FEWSHOT, "text": "After the last gqa train (25 questions, 3 of them from feedback): "
                                         "62% → 84% right (5-fold cross-validation on the graph's own questions); "
                                         "answers use what it learned."}


@pytest.mark.parametrize("params, status, field", [
    ({"graph": "GRAPH-none"}, 404, None),
    ({"graph": "GRAPH", "limit": 0}, 422, "limit"),
    ({"graph": "GRAPH", "limit": 101}, 422, "limit"),
    ({"graph": "GRAPH", "limit": "many"}, 422, "limit"),
    ({"limit": 5}, 422, "graph"),
    ({"graph": ""}, 422, "graph"),
])
def test_bad_input_is_a_404_or_a_422_naming_its_field(client, graph, params, status, field):
    params = {key: value.replace("GRAPH", graph) if isinstance(value, str) else value
              for key, value in params.items()}
    response = client.get("/api/feedback/unsure", params=params)
    assert response.status_code == status, response.text
    detail = response.json()["detail"]
    if field is None:
        assert f"{graph}-none" in detail
    else:
        assert [entry["loc"] for entry in detail] == [["query", field]]
    assert client.get("/api/feedback/unsure", params={"graph": graph, "limit": 100}).status_code == 200


# -- the page ----------------------------------------------------------------------------------------------------

@pytest.fixture()
def page_server(neo4j_settings, graph, embedder, tmp_path, monkeypatch):
    home = home_of_its_own(tmp_path / "home")
    for name, value in home.items():
        monkeypatch.setenv(name, value)
    env = {**neo4j_env(neo4j_settings), **home}
    trained(graph, embedder)
    server = Server(env).wait()
    yield server
    server.stop()


def patched_answers(page, sureness: dict) -> None:
    """The streamed answer says how sure it is as `sureness` holds it at the time (None: as the server said).
    How the page shows a sure or an unsure answer is what is looked at here; whether the reader is sure of one is
    the reader's business (tests/reader)."""

    def handle(route):
        response = route.fetch()
        body = response.text()
        if sureness.get("answer") is not None:
            blocks = []
            for block in body.split("\n\n"):
                lines = block.split("\n")
                if "event: answer" in lines:
                    at = next(i for i, line in enumerate(lines) if line.startswith("data:"))
                    answer = {**json.loads(lines[at][5:]), **sureness["answer"]}
                    lines[at] = "data: " + json.dumps(answer)
                blocks.append("\n".join(lines))
            body = "\n\n".join(blocks)
        route.fulfill(response=response, body=body)

    page.route("**/api/ask/stream", handle)


def test_the_page_marks_an_unsure_answer_and_lists_the_answers_to_judge(page_server, store, graph):
    waiting = []
    for question, confidence, unsure in zip(QUESTIONS, (None, 0.35, 0.8), (False, True, False)):
        asked = httpx.post(f"{page_server.url}/api/ask", timeout=180,
                           json={"question": question, "graph": graph, "llm_when": "never"}).json()
        set_confidence(store, asked["id"], confidence, unsure)
        waiting.append(asked["id"])
    playwright = pytest.importorskip("playwright.sync_api")
    sureness: dict = {"answer": {"confidence": 0.42, "unsure": True}}
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium(), args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 760})
            patched_answers(page, sureness)
            page.goto(f"{page_server.url}/?graph={graph}&llm=never")
            shown = ask_in_page(page, KRIBBLE_QUESTION)
            assert page.inner_text("#confidence") == "42% sure" and page.is_visible("#unsure-badge")
            assert page.is_visible("#feedback-verdict") and page.inner_text("#feedback-ask") == \
                "Not sure: is this right?"
            # asked first: the feedback box comes before the answers
            assert page.evaluate("document.getElementById('feedback').compareDocumentPosition("
                                 "document.getElementById('answer-nodes')) & Node.DOCUMENT_POSITION_FOLLOWING")

            page.click("#learn-toggle")
            page.wait_for_function("window.gqaLearn.loaded > 0 && document.querySelectorAll('#learn-list li')"
                                   ".length === 4", timeout=30_000)
            rows = page.eval_on_selector_all("#learn-list li", "items => items.map(i => i.dataset.retrieval)")
            # as the API lists them: least confident first (0.35, 0.8), nothing estimated last; the page's own
            # answer is where the reader's confidence puts it (the patch changed only what the page was shown)
            listed = httpx.get(f"{page_server.url}/api/feedback/unsure", params={"graph": graph}).json()["answers"]
            assert rows == [a["retrieval_id"] for a in listed] and set(rows) == {*waiting, shown["id"]}
            assert rows.index(waiting[1]) < rows.index(waiting[2]) < rows.index(waiting[0])
            assert "62% → 84% right" in page.inner_text("#learn-taught")
            row = f"#learn-list li[data-retrieval=\"{waiting[1]}\"]"
            assert page.inner_text(f"{row} .learn-sure").split() == ["35%", "sure", "unsure"]
            ARTIFACTS.mkdir(exist_ok=True)
            page.screenshot(path=str(ARTIFACTS / "web_page_help_learn.png"))

            page.click(f"{row} .learn-right")  # right, one click: the row goes
            page.wait_for_function(f"!document.querySelector('{row}')")
            row = f"#learn-list li[data-retrieval=\"{waiting[2]}\"]"
            page.click(f"{row} .learn-wrong")
            page.fill(f"{row} .learn-form input", KRIBBLE_ANSWER)
            page.click(f"{row} .learn-send")
            page.wait_for_function(f"!document.querySelector('{row}')")
            row = f"#learn-list li[data-retrieval=\"{waiting[0]}\"]"
            page.click(f"{row} .learn-wrong")
            page.click(f"{row} .learn-unknown")
            page.wait_for_function(f"!document.querySelector('{row}')")
            # the answer shown judged beside it: its row goes too
            page.click("#feedback-verdict .fb-right")
            page.wait_for_function("document.querySelectorAll('#learn-list li').length === 0", timeout=30_000)
            assert page.inner_text("#learn-status").startswith("No answer of")
            assert page.evaluate("window.gqaLearn.judged") == 3

            sureness["answer"] = {"confidence": 0.91, "unsure": False, "sure": True}
            ask_in_page(page, QUESTIONS[0])
            assert page.inner_text("#confidence") == "91% sure" and not page.is_visible("#unsure-badge")
            assert page.is_visible("#sure-badge") and not page.is_visible("#feedback-verdict")
            sureness["answer"] = {"confidence": 0.72, "unsure": False, "sure": False}
            ask_in_page(page, QUESTIONS[2])
            assert page.inner_text("#confidence") == "72% sure"
            assert not page.is_visible("#sure-badge") and not page.is_visible("#unsure-badge")
            sureness["answer"] = {"confidence": None, "unsure": False, "sure": False}
            ask_in_page(page, QUESTIONS[1])
            assert not page.is_visible("#sureness")
        finally:
            browser.close()
    stored = {q.qid: q for q in list_feedback(store, graph)}
    assert stored[waiting[1]].votes_right == 1
    assert stored[waiting[2]].answers == [KRIBBLE_ANSWER] and stored[waiting[2]].votes_wrong == 1
    assert stored[waiting[0]].negative and stored[waiting[0]].votes_wrong == 1
    assert stored[shown["id"]].votes_right == 1

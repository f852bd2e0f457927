"""The web page in a real headless browser (Debian's chromium, driven by Playwright): a question typed in, the
answer streamed beside the retrieved subgraph, the answer highlighted, the Browser link there, the graph list
naming where each graph came from. Saves a screenshot (tests/artifacts/web_page.png)."""

from __future__ import annotations

import os
import shutil
from contextlib import contextmanager
from pathlib import Path

import pytest

from service_helpers import FRANKLIN, INVENTIONS, Server

pytestmark = pytest.mark.neo4j
ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts"


def chromium() -> str:
    found = os.environ.get("GQA_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    if not found:
        if os.environ.get("GQA_REQUIRE_BROWSER") == "1":
            pytest.fail("no chromium (apt-get install chromium), and GQA_REQUIRE_BROWSER=1")
        pytest.skip("no chromium on this machine (apt-get install chromium)")
    return found


@pytest.fixture(scope="module")
def page_server(server_env):
    # The tiny random LLM streams under constrained decoding: only node names can come out, fast.
    server = Server(server_env, "--llm", "tiny-random-llama").wait()
    yield server
    server.stop()


@contextmanager
def answered_page(url: str, question: str, screenshot: str):
    """A headless page at `url` that was asked `question` and shows its answer (screenshot saved)."""
    playwright = pytest.importorskip("playwright.sync_api")
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium(), args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 760})
            page.goto(url)
            page.fill("#question", question)
            page.click("#submit")
            page.wait_for_selector("#answer-nodes li", timeout=120_000)
            page.wait_for_timeout(300)  # the layout settles
            ARTIFACTS.mkdir(exist_ok=True)
            page.screenshot(path=str(ARTIFACTS / screenshot))
            yield page
        finally:
            browser.close()


def test_the_page_streams_an_answer_beside_its_subgraph(page_server):
    with answered_page(f"{page_server.url}/?graph=webqsp&llm=always", FRANKLIN, "web_page.png") as page:
        stream = page.evaluate("window.gqaStream")
        named = page.locator("#answer-nodes li .name").all_inner_texts()
        drawn = page.evaluate("window.gqaGraph.nodes().length")
        highlighted = page.evaluate("window.gqaGraph.nodes('.answer').map(n => n.data('label'))")
        anchors = page.evaluate("window.gqaGraph.nodes('.anchor').map(n => n.data('label'))")
        link = page.get_attribute("#browser", "href")
        status = page.inner_text("#status")
        page.wait_for_function("[...document.querySelectorAll('#graph option')].some(o => o.value === 'webqsp' "
                               "&& o.textContent.includes('from benchmark webqsp'))", timeout=120_000)
    assert stream["events"][0] == "retrieval" and stream["tokens"] > 0 and stream["events"][-1] == "done"
    assert set(named) <= INVENTIONS and named
    # the evidence view: the named entity and the answers the (random, tiny) LLM chose, nothing else
    assert set(highlighted) <= INVENTIONS and highlighted and drawn == 1 + len(highlighted)
    assert anchors == ["Benjamin Franklin"]
    assert link.startswith("http://") and "cmd=edit" in link
    assert status.startswith("Answered in")


ACTOR = "Ewan McGregor"
FILMS = {"Trainspotting": "Danny Boyle", "Big Fish": "Tim Burton", "Moulin Rouge": "Baz Luhrmann",
         "Shallow Grave": "Danny Boyle", "The Ghost Writer": "Roman Polanski"}


@pytest.fixture(scope="module")
def movie_graph(neo4j_driver, neo4j_settings, embedder):
    """A small film KG: who directed the films Ewan McGregor starred in (several answers, two hops), plus other
    actors and films so that the retrieved subgraph holds more than the evidence."""
    import uuid

    from gretriever_neo4j.ingest.graphs import ingest
    from gretriever_neo4j.records import Edge, GraphRecord, Node
    from gretriever_neo4j.store.graph_store import GraphStore

    store = GraphStore(neo4j_driver, neo4j_settings.database)
    store.ensure_schema(embedder.name, embedder.dim)
    graph = f"t{uuid.uuid4().hex[:8]}-films"
    edges = [Edge(film, "starred_actors", ACTOR) for film in FILMS]
    edges += [Edge(film, "directed_by", director) for film, director in FILMS.items()]
    edges += [Edge(film, "release_year", str(1994 + i)) for i, film in enumerate(FILMS)]
    edges += [Edge(film, "starred_actors", f"Co-star {i}") for i, film in enumerate(FILMS)]
    texts = {ACTOR, *FILMS, *FILMS.values(), *(str(1994 + i) for i in range(len(FILMS))),
             *(f"Co-star {i}" for i in range(len(FILMS)))}
    ingest([GraphRecord(graph_id=graph, dataset=graph, kind="kg", nodes=[Node(t, t) for t in sorted(texts)],
                        edges=edges)], store, embedder.embed, dataset=graph)
    yield graph
    store.drop_graph(graph)


def test_a_multi_answer_question_shows_each_answer_with_its_path(page_server, movie_graph):
    """Answers listed with their chains; the drawing holds only the evidence until the toggle shows it all."""
    question = f"which person directed the films starred by {ACTOR}"
    with answered_page(f"{page_server.url}/?graph={movie_graph}&llm=never", question,
                       "web_page_evidence.png") as page:
        answer = page.evaluate("window.gqaView.answer")
        retrieval = page.evaluate("window.gqaView.retrieval")
        listed = [(item.locator(".name").inner_text(), item.locator(".evidence").all_inner_texts())
                  for item in page.locator("#answer-nodes li").all()]
        drawn = set(page.evaluate("window.gqaGraph.nodes().map(n => n.data('nid'))"))
        toggle = page.get_attribute("#view-toggle", "aria-pressed")
        page.click("#view-toggle")
        whole = page.evaluate("window.gqaGraph.nodes().length")
        pressed = page.get_attribute("#view-toggle", "aria-pressed")
        page.screenshot(path=str(ARTIFACTS / "web_page_whole.png"))
        shared = page.url
    names = [name for name, _ in listed]
    # What the reader answers is the reader's business (tests/reader); the page must show whatever it answers,
    # each answer with the chain from the named actor to it.
    assert len(names) >= 2 and set(names) <= set(FILMS) | set(FILMS.values()), listed
    assert all(paths and paths[0].startswith(ACTOR) and paths[0].endswith(name) for name, paths in listed), listed
    evidence = set(answer["anchors"]) | {n["id"] for n in answer["nodes"]} | {
        node for n in answer["nodes"] for path in n["evidence_paths"] for node in path["nodes"]}
    assert drawn and drawn <= evidence and len(drawn) < len(retrieval["nodes"])
    assert toggle == "false" and pressed == "true" and whole == len(retrieval["nodes"])
    assert "q=which+person" in shared and f"graph={movie_graph}" in shared

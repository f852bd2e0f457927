"""The web page in a real headless browser (Debian's chromium, driven by Playwright): a question typed in, the
answer streamed beside the retrieved subgraph, the answer highlighted, the Browser link there. Saves a screenshot
(tests/artifacts/web_page.png)."""

from __future__ import annotations

import os
import shutil
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


def test_the_page_streams_an_answer_beside_its_subgraph(page_server):
    playwright = pytest.importorskip("playwright.sync_api")
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium(), args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 760})
            page.goto(f"{page_server.url}/?graph=webqsp&llm=always")
            page.fill("#question", FRANKLIN)
            page.click("#submit")
            page.wait_for_selector("#answer-nodes li", timeout=120_000)
            page.wait_for_timeout(300)  # the layout settles
            ARTIFACTS.mkdir(exist_ok=True)
            page.screenshot(path=str(ARTIFACTS / "web_page.png"))
            stream = page.evaluate("window.gqaStream")
            named = page.locator("#answer-nodes li .name").all_inner_texts()
            drawn = page.evaluate("window.gqaGraph.nodes().length")
            highlighted = page.evaluate("window.gqaGraph.nodes('.answer').map(n => n.data('label'))")
            anchors = page.evaluate("window.gqaGraph.nodes('.anchor').map(n => n.data('label'))")
            link = page.get_attribute("#browser", "href")
            status = page.inner_text("#status")
        finally:
            browser.close()
    assert stream["events"][0] == "retrieval" and stream["tokens"] > 0 and stream["events"][-1] == "done"
    assert set(named) <= INVENTIONS and named
    assert drawn >= 5 and set(highlighted) <= INVENTIONS and highlighted
    assert anchors == ["Benjamin Franklin"]
    assert link.startswith("http://") and "cmd=edit" in link
    assert status.startswith("Answered in")

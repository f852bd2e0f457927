"""The Browser link of a retrieval, opened in a real headless browser against the bundled Neo4j: after logging
in, the recorded subgraph shows each node's text and each edge's relation text (the style `gqa db start` makes
Browser apply), not "Node" and "REL"."""

from __future__ import annotations

import json

import pytest

from cli_helpers import gqa
from service_helpers import FRANKLIN
from test_web_page import ARTIFACTS, chromium

pytestmark = pytest.mark.neo4j


def test_the_browser_link_shows_texts_not_labels(server_env, neo4j_settings):
    if not neo4j_settings.uri.startswith("bolt://127.0.0.1"):
        pytest.skip("the style is configured by `gqa db start`; this server is another one")
    playwright = pytest.importorskip("playwright.sync_api")
    asked = gqa("ask", "--retrieve-only", "--graph", "webqsp", "--json", FRANKLIN, env=server_env, timeout=300)
    assert asked.returncode == 0, asked.stderr[-2000:]
    retrieval = json.loads(asked.stdout)
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium(), args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": 1300, "height": 900})
            page.goto(retrieval["browser_url"])
            page.fill("input[data-testid='username']", neo4j_settings.user, timeout=60_000)
            page.fill("input[data-testid='password']", neo4j_settings.password)
            page.click("button[data-testid='connect']")
            page.wait_for_timeout(3000)  # the post-connect style command runs
            page.click(".monaco-editor")
            page.keyboard.press("Control+Enter")
            page.wait_for_selector("svg text", timeout=60_000)
            page.wait_for_timeout(2000)
            captions = page.evaluate("Array.from(document.querySelectorAll('svg text')).map(t => t.textContent)")
            ARTIFACTS.mkdir(exist_ok=True)
            page.screenshot(path=str(ARTIFACTS / "neo4j_browser.png"))
        finally:
            browser.close()
    shown = " ".join(captions)
    assert "Benjamin" in shown and "Bifocals" in shown  # node texts (long ones wrap over several lines)
    assert any(edge["text"] in captions for edge in retrieval["edges"])  # relation texts on the edges
    assert "REL" not in captions

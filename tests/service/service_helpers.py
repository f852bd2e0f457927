"""A real `gqa serve` subprocess for the service tests; the app in this process over the real store (FastAPI's
TestClient); a GQA_HOME of a test's own; and a tiny invented graph of restaurants whose question "what's Blue Door's
kribble?" the zero-shot reader gets wrong: "kribble" is the house's made-up word for its owner, which names no
relation and which no encoder knows, so the reader answers another neighbour of Blue Door (its dish or its chef:
encoders trained on more graphs have guessed "menu" for an unknown possessive, as people mostly ask about one)
instead of who owns it (Ada Lindqvist), a node of the subgraph it retrieves. The tests that use it assert that
premise first, so a future encoder that guesses the owner makes them fail loudly, not pass unexamined."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

from gretriever_neo4j.records import Edge, GraphRecord, Node

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "gretriever_neo4j" / "samples" / "webqsp_sample.jsonl"
FRANKLIN = "what else did ben franklin invent?"
INVENTIONS = {"Lightning rod", "Bifocals", "Glass harmonica", "Franklin stove"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    def __init__(self, env: dict, *args: str, host: str = "127.0.0.1", port: int | None = None):
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.process = subprocess.Popen([sys.executable, "-m", "gretriever_neo4j", "serve", "--host", host, "--port",
                                         str(self.port), *args], env=env, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, text=True)

    def wait(self, timeout: float = 180) -> Server:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise AssertionError(f"server exited: {self.process.stderr.read()[-3000:]}")
            try:
                if httpx.get(f"{self.url}/health", timeout=1).status_code == 200:
                    return self
            except httpx.HTTPError:
                time.sleep(0.3)
        raise AssertionError("server did not start")

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()

KRIBBLE_QUESTION = "what's Blue Door's kribble?"  # the house's word for its owner, which the zero-shot reader misreads
KRIBBLE_ANSWER = "Ada Lindqvist"
MENU_TRIPLES = [
    ("Mushroom Risotto", "served at", "Blue Door"),
    ("Blue Door", "located in", "Harbour Street"),
    ("Blue Door", "owned by", "Ada Lindqvist"),
    ("Lamb Tagine", "served at", "Red Lantern"),
    ("Red Lantern", "located in", "Mill Lane"),
    ("Red Lantern", "owned by", "Tomas Berg"),
    ("Fish Soup", "served at", "Green Gate"),
    ("Green Gate", "located in", "Harbour Street"),
    ("Green Gate", "owned by", "Ada Lindqvist"),
    ("Nora Quist", "chef of", "Blue Door"),
    ("Pavel Ruiz", "chef of", "Red Lantern"),
    ("Lena Holt", "chef of", "Green Gate"),
]


def menu_record(graph: str) -> GraphRecord:
    names = sorted({name for head, _, tail in MENU_TRIPLES for name in (head, tail)})
    return GraphRecord(graph_id=graph, dataset=graph, kind="kg", nodes=[Node(name, name) for name in names],
                       edges=[Edge(head, relation, tail) for head, relation, tail in MENU_TRIPLES])


def write_menu_tsv(path: Path) -> Path:
    path.write_text("".join(f"{head}\t{relation}\t{tail}\n" for head, relation, tail in MENU_TRIPLES))
    return path


def in_process_app(store, embedder):
    """(TestClient, Runtime): the service as `gqa serve` builds it (`service.build_runtime`), over `store`."""
    from fastapi.testclient import TestClient

    from gretriever_neo4j.answering.answering import Answering
    from gretriever_neo4j.qa.qa import QA
    from gretriever_neo4j.retrievers.cached import GraphCache
    from gretriever_neo4j.service.app import create_app
    from gretriever_neo4j.service.runtime import Runtime, ServiceConfig

    cache = GraphCache(store)
    qa = QA(store, embedder, answering=Answering(embedder), cache=cache)
    runtime = Runtime(ServiceConfig(), store, qa)
    runtime.cache = cache
    return TestClient(create_app(runtime)), runtime


def home_of_its_own(home: Path) -> dict[str, str]:
    """An empty GQA_HOME for a test's models, sharing the real one's exported ONNX embedder, so that no
    process of the test exports it again; the environment that points at it."""
    from gretriever_neo4j.settings import gqa_home

    home.mkdir(parents=True, exist_ok=True)
    real = gqa_home() / "onnx"
    if real.is_dir() and not (home / "onnx").exists():
        (home / "onnx").symlink_to(real, target_is_directory=True)
    return {"GQA_HOME": str(home)}


def neo4j_env(settings) -> dict[str, str]:
    return {**os.environ, "NEO4J_URI": settings.uri, "NEO4J_PASSWORD": settings.password}


def click_node(page, node: dict) -> None:
    """Clicks `node` of the retrieved subgraph in the drawing (the whole subgraph drawn where the evidence lacks it)."""
    if not page.evaluate(f"window.gqaGraph.$id('n{node['id']}').length"):
        page.click("#view-toggle")
    page.evaluate(f"window.gqaGraph.center(window.gqaGraph.$id('n{node['id']}'))")
    x, y = page.evaluate(f"""(() => {{
        const box = document.getElementById('graph-view').getBoundingClientRect();
        const at = window.gqaGraph.$id('n{node['id']}').renderedPosition();
        return [box.left + at.x, box.top + at.y]; }})()""")
    page.mouse.click(x, y)


def ask_in_page(page, question: str) -> dict:
    """Types `question` into the page, asks, and waits for its answer; the retrieval the page shows."""
    before = page.evaluate("window.gqaView.answer && window.gqaView.retrieval.id")
    page.fill("#question", question)
    page.click("#submit")
    page.wait_for_function(f"window.gqaView.answer && window.gqaView.retrieval.id !== {json.dumps(before)}",
                           timeout=180_000)
    page.wait_for_timeout(200)
    return page.evaluate("window.gqaView.retrieval")

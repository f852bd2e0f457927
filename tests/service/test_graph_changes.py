"""A graph that changes under a running `gqa serve`: 8 clients ask while a `--sync`, a drop and a re-ingest run
(real Neo4j, real server, with and without `--preload`). Each change is seen as one step: no 5xx, no 4xx but a
404 once the drop has completed, every answer during a sync is the answer before or after it, and the next answer
after a re-ingest is the new graph's, without a restart."""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass

import httpx
import pytest

from gretriever_neo4j.ingest.graphs import ingest_dataset

from service_helpers import Server

pytestmark = pytest.mark.neo4j

MOVIES = [f"Movie {i}" for i in range(60)]
MOVED = range(0, 60, 10)  # the movies whose director a change moves: 10% of them
ASKED = [*MOVED, 3, 17, 25]  # and a few it leaves alone
QUESTIONS = [f"who directed [{MOVIES[i]}]" for i in ASKED]


def triples(directors: str) -> list[tuple[str, str, str]]:
    """~300 triples; `directors`: the name of the moved movies' directors ("" for the original ones)."""
    rows = []
    for i, movie in enumerate(MOVIES):
        rows.append((movie, "directed_by", f"{directors} Director {i}" if directors and i in MOVED
                     else f"Director {i % 20}"))
        rows += [(movie, "starred_actors", f"Actor {(3 * i + k) % 45}") for k in range(2)]
        rows += [(movie, "release_year", str(1980 + i % 25)), (movie, "has_genre", ["Drama", "Comedy"][i % 2])]
    return rows


@dataclass
class Reply:
    question: str
    sent: float
    received: float
    status: int
    answer: str | None
    body: str = ""  # the reply's text when it is not a 200, for the assertion messages


class Clients:
    """8 clients asking the questions in a loop until stopped."""

    def __init__(self, url: str, graph: str, count: int = 8):
        self.url, self.graph = url, graph
        self.replies: list[Reply] = []
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=self._run, args=(k,), daemon=True) for k in range(count)]

    def __enter__(self) -> Clients:
        for thread in self._threads:
            thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=60)

    def _run(self, k: int) -> None:
        with httpx.Client(timeout=60) as http:
            i = k
            while not self._stop.is_set():
                question = QUESTIONS[i % len(QUESTIONS)]
                i += 1
                self.replies.append(ask(http, self.url, self.graph, question))


def ask(http: httpx.Client, url: str, graph: str, question: str) -> Reply:
    sent = time.monotonic()
    response = http.post(f"{url}/api/ask", json={"question": question, "graph": graph, "llm_when": "never"})
    if response.status_code == 200:
        return Reply(question, sent, time.monotonic(), 200, response.json()["answer"]["text"])
    return Reply(question, sent, time.monotonic(), response.status_code, None, response.text[:300])


def answers(url: str, graph: str) -> dict[str, str]:
    with httpx.Client(timeout=60) as http:
        replies = [ask(http, url, graph, question) for question in QUESTIONS]
    assert all(r.status == 200 for r in replies), [(r.status, r.question, r.body) for r in replies]
    return {r.question: r.answer for r in replies}


def held(url: str, store, graph: str, timeout: float = 30) -> None:
    """Waits until the server holds the graph at its current version (a question starts the load)."""
    version = store.graph_version(graph)
    deadline = time.monotonic() + timeout
    with httpx.Client(timeout=60) as http:
        while time.monotonic() < deadline:
            ask(http, url, graph, QUESTIONS[0])
            cached = http.get(f"{url}/ready").json()["graphs_in_memory"].get(graph)
            if cached is not None and cached["version"] == version:
                return
            time.sleep(0.2)
    raise AssertionError(f"the server did not cache {graph} at version {version}")


def source(tmp_path, name: str, rows) -> str:
    path = tmp_path / f"{name}.tsv"
    path.write_text("".join(f"{h}\t{r}\t{t}\n" for h, r, t in rows))
    return str(path)


def unexpected(replies: list[Reply]) -> list[tuple[int, str, str]]:
    return [(r.status, r.question, r.body) for r in replies if r.status not in (200, 404)]


@pytest.mark.parametrize("preload", [False, True], ids=["lazy", "preload"])
def test_answers_come_from_a_whole_graph_while_it_changes(store, embedder, neo4j_settings, tmp_path, preload):
    graph = f"{store.test_prefix}-films"
    first = source(tmp_path, "first", triples(""))
    ingest_dataset(store, embedder, "triples", first, graph=graph)
    env = {**os.environ, "NEO4J_URI": neo4j_settings.uri, "NEO4J_PASSWORD": neo4j_settings.password,
           "GQA_HOME": str(tmp_path / "home")}
    preloading = ["--preload", graph] if preload else []
    server = Server(env, "--llm", "tiny-random-llama", "--max-queue", "16", *preloading).wait()
    try:
        held(server.url, store, graph)
        before = answers(server.url, graph)

        # 1. a sync that moves 10% of the directors: every answer is the one before or the one after
        synced = source(tmp_path, "first", triples("Synced"))
        with Clients(server.url, graph) as sync_clients:
            time.sleep(0.5)
            ingest_dataset(store, embedder, "triples", synced, graph=graph, sync=True)
            time.sleep(0.5)
        after = answers(server.url, graph)
        assert [q for q in QUESTIONS if before[q] != after[q]] == [QUESTIONS[k] for k in range(len(MOVED))]
        assert all("Synced" in after[QUESTIONS[k]] for k in range(len(MOVED)))
        assert all(r.status == 200 for r in sync_clients.replies), [(r.status, r.body) for r in sync_clients.replies
                                                                    if r.status != 200]
        mixed = [(r.question, r.answer) for r in sync_clients.replies if r.answer not in (before[r.question],
                                                                                         after[r.question])]
        assert not mixed, mixed
        held(server.url, store, graph)

        # 2. a drop: the synced answers until it completes, then 404, and never an answer after a 404
        with Clients(server.url, graph) as drop_clients:
            time.sleep(0.5)
            started = time.monotonic()
            store.drop_graph(graph)
            dropped = time.monotonic()
            time.sleep(0.5)
        replies = drop_clients.replies
        assert not unexpected(replies), unexpected(replies)
        assert all(r.answer == after[r.question] for r in replies if r.status == 200)
        gone = min(r.received for r in replies if r.status == 404)
        assert gone > started and not [r for r in replies if r.status == 200 and r.sent > gone]
        assert all(r.status == 404 for r in replies if r.sent > dropped)

        # 3. the same graph ingested again, with other contents: 404 until it is whole, then its answers at once
        again = source(tmp_path, "again", triples("Again"))
        with Clients(server.url, graph) as ingest_clients:
            time.sleep(0.5)
            ingest_dataset(store, embedder, "triples", again, graph=graph)
            written = time.monotonic()
            with httpx.Client(timeout=60) as http:
                nxt = ask(http, server.url, graph, QUESTIONS[0])
            time.sleep(0.5)
        assert nxt.status == 200 and "Again" in nxt.answer, (nxt.status, nxt.answer)
        replies = ingest_clients.replies
        assert not unexpected(replies), unexpected(replies)
        assert all(r.status == 200 for r in replies if r.sent > written)
        fresh = [r for r in replies if r.status == 200]
        assert fresh and all(r.answer == nxt.answer for r in fresh if r.question == QUESTIONS[0])
        assert all("Again" in r.answer for r in fresh if r.question in QUESTIONS[:len(MOVED)])
        assert not [r for r in replies if r.status == 404 and r.sent > min(r.received for r in fresh)]
    finally:
        server.stop()
    log = server.process.stderr.read()
    assert "Traceback" not in log and "internal error" not in log, log[-3000:]

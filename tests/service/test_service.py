"""`gqa serve` as a real HTTP server (a subprocess of its own) over the real Neo4j: the API, its limits and
authentication, streaming with a client that goes away, and `gqa ask` through it."""

from __future__ import annotations

import json
import threading
import time

import httpx
import pytest

from cli_helpers import gqa
from service_helpers import FRANKLIN, INVENTIONS, Server, free_port

pytestmark = pytest.mark.neo4j


@pytest.fixture(scope="module")
def server(server_env):
    server = Server(server_env, "--max-queue", "1", "--max-question-chars", "200", "--max-body-bytes", "4096",
                    "--preload", "webqsp").wait()
    yield server
    server.stop()


def events(response) -> list[tuple[str, dict]]:
    out, kind = [], "message"
    for line in response.iter_lines():
        if line.startswith("event:"):
            kind = line[6:].strip()
        elif line.startswith("data:"):
            out.append((kind, json.loads(line[5:])))
    return out


def test_health_ready_graphs_and_docs(server):
    assert httpx.get(f"{server.url}/health").json() == {"status": "ok"}
    ready = httpx.get(f"{server.url}/ready").json()
    assert ready["ready"] and ready["neo4j"]
    # the first listing may wait for the full scan the server starts at launch (seconds on a loaded CI store)
    graphs = httpx.get(f"{server.url}/api/graphs", timeout=120).json()["datasets"]
    assert "webqsp" in graphs and graphs["webqsp"]["kind"] == "kg" and graphs["webqsp"]["nodes"] > 0
    listed = httpx.get(f"{server.url}/api/graphs", timeout=120).json()
    assert listed["datasets"] == graphs
    webqsp = next(row for row in listed["graphs"] if row["graph"] == "webqsp")  # ingested by `server_env`
    assert webqsp["source"] == "benchmark webqsp" and webqsp["source_query"] is None
    assert "/api/ask/stream" in httpx.get(f"{server.url}/openapi.json").json()["paths"]
    assert httpx.get(f"{server.url}/docs").status_code == 200


def test_ask_retrieve_and_the_recorded_retrieval(server):
    asked = httpx.post(f"{server.url}/api/ask", json={"question": FRANKLIN, "graph": "webqsp"}, timeout=120).json()
    answer = asked["answer"]
    assert answer["mode"] == "grounded" and {n["text"] for n in answer["nodes"]} == INVENTIONS
    assert answer["citations"]["all_valid"]
    # until the preload has the graph in memory, retrieval goes through Neo4j (seconds on a loaded store)
    retrieved = httpx.post(f"{server.url}/api/retrieve", json={"question": FRANKLIN, "graph": "webqsp"},
                           timeout=120).json()
    assert "Benjamin Franklin" in {n["text"] for n in retrieved["nodes"]} and "answer" not in retrieved
    record = httpx.get(f"{server.url}/api/retrievals/{retrieved['id']}").json()
    assert record["question"] == FRANKLIN and "MATCH (r:Retrieval" in record["browser_statement"]
    assert record["browser_url"].startswith("http://")


def test_limits_and_unknown_things_are_clear_4xx(server):
    too_long = httpx.post(f"{server.url}/api/ask", json={"question": "x" * 201, "graph": "webqsp"})
    assert too_long.status_code == 422 and "characters" in too_long.json()["detail"]
    empty = httpx.post(f"{server.url}/api/retrieve", json={"question": "   "})
    assert empty.status_code == 422
    huge = httpx.post(f"{server.url}/api/ask", content=b'{"question": "' + b"a" * 5000 + b'"}',
                      headers={"Content-Type": "application/json"})
    assert huge.status_code == 413
    unknown = httpx.post(f"{server.url}/api/ask", json={"question": "who?", "graph": "no such graph"})
    assert unknown.status_code == 404 and "no stored graph" in unknown.json()["detail"]
    assert httpx.get(f"{server.url}/api/retrievals/r-000000000000").status_code == 404
    assert httpx.post(f"{server.url}/api/ask", json={"graph": "webqsp"}).status_code == 422


def test_a_full_queue_says_429(server):
    """One place in the queue (--max-queue 1): of six questions asked at once, some wait for nobody."""
    body = {"question": FRANKLIN, "graph": "webqsp", "llm_when": "always"}
    results: list[httpx.Response] = []

    def ask() -> None:
        results.append(httpx.post(f"{server.url}/api/ask", json=body, timeout=300))

    threads = [threading.Thread(target=ask) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    codes = sorted(r.status_code for r in results)
    assert 429 in codes and 200 in codes, codes
    assert all("try again" in r.json()["detail"] for r in results if r.status_code == 429)
    assert all({n["text"] for n in r.json()["answer"]["nodes"]} <= INVENTIONS for r in results if r.status_code == 200)


def test_a_client_leaving_mid_stream_does_not_stop_the_server(server):
    body = {"question": FRANKLIN, "graph": "webqsp", "llm_when": "always"}
    with httpx.Client(timeout=120) as client:
        with client.stream("POST", f"{server.url}/api/ask/stream", json=body) as response:
            assert response.status_code == 200
            assert next(response.iter_lines()).startswith("event: retrieval")
        # the client closed the connection after the first event
    deadline = time.monotonic() + 60
    while True:
        again = httpx.post(f"{server.url}/api/ask", json={"question": FRANKLIN, "graph": "webqsp"}, timeout=120)
        if again.status_code != 429 or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert again.status_code == 200 and again.json()["answer"]["nodes"]
    with httpx.Client(timeout=120) as client, client.stream("POST", f"{server.url}/api/ask/stream",
                                                            json=body) as response:
        kinds = [kind for kind, _ in events(response)]
    assert kinds[0] == "retrieval" and "token" in kinds and kinds[-2:] == ["answer", "done"]


def test_the_stream_refuses_a_bad_question_or_a_full_queue_before_it_starts(server):
    """Checked inside the stream, these were raised in FastAPI's producer task and answered 500."""
    for question in ("   ", "x" * 201):
        refused = httpx.post(f"{server.url}/api/ask/stream", json={"question": question, "graph": "webqsp"})
        assert refused.status_code == 422 and refused.json()["detail"], refused.text
    body = {"question": FRANKLIN, "graph": "webqsp", "llm_when": "always"}
    codes: list[int] = []

    def ask() -> None:
        with httpx.Client(timeout=300) as client, client.stream("POST", f"{server.url}/api/ask/stream",
                                                                json=body) as response:
            response.read()
            codes.append(response.status_code)

    threads = [threading.Thread(target=ask) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert 429 in codes and 200 in codes and 500 not in codes, codes


def test_stream_reports_errors_as_events(server):
    with httpx.Client(timeout=60) as client, client.stream("POST", f"{server.url}/api/ask/stream",
                                                           json={"question": "who?", "graph": "nope"}) as response:
        received = events(response)
    assert received[0][0] == "error" and received[0][1]["status"] == 404


def test_cli_ask_goes_through_a_running_server(server, server_env):
    env = {**server_env, "GQA_SERVER": server.url}
    started = time.perf_counter()
    done = gqa("ask", "--graph", "webqsp", "--json", FRANKLIN, env=env, timeout=120, python_flags=("-X", "importtime"))
    assert done.returncode == 0, done.stderr[-2000:]
    data = json.loads(done.stdout)
    assert {n["text"] for n in data["answer"]["nodes"]} == INVENTIONS
    imported = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}
    assert not {"torch", "transformers", "sentence_transformers", "numpy"} & imported  # the server did the work
    failed = gqa("ask", "--graph", "nope", "who?", env=env, timeout=60)
    assert failed.returncode == 1 and "no stored graph" in failed.stderr and "HTTP 404" in failed.stderr
    assert time.perf_counter() - started < 60


def test_a_non_local_bind_needs_a_token(server_env):
    refused = gqa("serve", "--host", "0.0.0.0", "--port", str(free_port()), env=server_env, timeout=60)
    assert refused.returncode == 1 and "token" in refused.stderr and "Traceback" not in refused.stderr
    guarded = Server({**server_env, "GQA_SERVE_TOKEN": "s3cret"}, host="0.0.0.0").wait()
    try:
        assert httpx.get(f"{guarded.url}/health").status_code == 200  # liveness stays open
        assert httpx.get(f"{guarded.url}/api/graphs").status_code == 401
        assert httpx.get(f"{guarded.url}/api/graphs", headers={"Authorization": "Bearer wrong"}).status_code == 401
        # the first listing may wait for the statistics scan the server starts at launch (a loaded CI store)
        assert httpx.get(f"{guarded.url}/api/graphs", headers={"Authorization": "Bearer s3cret"},
                         timeout=120).status_code == 200
    finally:
        guarded.stop()

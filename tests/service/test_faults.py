"""Faults around a real `gqa serve`: Neo4j stopped and started again under it, the server killed with SIGKILL in
the middle of a stream, a client that never reads its stream."""

from __future__ import annotations

import os
import signal
import time

import httpx
import pytest

from gretriever_neo4j import server as neo4j_server

from cli_helpers import gqa
from service_helpers import FRANKLIN, SAMPLE, Server, free_port

pytestmark = pytest.mark.neo4j

ASK = {"question": FRANKLIN, "graph": "webqsp", "llm_when": "never"}


@pytest.fixture()
def private_neo4j(server_env, tmp_path):
    """A Neo4j of this test's own (the bundled server's jars, a data folder in tmp_path, free ports) holding the
    WebQSP sample: the test stops and starts it without disturbing the server every other test uses."""
    layout = neo4j_server.ServerLayout.at(tmp_path / "neo4j", jar_cache=neo4j_server.default_layout().jar_cache)
    bolt, http = free_port(), free_port()
    start = lambda: neo4j_server.start(layout, heap="512m", pagecache="128m", bolt_port=bolt, http_port=http)
    start()
    env = {**server_env, "NEO4J_URI": f"bolt://127.0.0.1:{bolt}",
           "NEO4J_PASSWORD": layout.password_file.read_text().strip()}
    try:
        done = gqa("ingest", "webqsp", "--source", str(SAMPLE), env=env)
        assert done.returncode == 0, done.stderr[-2000:]
        yield env, start, lambda: neo4j_server.stop(layout)
    finally:
        neo4j_server.stop(layout)


def test_neo4j_stopped_under_the_server_gives_503_then_answers_resume(private_neo4j):
    env, start_neo4j, stop_neo4j = private_neo4j
    server = Server(env, "--llm", "tiny-random-llama").wait()
    try:
        assert httpx.post(f"{server.url}/api/ask", json=ASK, timeout=120).status_code == 200
        stop_neo4j()
        try:
            down = httpx.post(f"{server.url}/api/ask", json=ASK, timeout=120)
            assert down.status_code == 503, (down.status_code, down.text[:300])
            assert down.headers.get("retry-after") and "Traceback" not in down.text
            assert "Neo4j" in down.json()["detail"]
            ready = httpx.get(f"{server.url}/ready", timeout=60)
            assert ready.status_code == 503 and ready.json()["ready"] is False
            assert httpx.post(f"{server.url}/api/retrieve", json=ASK, timeout=120).status_code == 503
            with httpx.Client(timeout=120) as client, client.stream("POST", f"{server.url}/api/ask/stream",
                                                                    json=ASK) as response:
                text = "".join(response.iter_text())
            assert "event: error" in text and '"status":503' in text.replace(" ", ""), text[:300]
        finally:
            start_neo4j()
        deadline = time.monotonic() + 120
        while True:  # the driver reconnects by itself: no restart of `gqa serve`
            again = httpx.post(f"{server.url}/api/ask", json=ASK, timeout=120)
            if again.status_code == 200 or time.monotonic() > deadline:
                break
            assert again.status_code == 503, (again.status_code, again.text[:300])
            time.sleep(1)
        assert again.status_code == 200 and again.json()["answer"]["nodes"]
        assert httpx.get(f"{server.url}/ready", timeout=60).json()["ready"] is True
    finally:
        server.stop()
    assert "Traceback" not in server.process.stderr.read()


def test_a_server_killed_mid_stream_starts_clean_on_the_same_port(server_env):
    first = Server(server_env, "--llm", "tiny-random-llama").wait()
    with httpx.Client(timeout=120) as client:
        with client.stream("POST", f"{first.url}/api/ask/stream", json={**ASK, "llm_when": "always"}) as response:
            assert next(response.iter_lines()).startswith("event: retrieval")
            os.kill(first.process.pid, signal.SIGKILL)
            first.process.wait(timeout=30)
    second = Server(server_env, "--llm", "tiny-random-llama", port=first.port)
    try:
        second.wait()
        asked = httpx.post(f"{second.url}/api/ask", json=ASK, timeout=120)
        assert asked.status_code == 200 and asked.json()["answer"]["nodes"]
    finally:
        second.stop()


def test_a_client_that_never_reads_does_not_hold_a_generation_slot(server_env):
    """One place in the queue: a client that opens a stream and then reads nothing; once its answer is computed
    (not sent) the place is free for the next client."""
    server = Server(server_env, "--llm", "tiny-random-llama", "--max-queue", "1").wait()
    try:
        with httpx.Client(timeout=120) as stalled, stalled.stream("POST", f"{server.url}/api/ask/stream",
                                                                   json={**ASK, "llm_when": "always"}):
            deadline = time.monotonic() + 90
            while True:
                other = httpx.post(f"{server.url}/api/ask", json=ASK, timeout=120)
                if other.status_code != 429 or time.monotonic() > deadline:
                    break
                time.sleep(0.5)
            assert other.status_code == 200, (other.status_code, other.text[:300])
    finally:
        server.stop()

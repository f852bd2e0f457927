"""Hostile input at a real `gqa serve`: requests generated from its own OpenAPI schema (Schemathesis), and inputs
chosen to hurt (Cypher in questions, Unicode controls, 100 KB bodies, deeply nested JSON, graph names that look
like paths or Cypher). Nothing may answer 5xx or show a traceback; bad requests get a 4xx that says why."""

from __future__ import annotations

import json

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from service_helpers import FRANKLIN, Server

pytestmark = pytest.mark.neo4j

# Bounded so the whole file stays within a few minutes on 2 cores (the LLM is the tiny random Llama).
FUZZ = settings(max_examples=30, deadline=None, derandomize=True, database=None,
                suppress_health_check=list(HealthCheck))


@pytest.fixture(scope="module")
def fuzz_server(server_env):
    server = Server(server_env, "--llm", "tiny-random-llama", "--max-queue", "64").wait()
    yield server
    server.stop()
    err = server.process.stderr.read()
    assert "Traceback" not in err, err[max(err.find("Traceback") - 2000, 0):err.find("Traceback") + 6000]


def _operations():
    """The API's operations from its own OpenAPI document (the app's, so no server is needed to collect them)."""
    from gretriever_neo4j.service.app import create_app
    from gretriever_neo4j.service.runtime import Runtime, ServiceConfig

    document = create_app(Runtime(ServiceConfig(), store=None, qa=None)).openapi()
    return [result.ok() for result in schemathesis.openapi.from_dict(document).get_all_operations()]


OPERATIONS = _operations()


def _sound(response) -> None:
    text = response.text
    assert response.status_code < 500, (response.status_code, text[:500])
    assert "Traceback" not in text and 'File "' not in text, text[:500]
    if '"status": 5' in text or '"status":5' in text:  # an SSE error event carries its own status
        raise AssertionError(text[:500])


@pytest.mark.parametrize("operation", OPERATIONS, ids=lambda op: f"{op.method.upper()} {op.path}")
def test_the_api_never_fails_on_what_its_schema_allows(fuzz_server, operation):
    @given(case=operation.as_strategy())
    @FUZZ
    def check(case) -> None:
        _sound(case.call(base_url=fuzz_server.url, timeout=120))

    check()


CYPHER = ["') DETACH DELETE n //", "MATCH (n) DETACH DELETE n", "\" OR 1=1 RETURN n //", "$graph}) RETURN *",
          "CALL db.labels()", "{`x`: 1}"]
CONTROLS = st.text(alphabet=st.characters(categories=["Cc", "Cf", "Zl", "Zp", "Co", "Cs"],
                                          exclude_characters="\x00"), min_size=1, max_size=40)
QUESTIONS = st.one_of(st.sampled_from(CYPHER), CONTROLS, st.text(min_size=1, max_size=200),
                      st.builds(lambda a, b: a + b, st.sampled_from(CYPHER), CONTROLS))
GRAPHS = st.one_of(st.sampled_from(["../../etc/passwd", "/etc/passwd", "webqsp/../x", "a`) DETACH DELETE n //",
                                    "MATCH (n) RETURN n", "%2e%2e%2f", "\u202egraph", "", " ", "webqsp\x00"]),
                   st.text(max_size=60))


@given(question=QUESTIONS, graph=GRAPHS)
@FUZZ
def test_questions_and_graph_names_that_look_like_cypher_or_paths(fuzz_server, question, graph):
    for path in ("/api/retrieve", "/api/ask"):
        # ensure_ascii: lone surrogates travel as JSON escapes, which the server's parser turns back into them
        body = json.dumps({"question": question, "graph": graph, "llm_when": "never"}, ensure_ascii=True)
        response = httpx.post(f"{fuzz_server.url}{path}", content=body.encode(),
                              headers={"Content-Type": "application/json"}, timeout=120)
        _sound(response)
        assert response.status_code in (200, 404, 422), (response.status_code, response.text[:300])


def test_bodies_that_are_too_big_or_too_deep_are_4xx(fuzz_server):
    url = f"{fuzz_server.url}/api/ask"
    big = httpx.post(url, content=json.dumps({"question": "x" * 100_000}).encode(),
                     headers={"Content-Type": "application/json"}, timeout=60)
    assert big.status_code == 413
    for depth in (500, 2000, 5000):  # within the 16 KB body limit, deeper than the JSON parser recurses
        nested = ('{"question": "q", "graph": ' + "[" * depth + "]" * depth + "}").encode()
        response = httpx.post(url, content=nested, headers={"Content-Type": "application/json"}, timeout=60)
        assert 400 <= response.status_code < 500, (depth, response.status_code, response.text[:200])
        _sound(response)
    for garbage in (b"{", b"\xff\xfe\x00", b"null", b"[]", b'{"question": 5}', b'{"question": {"$ne": 1}}'):
        response = httpx.post(url, content=garbage, headers={"Content-Type": "application/json"}, timeout=60)
        assert response.status_code in (400, 422), (garbage, response.status_code)
        _sound(response)


def test_the_server_still_answers_after_all_that(fuzz_server):
    response = httpx.post(f"{fuzz_server.url}/api/ask", json={"question": FRANKLIN, "graph": "webqsp",
                                                               "llm_when": "never"}, timeout=120)
    assert response.status_code == 200 and response.json()["answer"]["nodes"]

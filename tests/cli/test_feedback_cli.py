"""`gqa feedback` against the real Neo4j: a verdict and a named answer stored, listed, exported as a questions file
that `gqa ingest questions` reads, dropped without touching other questions; mistakes exit 1 with one line naming
the field."""

from __future__ import annotations

import json

import pytest

from gretriever_neo4j.ingest.questions import read_questions

from cli_helpers import gqa, invoke
from feedback_kg import RIGHT, SHOWN, answered_retrieval, stored_graph

pytestmark = pytest.mark.neo4j


@pytest.fixture()
def cli_env(neo4j_settings, monkeypatch):
    monkeypatch.setenv("NEO4J_URI", neo4j_settings.uri)
    monkeypatch.setenv("NEO4J_PASSWORD", neo4j_settings.password)


@pytest.fixture()
def graph(store, embedder, cli_env):
    return stored_graph(store, embedder, store.test_prefix)


def test_feedback_is_stored_listed_exported_and_dropped(store, graph, tmp_path):
    store.write_questions([{"dataset": graph, "qid": "q1", "text": "who directed Film A2", "answers": ["Director 2"],
                            "split": "val", "graph": graph, "topic_entities": []}])
    named = answered_retrieval(store, graph)
    given = invoke("feedback", named, "--answer", RIGHT, "--json")
    assert given.exit_code == 0, given.output
    question = json.loads(given.stdout)
    assert (question["qid"], question["answers"], question["not_answers"], question["votes_wrong"]) == (
        named, [RIGHT], [SHOWN], 1)
    confirmed = answered_retrieval(store, graph)
    assert "votes right 1" in invoke("feedback", confirmed, "--right").stdout
    negative = answered_retrieval(store, graph)
    assert "kept as a negative" in invoke("feedback", negative, "--wrong").stdout

    listed = json.loads(invoke("feedback", "list", "--graph", graph, "--json").stdout)["questions"]
    assert {q["qid"]: (q["answers"], q["negative"]) for q in listed} == {
        named: ([RIGHT], False), confirmed: ([SHOWN], False), negative: ([], True)}
    assert f"feedback on {graph} (3 questions)" in invoke("feedback", "list", "--graph", graph).stdout

    out = tmp_path / "feedback.tsv"
    exported = invoke("feedback", "export", "--graph", graph, "--out", str(out))
    assert exported.exit_code == 0 and "2 feedback questions exported" in exported.stderr
    assert "1 without an answer" in exported.stderr
    records, bad = read_questions(out, graph)
    assert not bad and sorted((r.qid, r.answers[0]) for r in records) == sorted([(named, RIGHT), (confirmed, SHOWN)])
    assert invoke("feedback", "export", "--graph", graph).stdout == out.read_text()

    dropped = invoke("feedback", "drop", "--graph", graph, "--yes")
    assert "removed 3 feedback questions" in dropped.stdout
    assert [q["qid"] for q in store.questions(graph)] == ["q1"]


def test_mistakes_exit_1_with_one_line_naming_the_field(store, graph):
    rid = answered_retrieval(store, graph)
    for args, wanted in [
        (("feedback", rid, "--answer", "Nobody Atall"), "field 'answer': no node of graph"),
        (("feedback", rid, "--right", "--wrong"), "field 'verdict': give --right or --wrong, not both"),
        (("feedback", "r-000000000000", "--right"), "no retrieval 'r-000000000000' is recorded"),
    ]:
        done = gqa(*args, env={"COLUMNS": "300"})  # no wrapping of the one line
        assert done.returncode == 1, (args, done.stderr)
        assert wanted in done.stderr and "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert invoke("feedback", "list", "--graph", graph, "--json").stdout.count('"qid"') == 0

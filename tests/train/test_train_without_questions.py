"""`gqa train --graph G` on a graph with no questions (real Neo4j): it trains on questions made from the graph,
writes them where asked, reports them; a plain `gqa ask` then retrieves as it measured best and answers with the
zero-shot reader, `--reader` with the trained one; bad input (an unknown graph, a graph with no edges) is a clear
error with exit code 1."""

from __future__ import annotations

import json

import pytest

from gretriever_neo4j.ingest.graphs import ingest
from gretriever_neo4j.records import GraphRecord, Node

from cli_helpers import gqa
from movie_kg import movie_graph

pytestmark = pytest.mark.neo4j


def _movies(prefix: str, movies: int = 24) -> list:
    return [movie_graph(prefix, movies, directors=8)]


def test_unknown_graph_and_graph_without_edges_are_clear_errors(store, embedder, cli_env):
    missing = gqa("train", "--graph", f"{store.test_prefix}-nowhere")
    assert missing.returncode == 1 and "no stored graph is called" in missing.stderr
    assert "Traceback" not in missing.stderr
    prefix = store.test_prefix
    ingest([GraphRecord(graph_id=prefix, dataset=prefix, kind="kg", nodes=[Node("alone", "alone")], edges=[])],
           store, embedder.embed, dataset=prefix)
    empty = gqa("train", "--graph", prefix)
    assert empty.returncode == 1 and "no edges" in empty.stderr and "Traceback" not in empty.stderr


@pytest.mark.slow
def test_a_graph_with_no_questions_trains_on_its_own_paths(store, embedder, cli_env):
    prefix = store.test_prefix
    ingest(_movies(prefix), store, embedder.embed, dataset=prefix)
    written = cli_env / "synthetic.jsonl"
    trained = gqa("train", "--graph", prefix, "--synthetic-paths", "150", "--write-questions", str(written))
    assert trained.returncode == 0, trained.stderr[-3000:]
    assert "relation paths" in trained.stdout and "reader: not trained" in trained.stdout
    rows = [json.loads(line) for line in written.read_text().splitlines()]
    assert rows and {"question", "answers", "topic_entities", "split", "id"} <= set(rows[0])
    manifest_file = cli_env / "home" / "models" / prefix / "manifest.json"
    manifest = json.loads(manifest_file.read_text())
    assert manifest["details"]["synthesis"]["questions"] == len(rows)
    assert manifest["details"]["retrieval_choice"]["retriever"] in ("learned", "paths")
    # with no real question, `gqa ask` answers with the zero-shot reader, and none is trained that it would not use
    assert manifest["reader"] is None and not (manifest_file.parent / "reader.pt").exists()
    assert manifest["details"]["reader_choice"]["reader"] == "zero-shot" and "zero-shot reader" in trained.stdout
    asked = gqa("ask", "--graph", prefix, "--reader-only", "--json", "who directed Film B3")
    assert asked.returncode == 0, asked.stderr[-3000:]
    data = json.loads(asked.stdout)
    assert data["answer"]["text"] == "Director 5"
    assert data["answer"]["models"]["reader"] == "zero-shot reader"

    # asked for, a reader learns the synthesized questions and answers one phrased unlike its templates
    trained = gqa("train", "--graph", prefix, "--synthetic-paths", "150", "--synthetic-reader")
    assert trained.returncode == 0 and "reader on validation" in trained.stdout, trained.stderr[-3000:]
    manifest = json.loads(manifest_file.read_text())
    assert manifest["reader"] == "reader.pt" and manifest["details"]["reader_choice"]["reader"] == "zero-shot"
    reader = str(cli_env / "home" / "models" / prefix / "reader.pt")
    asked = gqa("ask", "--graph", prefix, "--reader-only", "--reader", reader, "--json", "who directed Film B3")
    data = json.loads(asked.stdout)
    assert data["answer"]["text"] == "Director 5" and data["answer"]["models"]["reader"].startswith("reader")

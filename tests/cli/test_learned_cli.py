"""`gqa train-retriever` and `gqa ask --retriever learned` on a small KG in the real Neo4j server."""

from __future__ import annotations

import json

import pytest

from gretriever_neo4j.ingest.graphs import ingest
from gretriever_neo4j.records import Edge, GraphRecord, Node, QuestionRecord

from cli_helpers import gqa

pytestmark = pytest.mark.neo4j


def test_train_retriever_then_ask_learned(store, embedder, tmp_path, monkeypatch, neo4j_settings):
    prefix = store.test_prefix
    people = [f"Director {i}" for i in range(12)]
    movies = [f"Movie {i}" for i in range(24)]
    edges = [Edge(m, "directed_by", people[i % 12]) for i, m in enumerate(movies)]
    edges += [Edge(m, "release_year", str(1990 + i % 5)) for i, m in enumerate(movies)]
    nodes = [Node(n, n) for n in people + movies + [str(1990 + y) for y in range(5)]]
    records = [GraphRecord(graph_id=prefix, dataset=prefix, kind="kg", nodes=nodes, edges=edges)]
    for i, movie in enumerate(movies):
        records.append(QuestionRecord(qid=f"q{i}", dataset=prefix, text=f"who directed [{movie}]",
                                      answers=[people[i % 12]], split="train", graph_id=prefix,
                                      topic_entities=[movie]))
    ingest(records, store, embedder.embed, dataset=prefix)
    monkeypatch.setenv("NEO4J_URI", neo4j_settings.uri)
    monkeypatch.setenv("NEO4J_PASSWORD", neo4j_settings.password)
    checkpoint = tmp_path / "retriever.pt"

    trained = gqa("train-retriever", "--dataset", prefix, "--epochs", "3", "--max-edges", "10",
                   "--out", str(checkpoint))
    assert trained.returncode == 0, trained.stderr[-3000:]
    assert checkpoint.is_file() and "trained on 24 questions" in trained.stdout

    asked = gqa("ask", "--retrieve-only", "--retriever", "learned", "--retriever-checkpoint", str(checkpoint),
                 "--graph", prefix, "--json", "who directed Movie 5")
    assert asked.returncode == 0, asked.stderr[-3000:]
    data = json.loads(asked.stdout)
    texts = {node["text"] for node in data["nodes"]}
    assert {"Movie 5", "Director 5"} <= texts and len(data["edges"]) <= 10
    assert data["id"] in data["browser_statement"]

    missing = gqa("ask", "--retrieve-only", "--retriever", "learned", "--retriever-checkpoint",
                   str(tmp_path / "none.pt"), "--graph", prefix, "who directed Movie 5")
    assert missing.returncode == 1 and "train-retriever" in missing.stderr and "Traceback" not in missing.stderr


def test_generic_graph_ingest_questions_train_and_ask(store, tmp_path, monkeypatch, neo4j_settings):
    """Any graph with questions trains: `ingest triples` + `ingest questions` (topics linked automatically), then
    `train-retriever --graph` and `train --graph`; `ask` finds what was trained by the graph's name."""
    name = f"{store.test_prefix}-generic"
    people = [f"Director {i}" for i in range(12)]
    movies = [f"Movie {i}" for i in range(24)]
    kb = tmp_path / "kb.tsv"
    kb.write_text("".join(f"{m}\tdirected_by\t{people[i % 12]}\n{m}\trelease_year\t{1990 + i % 5}\n"
                          for i, m in enumerate(movies)))
    questions = tmp_path / "questions.tsv"
    questions.write_text("question\tanswers\n" + "".join(f"who directed {m}\t{people[i % 12]}\n"
                                                        for i, m in enumerate(movies)))
    monkeypatch.setenv("NEO4J_URI", neo4j_settings.uri)
    monkeypatch.setenv("NEO4J_PASSWORD", neo4j_settings.password)
    monkeypatch.setenv("GQA_HOME", str(tmp_path / "home"))

    assert gqa("ingest", "triples", "--source", str(kb), "--graph", name).returncode == 0
    ingested = gqa("ingest", "questions", "--graph", name, "--source", str(questions), "--split",
                    "train=0.75,val=0.25", "--seed", "1", "--json")
    assert ingested.returncode == 0, ingested.stderr[-3000:]
    report = json.loads(ingested.stdout)
    assert report["linked_by_name"] == 24 and report["splits"] == {"train": 18, "val": 6}
    assert {q["topic_entities"][0] for q in store.questions(name, "train")} < set(movies)

    trained = gqa("train-retriever", "--graph", name, "--epochs", "1", "--max-edges", "10")
    assert trained.returncode == 0, trained.stderr[-3000:]
    assert "trained on 18 questions" in trained.stdout
    assert (tmp_path / "home" / "retrievers" / f"{name}.pt").is_file()
    asked = gqa("ask", "--retrieve-only", "--retriever", "learned", "--graph", name, "--json", "who directed Movie 5")
    assert asked.returncode == 0, asked.stderr[-3000:]
    assert {"Movie 5", "Director 5"} <= {node["text"] for node in json.loads(asked.stdout)["nodes"]}

    pipeline = gqa("train", "--graph", name, "--reader-questions", "18")
    assert pipeline.returncode == 0, pipeline.stderr[-3000:]
    manifest = json.loads((tmp_path / "home" / "models" / name / "manifest.json").read_text())
    assert (manifest["graph"], manifest["dataset"]) == (name, name)
    # 18 real training questions are fewer than `min_real_questions`: self-supervised ones are mixed in for the
    # retriever, and the zero-shot reader adapts to the real ones (train and val) instead of a reader being trained
    assert manifest["retriever"] == "retriever.pt" and manifest["reader"] is None
    synthesized = manifest["details"].get("synthesis", {}).get("questions", 0)
    assert synthesized > 0 and manifest["details"]["retriever"]["questions"] >= 18
    assert manifest["details"]["reader_choice"]["reader"] == "zero-shot"
    assert manifest["details"]["fewshot"]["questions"] == 24

    none = gqa("train", "--graph", f"{name}-missing")
    assert none.returncode == 1 and "no stored graph" in none.stderr and "Traceback" not in none.stderr

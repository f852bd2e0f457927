"""Grounded answers through the CLI, on the real Neo4j server: the Quickstart question, `gqa train` then a plain
`gqa ask`, and `gqa ask --questions` with its scores and its bad input."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from gretriever_neo4j.ingest.graphs import ingest
from gretriever_neo4j.records import QuestionRecord

from cli_helpers import gqa
from movie_kg import director, film_titles, movie_graph, year

pytestmark = pytest.mark.neo4j
REPO = Path(__file__).resolve().parents[2]
INVENTIONS = {"Lightning rod", "Bifocals", "Glass harmonica", "Franklin stove"}


@pytest.fixture()
def cli_env(neo4j_settings, tmp_path, monkeypatch):
    monkeypatch.setenv("NEO4J_URI", neo4j_settings.uri)
    monkeypatch.setenv("NEO4J_PASSWORD", neo4j_settings.password)
    return tmp_path


@pytest.mark.slow
def test_quickstart_question_names_franklins_inventions_and_nothing_else(store, cli_env):
    """The README's question, answered with SmolLM2 under constrained decoding (no training)."""
    sample = REPO / "gretriever_neo4j" / "samples" / "webqsp_sample.jsonl"
    assert gqa("ingest", "webqsp", "--source", str(sample)).returncode == 0
    asked = gqa("ask", "--graph", "webqsp", "--llm-when", "always", "--json", "what else did ben franklin invent?")
    assert asked.returncode == 0, asked.stderr[-3000:]
    answer = json.loads(asked.stdout)["answer"]
    named = [node["text"] for node in answer["nodes"]]
    assert answer["mode"] == "grounded" and "constrained" in answer["models"]["generator"]
    assert len(set(named) & INVENTIONS) >= 2, named
    assert set(named) <= INVENTIONS, named  # nothing that is not one of his inventions
    assert answer["citations"]["all_valid"] and answer["citations"]["nodes"]
    assert answer["text"].split("|") == named


def _movie_kg(prefix: str, movies: int = 30) -> list:
    records = [movie_graph(prefix, movies, directors=10)]
    for i, movie in enumerate(film_titles(movies)):
        split = "train" if i < 22 else "val"
        records.append(QuestionRecord(qid=f"d{i}", dataset=prefix, text=f"who directed [{movie}]",
                                      answers=[director(i, 10)], split=split, graph_id=prefix, topic_entities=[movie]))
        records.append(QuestionRecord(qid=f"y{i}", dataset=prefix, text=f"when was [{movie}] released",
                                      answers=[year(i)], split=split, graph_id=prefix, topic_entities=[movie]))
    return records


def test_ask_questions_file_round_trips_and_scores(store, embedder, cli_env):
    prefix = store.test_prefix
    ingest(_movie_kg(prefix), store, embedder.embed, dataset=prefix)
    questions = cli_env / "questions.tsv"
    questions.write_text("who directed Film A3\tDirector 3\n\nwho directed Film B5\tDirector 9|Director 7\n"
                         "who directed Film C1\n")
    out = cli_env / "answers.jsonl"
    asked = gqa("ask", "--questions", str(questions), "--graph", prefix, "--reader-only", "--out", str(out))
    assert asked.returncode == 0, asked.stderr[-3000:]
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["line"] for r in rows] == [1, 3, 4]
    assert rows[0]["answer"] == "Director 3" and rows[0]["scores"]["strict_hit_at_1"] == 1.0
    assert rows[1]["answer"] == "Director 5" and rows[1]["scores"] == {"hit_at_1": 0.0, "strict_hit_at_1": 0.0,
                                                                        "f1": 0.0}  # the gold is wrong on purpose
    assert rows[2]["gold"] is None and "scores" not in rows[2] and rows[2]["answer"] == "Director 1"
    for row in rows:
        assert row["retrieval_id"].startswith("r-") and row["citations"]["all_valid"]
        assert {"retrieval", "answer", "total"} <= set(row["timings_ms"])
        assert row["answer_nodes"] and row["answer_nodes"][0]["walk"]
        assert row["held"]  # the graph was read into memory first, as `gqa serve` does
    assert "strict_hit_at_1" in asked.stderr and "0.5000" in asked.stderr  # the summary table: 1 of 2 scored
    assert re.search(r"held_in_memory\W+3\b", asked.stderr)
    through_neo4j = gqa("ask", "--questions", str(questions), "--graph", prefix, "--reader-only", "--no-hold")
    assert through_neo4j.returncode == 0, through_neo4j.stderr[-3000:]
    read = [json.loads(line) for line in through_neo4j.stdout.splitlines()]
    assert [(r["answer"], r["held"]) for r in read] == [(r["answer"], False) for r in rows]

    as_ingested = cli_env / "questions.csv"  # the file `gqa ingest questions` takes, asked as it is
    as_ingested.write_text("question,answers,split\nwho directed Film A3,Director 3,test\n")
    asked = gqa("ask", "--questions", str(as_ingested), "--graph", prefix, "--reader-only", "--out", str(out))
    assert asked.returncode == 0, asked.stderr[-3000:]
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [(r["line"], r["answer"], r["scores"]["strict_hit_at_1"]) for r in rows] == [(2, "Director 3", 1.0)]

    bad = cli_env / "bad.tsv"
    bad.write_text("who directed Film A3\tDirector 3\nwho directed\tA\tB\n")
    refused = gqa("ask", "--questions", str(bad), "--graph", prefix, "--reader-only", "--out",
                   str(cli_env / "never.jsonl"))
    assert refused.returncode == 1 and f"{bad}:2" in refused.stderr and "Traceback" not in refused.stderr
    assert not (cli_env / "never.jsonl").exists()
    empty_answer = cli_env / "empty.tsv"
    empty_answer.write_text("who directed Film A3\t \n")
    refused = gqa("ask", "--questions", str(empty_answer), "--graph", prefix)
    assert refused.returncode == 1 and f"{empty_answer}:1" in refused.stderr


def test_train_once_then_plain_ask_uses_the_trained_models(store, embedder, cli_env, monkeypatch):
    prefix = store.test_prefix
    ingest(_movie_kg(prefix), store, embedder.embed, dataset=prefix)
    monkeypatch.setenv("GQA_HOME", str(cli_env / "home"))
    # 60 questions of its own: enough, by --min-real-questions, to train a reader on them alone (with fewer, the
    # zero-shot reader adapts to them: tests/train/test_train_with_few_questions.py)
    trained = gqa("train", "--dataset", prefix, "--min-real-questions", "10")
    assert trained.returncode == 0, trained.stderr[-3000:]
    assert "reader on validation" in trained.stdout and f"gqa ask --graph {prefix}" in trained.stdout
    manifest = json.loads((cli_env / "home" / "models" / prefix / "manifest.json").read_text())
    assert manifest["retriever"] == "retriever.pt" and manifest["reader"] == "reader.pt"

    asked = gqa("ask", "--graph", prefix, "--reader-only", "--json", "who directed Film C4")
    assert asked.returncode == 0, asked.stderr[-3000:]
    data = json.loads(asked.stdout)
    # `gqa ask` uses the retriever `gqa train` kept (manifest details.retrieval_choice, where it chose one)
    chosen = manifest["details"].get("retrieval_choice", {}).get("retriever", "learned")
    assert data["retriever"] == chosen
    assert ("retriever.pt" if chosen == "learned" else "relation paths") in data["retriever_model"]
    assert data["answer"]["models"]["reader"].startswith("reader") and data["answer"]["text"] == "Director 4"
    plain = json.loads(gqa("ask", "--graph", prefix, "--json", "who directed Film C4").stdout)["answer"]
    assert plain["text"] == "Director 4"
    assert plain["models"]["generator"].startswith("not asked: the reader answers alone")
    printed = gqa("ask", "--graph", prefix, "--reader-only", "who directed Film C4")
    assert "reader reader.pt" in printed.stdout and ("learned" if chosen == "learned" else "relation paths") in \
        printed.stdout

    other = gqa("ask", "--graph", "webqsp", "--reader-only", "--reader",
                 str(cli_env / "home" / "models" / prefix / "reader.pt"), "who invented bifocals")
    assert other.returncode == 1 and "trained for graph" in other.stderr and "Traceback" not in other.stderr
    nothing = gqa("ask", "--graph", prefix, "--retriever", "learned", "--retriever-checkpoint",
                   str(cli_env / "missing.pt"), "who directed Film C4")
    assert nothing.returncode == 1 and "Traceback" not in nothing.stderr


@pytest.mark.slow
def test_the_readme_question_by_default(store, cli_env):
    """`gqa ask` as a newcomer types it: the reader is sure of the four inventions, so they are the answer."""
    sample = REPO / "gretriever_neo4j" / "samples" / "webqsp_sample.jsonl"
    assert gqa("ingest", "webqsp", "--source", str(sample)).returncode == 0
    asked = gqa("ask", "--graph", "webqsp", "what else did ben franklin invent?")
    assert asked.returncode == 0, asked.stderr[-3000:]
    out = asked.stdout
    assert "4 answers (grounded)" in out and "all valid" in out
    assert sum(name in out for name in INVENTIONS) == 4
    # the answer first, each with the chain it rests on; the subgraph as one line, its tables only on request
    # along either of Freebase's two mirror relations, as the reader's best walk has it
    assert re.search(r"because Benjamin Franklin (— law\.inventor\.inventions →|← law\.invention\.inventor —) "
                     r"Bifocals", out), out
    assert out.index("4 answers") < out.index("open in Neo4j Browser") and "nodes (" not in out
    tables = gqa("ask", "--graph", "webqsp", "--subgraph", "what else did ben franklin invent?").stdout
    assert tables.index("4 answers") < tables.index("nodes (") < tables.index("edges (")

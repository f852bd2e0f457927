"""`gqa ingest questions` against the real Neo4j server: formats, automatic topic linking, bad rows, idempotence."""

from __future__ import annotations

import json

import pytest

from gretriever_neo4j.errors import ConfigError, InputError
from gretriever_neo4j.ingest.graphs import ingest_dataset
from gretriever_neo4j.ingest.questions import ingest_questions

from cli_helpers import gqa

pytestmark = pytest.mark.neo4j

TRIPLES = """Blade Runner\tdirected_by\tRidley Scott
Alien\tdirected_by\tRidley Scott
Alien\tstarred_actors\tSigourney Weaver
Blade Runner\tstarred_actors\tHarrison Ford
Witness\tstarred_actors\tHarrison Ford
Witness\tdirected_by\tPeter Weir
Gallipoli\tdirected_by\tPeter Weir
Gallipoli\trelease_year\t1981
"""


@pytest.fixture()
def toy_kg(store, embedder, tmp_path):
    name = f"{store.test_prefix}-movies"
    path = tmp_path / "kb.tsv"
    path.write_text(TRIPLES)
    ingest_dataset(store, embedder, "triples", str(path), graph=name)
    return name


def test_formats_store_questions_like_the_loaders(store, embedder, toy_kg, tmp_path):
    tsv = tmp_path / "q.tsv"
    tsv.write_text("who directed [Alien]\tRidley Scott\tAlien\ttrain\nwho starred in Witness\tHarrison Ford\t\tval\n")
    report = ingest_questions(store, embedder, toy_kg, tsv)
    assert (report.questions, report.written, report.topics_given) == (2, 2, 1)
    assert report.splits == {"train": 1, "val": 1}
    rows = store.questions(toy_kg, "train")
    assert rows == [{"qid": "q.tsv:1", "text": "who directed [Alien]", "answers": ["Ridley Scott"], "split": "train",
                     "graph": toy_kg, "topic_entities": ["Alien"]}]
    assert store.questions(toy_kg, "val")[0]["topic_entities"] == ["Witness"]  # linked by name

    csv_file = tmp_path / "q.csv"
    csv_file.write_text('id,question,answers,split\nc1,"who directed Gallipoli, the film",Peter Weir,test\n')
    jsonl = tmp_path / "q.jsonl"
    jsonl.write_text(json.dumps({"id": "j1", "question": "when was Gallipoli released", "answers": ["1981"],
                                 "split": "test"}) + "\n")
    ingest_questions(store, embedder, toy_kg, csv_file)
    ingest_questions(store, embedder, toy_kg, jsonl)
    test_rows = {row["qid"]: row for row in store.questions(toy_kg, "test")}
    assert set(test_rows) == {"c1", "j1"}
    assert test_rows["c1"]["topic_entities"] == ["Gallipoli"] and test_rows["j1"]["answers"] == ["1981"]
    assert store.stats()[toy_kg]["questions"] == {"train": 1, "val": 1, "test": 2}

    again = ingest_questions(store, embedder, toy_kg, tsv)  # idempotent: same rows, nothing new
    assert again.written == 2 and store.stats()[toy_kg]["questions"] == {"train": 1, "val": 1, "test": 2}


def test_automatic_linking_and_answer_report(store, embedder, toy_kg, tmp_path):
    path = tmp_path / "q.tsv"
    path.write_text("who directed Blade Runner\tRidley Scott\n"
                    "which films did Harrison Ford star in\tBlade Runner|Witness\n"
                    "who directed the films Sigourney Weaver starred in\tRidley Scott|Nobody Known\n"
                    "what is it all about\tnothing\n")
    report = ingest_questions(store, embedder, toy_kg, path, split="train")
    assert (report.linked_by_name, report.linked_by_similarity, report.not_linked) == (3, 1, 0)
    assert (report.answers, report.answers_as_nodes, report.questions_with_answer_node) == (6, 4, 3)
    topics = {row["text"]: row["topic_entities"] for row in store.questions(toy_kg, "train")}
    assert topics["who directed Blade Runner"] == ["Blade Runner"]
    assert topics["which films did Harrison Ford star in"] == ["Harrison Ford"]
    assert topics["who directed the films Sigourney Weaver starred in"] == ["Sigourney Weaver"]
    assert len(topics["what is it all about"]) == 1  # the best fulltext + vector hit

    unlinked = ingest_questions(store, embedder, toy_kg, path, split="train", link=False, sync=True)
    assert unlinked.not_linked == 4 and unlinked.deleted == 0
    assert all(row["topic_entities"] == [] for row in store.questions(toy_kg, "train"))


def test_sync_removes_questions_the_file_no_longer_holds(store, embedder, toy_kg, tmp_path):
    path = tmp_path / "q.tsv"
    path.write_text("".join(f"question {i} about Alien\tRidley Scott\tAlien\n" for i in range(6)))
    ingest_questions(store, embedder, toy_kg, path)
    path.write_text("".join(f"question {i} about Alien\tRidley Scott\tAlien\n" for i in range(4)))
    report = ingest_questions(store, embedder, toy_kg, path, sync=True)
    assert report.deleted == 2 and len(store.questions(toy_kg)) == 4


def test_bad_rows_and_unknown_graph_write_nothing(store, embedder, toy_kg, tmp_path):
    path = tmp_path / "q.tsv"
    path.write_text("who directed Alien\tRidley Scott\nbroken row without answers\n")
    with pytest.raises(InputError, match=f"{path}:2"):
        ingest_questions(store, embedder, toy_kg, path)
    assert store.questions(toy_kg) == []
    skipped = ingest_questions(store, embedder, toy_kg, path, skip_bad=True)
    assert skipped.written == 1 and [e.line for e in skipped.bad_rows] == [2]
    with pytest.raises(ConfigError, match="no stored graph"):
        ingest_questions(store, embedder, f"{store.test_prefix}-nothing", path)


def test_cli_reports_and_fails_cleanly(store, toy_kg, tmp_path):
    good = tmp_path / "good.jsonl"
    good.write_text(json.dumps({"question": "who directed Alien", "answers": "Ridley Scott"}) + "\n")
    done = gqa("ingest", "questions", "--graph", toy_kg, "--source", str(good), "--split", "val", "--json")
    assert done.returncode == 0, done.stderr[-2000:]
    data = json.loads(done.stdout)
    assert (data["questions"], data["linked_by_name"], data["answers_as_nodes"], data["splits"]) == (
        1, 1, 1, {"val": 1})

    bad = tmp_path / "bad.csv"
    bad.write_text("question,answers\nwho starred in Witness,Harrison Ford\nwho directed Witness,\n")
    failed = gqa("ingest", "questions", "--graph", toy_kg, "--source", str(bad))
    assert failed.returncode == 1 and f"{bad}:3" in failed.stderr and "Traceback" not in failed.stderr
    assert [row["qid"] for row in store.questions(toy_kg)] == ["good.jsonl:1"]
    unknown = gqa("ingest", "questions", "--graph", f"{store.test_prefix}-nope", "--source", str(good))
    assert unknown.returncode == 1 and "no stored graph" in unknown.stderr and "Traceback" not in unknown.stderr

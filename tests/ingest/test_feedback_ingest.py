"""What a verdict means (`ingest.feedback`) against the real Neo4j: right confirms the answers shown or the one
named, wrong keeps what the answer is not, a name is found among the graph's nodes, the question goes to the
dataset `gqa train --graph G` reads, bad input is refused naming its field, and the export reads back as a
questions file."""

from __future__ import annotations

import pytest

from gretriever_neo4j.errors import InputError, NotFoundError
from gretriever_neo4j.ingest.feedback import (
    complete_names,
    export_tsv,
    give_feedback,
    list_feedback,
    remove_feedback,
    resolve_answer,
)
from gretriever_neo4j.ingest.graphs import ingest
from gretriever_neo4j.ingest.questions import read_questions
from gretriever_neo4j.records import GraphRecord, Node

from feedback_kg import QUESTION, RIGHT, SHOWN, answered_retrieval, stored_graph

pytestmark = pytest.mark.neo4j


@pytest.fixture()
def graph(store, embedder):
    return stored_graph(store, embedder, store.test_prefix)


def test_right_confirms_what_was_shown_or_the_answer_named(store, graph):
    shown = answered_retrieval(store, graph, shown=(SHOWN, "Director 3"))
    question = give_feedback(store, shown, "right")
    assert question.answers == [SHOWN, "Director 3"] and question.votes_right == 1
    named = answered_retrieval(store, graph)
    assert give_feedback(store, named, "right", answer=RIGHT).answers == [RIGHT]
    nothing = answered_retrieval(store, graph, shown=())
    with pytest.raises(InputError, match="no recorded answer to confirm") as refused:
        give_feedback(store, nothing, "right")
    assert refused.value.field == "answer"


def test_wrong_keeps_a_negative_and_naming_the_answer_makes_it_gold(store, graph):
    rid = answered_retrieval(store, graph, shown=(SHOWN, RIGHT))
    negative = give_feedback(store, rid, "wrong", shown=[SHOWN])
    assert negative.negative and negative.not_answers == [SHOWN] and negative.answers == []
    assert negative.topic_entities == ["Film A1"] and negative.text == QUESTION
    gold = give_feedback(store, rid, "wrong", answer="director 1")  # a name, loosely: the node that carries it
    assert gold.answers == [RIGHT] and gold.not_answers == [SHOWN] and gold.votes_wrong == 2
    with pytest.raises(InputError, match="not an answer retrieval") as refused:
        give_feedback(store, rid, "wrong", shown=["Film A1"])
    assert refused.value.field == "shown"
    assert [q.votes_wrong for q in list_feedback(store, graph)] == [2]  # the refused one counted nothing


@pytest.mark.parametrize("retrieval_id, verdict, answer, field", [
    ("r-1 OR 1=1", "right", None, "retrieval_id"),
    ("", "right", None, "retrieval_id"),
    ("RID", "maybe", None, "verdict"),
    ("RID", "wrong", "Nobody Atall", "answer"),
    ("RID", "wrong", "   ", "answer"),
    ("RID", "wrong", "!!!", "answer"),
])
def test_bad_input_is_refused_naming_its_field(store, graph, retrieval_id, verdict, answer, field):
    rid = answered_retrieval(store, graph)
    with pytest.raises(InputError) as refused:
        give_feedback(store, retrieval_id.replace("RID", rid), verdict, answer=answer)
    assert refused.value.field == field and f"field '{field}'" in str(refused.value)
    assert list_feedback(store, graph) == []


def test_unknown_retrieval_and_graph(store, graph):
    with pytest.raises(NotFoundError, match="no retrieval 'r-000000000000'"):
        give_feedback(store, "r-000000000000", "right")
    for call in (list_feedback, remove_feedback):
        with pytest.raises(NotFoundError, match="no stored graph"):
            call(store, f"{graph}-none")


def test_names_resolve_to_one_node_or_are_refused(store, embedder, graph):
    assert resolve_answer(store, graph, "Film B1").key == "Film B1"  # a key
    twins = GraphRecord(graph_id=graph, dataset=graph, kind="kg", nodes=[Node("jd1", "Jane Doe"),
                                                                          Node("jd2", "Jane Doe")], edges=[])
    ingest([twins], store, embedder.embed, dataset=graph)
    with pytest.raises(InputError, match="2 nodes of graph .* are named 'Jane Doe'.*give the key") as refused:
        resolve_answer(store, graph, "Jane Doe")
    assert refused.value.field == "answer"
    assert resolve_answer(store, graph, "jd2").text == "Jane Doe"
    assert resolve_answer(store, graph, "  film   b1 ").key == "Film B1"  # a name, spacing and case aside


def test_completion_offers_the_names_that_start_as_typed(store, graph):
    names = complete_names(store, graph, "direc", limit=10)
    assert {name.text for name in names} == {f"Director {i}" for i in range(4)}
    assert [name.text for name in complete_names(store, graph, "film a1")] == ["Film A1"]
    assert complete_names(store, graph, "  ") == []
    with pytest.raises(NotFoundError):
        complete_names(store, f"{graph}-none", "film")


def test_the_dataset_is_the_one_train_reads_and_the_export_reads_back(store, graph, tmp_path):
    loader_dataset = f"{graph}-loader"  # a graph whose questions a loader stored under its own dataset
    store.write_questions([{"dataset": loader_dataset, "qid": "q1", "text": "who directed Film A2",
                            "answers": ["Director 2"], "split": "train", "graph": graph, "topic_entities": []}])
    kept = give_feedback(store, answered_retrieval(store, graph), "wrong", answer=RIGHT)
    negative = give_feedback(store, answered_retrieval(store, graph), "wrong")
    assert kept.dataset == negative.dataset == loader_dataset
    assert [row["dataset"] for row in store.question_datasets(graph)] == [loader_dataset]

    exported = export_tsv(list_feedback(store, graph))
    assert (exported.written, exported.negatives, exported.unwritable) == (1, 1, 0)
    path = tmp_path / "feedback.tsv"
    path.write_text(exported.text)
    records, bad = read_questions(path, graph)
    assert not bad and [(r.qid, r.text, r.answers, r.topic_entities, r.split) for r in records] == [
        (kept.qid, QUESTION, [RIGHT], ["Film A1"], "train")]
    assert remove_feedback(store, graph) == 2 and [q["qid"] for q in store.questions(loader_dataset)] == ["q1"]

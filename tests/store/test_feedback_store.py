"""Feedback in the store (`store.feedback`) against the real Neo4j: one question per retrieval, updated in place,
stored where `gqa train` reads a graph's train questions; every vote of 8 concurrent writers counted; nothing written
when a vote is refused; only feedback questions dropped; `--sync` leaves them alone."""

from __future__ import annotations

import threading

import pytest

from gretriever_neo4j.errors import ConflictError, InputError, NotFoundError
from gretriever_neo4j.store.feedback import (
    SOURCE,
    AnsweredRetrieval,
    Vote,
    answered_retrieval,
    drop_feedback,
    feedback_questions,
    store_vote,
)
from gretriever_neo4j.store.graph_store import DROPPING

from feedback_kg import QUESTION, RIGHT, SHOWN, stored_graph
from feedback_kg import answered_retrieval as record

pytestmark = pytest.mark.neo4j


@pytest.fixture()
def graph(store, embedder):
    return stored_graph(store, embedder, store.test_prefix)


def _stored(store, retrieval_id: str) -> list[dict]:
    """Every question node keyed by the retrieval id, whatever its dataset, with all its properties."""
    return [dict(row["q"]) for row in store._driver.execute_query(
        "MATCH (q:Question {qid: $id}) RETURN q", id=retrieval_id, database_=store.database).records]


def test_a_retrievals_feedback_is_one_train_question_updated_in_place(store, graph):
    rid = record(store, graph)
    retrieval = answered_retrieval(store, rid)
    assert (retrieval.question, retrieval.graph, retrieval.answer_keys, retrieval.anchor_keys) == (
        QUESTION, graph, (SHOWN,), ("Film A1",))

    first = store_vote(store, Vote(retrieval, "wrong", reject=(SHOWN,), dataset=graph, given_by="token:abc"))
    assert first.negative and first.not_answers == [SHOWN] and (first.votes_right, first.votes_wrong) == (0, 1)
    second = store_vote(store, Vote(answered_retrieval(store, rid), "wrong", add=(RIGHT,), reject=(SHOWN,),
                                    dataset="another dataset"))  # later feedback goes where the first went
    assert (second.dataset, second.qid, second.answers, second.not_answers) == (graph, rid, [RIGHT], [SHOWN])
    assert (second.votes_right, second.votes_wrong, second.given_by) == (0, 2, ["token:abc"])
    third = store_vote(store, Vote(answered_retrieval(store, rid), "right", add=(SHOWN,), dataset=graph))
    assert third.answers == [RIGHT, SHOWN] and third.not_answers == [] and third.votes_right == 1

    [node] = _stored(store, rid)
    assert node["source"] == SOURCE and node["split"] == "train" and node["retrieval"] == rid
    assert node["created"] <= node["updated"]
    # exactly what `gqa train --graph G` reads: the graph's one question dataset, its train split
    assert store.question_datasets(graph) == [{"dataset": graph, "questions": 1}]
    assert store.questions(graph, "train") == [{"qid": rid, "text": QUESTION, "answers": [RIGHT, SHOWN],
                                                "split": "train", "graph": graph, "topic_entities": ["Film A1"]}]
    assert [q.qid for q in feedback_questions(store, graph)] == [rid]


@pytest.mark.parametrize("verdicts", [["right"] * 8, ["right", "wrong"] * 4])
def test_eight_concurrent_feedbacks_count_every_vote_in_one_question(store, graph, verdicts):
    rid = record(store, graph)
    retrieval = answered_retrieval(store, rid)
    start = threading.Barrier(len(verdicts))
    failures: list[BaseException] = []

    def give(verdict: str) -> None:
        try:
            start.wait()
            store_vote(store, Vote(retrieval, verdict, add=(RIGHT,) if verdict == "right" else (),
                                   reject=(SHOWN,) if verdict == "wrong" else (), dataset=graph))
        except BaseException as error:  # noqa: BLE001 - reported below
            failures.append(error)

    threads = [threading.Thread(target=give, args=(verdict,)) for verdict in verdicts]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert not failures, failures
    [node] = _stored(store, rid)
    assert (node["votes_right"], node["votes_wrong"]) == (verdicts.count("right"), verdicts.count("wrong"))
    assert node["answers"] == [RIGHT]
    assert node["not_answers"] == ([SHOWN] if "wrong" in verdicts else [])


def test_a_refused_vote_writes_nothing(store, graph):
    rid = record(store, graph)
    retrieval = answered_retrieval(store, rid)
    with pytest.raises(InputError, match="no node of graph .* has the key 'Nobody'") as refused:
        store_vote(store, Vote(retrieval, "wrong", add=("Nobody",), reject=(SHOWN,), dataset=graph))
    assert refused.value.field == "answer"
    assert _stored(store, rid) == [] and answered_retrieval(store, rid).feedback_dataset is None

    with pytest.raises(NotFoundError, match="no retrieval"):
        store_vote(store, Vote(AnsweredRetrieval(id="r-000000000000", question="q", graph=graph), "right",
                               dataset=graph))
    with pytest.raises(InputError) as bad:
        store_vote(store, Vote(retrieval, "maybe", dataset=graph))
    assert bad.value.field == "verdict"


def test_a_graph_being_dropped_or_dropped_refuses_feedback(store, graph):
    rid = record(store, graph)
    retrieval = answered_retrieval(store, rid)
    store.begin_change([{"id": graph}], DROPPING)
    with pytest.raises(ConflictError, match="being dropped"):
        store_vote(store, Vote(retrieval, "right", add=(SHOWN,), dataset=graph))
    assert _stored(store, rid) == []
    store.drop_graph(graph)
    assert answered_retrieval(store, rid) is None  # a drop deletes its retrievals
    with pytest.raises(NotFoundError):
        store_vote(store, Vote(retrieval, "right", add=(SHOWN,), dataset=graph))
    assert _stored(store, rid) == []


def test_drop_removes_only_feedback_questions_and_sync_leaves_them(store, graph):
    store.write_questions([{"dataset": graph, "qid": "q1", "text": "who directed Film A2", "answers": ["Director 2"],
                            "split": "train", "graph": graph, "topic_entities": ["Film A2"]}])
    rids = [record(store, graph) for _ in range(3)]
    for rid in rids:
        store_vote(store, Vote(answered_retrieval(store, rid), "right", add=(SHOWN,), dataset=graph))
    assert store.question_ids(graph, graph) == {"q1"}  # what `--sync` compares with its source
    assert store.delete_questions_except(graph, graph, set()) == 1  # a sync to an empty file
    assert sorted(q.qid for q in feedback_questions(store, graph)) == sorted(rids)
    store.write_questions([{"dataset": graph, "qid": "q1", "text": "who directed Film A2",
                            "answers": ["Director 2"], "split": "train", "graph": graph, "topic_entities": []}])
    assert drop_feedback(store, graph, batch=2) == 3
    assert feedback_questions(store, graph) == [] and [q["qid"] for q in store.questions(graph)] == ["q1"]

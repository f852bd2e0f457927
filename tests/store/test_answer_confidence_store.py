"""How sure an answer was is kept with its retrieval (`record_answer`: confidence, unsure), and the answers that
wait for a judgement are listed from the real Neo4j: those with an answer shown and no feedback, the least
confident first, those nothing estimated last, then the newest; a feedback takes one off the list, and dropping the
feedback puts it back."""

from __future__ import annotations

import pytest

from gretriever_neo4j.errors import NotFoundError
from gretriever_neo4j.ingest.feedback import answers_awaiting, give_feedback, remove_feedback
from gretriever_neo4j.store.feedback import awaiting_feedback

from feedback_kg import QUESTION, SHOWN, stored_graph
from feedback_kg import answered_retrieval as record

pytestmark = pytest.mark.neo4j


@pytest.fixture()
def graph(store, embedder):
    return stored_graph(store, embedder, store.test_prefix)


def answered(store, graph: str, confidence, unsure: bool, created: str, question: str = QUESTION) -> str:
    rid = record(store, graph, question=question)
    assert store.record_answer(id=rid, answer_keys=[SHOWN], answer_text=SHOWN, anchor_keys=["Film A1"],
                               confidence=confidence, unsure=unsure)
    store._driver.execute_query("MATCH (r:Retrieval {id: $id}) SET r.created = datetime($at)", id=rid, at=created,
                                database_=store.database)
    return rid


def node(store, rid: str) -> dict:
    records = store._driver.execute_query("MATCH (r:Retrieval {id: $id}) RETURN r", id=rid,
                                          database_=store.database).records
    return dict(records[0]["r"])


def test_confidence_and_unsure_are_kept_on_the_retrieval(store, graph):
    rid = answered(store, graph, 0.42, True, "2026-11-28T10:00:00Z")
    kept = node(store, rid)
    assert kept["confidence"] == pytest.approx(0.42) and kept["unsure"] is True and kept["answer_keys"] == [SHOWN]
    unknown = record(store, graph)  # the answer of a reader that estimated nothing
    kept = node(store, unknown)
    assert "confidence" not in kept and kept["unsure"] is False
    assert not store.record_answer(id="r-000000000000", answer_keys=[], answer_text="", anchor_keys=[],
                                   confidence=0.5, unsure=False)  # a retrieval gone: no row


def test_answers_awaiting_a_judgement_least_confident_first_then_newest(store, graph):
    sure = answered(store, graph, 0.9, False, "2026-11-28T10:00:00Z", "who directed Film A2")
    least = answered(store, graph, 0.2, True, "2026-11-28T09:00:00Z", "who directed Film A3")
    old_unknown = answered(store, graph, None, False, "2026-11-28T08:00:00Z", "who directed Film A4")
    middle = answered(store, graph, 0.5, True, "2026-11-28T11:00:00Z", "who directed Film A5")
    new_unknown = answered(store, graph, None, False, "2026-11-28T12:00:00Z", "who directed Film A6")
    judged = answered(store, graph, 0.1, True, "2026-11-28T12:30:00Z", "who directed Film A7")
    store.record_retrieval(id=f"{graph}-unanswered", question="q", graph=graph, params="{}", node_refs=[],
                           rel_refs=[], textualized="", timings="{}")  # `--retrieve-only`: no answer shown
    answered(store, f"{graph}-other", 0.05, True, "2026-11-28T12:00:00Z")  # another graph's
    give_feedback(store, judged, "right")

    listed = awaiting_feedback(store, graph, 20)
    assert [a.retrieval_id for a in listed] == [least, middle, sure, new_unknown, old_unknown]
    first = listed[0].to_dict()
    assert first == {"retrieval_id": least, "question": "who directed Film A3", "answer_text": SHOWN,
                     "answer_keys": [SHOWN], "confidence": pytest.approx(0.2), "unsure": True,
                     "created": first["created"]}
    assert first["created"].startswith("2026-11-28T09:00")
    assert [a.retrieval_id for a in answers_awaiting(store, graph, 2)] == [least, middle]
    assert awaiting_feedback(store, f"{graph}-none", 20) == []

    remove_feedback(store, graph)  # the feedback dropped: the answer waits again
    assert [a.retrieval_id for a in awaiting_feedback(store, graph, 20)][0] == judged


def test_an_unknown_graph_is_not_found(store):
    with pytest.raises(NotFoundError, match="nope"):
        answers_awaiting(store, f"{store.test_prefix}-nope", 20)

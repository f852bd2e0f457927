"""Feedback in the store: what a person said about an answer, kept as a question of the graph.

A feedback names a recorded retrieval (`GraphStore.record_retrieval`, with the answer shown kept by
`GraphStore.record_answer`). The retrieval's feedback makes one (:Question) of its graph, keyed like every question
on (dataset, qid) with qid = the retrieval id, with the fields `gqa ingest questions` writes (text, answers as node
keys, split 'train', graph, topic_entities), so that `gqa train --graph G` reads it among the graph's train questions,
and besides them: source 'feedback', retrieval, not_answers (node keys people said are not the answer), votes_right
and votes_wrong, given_by (who, when a token identified them), created and updated. A question whose answers are
empty is a negative only: the answer shown was wrong and nobody named the right one (training skips questions
without answers).

`store_vote` writes one feedback as one transaction that holds the graph record's write lock: concurrent feedbacks
on one retrieval count every vote, and a drop of the graph either sees the question (and deletes it) or has marked
the graph first (`ConflictError`). What a verdict means for the answers is decided above the store
(`ingest.feedback`); here a vote is the keys it adds and rejects.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from gretriever_neo4j.errors import ConflictError, InputError, NotFoundError, unknown_graph
from gretriever_neo4j.store.graph_store import DROPPING, GraphStore

SOURCE = "feedback"  # the `source` of a question feedback made
VERDICTS = ("right", "wrong")


@dataclass(frozen=True)
class AnsweredRetrieval:
    """A recorded retrieval as feedback sees it: the question asked, its graph, and the answer shown (node keys and
    text; empty when none was recorded, e.g. `--retrieve-only`)."""

    id: str
    question: str
    graph: str
    answer_keys: tuple[str, ...] = ()
    answer_text: str | None = None
    anchor_keys: tuple[str, ...] = ()  # the nodes the question names, as the answer found them
    feedback_dataset: str | None = None  # the dataset of the question an earlier feedback made

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> AnsweredRetrieval:
        return cls(id=row["id"], question=row["question"], graph=row["graph"],
                   answer_keys=tuple(row["answer_keys"] or ()), answer_text=row["answer_text"],
                   anchor_keys=tuple(row["anchor_keys"] or ()), feedback_dataset=row["feedback_dataset"])


@dataclass(frozen=True)
class Vote:
    """One feedback, resolved to node keys: `add` are answers, `reject` are not; `dataset` is where the question goes
    if this is the retrieval's first feedback (later ones go where the first went)."""

    retrieval: AnsweredRetrieval
    verdict: str  # right | wrong: which count goes up
    add: tuple[str, ...] = ()
    reject: tuple[str, ...] = ()
    dataset: str = ""
    given_by: str | None = None


@dataclass(frozen=True)
class FeedbackQuestion:
    """A question feedback made (the stored node's fields)."""

    dataset: str
    qid: str
    graph: str
    text: str
    answers: list[str]
    not_answers: list[str]
    topic_entities: list[str]
    split: str
    retrieval: str
    votes_right: int
    votes_wrong: int
    given_by: list[str] = field(default_factory=list)
    created: str | None = None
    updated: str | None = None

    @property
    def negative(self) -> bool:
        """Only what the answer is not is known."""
        return not self.answers

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> FeedbackQuestion:
        return cls(dataset=row["dataset"], qid=row["qid"], graph=row["graph"], text=row["text"],
                   answers=list(row["answers"] or []), not_answers=list(row["not_answers"] or []),
                   topic_entities=list(row["topic_entities"] or []), split=row["split"],
                   retrieval=row["retrieval"] or row["qid"], votes_right=int(row["votes_right"] or 0),
                   votes_wrong=int(row["votes_wrong"] or 0), given_by=list(row["given_by"] or []),
                   created=row["created"], updated=row["updated"])

    def to_dict(self) -> dict[str, Any]:
        return {**self.__dict__, "negative": self.negative}


@dataclass(frozen=True)
class AwaitingAnswer:
    """An answer shown that nobody has judged yet (`awaiting_feedback`), with how sure it was."""

    retrieval_id: str
    question: str
    answer_text: str | None
    answer_keys: list[str]
    confidence: float | None
    unsure: bool
    created: str | None

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> AwaitingAnswer:
        confidence = row["confidence"]
        return cls(retrieval_id=row["retrieval_id"], question=row["question"], answer_text=row["answer_text"],
                   answer_keys=list(row["answer_keys"] or []),
                   confidence=None if confidence is None else float(confidence), unsure=bool(row["unsure"]),
                   created=row["created"])

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def awaiting_feedback(store: GraphStore, graph: str, limit: int = 20) -> list[AwaitingAnswer]:
    """Up to `limit` answers over `graph` that were shown and have no feedback yet, the least confident first
    (unestimated confidence last), then the newest (`cypher/feedback_unsure.cypher`)."""
    return [AwaitingAnswer.from_row(row) for row in store.read("feedback_unsure", graph=graph, limit=int(limit))]


def answered_retrieval(store: GraphStore, retrieval_id: str) -> AnsweredRetrieval | None:
    rows = store.read("feedback_retrieval", id=retrieval_id)
    return AnsweredRetrieval.from_row(rows[0]) if rows else None


def store_vote(store: GraphStore, vote: Vote) -> FeedbackQuestion:
    """Writes `vote` in one transaction and returns the question as it now stands. Raises `NotFoundError` (the
    retrieval is not recorded, or its graph is gone), `ConflictError` (the graph is being dropped) and `InputError`
    (field 'answer': a key to add is no node of the graph), with nothing written."""
    if vote.verdict not in VERDICTS:
        raise InputError(f"the verdict is {' or '.join(VERDICTS)}, not {vote.verdict!r}", field="verdict")
    retrieval = vote.retrieval

    def work(run: Callable[..., list[dict[str, Any]]]) -> FeedbackQuestion:
        locked = run("feedback_lock_graph", id=retrieval.id)
        if not locked:
            raise NotFoundError(f"no retrieval {retrieval.id!r} is recorded")
        graph = locked[0]
        if not graph["recorded"] or (graph["state"] and graph["version"] is None):
            raise unknown_graph(graph["graph"])
        if graph["state"] == DROPPING:
            raise ConflictError(f"graph {graph['graph']!r} is being dropped: feedback on it is not kept")
        if vote.add:
            found = {row["key"] for row in run("feedback_nodes", graph=retrieval.graph, keys=list(vote.add))}
            missing = [key for key in vote.add if key not in found]
            if missing:
                raise InputError(f"no node of graph {retrieval.graph!r} has the key {missing[0]!r}", field="answer")
        rows = run("feedback_upsert", id=retrieval.id, dataset=vote.dataset, text=retrieval.question,
                   graph=retrieval.graph, topic_entities=list(retrieval.anchor_keys), add=list(vote.add),
                   reject=[key for key in vote.reject if key not in vote.add], right=int(vote.verdict == "right"),
                   wrong=int(vote.verdict == "wrong"), given_by=vote.given_by)
        return FeedbackQuestion.from_row(rows[0])

    return store.transaction(work)


def feedback_questions(store: GraphStore, graph: str) -> list[FeedbackQuestion]:
    """The questions feedback made over `graph`, oldest first."""
    return [FeedbackQuestion.from_row(row) for row in store.read("feedback_questions", graph=graph)]


def drop_feedback(store: GraphStore, graph: str, batch: int = 5000) -> int:
    """Deletes the questions feedback made over `graph` (no other question), `batch` per transaction; returns how
    many."""
    deleted = 0
    while count := int(store.write("feedback_drop_batch", graph=graph, batch=int(batch))[0]["deleted"]):
        deleted += count
    return deleted

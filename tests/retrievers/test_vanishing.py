"""A retrieval that meets a node or edge vanishing under it (a graph change it could not see) is run once more,
then answered 503 (`GraphChangingError`); a failure no change explains propagates as it is."""

from __future__ import annotations

import pytest

from gretriever_neo4j.errors import GraphChangingError, NotFoundError
from gretriever_neo4j.retrievers.base import RetrievalContext, retried_once


class Store:
    def __init__(self, *records):
        self.records = list(records)  # what graph_info answers, one after the other (the last one stays)

    def graph_info(self, graph):
        return self.records.pop(0) if len(self.records) > 1 else self.records[0]


class Retriever:
    def __init__(self, store, failures: int):
        self.context = RetrievalContext(store, embedder=None)
        self.failures, self.calls = failures, 0

    @retried_once
    def retrieve(self, question, *, graph=None):
        self.calls += 1
        self.context.graph_info(graph)
        if self.calls <= self.failures:
            raise KeyError("Daniel CAMBRONERO")
        return "answer"


READY = {"id": "g", "dataset": "d", "kind": "kg", "version": 4, "state": None}


def test_a_node_vanishing_during_a_change_is_retried_once():
    retriever = Retriever(Store(READY, {**READY, "state": "writing"}), failures=1)
    assert retriever.retrieve("q", graph="g") == "answer" and retriever.calls == 2


def test_a_change_completed_meanwhile_counts_as_a_change():
    retriever = Retriever(Store(READY, {**READY, "version": 9}), failures=1)
    assert retriever.retrieve("q", graph="g") == "answer"


def test_vanishing_twice_is_a_503():
    retriever = Retriever(Store(READY, {**READY, "state": "writing"}), failures=2)
    with pytest.raises(GraphChangingError) as caught:
        retriever.retrieve("q", graph="g")
    assert caught.value.http_status == 503 and caught.value.retry_after_s > 0


def test_a_drop_completed_meanwhile_is_a_404():
    retriever = Retriever(Store(READY, None), failures=1)
    with pytest.raises(NotFoundError):
        retriever.retrieve("q", graph="g")


def test_a_failure_no_change_explains_is_not_retried():
    retriever = Retriever(Store(READY), failures=1)
    with pytest.raises(KeyError):
        retriever.retrieve("q", graph="g")
    assert retriever.calls == 1


def test_a_graph_whose_first_change_is_under_way_is_unknown():
    context = RetrievalContext(Store({**READY, "version": None, "state": "writing"}), embedder=None)
    with pytest.raises(NotFoundError):
        context.graph_info("g")

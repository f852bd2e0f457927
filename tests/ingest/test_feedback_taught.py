"""What feedback taught, as the page's "Help it learn" view says it: read from the graph's models manifest
(`details["fewshot"]`), whatever part of it is there; None where nothing is trained. And the list of answers that
wait for a judgement refuses a bad limit before it asks the store anything."""

from __future__ import annotations

import pytest

from gretriever_neo4j.artifacts.registry import TrainedModels
from gretriever_neo4j.errors import InputError
from gretriever_neo4j.ingest.feedback import MAX_AWAITING, answers_awaiting, what_feedback_taught

FEWSHOT = {"questions": 25, "feedback_questions": 3, "before": 0.62, "after": 0.84,
           "measured_on": "5-fold cross-validation on the graph's own questions", "adopted": True,
           "trained": "2026-11-28T10:00:00+0000"}


@pytest.fixture(autouse=True)
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("GQA_HOME", str(tmp_path))


def trained(details: dict, created: str = "2026-11-28T09:59:00+0000") -> None:
    TrainedModels(graph="g", dataset="g", embedder="e", created=created, details=details).save()


def test_nothing_trained_taught_nothing():
    assert what_feedback_taught("g") is None


def test_every_field_there_is_said():
    trained({"fewshot": FEWSHOT, "reader": {"examples": 3}})
    taught = what_feedback_taught("g")
    assert taught == {**FEWSHOT, "text": "After the last gqa train (25 questions, 3 of them from feedback): "
                                         "62% → 84% right (5-fold cross-validation on the graph's own questions); "
                                         "answers use what it learned."}


@pytest.mark.parametrize("fewshot, text", [
    ({"questions": 4, "adopted": False},
     "After the last gqa train (4 questions); not adopted: answers do not use it."),
    ({"feedback_questions": 2, "after": 0.5},
     "After the last gqa train (2 questions from feedback): 50% right (on its own questions)."),
    ({"before": 0.25, "after": 1.0, "measured_on": "3 questions"},
     "After the last gqa train: 25% → 100% right (3 questions)."),
    ({"before": None, "after": None, "questions": 0}, "After the last gqa train (0 questions)."),
])
def test_any_field_may_be_missing(fewshot, text):
    trained({"fewshot": fewshot})
    taught = what_feedback_taught("g")
    assert taught["text"] == text and taught["trained"] == "2026-11-28T09:59:00+0000"  # the manifest's time
    assert set(taught) - {"text", "trained"} == {key for key, value in fewshot.items() if value is not None}


def test_models_trained_without_the_measure_say_so():
    trained({"reader": {"examples": 3}})
    assert what_feedback_taught("g") == {
        "trained": "2026-11-28T09:59:00+0000",
        "text": "Its models were trained before training measured what questions and feedback teach."}


def test_an_unreadable_manifest_taught_nothing(tmp_path):
    trained({"fewshot": FEWSHOT})
    (tmp_path / "models" / "g" / "manifest.json").write_text("{")
    assert what_feedback_taught("g") is None


class NoStore:
    def graph_info(self, graph):
        raise AssertionError("a bad limit is refused before the store is asked")


@pytest.mark.parametrize("limit", [0, -1, MAX_AWAITING + 1, True, 2.5, "10"])
def test_a_bad_limit_is_refused_naming_its_field(limit):
    with pytest.raises(InputError) as refused:
        answers_awaiting(NoStore(), "g", limit)
    assert refused.value.field == "limit"

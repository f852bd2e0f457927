"""`QA` picks the retriever for a graph by the kind asked and by what `gqa train` left in GQA_HOME, refuses to
answer from nothing, and says which retriever answered. A fake store, embedder, retriever and answering: no
Neo4j, no model loaded."""

from __future__ import annotations

import json

import pytest

from gretriever_neo4j.answering.answering import Answer, AnswerNode
from gretriever_neo4j.artifacts.registry import TrainedModels, legacy_retriever, models_dir
from gretriever_neo4j.errors import ConfigError, InputError
from gretriever_neo4j.qa.qa import QA, QAResult
from gretriever_neo4j.retrievers.learned import LearnedKGRetriever
from gretriever_neo4j.retrievers.neo4j import StaticRetriever
from gretriever_neo4j.retrievers.paths import PathKGRetriever

from fakes import FakeEmbedder, FakeRetriever, FakeStore, empty_graph, toy_kg

KG, PER_SAMPLE = "movies", "explagraphs/3"


@pytest.fixture(autouse=True)
def gqa_home(tmp_path, monkeypatch):
    monkeypatch.setenv("GQA_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


@pytest.fixture()
def embedder():
    return FakeEmbedder()


@pytest.fixture()
def store(embedder):
    return FakeStore({KG: {"kind": "kg", "dataset": KG}, PER_SAMPLE: {"kind": "per-sample", "dataset": "explagraphs"}},
                     (embedder.name, embedder.dim))


class FakeAnswering:
    def __init__(self, name="answering"):
        self.name = name
        self.calls: list[dict] = []

    def answer(self, retrieval, *, history=None, streamer=None, cancel=None) -> Answer:
        self.calls.append({"retrieval": retrieval, "history": history})
        return Answer(text="Bifocals", raw="", citations=None, model=self.name, seconds=0.0, mode="grounded")


@pytest.fixture()
def qa(store, embedder):
    return QA(store, embedder, answering=FakeAnswering())


def _train(embedder, graph=KG, *, choice=None, embedder_name=None) -> TrainedModels:
    """A manifest as `gqa train` writes it, with a retriever file (its contents are not read here)."""
    details = {"retrieval_choice": {"retriever": choice}} if choice else {}
    models = TrainedModels(graph=graph, dataset=graph, embedder=embedder_name or embedder.name,
                           retriever="retriever.pt", details=details)
    models_dir(graph).mkdir(parents=True, exist_ok=True)
    (models_dir(graph) / "retriever.pt").write_bytes(b"not read until a question comes")
    models.save()
    return models


def test_static_is_static_and_nothing_trained_means_paths_over_a_kg(qa):
    assert qa.retriever(KG, "static") is qa.static and isinstance(qa.static, StaticRetriever)
    paths = qa.retriever(KG)
    assert isinstance(paths, PathKGRetriever) and paths.kind == "paths"
    assert qa.retriever(KG, "paths") is paths  # made once, shared


def test_auto_is_static_without_a_graph_or_over_per_sample_graphs_or_unknown_ones(qa):
    assert qa.retriever(None) is qa.static
    assert qa.retriever(PER_SAMPLE) is qa.static
    assert qa.retriever("no such graph") is qa.static  # retrieval then says the graph is unknown


def test_auto_takes_the_trained_learned_retriever(qa, embedder, gqa_home):
    _train(embedder)
    learned = qa.retriever(KG)
    assert isinstance(learned, LearnedKGRetriever) and learned.kind == "learned"
    assert learned.checkpoint == gqa_home / "models" / KG / "retriever.pt"
    assert learned.description == f"learned {learned.checkpoint}"
    assert qa.retriever(KG, "learned") is learned  # one per checkpoint


def test_auto_follows_what_training_measured_better(qa, embedder):
    _train(embedder, choice="paths")
    assert isinstance(qa.retriever(KG), PathKGRetriever)
    assert isinstance(qa.retriever(KG, "learned"), LearnedKGRetriever)  # still there when asked for


def test_a_retriever_of_gqa_train_retriever_is_found_by_the_graphs_name(qa):
    legacy = legacy_retriever(KG)
    legacy.parent.mkdir(parents=True)
    legacy.write_bytes(b"x")
    retriever = qa.retriever(KG)
    assert isinstance(retriever, LearnedKGRetriever) and retriever.checkpoint == legacy


def test_an_explicit_checkpoint_is_used_over_a_kg(qa, tmp_path):
    checkpoint = tmp_path / "mine.pt"
    checkpoint.write_bytes(b"x")
    retriever = qa.retriever(KG, checkpoint=checkpoint)
    assert isinstance(retriever, LearnedKGRetriever) and retriever.checkpoint == checkpoint
    with pytest.raises(ConfigError, match="no learned retriever at"):
        qa.retriever(KG, checkpoint=tmp_path / "missing.pt")


def test_models_trained_on_another_embedders_vectors_are_refused(qa, embedder):
    _train(embedder, embedder_name="another-embedder")
    with pytest.raises(ConfigError, match="another-embedder"):
        qa.retriever(KG)


@pytest.mark.parametrize("graph, kind, message", [
    (KG, "pcst", "--retriever must be one of"),
    (KG, "learned", "no learned retriever is trained for graph 'movies'"),
    (None, "learned", "needs --graph"),
    (None, "paths", "needs --graph"),
])
def test_impossible_choices_are_config_errors(qa, graph, kind, message):
    with pytest.raises(ConfigError, match=message):
        qa.retriever(graph, kind)


def test_ask_answers_with_the_retrievers_subgraph_and_names_the_retriever(qa, store, embedder):
    fake = FakeRetriever(qa.context, toy_kg(embedder))
    qa.static = fake
    result = qa.ask("what did Benjamin Franklin invent?", graph=KG, retriever="static", history=[("q", "a")],
                    overrides={"seed_k": 3})
    assert isinstance(result, QAResult) and result.retriever == fake.description
    assert fake.calls == [{"question": "what did Benjamin Franklin invent?", "graph": KG, "overrides": {"seed_k": 3},
                           "record": True}]
    (call,) = qa.answering.calls
    assert call["retrieval"] is result.retrieval and call["history"] == [("q", "a")]
    assert result.answer.text == "Bifocals" and [r["id"] for r in store.recorded] == [result.retrieval.id]
    data = json.loads(json.dumps(result.to_dict()))
    assert data["retriever_model"] == fake.description and data["answer"]["text"] == "Bifocals"
    assert data["id"] == result.retrieval.id and len(data["nodes"]) == 6


def test_ask_without_answering_or_recording(qa, store, embedder):
    qa.static = FakeRetriever(qa.context, toy_kg(embedder))
    result = qa.ask("who invented the phonograph?", retriever="static", answer=False, record=False)
    assert result.answer is None and "answer" not in result.to_dict()
    assert qa.answering.calls == [] and store.recorded == [] and qa.static.calls[0]["record"] is False


class NodeAnswering(FakeAnswering):
    """Answers Bifocals (node n1 of the toy graph), naming Benjamin Franklin (n0)."""

    def answer(self, retrieval, *, history=None, streamer=None, cancel=None) -> Answer:
        super().answer(retrieval, history=history)
        return Answer(text="Bifocals", raw="", citations=None, model=self.name, seconds=0.0, mode="grounded",
                      nodes=[AnswerNode(id=1, key="n1", text="Bifocals", probability=0.9, walk="invented>")],
                      anchors=[0])


def test_the_answer_shown_is_kept_with_its_recorded_retrieval_for_feedback(store, embedder):
    qa = QA(store, embedder, answering=NodeAnswering())
    qa.static = FakeRetriever(qa.context, toy_kg(embedder))
    result = qa.ask("what did Benjamin Franklin invent?", retriever="static")
    assert store.answered == [{"id": result.retrieval.id, "answer_keys": ["n1"], "answer_text": "Bifocals",
                               "anchor_keys": ["n0"], "confidence": None, "unsure": False}]
    qa.ask("what did Benjamin Franklin invent?", retriever="static", record=False)
    assert len(store.answered) == 1  # a retrieval not recorded keeps nothing


class UnsureAnswering(NodeAnswering):
    def answer(self, retrieval, *, history=None, streamer=None, cancel=None) -> Answer:
        answer = super().answer(retrieval, history=history)
        answer.confidence, answer.unsure = 0.42, True
        return answer


def test_how_sure_the_answer_was_is_kept_with_it(store, embedder):
    qa = QA(store, embedder, answering=UnsureAnswering())
    qa.static = FakeRetriever(qa.context, toy_kg(embedder))
    result = qa.ask("what did Benjamin Franklin invent?", retriever="static")
    assert store.answered == [{"id": result.retrieval.id, "answer_keys": ["n1"], "answer_text": "Bifocals",
                               "anchor_keys": ["n0"], "confidence": 0.42, "unsure": True}]


def test_nothing_to_answer_from_is_a_config_error(qa, embedder):
    qa.static = FakeRetriever(qa.context, empty_graph(embedder))
    retrieval = qa.retrieve("who?", graph=KG, retriever="static")
    with pytest.raises(ConfigError, match=f"gave no candidate node.*{retrieval.id}"):
        qa.answer(retrieval)
    with pytest.raises(ConfigError, match="no candidate node"):
        qa.ask("who?", graph=KG, retriever="static")
    assert qa.answering.calls == []


def test_answer_uses_the_answering_it_is_given(qa, embedder):
    qa.static = FakeRetriever(qa.context, toy_kg(embedder))
    retrieval = qa.retrieve("who invented bifocals?", retriever="static")
    other = FakeAnswering("other")
    assert qa.answer(retrieval, answering=other).model == "other"
    assert len(other.calls) == 1 and qa.answering.calls == []


def test_the_question_is_checked_before_retrieval(qa, embedder):
    qa.static = FakeRetriever(qa.context, toy_kg(embedder))
    with pytest.raises(InputError, match="empty"):
        qa.ask("   ", retriever="static")

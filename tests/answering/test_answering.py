"""`Answering.answer` chooses how to answer (grounded, a label, free text) by mode, dataset and checkpoint, and
`Answer.to_dict` is what the CLI and the service print. A fake embedder and store, the zero-shot reader, and a
fake generator where an LLM would speak: no Neo4j, no model loaded."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from gretriever_neo4j.answering import answering as answering_module
from gretriever_neo4j.answering.answering import Answer, Answering, AnswerNode
from gretriever_neo4j.artifacts.registry import TrainedModels, models_dir
from gretriever_neo4j.errors import ConfigError
from gretriever_neo4j.model.citations import CITATION_INSTRUCTION, CitationCheck, check_citations
from gretriever_neo4j.retrievers.base import RetrievalContext

from fakes import FakeEmbedder, FakeRetriever, FakeStore, toy_kg

QUESTION = "what did Benjamin Franklin invent?"


@pytest.fixture(autouse=True)
def gqa_home(tmp_path, monkeypatch):
    monkeypatch.setenv("GQA_HOME", str(tmp_path / "home"))  # nothing trained, unless a test writes a manifest
    return tmp_path / "home"


@pytest.fixture(scope="module")
def embedder():
    return FakeEmbedder()


def _retrieval(embedder, dataset="toy", graph="toy"):
    store = FakeStore({graph: {"kind": "kg", "dataset": dataset}}, (embedder.name, embedder.dim))
    retriever = FakeRetriever(RetrievalContext(store, embedder), toy_kg(embedder), dataset=dataset)
    return retriever.retrieve(QUESTION, graph=graph, record=False)


class FakeGenerator:
    """Where `Answering` would load an LLM: what it was asked for and what it generated are recorded."""

    def __init__(self, monkeypatch, answering: Answering, output: str, variant: str = "inference-only"):
        self.config = SimpleNamespace(variant=variant, llm="fake-llm")
        self.output = output
        self.loaded: list = []  # the `trained` argument of each `Answering.generator` call
        self.generated: list[dict] = []

        def generator(trained=None):
            self.loaded.append(trained)
            return self

        def generate_one(model, sample, *, labels=None, streamer=None, cancel=None):
            assert model is self
            self.generated.append({"sample": sample, "labels": labels})
            return self.output

        monkeypatch.setattr(answering, "generator", generator)
        monkeypatch.setattr(answering_module, "_generate_one", generate_one)


def _no_llm(trained=None):
    raise AssertionError("the LLM must not be loaded")


def test_a_kg_question_gets_the_readers_nodes_with_valid_citations(embedder, monkeypatch):
    answering = Answering(embedder, reader="zero-shot")
    monkeypatch.setattr(answering, "generator", _no_llm)  # auto: no trained generator, the reader answers alone
    retrieval = _retrieval(embedder)
    answer = answering.answer(retrieval)
    assert answer.mode == "grounded" and answer.raw == ""
    assert set(answer.text.split("|")) == {"Bifocals", "Lightning rod"}
    assert [node.text for node in answer.nodes] == answer.text.split("|")
    keys = retrieval.result.subgraph.node_keys
    for node in answer.nodes:
        assert keys[node.id] == node.key and node.probability == 1.0 and "invented" in node.walk
        assert node.evidence_paths and "Benjamin Franklin" in node.evidence_paths[0]["text"]
    assert [retrieval.result.subgraph.node_keys[a] for a in answer.anchors] == ["n0"]
    assert answer.citations.all_valid and answer.citations.mode == "explicit"
    assert {str(node.id) for node in answer.nodes} <= set(answer.citations.cited_nodes)
    assert answer.models["reader"] == "zero-shot reader"
    assert answer.models["generator"].startswith("not asked: the reader answers alone")


def test_without_an_llm_no_generator_is_named(embedder, monkeypatch):
    answering = Answering(embedder, reader="zero-shot", use_llm=False)
    monkeypatch.setattr(answering, "generator", _no_llm)
    answer = answering.answer(_retrieval(embedder))
    assert answer.mode == "grounded" and set(answer.models) == {"reader"}
    assert answer.model == "zero-shot reader"


def test_free_text_mode_asks_the_llm_to_cite_and_checks_its_citations(embedder, monkeypatch):
    answering = Answering(embedder, mode="free-text")
    fake = FakeGenerator(monkeypatch, answering, "Bifocals and the lightning rod\nEvidence: nodes 1, 2, 9; edges 0-1")
    retrieval = _retrieval(embedder)
    answer = answering.answer(retrieval, history=[("who is Ben Franklin?", "a printer")])
    assert answer.mode == "free-text" and answer.text == "Bifocals and the lightning rod"
    assert answer.raw == fake.output and answer.nodes == []
    assert answer.citations == check_citations(retrieval.text, fake.output)
    assert answer.citations.invalid_nodes == ("9",) and not answer.citations.all_valid
    (call,) = fake.generated
    assert call["labels"] is None and CITATION_INSTRUCTION in call["sample"].question
    assert "Earlier question: who is Ben Franklin?" in call["sample"].question  # the conversation so far
    assert answer.models == {"generator": "inference-only / fake-llm"} and fake.loaded == [None]


def test_scene_graph_questions_are_answered_in_free_text_even_in_auto_mode(embedder, monkeypatch):
    answering = Answering(embedder)
    fake = FakeGenerator(monkeypatch, answering, "a red cube")
    answer = answering.answer(_retrieval(embedder, dataset="scenegraphs", graph="scene/1"))
    assert answer.mode == "free-text" and answer.text == "a red cube" and len(fake.generated) == 1


def test_a_classification_dataset_gets_one_of_its_labels_from_its_trained_generator(embedder, monkeypatch,
                                                                                     gqa_home):
    answering = Answering(embedder)
    fake = FakeGenerator(monkeypatch, answering, "counter", variant="g-retriever")
    # per-sample datasets keep their trained generator under the dataset's name
    (models_dir("explagraphs") / "generator").mkdir(parents=True)
    TrainedModels(graph="explagraphs", dataset="explagraphs", embedder=embedder.name,
                  generator="generator").save()
    answer = answering.answer(_retrieval(embedder, dataset="explagraphs", graph="explagraphs/7"))
    assert answer.mode == "label" and answer.text == answer.raw == "counter" and answer.citations is None
    assert fake.generated[0]["labels"] == ("support", "counter")
    assert fake.loaded == [str(gqa_home / "models" / "explagraphs" / "generator")]
    assert answer.models == {"generator": "g-retriever / fake-llm (labels)"}


def test_an_explicit_paper_checkpoint_answers_in_free_text_and_another_grounded(embedder, monkeypatch, tmp_path):
    import gretriever_neo4j.model.checkpoint as checkpoint_module

    formats = {"paper.ckpt": "paper", "grounded.ckpt": "grounded"}
    monkeypatch.setattr(checkpoint_module, "read_checkpoint",
                        lambda path: SimpleNamespace(config=SimpleNamespace(answer_format=formats[path.name])))
    paper = Answering(embedder, checkpoint=tmp_path / "paper.ckpt")
    fake = FakeGenerator(monkeypatch, paper, "Bifocals")
    assert paper.answer(_retrieval(embedder)).mode == "free-text" and len(fake.generated) == 1

    grounded = Answering(embedder, checkpoint=tmp_path / "grounded.ckpt", reader="zero-shot", use_llm=False)
    assert grounded.answer(_retrieval(embedder)).mode == "grounded"


def test_an_unknown_mode_is_refused(embedder):
    with pytest.raises(ConfigError, match="answer mode"):
        Answering(embedder, mode="poetry")


def test_a_variant_shares_what_was_loaded(embedder):
    answering = Answering(embedder)
    assert answering.variant() is answering and answering.variant(llm_when="auto") is answering
    never = answering.variant(llm_when="never")
    assert never is not answering and never.llm_when == "never" and never.mode == "auto"
    assert never._readers is answering._readers and never.llm_lock is answering.llm_lock
    assert answering.variant(llm_when="never") is never  # made once


def test_answer_to_dict_is_json_with_every_part():
    check = CitationCheck(mode="explicit", cited_nodes=("1", "9"), invalid_nodes=("9",), cited_edges=(("0", "1"),),
                          invalid_edges=())
    node = AnswerNode(id=1, key="n1", text="Bifocals", probability=0.9, walk="invented>",
                      evidence_paths=[{"text": "Benjamin Franklin — invented → Bifocals", "nodes": [0, 1],
                                       "edges": [0]}])
    answer = Answer(text="Bifocals", raw="Bifocals\nEvidence: nodes 1, 9; edges 0-1", citations=check,
                    model="zero-shot reader", seconds=0.25, mode="grounded", nodes=[node],
                    models={"reader": "zero-shot reader"}, timings_ms={"reader": 3.0}, anchors=[0])
    data = json.loads(json.dumps(answer.to_dict()))
    assert data["text"] == "Bifocals" and data["mode"] == "grounded" and data["anchors"] == [0]
    assert data["nodes"] == [{"id": 1, "key": "n1", "text": "Bifocals", "probability": 0.9, "walk": "invented>",
                              "evidence_paths": node.evidence_paths}]
    assert data["citations"] == {"mode": "explicit", "nodes": ["1", "9"], "edges": [["0", "1"]],
                                 "invalid_nodes": ["9"], "invalid_edges": [], "nodes_valid": 0.5,
                                 "edges_valid": 1.0, "all_valid": False}
    assert data["models"] == {"reader": "zero-shot reader"} and data["timings_ms"] == {"reader": 3.0}
    answer.models["generator"] = "x"
    assert "generator" not in data["models"]  # a copy, not the answer's own dict
    assert "invalid: 9" in answer.citations_summary() and "nodes valid 50%" in answer.citations_summary()


def test_answer_without_citations():
    answer = Answer(text="support", raw="support", citations=None, model="m", seconds=0.0, mode="label")
    data = answer.to_dict()
    assert data["citations"] is None and data["nodes"] == [] and answer.citations_summary() == ""

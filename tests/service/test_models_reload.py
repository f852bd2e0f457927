"""A running server picks up what `gqa train` trained after it started, without a restart: the next answer over
the graph comes from a reader loaded anew from the new models, and `/ready` names the models' `created` stamp per
graph (what the page compares to say "models updated"). The app in this process over the real Neo4j, models in a
GQA_HOME of the test's own."""

from __future__ import annotations

import dataclasses

import pytest

from gretriever_neo4j.artifacts.registry import TrainedModels, models_dir
from gretriever_neo4j.ingest.graphs import ingest
from gretriever_neo4j.reader.signature_weights import ZERO_SHOT

from service_helpers import KRIBBLE_QUESTION, home_of_its_own, in_process_app, menu_record

pytestmark = pytest.mark.neo4j
CREATED = "2026-11-28T10:00:00+0000"


@pytest.fixture()
def served(store, embedder, tmp_path, monkeypatch):
    graph = f"{store.test_prefix}-menu"
    ingest([menu_record(graph)], store, embedder.embed, dataset=graph)
    for name, value in home_of_its_own(tmp_path / "home").items():
        monkeypatch.setenv(name, value)
    client, runtime = in_process_app(store, embedder)
    with client:
        yield client, runtime, graph


def ask(client, graph: str) -> dict:
    response = client.post("/api/ask", json={"question": KRIBBLE_QUESTION, "graph": graph, "llm_when": "never"})
    assert response.status_code == 200, response.text
    return response.json()["answer"]


def train(graph: str, embedder) -> None:
    """What `gqa train` leaves for the zero-shot reader: the graph's own signature weights, then the manifest."""
    folder = models_dir(graph)
    folder.mkdir(parents=True, exist_ok=True)
    dataclasses.replace(ZERO_SHOT, reading=0.8).save(folder / "signature_weights.json")
    TrainedModels(graph=graph, dataset=graph, embedder=embedder.name, signature_weights="signature_weights.json",
                  created=CREATED, details={"reader_choice": {"reader": "zero-shot", "why": "a test"}}).save()


def test_the_next_answer_uses_models_trained_while_the_server_runs(served, embedder):
    client, runtime, graph = served
    assert graph not in client.get("/ready").json()["models"]
    before = ask(client, graph)["models"]["reader"]
    assert "the graph's weights" not in before
    held = runtime.qa.answering.reader(graph)
    assert ask(client, graph)["models"]["reader"] == before
    assert runtime.qa.answering.reader(graph) is held  # nothing changed: the reader is kept, not loaded per question

    train(graph, embedder)
    ready = client.get("/ready").json()
    assert ready["ready"] and ready["models"][graph] == CREATED
    after = ask(client, graph)
    assert after["models"]["reader"] == "zero-shot reader (the graph's weights)"
    rebuilt = runtime.qa.answering.reader(graph)
    assert rebuilt is not held and rebuilt.weights.reading == 0.8

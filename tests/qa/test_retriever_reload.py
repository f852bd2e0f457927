"""A learned retriever is held per checkpoint file as it is on disk: `gqa train` run while a server holds it
rewrites the same path, and the next question gets a retriever loaded from the new file (`QA.retriever`, and the
scorer built over a graph held in memory, `retrievers.cached.learned_over_cache`). The retrieval choice is read
from the manifest on every question. Fakes: no Neo4j, no model loaded."""

from __future__ import annotations

import os
import threading
from types import SimpleNamespace

import pytest

from gretriever_neo4j.artifacts.registry import TrainedModels, models_dir
from gretriever_neo4j.qa.qa import QA
from gretriever_neo4j.retrieval import learned as learned_module
from gretriever_neo4j.retrievers.cached import learned_over_cache
from gretriever_neo4j.retrievers.learned import LearnedKGRetriever
from gretriever_neo4j.retrievers.paths import PathKGRetriever

from fakes import FakeEmbedder, FakeStore

KG = "films"


@pytest.fixture(autouse=True)
def gqa_home(tmp_path, monkeypatch):
    monkeypatch.setenv("GQA_HOME", str(tmp_path / "home"))


@pytest.fixture()
def qa():
    embedder = FakeEmbedder()
    return QA(FakeStore({KG: {"kind": "kg", "dataset": KG}}, (embedder.name, embedder.dim)), embedder)


def train(at_s: int, choice: str = "learned", weights: bytes = b"weights") -> None:
    """`gqa train`'s retriever file and manifest, written at a time of their own."""
    folder = models_dir(KG)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "retriever.pt").write_bytes(weights)
    os.utime(folder / "retriever.pt", ns=(at_s * 10**9, at_s * 10**9))
    TrainedModels(graph=KG, dataset=KG, embedder=FakeEmbedder.name, retriever="retriever.pt",
                  details={"retrieval_choice": {"retriever": choice}}).save()


def test_a_retrained_learned_retriever_is_loaded_anew(qa):
    train(1_800_000_000)
    first = qa.retriever(KG)
    assert isinstance(first, LearnedKGRetriever) and qa.retriever(KG) is first  # kept while the file is the same
    train(1_800_000_060, weights=b"new weights")
    second = qa.retriever(KG)
    assert isinstance(second, LearnedKGRetriever) and second is not first
    assert second.checkpoint == first.checkpoint and qa.retriever(KG, "learned") is second
    assert len(qa._learned) == 1  # the old one let go


def test_the_retrieval_choice_follows_the_manifest(qa):
    train(1_800_000_000, choice="learned")
    assert isinstance(qa.retriever(KG), LearnedKGRetriever)
    train(1_800_000_000, choice="paths")
    assert isinstance(qa.retriever(KG), PathKGRetriever)


def test_the_scorer_over_a_cached_graph_is_rebuilt_when_its_checkpoint_changes(tmp_path, monkeypatch):
    built: list[str] = []

    def from_checkpoint(checkpoint, source, **_):
        built.append(os.path.getsize(checkpoint))
        return SimpleNamespace(size=built[-1])

    monkeypatch.setattr(learned_module.LearnedRetriever, "from_checkpoint", from_checkpoint)
    cached = SimpleNamespace(kg=object(), extras={("paths",): "kept"}, extras_lock=threading.Lock())
    cache = SimpleNamespace(get=lambda graph, record=None: cached)
    checkpoint = tmp_path / "retriever.pt"
    checkpoint.write_bytes(b"x" * 10)
    first = learned_over_cache(cache, KG, checkpoint, embed=None)
    assert learned_over_cache(cache, KG, checkpoint, embed=None) is first and built == [10]
    checkpoint.write_bytes(b"x" * 20)
    second = learned_over_cache(cache, KG, checkpoint, embed=None)
    assert second.size == 20 and built == [10, 20]
    assert len([key for key in cached.extras if key[0] == "learned"]) == 1 and cached.extras[("paths",)] == "kept"

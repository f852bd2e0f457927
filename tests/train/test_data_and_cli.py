"""From stored questions to samples (cached per question), and `gqa train` / `gqa eval` / `gqa ask` end to end
with a tiny random Llama, on the real Neo4j server."""

from __future__ import annotations

import json

import pytest
import torch

from gretriever_neo4j.ingest.graphs import ingest
from gretriever_neo4j.model.prompts import prompt_for
from gretriever_neo4j.records import Edge, GraphRecord, Node, QuestionRecord
from gretriever_neo4j.retrievers.base import RetrievalContext
from gretriever_neo4j.retrievers.neo4j import StaticRetriever
from gretriever_neo4j.train.data import SampleCache, build_samples, retrieval_text

from cli_helpers import gqa

pytestmark = pytest.mark.neo4j


def _toy_dataset(prefix: str, questions: int = 6) -> list:
    records = []
    for i in range(questions):
        graph = f"{prefix}/{i}"
        records.append(GraphRecord(graph_id=graph, dataset=prefix, kind="per-sample",
                                   nodes=[Node("0", f"claim {i}"), Node("1", "evidence"), Node("2", "people")],
                                   edges=[Edge("0", "supported by" if i % 2 else "contradicted by", "1"),
                                          Edge("2", "believe", "0")]))
        records.append(QuestionRecord(qid=f"{i:03d}", dataset=prefix, text=f"Is claim {i} supported?",
                                      answers=["support" if i % 2 else "counter"],
                                      split="train" if i < questions - 2 else "val", graph_id=graph))
    return records


def test_samples_come_from_retrieval_and_are_cached(store, embedder, tmp_path):
    prefix = store.test_prefix
    ingest(_toy_dataset(prefix), store, embedder.embed, dataset=prefix)
    retriever = StaticRetriever(RetrievalContext(store, embedder))
    cache = SampleCache(tmp_path)
    calls = []

    def counting(text, graph):
        calls.append(graph)
        return retriever.retrieve(text, graph=graph, record=False).result

    samples = build_samples(store, retriever, prefix, "train", retrieve=counting, cache=cache)
    assert [s.qid for s in samples] == ["000", "001", "002", "003"] and len(calls) == 4
    first = samples[1]
    assert first.x.shape == (3, embedder.dim) and first.edge_index.shape == (2, 2)
    assert first.edge_attr.shape == (2, embedder.dim)
    assert "claim 1" in first.desc and first.question == "Question: Is claim 1 supported?\nAnswer: "
    assert first.label == "support"  # an unknown dataset is an open question: gold answers joined, lower-cased

    again = build_samples(store, retriever, prefix, "train", retrieve=counting, cache=cache)
    assert len(calls) == 4, "cached samples must not be retrieved again"
    assert torch.equal(again[1].x, first.x) and again[1].desc == first.desc


def test_prompts_and_metaqa_brackets():
    assert retrieval_text("metaqa", "who directed [Blade Runner]") == "who directed Blade Runner"
    assert retrieval_text("webqsp", "who is [x]") == "who is [x]"
    assert prompt_for("explagraphs", "Argument 1: a\nAnswer:") == "Argument 1: a\nAnswer:"


def test_cli_train_eval_ask_with_a_tiny_llama(store, embedder, tmp_path, monkeypatch, neo4j_settings):
    prefix = store.test_prefix
    ingest(_toy_dataset(prefix, questions=8), store, embedder.embed, dataset=prefix)
    monkeypatch.setenv("GQA_HOME", str(tmp_path / "home"))  # a fresh sample cache
    monkeypatch.setenv("NEO4J_URI", neo4j_settings.uri)
    monkeypatch.setenv("NEO4J_PASSWORD", neo4j_settings.password)
    out = tmp_path / "ckpt"
    trained = gqa("train", "--dataset", prefix, "--config", "g-retriever", "--llm", "tiny-random-llama",
                   "--epochs", "2", "--batch-size", "2", "--grad-accum", "1", "--lr", "1e-3", "--gnn-hidden", "32",
                   "--gnn-layers", "2", "--out", str(out))
    assert trained.returncode == 0, trained.stderr[-3000:]
    assert (out / "best").is_dir() and "train loss" in trained.stdout

    report = tmp_path / "eval.json"
    scored = gqa("eval", "--dataset", prefix, "--split", "val", "--checkpoint", str(out / "best"),
                  "--max-new-tokens", "4", "--out", str(report))
    assert scored.returncode == 0, scored.stderr[-3000:]
    data = json.loads(report.read_text())
    assert len(data["predictions"]) == 2 and data["model"]["variant"] == "g-retriever"
    assert {"hit_at_1", "f1", "citations_nodes_valid"} <= set(data["scores"])

    asked = gqa("ask", "--graph", f"{prefix}/1", "--checkpoint", str(out / "best"), "--json", "Is claim 1 supported?")
    assert asked.returncode == 0, asked.stderr[-3000:]
    answer = json.loads(asked.stdout)["answer"]
    assert answer["model"].startswith("g-retriever") and "citations" in answer

    # Without --config a per-sample dataset trains its generator and registers it where `gqa ask` finds it.
    registered = gqa("train", "--dataset", prefix, "--llm", "tiny-random-llama", "--epochs", "1", "--batch-size", "2",
                     "--grad-accum", "1", "--gnn-hidden", "32", "--gnn-layers", "2")
    assert registered.returncode == 0, registered.stderr[-3000:]
    home = tmp_path / "home" / "models" / prefix
    manifest = json.loads((home / "manifest.json").read_text())
    assert (home / "generator" / "checkpoint.json").is_file() and not (home / "generator-run").exists()
    assert manifest["generator"] == "generator" and "registered" in registered.stdout

    nothing = gqa("train", "--dataset", f"{prefix}-none", "--llm", "tiny-random-llama", "--out", str(out))
    assert nothing.returncode == 1 and "no stored questions" in nothing.stderr and "Traceback" not in nothing.stderr
    bad = gqa("eval", "--dataset", prefix, "--split", "val", "--checkpoint", str(tmp_path / "missing"))
    assert bad.returncode == 1 and "Traceback" not in bad.stderr


def test_cli_trains_data_parallel_under_torchrun(store, embedder, tmp_path, monkeypatch, neo4j_settings):
    prefix = store.test_prefix
    ingest(_toy_dataset(prefix, questions=10), store, embedder.embed, dataset=prefix)
    monkeypatch.setenv("GQA_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("NEO4J_URI", neo4j_settings.uri)
    monkeypatch.setenv("NEO4J_PASSWORD", neo4j_settings.password)
    out = tmp_path / "ddp"
    trained = gqa("train", "--dataset", prefix, "--config", "prompt-tuning", "--llm", "tiny-random-llama",
                   "--epochs", "2", "--batch-size", "2", "--grad-accum", "1", "--lr", "1e-3", "--nproc", "2",
                   "--out", str(out))
    assert trained.returncode == 0, trained.stderr[-3000:]
    assert "2 data-parallel processes" in " ".join(trained.stdout.split())
    assert (out / "best").is_dir() and (out / "last").is_dir()
    assert trained.stdout.count("best checkpoint:") == 1  # rank 0 alone reports
    refused = gqa("train", "--dataset", prefix, "--nproc", "2")
    assert refused.returncode == 1 and "--config" in refused.stderr

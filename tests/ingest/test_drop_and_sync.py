"""`gqa drop` and `--sync` against the real Neo4j server: exact counts afterwards, other graphs untouched."""

from __future__ import annotations

import csv

import pytest

from gretriever_neo4j.ingest.graphs import ingest_dataset
from gretriever_neo4j.ingest.questions import ingest_questions

from cli_helpers import gqa

pytestmark = pytest.mark.neo4j


def _counts(store, graph: str) -> tuple[int, int, int]:
    counts = store.graph_counts(graph)
    return counts["nodes"], counts["edges"], counts["questions"]


def _triples(path, triples):
    path.write_text("".join(f"{h}\t{r}\t{t}\n" for h, r, t in triples))
    return path


def _chain(n: int, offset: int = 0):
    return [(f"e{i}", f"rel{i % 3}", f"e{i + 1}") for i in range(offset, offset + n)]


def _stored(store, graph):
    nodes = {row["key"]: row["text"] for row in store.kg_nodes(graph, with_embeddings=False)}
    edges = {(row["src"], row["text"], row["dst"]) for row in store.kg_triples(graph)}
    return nodes, edges


def test_drop_removes_everything_of_the_graph_and_nothing_else(store, embedder, tmp_path):
    keep, gone = f"{store.test_prefix}-keep", f"{store.test_prefix}-gone"
    ingest_dataset(store, embedder, "triples", str(_triples(tmp_path / "a.tsv", _chain(30))), graph=keep)
    ingest_dataset(store, embedder, "triples", str(_triples(tmp_path / "b.tsv", _chain(30))), graph=gone)
    questions = tmp_path / "q.tsv"
    questions.write_text("".join(f"what follows e{i}\te{i + 1}\te{i}\n" for i in range(10)))
    ingest_questions(store, embedder, keep, questions)
    ingest_questions(store, embedder, gone, questions)
    from gretriever_neo4j.retrievers.base import RetrievalContext
    from gretriever_neo4j.retrievers.neo4j import StaticRetriever

    StaticRetriever(RetrievalContext(store, embedder)).retrieve("what follows e3", graph=gone)  # a recorded retrieval
    before_keep = _counts(store, keep)
    assert before_keep == _counts(store, gone) == (31, 30, 10)
    assert store.graph_counts(gone)["retrievals"] == 1
    version = store.graph_version(gone)

    declined = gqa("drop", gone, stdin="n\n")
    assert declined.returncode == 1 and _counts(store, gone) == (31, 30, 10)

    deleted = store.drop_graph(gone, batch=7)  # several batches of each kind
    assert deleted == {"edges": 30, "relations": 3, "nodes": 31, "questions": 10, "retrievals": 1,
                       "graph_records": 1}
    counts = store.graph_counts(gone)
    assert (counts["nodes"], counts["edges"], counts["questions"], counts["retrievals"], counts["recorded"]) == (
        0, 0, 0, 0, False)
    assert store.graph_info(gone) is None and store.graph_version(gone) is None != version
    assert _counts(store, keep) == before_keep and store.graph_info(keep) is not None
    assert store.seed_nodes(embedder.embed_query("e3").vector, 3, gone) == []  # gone from the vector index

    again = gqa("drop", gone, "--yes")
    assert again.returncode == 1 and "no stored graph" in again.stderr and "Traceback" not in again.stderr
    dropped = gqa("drop", keep, "--yes")
    assert dropped.returncode == 0, dropped.stderr[-2000:]
    assert _counts(store, keep) == (0, 0, 0) and store.graph_info(keep) is None


def test_sync_triples_leaves_exact_counts_and_embeds_only_new_texts(store, embedder, tmp_path):
    name = f"{store.test_prefix}-sync"
    path = _triples(tmp_path / "kb.tsv", _chain(40))
    ingest_dataset(store, embedder, "triples", str(path), graph=name)
    version = store.graph_version(name)
    changed = _chain(25) + _chain(5, offset=100) + [("e0", "renamed", "e1")]
    _triples(path, changed)
    report = ingest_dataset(store, embedder, "triples", str(path), graph=name, sync=True)
    nodes, edges = _stored(store, name)
    expected_nodes = {n for h, _, t in changed for n in (h, t)}
    assert edges == set(changed) and set(nodes) == expected_nodes
    assert (report.edges_deleted, report.nodes_deleted) == (15, 41 - 26)
    assert report.texts_embedded == len(
        {"renamed"} | {n for n in expected_nodes if n not in {f"e{i}" for i in range(41)}})
    assert report.edges_written == 6 and store.graph_version(name) > version

    plain = ingest_dataset(store, embedder, "triples", str(path), graph=name, sync=True)
    assert (plain.nodes_written, plain.edges_written, plain.nodes_deleted, plain.edges_deleted) == (0, 0, 0, 0)

    _triples(path, [])  # an empty source empties the graph
    ingest_dataset(store, embedder, "triples", str(path), graph=name, sync=True)
    assert _stored(store, name) == ({}, set())


def test_interrupted_sync_then_rerun_is_exact(store, embedder, tmp_path, monkeypatch):
    name = f"{store.test_prefix}-resync"
    path = _triples(tmp_path / "kb.tsv", _chain(60))
    ingest_dataset(store, embedder, "triples", str(path), graph=name)
    changed = _chain(20, offset=30) + _chain(20, offset=200)
    _triples(path, changed)
    expected = ({n for h, _, t in changed for n in (h, t)}, set(changed))

    # 1. interrupted while writing: embedding the new texts fails.
    calls = {"n": 0}
    original_embed = embedder.embed

    def failing_embed(texts):
        calls["n"] += 1
        if calls["n"] == 1:
            raise RuntimeError("injected failure while writing")
        return original_embed(texts)

    monkeypatch.setattr(embedder, "embed", failing_embed)
    with pytest.raises(RuntimeError, match="injected"):
        ingest_dataset(store, embedder, "triples", str(path), graph=name, sync=True, max_batch_items=10)
    monkeypatch.setattr(embedder, "embed", original_embed)
    # 2. interrupted while sweeping: edges are deleted, then deleting nodes fails after one batch.
    original_delete = type(store).delete_nodes

    def failing_delete(self, graph, keys, batch=5000):
        original_delete(self, graph, list(keys)[:3])
        raise RuntimeError("injected failure while sweeping")

    monkeypatch.setattr(type(store), "delete_nodes", failing_delete)
    with pytest.raises(RuntimeError, match="sweeping"):
        ingest_dataset(store, embedder, "triples", str(path), graph=name, sync=True)
    monkeypatch.setattr(type(store), "delete_nodes", original_delete)
    nodes, edges = _stored(store, name)
    assert edges == expected[1] and set(nodes) > expected[0]  # stale nodes remain

    ingest_dataset(store, embedder, "triples", str(path), graph=name, sync=True)
    nodes, edges = _stored(store, name)
    assert (set(nodes), edges) == expected
    assert all(row["embedding"] is not None for row in store.kg_nodes(name))


def test_sync_csv_graph_updates_texts_and_removes_nodes(store, embedder, tmp_path):
    name = f"{store.test_prefix}-csvsync"

    def write(nodes, edges):
        with (tmp_path / "nodes.csv").open("w", newline="") as handle:
            csv.writer(handle).writerows([["node_id", "node_attr"], *nodes])
        with (tmp_path / "edges.csv").open("w", newline="") as handle:
            csv.writer(handle).writerows([["src", "edge_attr", "dst"], *edges])

    write([["0", "Benjamin Franklin"], ["1", "lightning rod"], ["2", "bifocals"]],
          [["0", "invented", "1"], ["0", "invented", "2"]])
    ingest_dataset(store, embedder, "csv", str(tmp_path), graph=name)
    write([["0", "Benjamin Franklin"], ["1", "the lightning rod"]], [["0", "invented", "1"]])
    report = ingest_dataset(store, embedder, "csv", str(tmp_path), graph=name, sync=True)
    nodes, edges = _stored(store, name)
    assert nodes == {"0": "Benjamin Franklin", "1": "the lightning rod"} and edges == {("0", "invented", "1")}
    assert (report.nodes_written, report.texts_embedded, report.nodes_deleted, report.edges_deleted) == (1, 1, 1, 1)

    cli = gqa("ingest", "csv", "--source", str(tmp_path), "--graph", name, "--sync", "--limit", "1")
    assert cli.returncode == 1 and "--limit" in cli.stderr and "Traceback" not in cli.stderr

"""Ingest into the real Neo4j server: counts match the files, a second run changes nothing, failures write nothing."""

from __future__ import annotations

import csv
import json
import time
from dataclasses import replace
from pathlib import Path

import pytest

from gretriever_neo4j.errors import ConfigError, InputError
from gretriever_neo4j.ingest.graphs import ingest, ingest_dataset
from gretriever_neo4j.loaders import get_loader
from gretriever_neo4j.loaders.webqsp import rejoined
from gretriever_neo4j.records import Edge, GraphRecord, Node, QuestionRecord

from cli_helpers import gqa, invoke

pytestmark = pytest.mark.neo4j
REPO = Path(__file__).resolve().parents[2]


def _dataset_counts(store, dataset: str) -> dict:
    return store.stats().get(dataset, {"graphs": 0, "nodes": 0, "edges": 0, "questions": {}})


def _as_own(records, dataset: str):
    """A loader's records under a dataset (and graph ids) of the test's own: a slice of a benchmark never mixes
    with the whole benchmark a developer's store may hold, and the `store` fixture removes it afterwards."""
    for record in records:
        yield replace(record, dataset=dataset, graph_id=f"{dataset}/{record.graph_id}")


def _slice(source, loader: str, dataset: str, **options) -> list:
    return list(_as_own(get_loader(loader).read(str(source), **options), dataset))


# Slices of the shared benchmarks (hundreds of rows) through the loaders and the batched writer: counts equal the
# rows, a run cut short resumes where it stopped, a second run writes nothing. The whole files are read by the
# loader tests without Neo4j; their whole ingests are the `full` tests below (`pytest -m full`).

def test_webqsp_slice_counts_match_resumes_and_rerun_changes_nothing(store, embedder, shared_data):
    path = shared_data / "webqsp" / "webqsp_evidence_test.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines()[:150]]
    entities = {part for row in rows for triple in row["graph"] for part in rejoined(*triple)[::2]}
    triples = {rejoined(*triple) for row in rows for triple in row["graph"]}
    dataset = f"{store.test_prefix}-webqsp"
    first = ingest(_slice(path, "webqsp", dataset, limit=60), store, embedder.embed, dataset=dataset,
                   max_batch_items=400)
    rest = ingest(_slice(path, "webqsp", dataset, limit=150), store, embedder.embed, dataset=dataset,
                  max_batch_items=400)
    assert first.batches > 1 and rest.batches > 1 and 0 < first.edges_written < len(triples)
    assert first.edges_written + rest.edges_written == len(triples)
    counts = _dataset_counts(store, dataset)
    assert (counts["nodes"], counts["edges"]) == (len(entities), len(triples))
    assert counts["embedded_nodes"] == len(entities) and counts["embedded_edges"] == len(triples)
    assert counts["questions"]["test"] == 150

    again = ingest(_slice(path, "webqsp", dataset, limit=150), store, embedder.embed, dataset=dataset,
                   max_batch_items=400)
    assert (again.nodes_written, again.edges_written, again.texts_embedded) == (0, 0, 0)
    assert _dataset_counts(store, dataset) == counts


def test_explagraphs_slice_one_graph_per_row(store, embedder, shared_data):
    path = shared_data / "explagraphs" / "train_dev.tsv"
    dataset = f"{store.test_prefix}-explagraphs"
    records = _slice(path, "explagraphs", dataset, limit=200)
    splits = {}
    for record in records:
        if isinstance(record, QuestionRecord):
            splits[record.split] = splits.get(record.split, 0) + 1
    report = ingest(records, store, embedder.embed, dataset=dataset, max_batch_items=300)
    counts = _dataset_counts(store, dataset)
    assert report.batches > 1 and counts["graphs"] == 200 and counts["kind"] == "per-sample"
    assert counts["questions"] == splits and set(splits) == {"train", "val", "test"}
    assert counts["nodes"] == report.nodes_read  # node keys are local to each graph: nothing merges
    again = ingest(_slice(path, "explagraphs", dataset, limit=200), store, embedder.embed, dataset=dataset)
    assert (again.nodes_written, again.edges_written) == (0, 0)


def test_metaqa_slice_kb_and_questions(store, embedder, shared_data):
    folder = shared_data / "metaqa"
    lines = [l.split("|") for l in (folder / "kb.txt").read_text().splitlines()[:3000] if l.strip()]
    dataset = f"{store.test_prefix}-metaqa"
    records = _slice(folder, "metaqa", dataset, limit=50, kb_limit=3000)
    questions = [r for r in records if isinstance(r, QuestionRecord)]
    report = ingest(records, store, embedder.embed, dataset=dataset, max_batch_items=1000)
    counts = _dataset_counts(store, dataset)
    assert report.batches > 1
    assert counts["nodes"] == len({part for h, _, t in lines for part in (h, t)})
    assert counts["edges"] == len({tuple(l) for l in lines})
    assert sum(counts["questions"].values()) == len(questions) == 150 and set(counts["questions"]) <= {"train", "val"}
    again = ingest(_slice(folder, "metaqa", dataset, limit=50, kb_limit=3000), store, embedder.embed,
                   dataset=dataset, max_batch_items=1000)
    assert (again.nodes_written, again.edges_written, again.texts_embedded) == (0, 0, 0)


@pytest.mark.slow
@pytest.mark.full
def test_webqsp_file_counts_match_and_rerun_changes_nothing(store, embedder, shared_data):
    path = shared_data / "webqsp" / "webqsp_evidence_test.jsonl"
    entities, triples, questions = set(), set(), 0
    for line in path.read_text().splitlines():
        row = json.loads(line)
        questions += 1
        for triple in row["graph"]:
            head, relation, tail = rejoined(*triple)  # names RoG cut at their comma, made whole (loader test)
            entities.update((head, tail))
            triples.add((head, relation, tail))
    ingest_dataset(store, embedder, "webqsp", str(path))
    counts = _dataset_counts(store, "webqsp")
    assert (counts["nodes"], counts["edges"]) == (len(entities), len(triples))
    assert counts["embedded_nodes"] == len(entities) and counts["embedded_edges"] == len(triples)
    assert counts["questions"]["test"] == questions == 1628

    again = ingest_dataset(store, embedder, "webqsp", str(path))
    assert (again.nodes_written, again.edges_written, again.texts_embedded) == (0, 0, 0)
    assert _dataset_counts(store, "webqsp") == counts


@pytest.mark.slow
@pytest.mark.full
def test_explagraphs_one_graph_per_row_with_paper_split(store, embedder, shared_data):
    path = shared_data / "explagraphs" / "train_dev.tsv"
    report = ingest_dataset(store, embedder, "explagraphs", str(path))
    counts = _dataset_counts(store, "explagraphs")
    assert counts["graphs"] == 2766 and counts["kind"] == "per-sample"
    assert counts["questions"] == {"train": 1659, "val": 553, "test": 554}
    assert counts["nodes"] == report.nodes_read  # node keys are local to each graph: nothing merges
    assert counts["edges"] > 11_000
    again = ingest_dataset(store, embedder, "explagraphs", str(path))
    assert (again.nodes_written, again.edges_written) == (0, 0)


@pytest.mark.slow
@pytest.mark.full
def test_metaqa_kb_and_questions(store, embedder, shared_data):
    folder = shared_data / "metaqa"
    lines = [l.split("|") for l in (folder / "kb.txt").read_text().splitlines() if l.strip()]
    entities = {part for h, _, t in lines for part in (h, t)}
    ingest_dataset(store, embedder, "metaqa", str(folder))
    counts = _dataset_counts(store, "metaqa")
    assert counts["nodes"] == len(entities) == 43_234
    assert counts["edges"] == len({tuple(l) for l in lines})
    assert sum(counts["questions"].values()) == 9_992 + 14_872 + 14_274
    assert set(counts["questions"]) == {"train", "val"}


def test_scenegraphs_fixture(store, embedder):
    from gretriever_neo4j.loaders import get_loader

    fixtures = REPO / "tests" / "loaders" / "fixtures" / "scenegraphs"
    questions = fixtures / "questions.csv"
    graph_ids = {r.graph_id for r in get_loader("scenegraphs").read(fixtures, questions=questions)
                 if isinstance(r, GraphRecord)}
    report = ingest_dataset(store, embedder, "scenegraphs", str(fixtures), questions=str(questions))
    assert report.graphs == len(graph_ids) >= 2
    assert report.questions == len(questions.read_text().strip().splitlines()) - 1 == 5
    node_texts = [row["text"] for gid in graph_ids for row in store.graph_nodes(gid)]
    assert any(t.startswith("name: ") and "(x,y,w,h): (" in t for t in node_texts)
    assert _dataset_counts(store, "scenegraphs")["questions"]

    # One image has a relation to an unknown object: refused as a whole, or skipped with --skip-bad.
    bad = fixtures / "questions_with_bad_images.csv"
    with pytest.raises(InputError):
        ingest_dataset(store, embedder, "scenegraphs", str(fixtures), questions=str(bad))
    skipped = ingest_dataset(store, embedder, "scenegraphs", str(fixtures), questions=str(bad), skip_bad=True)
    assert skipped.bad_rows and all(e.source for e in skipped.bad_rows)


def _write_csv(path: Path, header: list[str], rows: list[list[str]]) -> Path:
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows(rows)
    return path


def test_user_csv_graph_and_empty_graph(store, embedder, tmp_path):
    nodes = _write_csv(tmp_path / "nodes.csv", ["node_id", "node_attr"],
                       [["0", "Benjamin Franklin"], ["1", "lightning rod, an invention"],
                        ["2", 'the "glass" harmonica']])
    edges = _write_csv(tmp_path / "edges.csv", ["src", "edge_attr", "dst"],
                       [["0", "invented", "1"], ["0", "invented", "2"]])
    name = f"{store.test_prefix}-franklin"
    report = ingest_dataset(store, embedder, "csv", nodes=str(nodes), edges=str(edges), graph=name)
    assert (report.nodes_written, report.edges_written) == (3, 2)
    assert {r["text"] for r in store.graph_nodes(name)} == {"Benjamin Franklin", "lightning rod, an invention",
                                                            'the "glass" harmonica'}
    assert len(store.graph_edges(name)) == 2

    empty_nodes = _write_csv(tmp_path / "empty_nodes.csv", ["node_id", "node_attr"], [])
    empty_edges = _write_csv(tmp_path / "empty_edges.csv", ["src", "edge_attr", "dst"], [])
    empty = f"{store.test_prefix}-empty"
    report = ingest_dataset(store, embedder, "csv", nodes=str(empty_nodes), edges=str(empty_edges), graph=empty)
    assert report.graphs == 1 and report.nodes_written == 0
    info = store.graph_info(empty)  # a whole (empty) graph: a version of its own, no change under way
    assert {k: info[k] for k in ("id", "dataset", "kind", "state")} == {
        "id": empty, "dataset": "csv", "kind": "per-sample", "state": None}
    assert isinstance(info["version"], int) and info["version"] >= 1


def test_bad_row_fails_before_anything_is_written(store, embedder, tmp_path):
    triples = tmp_path / "kb.tsv"
    triples.write_text("a\tlikes\tb\nb\tlikes\tc\nbroken line without tabs\n")
    name = f"{store.test_prefix}-bad"
    with pytest.raises(InputError) as caught:
        ingest_dataset(store, embedder, "triples", str(triples), graph=name)
    assert str(triples) in str(caught.value) and ":3" in str(caught.value)
    assert store.graph_info(name) is None and store.graph_nodes(name) == []

    report = ingest_dataset(store, embedder, "triples", str(triples), graph=name, skip_bad=True)
    assert len(report.bad_rows) == 1 and report.bad_rows[0].line == 3
    assert len(store.graph_nodes(name)) == 3


def test_interrupted_ingest_resumes_where_it_stopped(store, embedder, tmp_path):
    lines = [f"e{i}\trel{i % 3}\te{i + 1}" for i in range(60)]
    triples = tmp_path / "chain.tsv"
    triples.write_text("\n".join(lines) + "\n")
    name = f"{store.test_prefix}-chain"
    first = ingest_dataset(store, embedder, "triples", str(triples), graph=name, limit=25)
    rest = ingest_dataset(store, embedder, "triples", str(triples), graph=name)
    assert first.edges_written == 25
    assert rest.edges_written == 35 and rest.nodes_written == 61 - 26
    assert len(store.graph_edges(name)) == 60


def test_a_new_graph_is_written_without_asking_what_is_stored_and_a_rerun_asks(store, embedder, monkeypatch):
    name = f"{store.test_prefix}-ring"
    triples = [(f"n{i}", f"rel{i % 3}", f"n{(i * 7) % 40}") for i in range(40)]
    records = lambda: [GraphRecord(graph_id=name, dataset=store.test_prefix, kind="kg",
                                   nodes=[Node(x, x) for x in sorted({h for h, _, _ in part} | {t for *_, t in part})],
                                   edges=[Edge(h, r, t) for h, r, t in part])
                       for part in (triples[i:i + 5] for i in range(0, len(triples), 5))]
    asked: list[str] = []
    read = type(store).read
    monkeypatch.setattr(type(store), "read", lambda self, query, **p: asked.append(query) or read(self, query, **p))
    first = ingest(records(), store, embedder.embed, dataset=store.test_prefix, max_batch_items=15)
    assert first.batches == 8 and first.edges_written == 40
    assert "graphs_known" in asked and not {"nodes_embedded", "edges_embedded", "relations_embedded"} & set(asked)
    assert len(store.graph_edges(name)) == 40 and len(store.graph_nodes(name)) == 40
    asked.clear()
    again = ingest(records(), store, embedder.embed, dataset=store.test_prefix, max_batch_items=15)
    assert {"nodes_embedded", "edges_embedded"} <= set(asked)
    assert again.edges_written == 0 and again.nodes_written == 0 and again.texts_embedded == 0


def test_an_edge_recurring_in_later_batches_is_written_and_counted_once(store, embedder, monkeypatch):
    # A KG file repeats an edge (WebQSP's rows share triples). A new graph's rows are not asked about, and a known
    # graph's may be asked before the writer commits the batch that holds it: both once counted it twice.
    name = f"{store.test_prefix}-repeat"
    part = lambda i: GraphRecord(graph_id=name, dataset=store.test_prefix, kind="kg",
                                 nodes=[Node("hub", "hub"), Node(f"n{i}", f"n{i}")],
                                 edges=[Edge("hub", "links", "hub"), Edge("hub", "to", f"n{i}")])
    write = type(store).write_batch
    slow = lambda self, batch: (time.sleep(0.3) if batch.edges else None) or write(self, batch)
    monkeypatch.setattr(type(store), "write_batch", slow)
    first = ingest([part(i) for i in range(4)], store, embedder.embed, dataset=store.test_prefix, max_batch_items=5)
    again = ingest([part(i) for i in range(6)], store, embedder.embed, dataset=store.test_prefix, max_batch_items=5)
    assert first.batches == 4 and first.edges_written == 5
    assert again.batches == 6 and again.edges_written == 2
    assert len(store.graph_edges(name)) == 7


def test_other_embedder_dimension_is_refused(store):
    with pytest.raises(ConfigError, match="--reembed"):
        store.ensure_schema("some/other-model", 768)


def test_batch_with_missing_endpoint_rolls_back(store):
    from gretriever_neo4j.store.graph_store import WriteBatch

    name = f"{store.test_prefix}-rollback"
    batch = WriteBatch(graphs=[{"id": name, "dataset": name, "kind": "kg"}],
                       nodes=[{"graph": name, "dataset": name, "key": "a", "text": "a", "vector": 0}],
                       node_vectors=[[1.0] + [0.0] * 383],
                       relations=[{"graph": name, "dataset": name, "text": "r", "vector": 0}],
                       relation_vectors=[[1.0] + [0.0] * 383],
                       edges=[{"graph": name, "dataset": name, "src": "a", "text": "r", "dst": "missing"}])
    with pytest.raises(Exception, match="rolled back"):
        store.write_batch(batch)
    assert store.graph_info(name) is None and store.graph_nodes(name) == []


def test_cli_bad_input_exits_1_with_file_and_line_and_no_traceback(store, tmp_path):
    nodes = _write_csv(tmp_path / "nodes.csv", ["node_id", "node_attr"], [["0", "x"]])
    edges = _write_csv(tmp_path / "edges.csv", ["src", "edge_attr", "dst"], [["0", "r", "7"]])
    name = f"{store.test_prefix}-cli"
    result = gqa("ingest", "csv", "--nodes", str(nodes), "--edges", str(edges), "--graph", name)
    assert result.returncode == 1, result.stderr
    assert f"{edges}:2" in result.stderr and "Traceback" not in result.stderr + result.stdout
    assert store.graph_info(name) is None

    unknown = gqa("ingest", "no-such-dataset")
    assert unknown.returncode == 1 and "known:" in unknown.stderr and "Traceback" not in unknown.stderr
    missing = gqa("ingest", "triples", "--source", str(tmp_path / "nope.tsv"))
    assert missing.returncode == 1 and "nope.tsv" in missing.stderr and "Traceback" not in missing.stderr


def test_cli_stats_json(store, embedder, tmp_path):
    triples = tmp_path / "kb.tsv"
    triples.write_text("Ada\tknows\tBob\n")
    name = f"{store.test_prefix}-stats"
    ingest_dataset(store, embedder, "triples", str(triples), graph=name)
    result = invoke("stats", "--json")  # in-process: only its output matters here
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["embedder"]["dim"] == 384 and isinstance(data["datasets"], dict)
    row = next(row for row in data["graphs"] if row["graph"] == name)
    assert row["kind"] == "kg" and row["source"] == "triples file kb.tsv" and row["source_query"] is None

    # the same triples from another file: nothing new is written, the graph's source is the latest ingest's
    moved = tmp_path / "kb-copy.tsv"
    moved.write_text(triples.read_text())
    assert ingest_dataset(store, embedder, "triples", str(moved), graph=name).nodes_written == 0
    assert store.statistics()["graphs"][name]["source"] == "triples file kb-copy.tsv"
    ingest([GraphRecord(graph_id=name, dataset="triples", kind="kg", nodes=[Node("Cy", "Cy")])], store,
           embedder.embed, dataset="triples")  # records without a plan say nothing about the source: kept
    assert store.statistics()["graphs"][name]["source"] == "triples file kb-copy.tsv"

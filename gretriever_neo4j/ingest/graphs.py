"""Loader records -> embeddings -> Neo4j, in batches of two transactions each: nodes and relation texts (with
their vectors), then the edges between them.

`sync`: the stored graph is made equal to the source (`SourceIndex`): what the source no longer holds is
deleted afterwards, in batches.

Idempotent and resumable: nodes, relation texts and edges are merged on their identity, and a batch first asks the
store which of them are already stored with a vector (an edge's is its relation text's, stored once per graph), so
a second run (or the rest of an interrupted one) embeds and writes only what is missing. Unless bad rows are to be
skipped, the source is read once without writing, so a malformed row anywhere fails the run before anything is
written.

Each graph's record keeps where this ingest read it from (`GraphSource`): `gqa stats`, `/api/graphs` and the web
page's graph list show it, and the Browser statement of a retrieval adds the source nodes behind a graph read from
gqa's own database.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from gretriever_neo4j.errors import ConfigError, InputError
from gretriever_neo4j.progress import OnProgress, notify
from gretriever_neo4j.records import GraphRecord, QuestionRecord, Record
from gretriever_neo4j.store.graph_store import GraphStore, WriteBatch, vectors_param


@dataclass
class IngestReport:
    dataset: str
    graphs: int = 0
    nodes_read: int = 0
    edges_read: int = 0
    questions: int = 0
    nodes_written: int = 0
    edges_written: int = 0
    texts_embedded: int = 0
    batches: int = 0
    bad_rows: list[InputError] = field(default_factory=list)
    graph_ids: set[str] = field(default_factory=set, repr=False)
    seconds: float = 0.0
    embed_seconds: float = 0.0
    write_seconds: float = 0.0  # in the two writer threads together, overlapping the next batch's embedding
    nodes_deleted: int = 0  # --sync: what the source no longer holds
    edges_deleted: int = 0
    questions_deleted: int = 0

    @property
    def changed(self) -> bool:
        """Whether the run wrote or deleted any node or edge (a graph's new version is drawn only then)."""
        return bool(self.nodes_written or self.edges_written or self.nodes_deleted or self.edges_deleted)

    def to_dict(self) -> dict:
        data = {k: v for k, v in self.__dict__.items() if k not in ("bad_rows", "graph_ids")}
        data["bad_rows"] = len(self.bad_rows)
        return data


@dataclass(frozen=True)
class GraphSource:
    """Where an ingest read its graphs from, kept on each graph's (:Graph) record (replacing an earlier ingest's).

    `text`: for people ("triples file kb.tsv", "Neo4j: same database"); `query`: the `--query` of `gqa ingest
    neo4j`; `element_ids`: the graph's node keys are element ids of nodes in gqa's own database (`gqa ingest neo4j`
    of that database, without `--query`), so a retrieval's Browser statement can show those nodes too."""

    text: str
    query: str | None = None
    element_ids: bool = False

    def fields(self) -> dict[str, object]:
        """The record's properties (`graphs_upsert`); a flag that is not set is absent, not false."""
        return {"source": self.text, "source_query": self.query,
                "source_element_ids": True if self.element_ids else None}


_BENCHMARKS = ("webqsp", "explagraphs", "scenegraphs", "metaqa")


def describe_source(dataset: str, source: str | None, options: dict[str, object]) -> GraphSource:
    """A loader's source in words: file names only (no folders), as the page shows them."""
    if dataset == "csv":
        names = [Path(str(options[name])).name if options.get(name) else f"{name}.csv" for name in ("nodes", "edges")]
        return GraphSource(f"CSV files {', '.join(names)}")
    if dataset == "triples" and source is not None:
        return GraphSource(f"triples file {Path(source).name}")
    if dataset == "rdf" and source is not None:
        return GraphSource(f"RDF {'folder' if Path(source).is_dir() else 'file'} {Path(source).name}")
    if dataset in _BENCHMARKS:
        return GraphSource(f"benchmark {dataset}")
    return GraphSource(f"{dataset} {Path(source).name}" if source is not None else dataset)


def count_records(records: Iterable[Record]) -> int:
    """Reads the whole source once; raises the first InputError before anything is written."""
    return sum(1 for _ in records)


def ingest(records: Iterable[Record], store: GraphStore, embed: Callable[[list[str]], np.ndarray], *,
           dataset: str, total: int | None = None, max_batch_items: int = 5000,
           on_progress: OnProgress | None = None,
           bad_rows: list[InputError] | None = None, keep_open: bool = False,
           source: GraphSource | None = None) -> IngestReport:
    """Writes every record; `embed(texts)` returns normalised vectors, one row per text. `source`: recorded on every
    graph written (none: the records' graphs keep what an earlier ingest recorded).

    Each graph's change is opened (`GraphStore.begin_change`) before its first batch is written and closed once
    all are, so that readers move from the old contents to the new in one step; a run that fails leaves it open
    (run it again). `keep_open`: the caller closes it (`report.graph_ids`), after more changes of its own."""
    started = time.perf_counter()
    report = IngestReport(dataset=dataset, bad_rows=bad_rows if bad_rows is not None else [])
    # What this run has already handed to the writer: a node, relation text or edge that recurs in a later batch
    # (a KG's hubs recur in every one) is neither asked about nor written, nor counted, again. Asking would read
    # what the writers may not have committed yet (found missing; a new graph's rows are not asked at all), or
    # what they are changing at that moment, which Neo4j answers with TransientError.Transaction.Outdated.
    sent: set[tuple[str, ...]] = set()
    # Graphs that had nothing stored when this run met them: all they hold is what this run sent, so their rows
    # skip the question "stored already?" (a fifth of a first ingest's statements). An interrupted run leaves a
    # (:Graph) record behind (the first batch writes it), so the run that resumes it asks again.
    new_graphs: dict[str, bool] = {}
    opened: set[str] = set()
    done = 0
    # Two writers, so that Neo4j works on both cores: batch n's edges are written while batch n+1's nodes are
    # (their vectors, inserted into the HNSW index at commit, are half the write time) and batch n+2 is embedded
    # here. An edge needs its endpoints committed: batch n's edges wait for batch n's nodes, and the node writer
    # commits in order, so every earlier batch's nodes are in too. The edge writer alone creates relationships,
    # so two transactions never lock the same hub node in opposite orders.
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="gqa-nodes") as node_writer, \
            ThreadPoolExecutor(max_workers=1, thread_name_prefix="gqa-edges") as edge_writer:
        in_flight: list[Future] = []
        for chunk in _chunks(records, max_batch_items):
            report.batches += 1
            batch = _prepare_chunk(chunk, store, embed, report, sent, new_graphs)
            if source is not None:
                batch.graphs = [{**row, **source.fields()} for row in batch.graphs]
            opening = [g for g in batch.graphs if g["id"] not in opened]
            store.begin_change(opening)  # before any batch that writes to them is handed to the writers
            opened.update(g["id"] for g in opening)
            while len(in_flight) >= 2:  # at most two batches held in memory besides the one being embedded
                in_flight.pop(0).result()
            nodes, edges = _stages(batch)
            nodes_written = node_writer.submit(_write, store, nodes, report)
            in_flight.append(edge_writer.submit(_write_after, nodes_written, store, edges, report))
            done += len(chunk)
            notify(on_progress, "records", done, total, nodes_written=report.nodes_written,
                   edges_written=report.edges_written, texts_embedded=report.texts_embedded,
                   embed_seconds=report.embed_seconds, write_seconds=report.write_seconds)
        for pending in in_flight:
            pending.result()
    if not keep_open:
        store.end_change(sorted(opened), changed=report.changed)
    report.seconds = time.perf_counter() - started
    return report


def _stages(batch: WriteBatch) -> tuple[WriteBatch, WriteBatch]:
    """A batch as two transactions: its graph records, nodes, relation texts and questions, then its edges."""
    first = WriteBatch(graphs=batch.graphs, nodes=batch.nodes, node_vectors=batch.node_vectors,
                       relations=batch.relations, relation_vectors=batch.relation_vectors, questions=batch.questions)
    return first, WriteBatch(edges=batch.edges)


_report_lock = threading.Lock()


def _write(store: GraphStore, batch: WriteBatch, report: IngestReport) -> None:
    started = time.perf_counter()
    if batch.graphs or batch.nodes or batch.relations or batch.edges or batch.questions:
        store.write_batch(batch)
    with _report_lock:  # two writer threads add to the same counters
        report.write_seconds += time.perf_counter() - started
        report.nodes_written += len(batch.nodes)
        report.edges_written += len(batch.edges)


def _write_after(before: Future, store: GraphStore, batch: WriteBatch, report: IngestReport) -> None:
    before.result()  # re-raises the node writer's failure: these edges' endpoints may be missing
    _write(store, batch, report)


def _chunks(records: Iterable[Record], max_items: int) -> Iterator[list[Record]]:
    chunk: list[Record] = []
    size = 0
    for record in records:
        chunk.append(record)
        size += 1 + (len(record.nodes) + len(record.edges) if isinstance(record, GraphRecord) else 0)
        if size >= max_items:
            yield chunk
            chunk, size = [], 0
    if chunk:
        yield chunk


def _prepare_chunk(chunk: list[Record], store: GraphStore, embed, report: IngestReport,
                   sent: set[tuple[str, ...]], new_graphs: dict[str, bool]) -> WriteBatch:
    graphs: dict[str, dict] = {}
    nodes: dict[tuple[str, str], dict] = {}
    edges: dict[tuple[str, str, str, str], dict] = {}
    questions: list[dict] = []
    for record in chunk:
        if isinstance(record, GraphRecord):
            if record.graph_id not in graphs:
                graphs[record.graph_id] = {"id": record.graph_id, "dataset": record.dataset, "kind": record.kind}
            for node in record.nodes:
                nodes[(record.graph_id, node.key)] = {"graph": record.graph_id, "dataset": record.dataset,
                                                      "key": node.key, "text": node.text}
            for edge in record.edges:
                edges[(record.graph_id, edge.src, edge.text, edge.dst)] = {
                    "graph": record.graph_id, "dataset": record.dataset,
                    "src": edge.src, "text": edge.text, "dst": edge.dst}
            report.nodes_read += len(record.nodes)
            report.edges_read += len(record.edges)
        elif isinstance(record, QuestionRecord):
            questions.append({"dataset": record.dataset, "qid": record.qid, "text": record.text,
                              "answers": list(record.answers), "split": record.split, "graph": record.graph_id,
                              "topic_entities": list(record.topic_entities)})
            report.questions += 1
    report.graph_ids.update(graphs)
    report.graphs = len(report.graph_ids)
    unmet = [graph for graph in graphs if graph not in new_graphs]
    if unmet:  # before this chunk is written: the writer thread has written only earlier chunks
        known = store.known_graphs(unmet)
        new_graphs.update((graph, graph not in known) for graph in unmet)
    stored = lambda rows: [row for row in rows if not new_graphs[row["graph"]]]

    node_rows = [row for row in nodes.values() if ("node", row["graph"], row["key"], row["text"]) not in sent]
    edge_rows = [row for key, row in edges.items() if ("edge", *key) not in sent]
    relation_rows = list({(row["graph"], row["text"]): {"graph": row["graph"], "dataset": row["dataset"],
                                                         "text": row["text"]} for row in edge_rows
                          if ("relation", row["graph"], row["text"]) not in sent}.values())
    sent.update(("node", row["graph"], row["key"], row["text"]) for row in node_rows)
    sent.update(("relation", row["graph"], row["text"]) for row in relation_rows)
    sent.update(("edge", *key) for key in edges)
    have_nodes = store.embedded_nodes(stored([{**row, "i": i} for i, row in enumerate(node_rows)]))
    have_edges = store.embedded_edges(stored([{**row, "i": i} for i, row in enumerate(edge_rows)]))
    have_relations = store.embedded_relations(stored([{**row, "i": i} for i, row in enumerate(relation_rows)]))
    node_rows = [row for i, row in enumerate(node_rows) if i not in have_nodes]
    edge_rows = [row for i, row in enumerate(edge_rows) if i not in have_edges]
    relation_rows = [row for i, row in enumerate(relation_rows) if i not in have_relations]

    batch = WriteBatch(graphs=list(graphs.values()), questions=questions, edges=edge_rows)
    t0 = time.perf_counter()
    batch.nodes, batch.node_vectors = _with_vectors(node_rows, embed)
    batch.relations, batch.relation_vectors = _with_vectors(relation_rows, embed)
    report.embed_seconds += time.perf_counter() - t0
    report.texts_embedded += len(batch.node_vectors) + len(batch.relation_vectors)
    return batch


def _with_vectors(rows: list[dict], embed) -> tuple[list[dict], list[list[float]]]:
    """Each distinct text is sent once; rows refer to it by position."""
    texts = list(dict.fromkeys(row["text"] for row in rows))
    if not texts:
        return [], []
    slot = {text: i for i, text in enumerate(texts)}
    vectors = vectors_param(embed(texts))
    return [{**row, "vector": slot[row["text"]]} for row in rows], vectors


@dataclass
class IngestPlan:
    """A validated source: reading it again yields the same records, and `total` of them."""

    dataset: str
    records: Callable[[], Iterator[Record]]
    total: int
    bad_rows: list[InputError]
    sync: bool = False  # afterwards, delete what the source does not hold (`SourceIndex`)
    sync_graphs: tuple[str, ...] = ()  # graphs to sync even when the source wrote nothing to them
    source: GraphSource | None = None  # recorded on every graph written


def plan_ingest(dataset: str, source: str | None = None, *, limit: int | None = None, skip_bad: bool = False,
                sync: bool = False, **options) -> IngestPlan:
    """Reads the whole source once without writing: a bad row fails here, unless `skip_bad` collects it.
    `sync`: the plan also deletes what the source does not hold (from the graph `options["graph"]` names, too,
    when the source turns out empty)."""
    from gretriever_neo4j.loaders import get_loader

    if sync and limit is not None:
        raise ConfigError("--sync deletes what the source does not hold: it cannot be combined with --limit")
    graph = options.get("graph")
    sync_graphs = (graph.strip(),) if sync and isinstance(graph, str) and graph.strip() else ()
    loader = get_loader(dataset)
    options = {k: v for k, v in options.items() if v is not None}
    bad_rows: list[InputError] = []

    def records(on_bad) -> Iterator[Record]:
        return loader.read(source, limit=limit, on_bad_row=on_bad if skip_bad else None, **options)

    total = count_records(records(bad_rows.append))
    return IngestPlan(loader.DATASET, lambda: records(lambda _error: None), total, bad_rows, sync, sync_graphs,
                      describe_source(loader.DATASET, source, options))


def execute_plan(plan: IngestPlan, store: GraphStore, embedder, *, reembed: bool = False,
                 max_batch_items: int = 5000, on_progress: OnProgress | None = None) -> IngestReport:
    """Prepares the schema for the embedder, then writes the planned records batch by batch.

    A sync plan: afterwards, delete from every graph the source wrote (and from `plan.sync_graphs`, for a source
    that may be empty) the edges, nodes and questions it no longer holds (`SourceIndex`)."""
    store.ensure_schema(embedder.name, embedder.dim, reembed=reembed)
    if reembed:
        store.reembed(embedder.embed)
    before = embedder.texts_embedded
    index = SourceIndex(plan.sync_graphs) if plan.sync else None
    records = index.watch(plan.records()) if index is not None else plan.records()
    swept = sorted(store.known_graphs(list(plan.sync_graphs)))  # a sync may empty them without writing to them
    store.begin_change([{"id": graph} for graph in swept])
    report = ingest(records, store, embedder.embed, dataset=plan.dataset, total=plan.total,
                    max_batch_items=max_batch_items, on_progress=on_progress, bad_rows=plan.bad_rows,
                    keep_open=True, source=plan.source)
    report.texts_embedded = embedder.texts_embedded - before
    if index is not None:
        index.sweep(store, report)
    store.await_indexes()
    # Readers see the whole change at once: the upserts, the sweep and the vector indexes caught up.
    store.end_change(sorted(report.graph_ids | set(swept)), changed=report.changed)
    return report


class SourceIndex:
    """What a source holds, per graph: node keys, edge identities (src, text, dst), question ids.

    A sync upserts the source first (unchanged items are skipped, changed texts re-embedded), then compares
    the stored graph with this index and deletes the difference, edges before nodes. Both steps are idempotent
    and the index is rebuilt from the source on every run, so a sync interrupted anywhere and run again ends
    with exactly the source's nodes and edges."""

    def __init__(self, graphs: Iterable[str] = ()):
        self.nodes: dict[str, set[str]] = {graph: set() for graph in graphs}
        self.edges: dict[str, set[tuple[str, str, str]]] = {graph: set() for graph in self.nodes}
        self.questions: dict[tuple[str, str], set[str]] = {}

    def watch(self, records: Iterable[Record]) -> Iterator[Record]:
        for record in records:
            if isinstance(record, GraphRecord):
                self.nodes.setdefault(record.graph_id, set()).update(node.key for node in record.nodes)
                self.edges.setdefault(record.graph_id, set()).update(
                    (edge.src, edge.text, edge.dst) for edge in record.edges)
            elif isinstance(record, QuestionRecord):
                self.questions.setdefault((record.dataset, record.graph_id), set()).add(record.qid)
            yield record

    def sweep(self, store: GraphStore, report: IngestReport) -> None:
        for graph, keys in self.nodes.items():
            edges = self.edges.get(graph, set())
            stale_edges = [{"src": row["src"], "text": row["text"], "dst": row["dst"]}
                           for row in store.kg_triples(graph) if (row["src"], row["text"], row["dst"]) not in edges]
            report.edges_deleted += store.delete_edges(graph, stale_edges)
            stale_nodes = [row["key"] for row in store.kg_nodes(graph, with_embeddings=False) if row["key"] not in keys]
            report.nodes_deleted += store.delete_nodes(graph, stale_nodes)
        for (dataset, graph), qids in self.questions.items():
            report.questions_deleted += store.delete_questions_except(dataset, graph, qids)


def ingest_dataset(store: GraphStore, embedder, dataset: str, source: str | None = None, *,
                   limit: int | None = None, skip_bad: bool = False, reembed: bool = False,
                   max_batch_items: int = 5000, on_progress: OnProgress | None = None,
                   sync: bool = False, **options) -> IngestReport:
    plan = plan_ingest(dataset, source, limit=limit, skip_bad=skip_bad, sync=sync, **options)
    return execute_plan(plan, store, embedder, reembed=reembed, max_batch_items=max_batch_items,
                        on_progress=on_progress)

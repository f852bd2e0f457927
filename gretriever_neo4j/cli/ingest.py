"""`gqa ingest DATASET` and `gqa ingest questions`: loading graphs and questions into Neo4j, with a report."""

from __future__ import annotations

import json
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Optional

import typer
from rich.table import Table

from gretriever_neo4j.cli.app import app, connection_settings, console, int_list, store_session
from gretriever_neo4j.errors import ConfigError


@app.command()
def ingest(
    dataset: str = typer.Argument(..., help="webqsp | explagraphs | scenegraphs | metaqa | csv | triples | rdf | "
                                  "neo4j | questions (a questions file for --graph)"),
    source: Optional[str] = typer.Option(None, "--source", "-s", help="hub id, folder or file (triples: the file)"),
    limit: Optional[int] = typer.Option(None, "--limit", min=0, help="only the first N samples, for quick runs"),
    embedder: Optional[str] = typer.Option(None, "--embedder", help="sentence-transformers model id or path"),
    reembed: bool = typer.Option(False, "--reembed", help="re-embed every stored text if the embedder changed"),
    skip_bad: bool = typer.Option(False, "--skip-bad", help="skip malformed rows and write them to a report"),
    bad_report: Path = typer.Option(Path("gqa-bad-rows.tsv"), "--bad-report", help="where --skip-bad writes bad rows"),
    nodes: Optional[Path] = typer.Option(None, "--nodes", help="csv: nodes file (node_id,node_attr)"),
    edges: Optional[Path] = typer.Option(None, "--edges", help="csv: edges file (src,edge_attr,dst)"),
    graph: Optional[str] = typer.Option(None, "--graph", help="csv/triples: name of the stored graph; questions: "
                                        "the stored graph they are asked over"),
    split: Optional[str] = typer.Option(None, "--split", help="webqsp/questions: a split for every question, or "
                                        "seeded fractions such as train=0.6,val=0.2,test=0.2 (see --seed)"),
    seed: Optional[int] = typer.Option(None, "--seed", help="seed of a --split given as fractions [default 42]"),
    sync: bool = typer.Option(False, "--sync", help="make the stored graph equal to the source: also delete the "
                              "nodes, edges (and questions) it no longer holds"),
    link: bool = typer.Option(True, "--link/--no-link", help="questions: link questions without topic entities "
                              "to the graph's nodes"),
    hops: Optional[str] = typer.Option(None, "--hops", help="metaqa: e.g. 1,2,3"),
    batch_size: int = typer.Option(5000, "--batch-size", min=1, help="nodes+edges per transaction"),
    lang: Optional[str] = typer.Option(None, "--lang", help="rdf: the language of labels and literals [default en]"),
    label_predicate: Optional[list[str]] = typer.Option(None, "--label-predicate", help="rdf: an IRI whose values "
                                                        "name nodes, in order of preference (repeatable) [default "
                                                        "rdfs:label, skos:prefLabel, schema:name]"),
    source_uri: Optional[str] = typer.Option(None, "--uri", help="neo4j: the source server [default: gqa's own]"),
    source_database: Optional[str] = typer.Option(None, "--database", help="neo4j: the source database [default: "
                                                  "gqa's own]"),
    text_property: Optional[list[str]] = typer.Option(None, "--text-property", help="neo4j: Label=property, the "
                                                      "property that names nodes of a label (repeatable) [default "
                                                      "name, else title]"),
    query: Optional[str] = typer.Option(None, "--query", help="neo4j: a read-only Cypher statement returning rows "
                                        "of (head, relation, tail) texts, instead of the whole source graph"),
    as_json: bool = typer.Option(False, "--json", help="print the summary as JSON"),
) -> None:
    """Load a dataset or your own graph into Neo4j, embedding every node and edge text once."""
    if dataset == "questions":
        ingest_questions_command(graph=graph, source=source, limit=limit, embedder=embedder, skip_bad=skip_bad,
                                 bad_report=bad_report, split=split, seed=seed, sync=sync, link=link,
                                 as_json=as_json)
        return
    options = {"nodes": nodes, "edges": edges, "graph": graph, "split": split, "seed": seed,
               "hops": int_list(hops, "--hops") if hops else None, "lang": lang, "labels": label_predicate or None}
    if dataset == "neo4j":
        ingest_neo4j_command(graph=graph, source_uri=source_uri, source_database=source_database,
                             text_property=text_property or [], query=query, limit=limit, embedder=embedder,
                             reembed=reembed, skip_bad=skip_bad, bad_report=bad_report, sync=sync,
                             batch_size=batch_size, as_json=as_json)
        return
    ingest_dataset_command(dataset, source, options=options, limit=limit, embedder=embedder, reembed=reembed,
                           skip_bad=skip_bad, bad_report=bad_report, sync=sync, batch_size=batch_size,
                           as_json=as_json)


def ingest_dataset_command(dataset: str, source: Optional[str], *, options: Optional[dict] = None,
                           limit: Optional[int] = None, embedder: Optional[str] = None, reembed: bool = False,
                           skip_bad: bool = False, bad_report: Path = Path("gqa-bad-rows.tsv"), sync: bool = False,
                           batch_size: int = 5000, as_json: bool = False) -> None:
    """`gqa ingest DATASET`: a loader's source validated whole, then written with progress bars and its report
    printed; `options` are the loader's own (graph, split, hops…). `gqa quickstart` runs it too."""
    from gretriever_neo4j.embedding.embedder import Embedder
    from gretriever_neo4j.ingest.graphs import plan_ingest

    with console.status(f"reading {dataset} (validating every row before writing)…"):
        plan = plan_ingest(dataset, source, limit=limit, skip_bad=skip_bad, sync=sync, **(options or {}))
    with console.status(f"loading embedder {embedder or 'all-MiniLM-L6-v2'}…"):
        model = Embedder(embedder)
    with store_session() as store:
        run_plan(plan, store, model, f"ingest {dataset}", reembed=reembed, batch_size=batch_size, sync=sync,
                 as_json=as_json, bad_report=bad_report)


def run_plan(plan, store, model, title: str, *, reembed: bool, batch_size: int, sync: bool, as_json: bool,
             bad_report: Path) -> None:
    """Writes a validated plan with progress bars, then prints its report."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    from gretriever_neo4j.ingest.graphs import execute_plan

    columns = (TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
               TextColumn("{task.fields[rate]}"), TimeRemainingColumn())
    with Progress(*columns, console=console, transient=not sys.stdout.isatty()) as bars:
        task = bars.add_task(title, total=plan.total, rate="")
        started = time.perf_counter()

        def on_progress(p) -> None:
            elapsed, n = max(time.perf_counter() - started, 1e-9), p.info
            bars.update(task, completed=p.done,
                        rate=f"{n['nodes_written'] / elapsed:,.0f} nodes/s "
                             f"{n['edges_written'] / elapsed:,.0f} edges/s · "
                             f"embed {n['embed_seconds']:,.0f} s · write {n['write_seconds']:,.0f} s")

        report = execute_plan(plan, store, model, reembed=reembed, max_batch_items=batch_size,
                              on_progress=on_progress)
    counts = (("graphs", report.graphs), ("nodes read", report.nodes_read),
              ("edges read", report.edges_read), ("questions", report.questions),
              ("nodes written", report.nodes_written), ("edges written", report.edges_written),
              ("texts embedded", report.texts_embedded), ("bad rows", len(report.bad_rows)),
              ("seconds embedding", round(report.embed_seconds)), ("seconds writing", round(report.write_seconds)),
              *((("nodes deleted", report.nodes_deleted), ("edges deleted", report.edges_deleted),
                 ("questions deleted", report.questions_deleted)) if sync else ()))
    print_ingest_report(report, title, [(label, f"{value:,}") for label, value in counts],
                        as_json=as_json, bad_report=bad_report)


def ingest_neo4j_command(*, graph: Optional[str], source_uri: Optional[str], source_database: Optional[str],
                         text_property: list[str], query: Optional[str], limit: Optional[int],
                         embedder: Optional[str], reembed: bool, skip_bad: bool, bad_report: Path, sync: bool,
                         batch_size: int, as_json: bool) -> None:
    """`gqa ingest neo4j --graph NAME`: a graph already in Neo4j (gqa's own database, or --uri/--database),
    read-only; see `ingest.neo4j_source`."""
    import os
    from contextlib import ExitStack

    from gretriever_neo4j.embedding.embedder import Embedder
    from gretriever_neo4j.ingest.neo4j_source import parse_text_properties, plan_neo4j_ingest
    from gretriever_neo4j.store.source import open_source

    if not graph:
        raise ConfigError("ingest neo4j needs --graph NAME, the name the graph is stored under")
    own = connection_settings()
    other_server = source_uri is not None and source_uri != own.uri
    settings = replace(own, uri=source_uri or own.uri, database=source_database or own.database,
                       **({"user": os.environ.get("NEO4J_SOURCE_USER", own.user),
                           "password": os.environ.get("NEO4J_SOURCE_PASSWORD", own.password)} if other_server else {}))
    with ExitStack() as stack:
        store = stack.enter_context(store_session())
        source = stack.enter_context(open_source(settings))
        with console.status(f"reading {source.describe} (every node and relationship, before writing)…"):
            plan = plan_neo4j_ingest(source, graph=graph, text_properties=parse_text_properties(text_property),
                                     query=query, limit=limit, skip_bad=skip_bad, sync=sync,
                                     same_database=not other_server and settings.database == own.database)
        with console.status(f"loading embedder {embedder or 'all-MiniLM-L6-v2'}…"):
            model = Embedder(embedder)
        run_plan(plan, store, model, f"ingest neo4j into {graph}", reembed=reembed, batch_size=batch_size,
                 sync=sync, as_json=as_json, bad_report=bad_report)


def print_ingest_report(report, title: str, rows, *, as_json: bool, bad_report: Path, note: str = "") -> None:
    """How every ingest command ends: bad rows written to their report, then the report as JSON or as a table of
    (label, value) rows with its seconds, and `note` after it."""
    if report.bad_rows:
        write_bad_rows(bad_report, report.bad_rows)
    if as_json:
        console.print_json(json.dumps(report.to_dict()))
        return
    table = Table(title=title, show_header=False)
    table.add_column("", style="bold")
    table.add_column("", justify="right")
    for label, value in rows:
        table.add_row(label, value)
    table.add_row("seconds", f"{report.seconds:.1f}")
    console.print(table)
    if note:
        console.print(note)
    if report.bad_rows:
        console.print(f"[yellow]{len(report.bad_rows)} bad rows skipped; listed in {bad_report}[/]")


def write_bad_rows(path: Path, bad_rows) -> None:
    with open(path, "w", encoding="utf-8") as out:
        out.write("source\tline\tfield\treason\n")
        for bad in bad_rows:
            out.write(f"{bad.source or ''}\t{bad.line or ''}\t{bad.field or ''}\t{bad.reason}\n")


# -- quickstart -----------------------------------------------------------------------------------


def ingest_questions_command(*, graph: Optional[str], source: Optional[str], limit: Optional[int],
                             embedder: Optional[str], skip_bad: bool, bad_report: Path, split: Optional[str],
                             seed: Optional[int], sync: bool, link: bool, as_json: bool) -> None:
    """`gqa ingest questions --graph NAME --source FILE`: see `questions_ingest`."""
    from gretriever_neo4j.embedding.embedder import Embedder
    from gretriever_neo4j.ingest.questions import ingest_questions

    if not graph:
        raise ConfigError("ingest questions needs --graph NAME: the stored graph the questions are asked over")
    if source is None:
        raise ConfigError("ingest questions needs --source FILE (TSV, CSV or JSONL with question and answers)")
    with console.status(f"loading embedder {embedder or 'all-MiniLM-L6-v2'}…"):
        model = Embedder(embedder)
    with store_session() as store, console.status("reading and linking questions…") as status:
        def progress(p) -> None:
            status.update(f"linking questions to {graph}: {p.done:,}/{p.total:,}")

        report = ingest_questions(store, model, graph, source, limit=limit, skip_bad=skip_bad, split=split,
                                  seed=seed, sync=sync, link=link, on_progress=progress)
    linked = report.linked_by_name + report.linked_by_similarity
    rows = [("questions", f"{report.questions:,}"),
            ("splits", ", ".join(f"{name}: {n:,}" for name, n in sorted(report.splits.items())) or "-"),
            ("topic entities given", f"{report.topics_given:,}"
             + (f" ({report.given_topics_not_nodes:,} names are not nodes)" if report.given_topics_not_nodes else "")),
            ("linked here", f"{linked:,} ({report.linked_by_name:,} by name, {report.linked_by_similarity:,} by "
                            f"similarity); not linked {report.not_linked:,}"),
            ("answers that are nodes", f"{report.answers_as_nodes:,} of {report.answers:,}; questions with an "
                                       f"answer node {report.questions_with_answer_node:,}"),
            ("questions written", f"{report.written:,}"), ("bad rows", f"{len(report.bad_rows):,}")]
    if sync:
        rows.append(("questions deleted", f"{report.deleted:,}"))
    print_ingest_report(report, f"ingest questions over {report.graph}", rows, as_json=as_json, bad_report=bad_report,
                        note=f"stored as dataset {report.dataset!r}: `gqa train --graph {report.graph}` trains on them")

"""`gqa ingest questions` (its output) and `gqa drop`: managing the graphs a user loaded."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from .cli import app, console, print_ingest_report, store_session
from .errors import ConfigError, unknown_graph


def ingest_questions_command(*, graph: Optional[str], source: Optional[str], limit: Optional[int],
                             embedder: Optional[str], skip_bad: bool, bad_report: Path, split: Optional[str],
                             seed: Optional[int], sync: bool, link: bool, as_json: bool) -> None:
    """`gqa ingest questions --graph NAME --source FILE`: see `questions_ingest`."""
    from .embed import Embedder
    from .questions_ingest import ingest_questions

    if not graph:
        raise ConfigError("ingest questions needs --graph NAME: the stored graph the questions are asked over")
    if source is None:
        raise ConfigError("ingest questions needs --source FILE (TSV, CSV or JSONL with question and answers)")
    with console.status(f"loading embedder {embedder or 'all-MiniLM-L6-v2'}…"):
        model = Embedder(embedder)
    with store_session() as store, console.status("reading and linking questions…") as status:
        def progress(stage: str, done: int, total: int) -> None:
            status.update(f"linking questions to {graph}: {done:,}/{total:,}")

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


@app.command()
def drop(
    graph: str = typer.Argument(..., help="the stored graph to remove (see `gqa stats`)"),
    yes: bool = typer.Option(False, "--yes", "-y", help="do not ask for confirmation"),
    batch: int = typer.Option(10_000, "--batch-size", min=1, help="items deleted per transaction"),
) -> None:
    """Remove a graph: its nodes and edges (their vectors leave the indexes with them), the questions asked over
    it and its recorded retrievals, in batched transactions."""
    from .registry import models_dir

    with store_session() as store:
        counts = store.graph_counts(graph)
        if not counts["recorded"] and not any(counts[k] for k in ("nodes", "edges", "questions", "retrievals")):
            raise unknown_graph(graph)
        summary = (f"{counts['nodes']:,} nodes, {counts['edges']:,} edges, {counts['questions']:,} questions and "
                   f"{counts['retrievals']:,} recorded retrievals")
        if not yes and not typer.confirm(f"Remove graph {graph!r} ({summary})?", default=False):
            console.print("nothing removed")
            raise typer.Exit(1)
        with console.status(f"removing {graph}…") as status:
            deleted = store.drop_graph(graph, batch=batch,
                                       on_progress=lambda kind, n: status.update(f"removing {graph}: {n:,} {kind}"))
    console.print(f"[green]removed graph {graph!r}[/]: {deleted['nodes']:,} nodes, {deleted['edges']:,} edges, "
                  f"{deleted['questions']:,} questions, {deleted['retrievals']:,} retrievals")
    trained = models_dir(graph)
    if trained.exists():
        console.print(f"models trained for it are kept in {trained} (delete the folder to remove them)")

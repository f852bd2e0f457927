"""`gqa stats` and `gqa drop`: what is stored, graph by graph, and removing a graph."""

from __future__ import annotations

import json

import typer
from rich.table import Table

from gretriever_neo4j.cli.app import app, console, store_session
from gretriever_neo4j.errors import unknown_graph


@app.command()
def drop(
    graph: str = typer.Argument(..., help="the stored graph to remove (see `gqa stats`)"),
    yes: bool = typer.Option(False, "--yes", "-y", help="do not ask for confirmation"),
    batch: int = typer.Option(10_000, "--batch-size", min=1, help="items deleted per transaction"),
) -> None:
    """Remove a graph: its nodes and edges (their vectors leave the indexes with them), the questions asked over
    it and its recorded retrievals, in batched transactions."""
    from gretriever_neo4j.artifacts.registry import models_dir

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
                                       on_progress=lambda p: status.update(f"removing {graph}: {p.done:,} {p.stage}"))
    console.print(f"[green]removed graph {graph!r}[/]: {deleted['nodes']:,} nodes, {deleted['edges']:,} edges, "
                  f"{deleted['questions']:,} questions, {deleted['retrievals']:,} retrievals")
    trained = models_dir(graph)
    if trained.exists():
        console.print(f"models trained for it are kept in {trained} (delete the folder to remove them)")


@app.command()
def stats(as_json: bool = typer.Option(False, "--json")) -> None:
    """What is stored, graph by graph (per-sample datasets as one row each), where it was read from, and the models
    trained for it."""
    from gretriever_neo4j.qa.overview import graph_rows

    with store_session() as store:
        scanned = store.statistics()
        data, rows = scanned["datasets"], graph_rows(scanned["graphs"])
        embedder = store.embedder_info()
    if as_json:
        console.print_json(json.dumps({"embedder": embedder and {"name": embedder[0], "dim": embedder[1]},
                                       "graphs": rows, "datasets": data}))
        return
    table = Table(title="gqa stats" + (f" — embedder {embedder[0]} ({embedder[1]}-d)" if embedder else ""))
    for column in ("graph", "dataset", "kind", "source", "nodes", "edges", "embedded", "questions train/val/test",
                   "trained"):
        table.add_column(column, justify="left" if column in ("graph", "dataset", "kind", "source", "trained")
                         else "right")
    for row in rows:
        questions = _splits(row["questions"])
        name = row["graph"] or f"({row['graphs']:,} graphs)"
        models = row["models"]
        trained = (f"{', '.join(models['parts'])} ({models['trained_at'][:10]})" if models else "—")
        table.add_row(name, str(row["dataset"] or ""), str(row["kind"] or ""), row.get("source") or "—",
                      f"{row['nodes']:,}",
                      f"{row['edges']:,}", f"{row['embedded_nodes'] + row['embedded_edges']:,}", questions, trained)
    if not rows:
        table.caption = "the database holds no graph yet: try `gqa ingest csv --nodes … --edges … --graph NAME`"
    console.print(table)


def _splits(questions: dict[str, int]) -> str:
    """'1,659/553/554' for train/val/test, other splits named after them."""
    if not questions:
        return "—"
    text = "/".join(f"{questions.get(split, 0):,}" for split in ("train", "val", "test"))
    others = [f"{split} {n:,}" for split, n in sorted(questions.items()) if split not in ("train", "val", "test")]
    return " ".join([text] + others)



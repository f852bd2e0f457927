"""`gqa db start | stop | status | logs`: the bundled Neo4j server."""

from __future__ import annotations

import json
from typing import Optional

import typer
from rich.table import Table

from gretriever_neo4j.cli.app import app, console, store_session

db_app = typer.Typer(help="Run the bundled Neo4j server (assembled from Maven Central).", no_args_is_help=True)
app.add_typer(db_app, name="db")


@db_app.command("start")
def db_start(heap: Optional[str] = typer.Option(None, help="JVM heap, e.g. 2g [env GQA_NEO4J_HEAP]"),
             pagecache: Optional[str] = typer.Option(None,
                                                     help="page cache, e.g. 2g [env GQA_NEO4J_PAGECACHE]")) -> None:
    """Download Neo4j 5.26 once, configure it for 127.0.0.1 with auth, start it, wait for Bolt."""
    from gretriever_neo4j import server

    with console.status("starting Neo4j (the first start downloads ~140 MB of jars from Maven Central)…"):
        status = server.start(server.default_layout(), heap=heap, pagecache=pagecache)
    _print_status(status)
    _migrate(only_if_needed=True)


@db_app.command("migrate")
def db_migrate(batch: int = typer.Option(10_000, "--batch-size", min=1, help="items per transaction")) -> None:
    """Bring a store written by an earlier gqa to this version's layout (one vector per relation text instead of
    one per edge); re-runnable, counts checked. `gqa db start` does it on its own when needed."""
    _migrate(only_if_needed=False, batch=batch)


def _migrate(*, only_if_needed: bool, batch: int = 10_000) -> None:
    from gretriever_neo4j.store.migrate import migrate

    with store_session() as store:
        if only_if_needed and not store.needs_migration():
            if store.node_index_outdated():  # reads are as good: rebuilding it is the user's call (minutes)
                console.print("the node vector index was built by an earlier gqa: `gqa db migrate` rebuilds it "
                              "for faster ingest (until it is online, vector seeds are not found)")
            return
        with console.status("migrating the store…") as status:
            report = migrate(store, batch=batch, on_progress=lambda p: status.update(
                f"migrating: {p.stage} {p.done:,}" + (f" of {p.total:,}" if p.total else "")))
    if report.node_index_rebuilt:
        console.print("[green]rebuilt[/] the node vector index with this version's HNSW settings")
    if not report.migrated:
        console.print(f"the store is at layout {report.layout_after or '(empty)'}: nothing to migrate")
        return
    before, after = report.before, report.after
    console.print(f"[green]migrated[/]: {after['edges']:,} edges (as before) now share "
                  f"{after['relation_vectors']:,} relation vectors instead of carrying "
                  f"{before['edge_vectors']:,} copies")


@db_app.command("stop")
def db_stop() -> None:
    """Stop the bundled Neo4j server (data is kept)."""
    from gretriever_neo4j import server

    server.stop(server.default_layout())
    console.print("Neo4j stopped.")


@db_app.command("status")
def db_status(as_json: bool = typer.Option(False, "--json")) -> None:
    """Is the bundled server running, where, and with what memory."""
    from gretriever_neo4j import server

    status = server.status(server.default_layout())
    if as_json:
        console.print_json(json.dumps(_status_dict(status), default=str))
    else:
        _print_status(status)
    if not status.running:
        raise typer.Exit(3)


@db_app.command("logs")
def db_logs(lines: int = typer.Option(40, "--lines", "-n", min=1)) -> None:
    """The last lines of the bundled server's logs."""
    from gretriever_neo4j import server

    console.print(server.tail_logs(server.default_layout(), lines=lines), markup=False, highlight=False)


def _status_dict(status) -> dict:
    from dataclasses import asdict, is_dataclass

    return asdict(status) if is_dataclass(status) else dict(status)


def _print_status(status) -> None:
    table = Table(show_header=False, box=None)
    for key, value in _status_dict(status).items():
        table.add_row(f"[bold]{key}[/]", str(value))
    console.print(table)



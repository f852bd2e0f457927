"""`gqa db start | stop | status | logs`: the bundled Neo4j server."""

from __future__ import annotations

import json
from typing import Optional

import typer
from rich.table import Table

from gretriever_neo4j.cli.app import app, console

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



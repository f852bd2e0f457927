"""`gqa`: a thin command line over the library. A user's mistake (a GqaError) becomes one red line and exit
code 1; a failure of ours, a log id and exit code 2 (`_fail`)."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from rich.table import Table

from .errors import GqaError
from .settings import Neo4jSettings

console = Console(stderr=False)
err_console = Console(stderr=True)

app = typer.Typer(name="gqa", help="Question answering over textual graphs stored in Neo4j (G-Retriever).",
                  no_args_is_help=True, pretty_exceptions_enable=False, add_completion=False)
db_app = typer.Typer(help="Run the bundled Neo4j server (assembled from Maven Central).", no_args_is_help=True)
app.add_typer(db_app, name="db")


class Connection:
    overrides: dict[str, Optional[str]] = {}

    @classmethod
    def settings(cls) -> Neo4jSettings:
        return Neo4jSettings.from_env(**cls.overrides)


@app.callback()
def _connection_options(
    uri: Optional[str] = typer.Option(None, "--uri", help="Bolt URI [env NEO4J_URI; default bolt://127.0.0.1:7687]"),
    user: Optional[str] = typer.Option(None, "--user", help="[env NEO4J_USER; default neo4j]"),
    password: Optional[str] = typer.Option(None, "--password", help="[env NEO4J_PASSWORD; default: the bundled server's]"),
    database: Optional[str] = typer.Option(None, "--database", help="[env NEO4J_DATABASE; default neo4j]"),
    verbose: bool = typer.Option(False, "--verbose", help="show library warnings and debug logs [env GQA_VERBOSE=1]"),
) -> None:
    Connection.overrides = {"uri": uri, "user": user, "password": password, "database": database}


def store_session():
    """One driver for this command (the store is the only module that talks to Neo4j)."""
    from .store import connected

    return connected(Connection.settings())


def nullcontext():
    from contextlib import nullcontext as _null

    return _null()


# -- db -------------------------------------------------------------------------------------------
@db_app.command("start")
def db_start(heap: Optional[str] = typer.Option(None, help="JVM heap, e.g. 2g [env GQA_NEO4J_HEAP]"),
             pagecache: Optional[str] = typer.Option(None, help="page cache, e.g. 2g [env GQA_NEO4J_PAGECACHE]")) -> None:
    """Download Neo4j 5.26 once, configure it for 127.0.0.1 with auth, start it, wait for Bolt."""
    from . import neo4j_server

    with console.status("starting Neo4j (the first start downloads ~140 MB of jars from Maven Central)…"):
        status = neo4j_server.start(neo4j_server.default_layout(), heap=heap, pagecache=pagecache)
    _print_status(status)


@db_app.command("stop")
def db_stop() -> None:
    """Stop the bundled Neo4j server (data is kept)."""
    from . import neo4j_server

    neo4j_server.stop(neo4j_server.default_layout())
    console.print("Neo4j stopped.")


@db_app.command("status")
def db_status(as_json: bool = typer.Option(False, "--json")) -> None:
    """Is the bundled server running, where, and with what memory."""
    from . import neo4j_server

    status = neo4j_server.status(neo4j_server.default_layout())
    if as_json:
        console.print_json(json.dumps(_status_dict(status), default=str))
    else:
        _print_status(status)
    if not status.running:
        raise typer.Exit(3)


@db_app.command("logs")
def db_logs(lines: int = typer.Option(40, "--lines", "-n", min=1)) -> None:
    """The last lines of the bundled server's logs."""
    from . import neo4j_server

    console.print(neo4j_server.tail_logs(neo4j_server.default_layout(), lines=lines), markup=False, highlight=False)


def _status_dict(status) -> dict:
    from dataclasses import asdict, is_dataclass

    return asdict(status) if is_dataclass(status) else dict(status)


def _print_status(status) -> None:
    table = Table(show_header=False, box=None)
    for key, value in _status_dict(status).items():
        table.add_row(f"[bold]{key}[/]", str(value))
    console.print(table)


# -- ingest ---------------------------------------------------------------------------------------
@app.command()
def ingest(
    dataset: str = typer.Argument(..., help="webqsp | explagraphs | scenegraphs | metaqa | csv | triples | "
                                  "questions (a questions file for --graph)"),
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
    as_json: bool = typer.Option(False, "--json", help="print the summary as JSON"),
) -> None:
    """Load a dataset or your own graph into Neo4j, embedding every node and edge text once."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    from .embed import Embedder
    from .ingest import execute_plan, plan_ingest

    if dataset == "questions":
        from .cli_graphs import ingest_questions_command

        ingest_questions_command(graph=graph, source=source, limit=limit, embedder=embedder, skip_bad=skip_bad,
                                 bad_report=bad_report, split=split, seed=seed, sync=sync, link=link,
                                 as_json=as_json)
        return
    options = {"nodes": nodes, "edges": edges, "graph": graph, "split": split, "seed": seed,
               "hops": _int_list(hops, "--hops") if hops else None}
    with console.status(f"reading {dataset} (validating every row before writing)…"):
        plan = plan_ingest(dataset, source, limit=limit, skip_bad=skip_bad, sync=sync, **options)
    with console.status(f"loading embedder {embedder or 'all-MiniLM-L6-v2'}…"):
        model = Embedder(embedder)
    columns = (TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
               TextColumn("{task.fields[rate]}"), TimeRemainingColumn())
    with store_session() as store, Progress(*columns, console=console, transient=not sys.stdout.isatty()) as bars:
        task = bars.add_task(f"ingest {dataset}", total=plan.total, rate="")
        started = time.perf_counter()

        def on_progress(p) -> None:
            elapsed = max(time.perf_counter() - started, 1e-9)
            bars.update(task, completed=p.records_done,
                        rate=f"{p.nodes_written / elapsed:,.0f} nodes/s {p.edges_written / elapsed:,.0f} edges/s · "
                             f"embed {p.embed_seconds:,.0f} s · write {p.write_seconds:,.0f} s")

        report = execute_plan(plan, store, model, reembed=reembed, max_batch_items=batch_size,
                              on_progress=on_progress)
    counts = (("graphs", report.graphs), ("nodes read", report.nodes_read),
              ("edges read", report.edges_read), ("questions", report.questions),
              ("nodes written", report.nodes_written), ("edges written", report.edges_written),
              ("texts embedded", report.texts_embedded), ("bad rows", len(report.bad_rows)),
              ("seconds embedding", round(report.embed_seconds)), ("seconds writing", round(report.write_seconds)),
              *((("nodes deleted", report.nodes_deleted), ("edges deleted", report.edges_deleted),
                 ("questions deleted", report.questions_deleted)) if sync else ()))
    print_ingest_report(report, f"ingest {dataset}", [(label, f"{value:,}") for label, value in counts],
                        as_json=as_json, bad_report=bad_report)


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
@app.command()
def quickstart(
    question: str = typer.Option("what else did ben franklin invent?", "--question"),
    retrieve_only: bool = typer.Option(False, "--retrieve-only"),
) -> None:
    """Start Neo4j, load the bundled WebQSP sample, and answer a question from it (the README's first command)."""
    from importlib import resources

    from . import neo4j_server

    if not os.environ.get("NEO4J_URI"):
        with console.status("starting Neo4j (the first start downloads ~140 MB of jars from Maven Central)…"):
            status = neo4j_server.start(neo4j_server.default_layout())
        console.print(f"[green]Neo4j is up[/]: {status.bolt_uri}, Browser at {status.browser_url}")
    sample = resources.files("gretriever_neo4j") / "samples" / "webqsp_sample.jsonl"
    ingest(dataset="webqsp", source=str(sample), limit=None, embedder=None, reembed=False, skip_bad=False,
           bad_report=Path("gqa-bad-rows.tsv"), nodes=None, edges=None, graph=None, split=None, seed=None,
           sync=False, link=True, hops=None, batch_size=5000, as_json=False)
    stats(as_json=False)
    console.rule(f"gqa ask {question!r}")
    from .cli_ask import ask

    ask(question=question, graph="webqsp", questions=None, out=None, retrieve_only=retrieve_only, free_text=False,
        reader_only=False, llm_when="auto", checkpoint=None, reader=None, llm=None, device="auto", embedder=None, seed_k=None,
        seed_k_edges=None, hops=None, fanout=None, max_nodes=None, max_edges=None, topk=None, topk_e=None,
        cost_e=None, retriever="auto", retriever_checkpoint=None, as_json=False, subgraph=True)


# -- stats ----------------------------------------------------------------------------------------
@app.command()
def stats(as_json: bool = typer.Option(False, "--json")) -> None:
    """What is stored, graph by graph (per-sample datasets as one row each), with the models trained for it."""
    from .overview import graph_rows

    with store_session() as store:
        scanned = store.statistics()
        data, rows = scanned["datasets"], graph_rows(scanned["graphs"])
        embedder = store.embedder_info()
    if as_json:
        console.print_json(json.dumps({"embedder": embedder and {"name": embedder[0], "dim": embedder[1]},
                                       "graphs": rows, "datasets": data}))
        return
    table = Table(title="gqa stats" + (f" — embedder {embedder[0]} ({embedder[1]}-d)" if embedder else ""))
    for column in ("graph", "dataset", "kind", "nodes", "edges", "embedded", "questions train/val/test",
                   "trained"):
        table.add_column(column, justify="left" if column in ("graph", "dataset", "kind", "trained") else "right")
    for row in rows:
        questions = _splits(row["questions"])
        name = row["graph"] or f"({row['graphs']:,} graphs)"
        models = row["models"]
        trained = (f"{', '.join(models['parts'])} ({models['trained_at'][:10]})" if models else "—")
        table.add_row(name, str(row["dataset"] or ""), str(row["kind"] or ""), f"{row['nodes']:,}",
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


def _int_list(text: str, option: str) -> tuple[int, ...]:
    from .errors import InputError

    try:
        return tuple(int(part) for part in text.split(","))
    except ValueError:
        raise InputError(f"expected comma-separated integers, got {text!r}", field=option) from None


# The commands of the other CLI modules register themselves on `app` when imported.
from . import cli_ask, cli_graphs, cli_serve, cli_train  # noqa: E402,F401


def main() -> None:
    import click

    from . import quiet

    quiet.request()
    if "--verbose" in sys.argv[1:]:  # logging is set up before the options are parsed
        os.environ["GQA_VERBOSE"] = "1"
    quiet.configure_logging()
    try:
        outcome = app(standalone_mode=False)
    except GqaError as error:
        _fail(error)
    except click.exceptions.Abort:
        err_console.print("[red]aborted[/]")
        sys.exit(1)
    except KeyboardInterrupt:
        err_console.print("[red]interrupted[/] — completed batches are stored; run the same command to resume")
        sys.exit(130)
    except click.exceptions.ClickException as error:
        error.show()
        sys.exit(error.exit_code)
    except click.exceptions.Exit as done:
        sys.exit(done.exit_code)
    except Exception as error:  # a failure of ours (or Neo4j gone mid-command): never shown as the user's fault
        _fail(error)
    sys.exit(outcome if isinstance(outcome, int) else 0)


def _fail(error: BaseException) -> None:
    """The user's mistakes: one red line, exit 1. Ours: a log id whose traceback is in the log file, exit 2."""
    from rich.markup import escape

    from .errors import DatabaseError, driver_unavailable, internal_failure
    from .quiet import log_file

    if driver_unavailable(error):
        error = DatabaseError(f"Neo4j became unreachable ({error.__class__.__name__}); is it running? "
                              "(`gqa db status`)")
    if isinstance(error, GqaError) and error.exit_code == 1:
        err_console.print(f"[bold red]error:[/] {escape(str(error))}", highlight=False)
        sys.exit(1)
    log_id = internal_failure(error, "gqa " + " ".join(sys.argv[1:2]), terminal=False)
    err_console.print(f"[bold red]internal error[/] (log id {log_id}): {escape(error.__class__.__name__)}: "
                      f"{escape(str(error).splitlines()[0] if str(error) else '')}\n"
                      f"This is a fault of gqa, not of your input; the traceback is in {log_file()} "
                      f"(search for {log_id}).", highlight=False)
    sys.exit(2)

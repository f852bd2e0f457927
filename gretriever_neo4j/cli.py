"""`gqa`: a thin command line over the library. Every GqaError becomes one red line and exit code 1."""

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


class _Connection:
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
) -> None:
    _Connection.overrides = {"uri": uri, "user": user, "password": password, "database": database}


def _store():
    from .store import connected

    return connected(_Connection.settings())


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
    dataset: str = typer.Argument(..., help="webqsp | explagraphs | scenegraphs | metaqa | csv | triples"),
    source: Optional[str] = typer.Option(None, "--source", "-s", help="hub id, folder or file (triples: the file)"),
    limit: Optional[int] = typer.Option(None, "--limit", min=0, help="only the first N samples, for quick runs"),
    embedder: Optional[str] = typer.Option(None, "--embedder", help="sentence-transformers model id or path"),
    reembed: bool = typer.Option(False, "--reembed", help="re-embed every stored text if the embedder changed"),
    skip_bad: bool = typer.Option(False, "--skip-bad", help="skip malformed rows and write them to a report"),
    bad_report: Path = typer.Option(Path("gqa-bad-rows.tsv"), "--bad-report", help="where --skip-bad writes bad rows"),
    nodes: Optional[Path] = typer.Option(None, "--nodes", help="csv: nodes file (node_id,node_attr)"),
    edges: Optional[Path] = typer.Option(None, "--edges", help="csv: edges file (src,edge_attr,dst)"),
    graph: Optional[str] = typer.Option(None, "--graph", help="csv/triples: name of the stored graph"),
    split: Optional[str] = typer.Option(None, "--split", help="webqsp JSONL: split of its questions"),
    hops: Optional[str] = typer.Option(None, "--hops", help="metaqa: e.g. 1,2,3"),
    batch_size: int = typer.Option(5000, "--batch-size", min=1, help="nodes+edges per transaction"),
    as_json: bool = typer.Option(False, "--json", help="print the summary as JSON"),
) -> None:
    """Load a dataset or your own graph into Neo4j, embedding every node and edge text once."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    from .embed import Embedder
    from .ingest import execute_plan, plan_ingest

    options = {"nodes": nodes, "edges": edges, "graph": graph, "split": split,
               "hops": _int_list(hops, "--hops") if hops else None}
    with console.status(f"reading {dataset} (validating every row before writing)…"):
        plan = plan_ingest(dataset, source, limit=limit, skip_bad=skip_bad, **options)
    with console.status(f"loading embedder {embedder or 'all-MiniLM-L6-v2'}…"):
        model = Embedder(embedder)
    columns = (TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
               TextColumn("{task.fields[rate]}"), TimeRemainingColumn())
    with _store() as store, Progress(*columns, console=console, transient=not sys.stdout.isatty()) as bars:
        task = bars.add_task(f"ingest {dataset}", total=plan.total, rate="")
        started = time.perf_counter()

        def on_progress(p) -> None:
            elapsed = max(time.perf_counter() - started, 1e-9)
            bars.update(task, completed=p.records_done,
                        rate=f"{p.nodes_written / elapsed:,.0f} nodes/s {p.edges_written / elapsed:,.0f} edges/s")

        report = execute_plan(plan, store, model, reembed=reembed, max_batch_items=batch_size,
                              on_progress=on_progress)
    if report.bad_rows:
        with open(bad_report, "w", encoding="utf-8") as out:
            out.write("source\tline\tfield\treason\n")
            for bad in report.bad_rows:
                out.write(f"{bad.source or ''}\t{bad.line or ''}\t{bad.field or ''}\t{bad.reason}\n")
    if as_json:
        console.print_json(json.dumps(report.to_dict()))
        return
    table = Table(title=f"ingest {dataset}", show_header=False)
    table.add_column("", style="bold")
    table.add_column("", justify="right")
    for label, value in (("graphs", report.graphs), ("nodes read", report.nodes_read),
                         ("edges read", report.edges_read), ("questions", report.questions),
                         ("nodes written", report.nodes_written), ("edges written", report.edges_written),
                         ("texts embedded", report.texts_embedded), ("bad rows", len(report.bad_rows))):
        table.add_row(label, f"{value:,}")
    table.add_row("seconds", f"{report.seconds:.1f}")
    console.print(table)
    if report.bad_rows:
        console.print(f"[yellow]{len(report.bad_rows)} bad rows skipped; listed in {bad_report}[/]")


# -- ask ------------------------------------------------------------------------------------------
@app.command()
def ask(
    question: str = typer.Argument(..., help="the question, in quotes"),
    graph: Optional[str] = typer.Option(None, "--graph", "-g", help="search only this stored graph "
                                        "(default: the graph of the node most similar to the question)"),
    retrieve_only: bool = typer.Option(False, "--retrieve-only", help="show the retrieved subgraph, generate nothing"),
    checkpoint: Optional[Path] = typer.Option(None, "--checkpoint", help="a trained model (gqa train); "
                                              "default: the LLM alone (inference-only)"),
    llm: Optional[str] = typer.Option(None, "--llm", help="HF causal LM id or path [default smollm2-135m]"),
    device: str = typer.Option("auto", "--device", help="auto | cpu | cuda"),
    embedder: Optional[str] = typer.Option(None, "--embedder", help="must match the stored vectors"),
    seed_k: Optional[int] = typer.Option(None, "--seed-k", min=0, help="top nodes from the vector index"),
    seed_k_edges: Optional[int] = typer.Option(None, "--seed-k-edges", min=0, help="top edges from the vector index"),
    hops: Optional[int] = typer.Option(None, "--hops", min=0),
    fanout: Optional[int] = typer.Option(None, "--fanout", min=0, help="edges followed per node and hop"),
    max_nodes: Optional[int] = typer.Option(None, "--max-nodes", min=0),
    max_edges: Optional[int] = typer.Option(None, "--max-edges", min=0),
    topk: Optional[int] = typer.Option(None, "--topk", min=0, help="PCST: nodes with prizes"),
    topk_e: Optional[int] = typer.Option(None, "--topk-e", min=0, help="PCST: edge prize tiers"),
    cost_e: Optional[float] = typer.Option(None, "--cost-e", min=0.0, help="PCST: cost per edge"),
    retriever: str = typer.Option("static", "--retriever", help="static (the paper's PCST) | learned "
                                  "(gqa train-retriever)"),
    retriever_checkpoint: Optional[Path] = typer.Option(None, "--retriever-checkpoint",
                                                        help="default: ~/.cache/gqa/retrievers/DATASET.pt"),
    as_json: bool = typer.Option(False, "--json", help="print one JSON object"),
) -> None:
    """Retrieve the subgraph that answers a question (and answer it with the model)."""
    retrieval = _retrieve(question, graph=graph, embedder=embedder, retriever=retriever,
                          retriever_checkpoint=retriever_checkpoint, seed_k=seed_k, seed_k_edges=seed_k_edges,
                          hops=hops, fanout=fanout, max_nodes=max_nodes, max_edges=max_edges, topk=topk,
                          topk_e=topk_e, cost_e=cost_e, quiet=as_json)
    if not retrieval.result.subgraph.node_keys:
        raise GqaError(f"nothing to answer from: graph {retrieval.graph!r} gave no candidate node for this question "
                       f"(retrieval {retrieval.id})")
    answer = None
    if not retrieve_only:
        from .answer import answer_question

        with console.status("generating…") if not as_json else _nullcontext():
            answer = answer_question(retrieval, checkpoint=checkpoint, llm=llm, device=device)
    if as_json:
        data = retrieval.to_dict()
        if answer is not None:
            data["answer"] = answer.to_dict()
        console.print_json(json.dumps(data, default=str))
        return
    _print_retrieval(retrieval)
    if answer is not None:
        _print_answer(answer)


def _retrieve(question: str, *, graph, embedder, quiet: bool, retriever: str = "static",
              retriever_checkpoint: Optional[Path] = None, **overrides):
    from .embed import Embedder
    from .retrieval.pcst import PcstParams
    from .retriever import params_for

    pcst_fields = {k: overrides.pop(k, None) for k in ("topk", "topk_e", "cost_e")}
    with (console.status("loading embedder…") if not quiet else _nullcontext()):
        model = Embedder(embedder)
    with _store() as store:
        retriever = _make_retriever(store, model, retriever, retriever_checkpoint, graph)
        if any(v is not None for v in pcst_fields.values()):
            info = store.graph_info(graph) if graph else None
            base = params_for(info and info["dataset"], info and info["kind"]).pcst
            overrides["pcst"] = PcstParams(**{k: (v if v is not None else getattr(base, k))
                                              for k, v in pcst_fields.items()})
        return retriever.retrieve(question, graph=graph, **overrides)


def _make_retriever(store, embedder, kind: str, checkpoint: Optional[Path], graph: Optional[str]):
    """The static retriever of the paper, or the learned one (`gqa train-retriever`) behind the same interface."""
    from .retriever import Retriever

    static = Retriever(store, embedder, browser_url=_Connection.settings().browser_url)
    if kind == "static":
        return static
    if kind != "learned":
        raise GqaError(f"--retriever must be 'static' or 'learned', not {kind!r}")
    from .learned_retrieval import LearnedRetrievalAdapter, default_checkpoint

    if checkpoint is None:
        info = store.graph_info(graph) if graph else None
        if info is None:
            raise GqaError("--retriever learned needs --graph naming a stored KG (or --retriever-checkpoint)")
        checkpoint = default_checkpoint(info["dataset"])
    return LearnedRetrievalAdapter(static, checkpoint)


def _learned_or_static(store, embedder, kind: str, checkpoint: Optional[Path], dataset: str):
    if kind == "learned" and checkpoint is None:
        from .learned_retrieval import default_checkpoint

        checkpoint = default_checkpoint(dataset)
    return _make_retriever(store, embedder, kind, checkpoint, None)


def _nullcontext():
    from contextlib import nullcontext

    return nullcontext()


def _print_retrieval(retrieval) -> None:
    from rich.markup import escape
    from rich.panel import Panel

    data = retrieval.to_dict()
    for warning in retrieval.warnings:
        console.print(f"[yellow]warning:[/] {escape(warning)}")
    nodes = Table(title=f"nodes ({len(data['nodes'])})", title_justify="left")
    nodes.add_column("id", justify="right")
    nodes.add_column("node_attr")
    for node in data["nodes"]:
        nodes.add_row(str(node["id"]), escape(node["text"]))
    edges = Table(title=f"edges ({len(data['edges'])})", title_justify="left")
    for column in ("src", "edge_attr", "dst"):
        edges.add_column(column)
    for edge in data["edges"]:
        edges.add_row(str(edge["src"]), escape(edge["text"]), str(edge["dst"]))
    console.print(f"[bold]graph[/] {escape(retrieval.graph)}   [bold]seeds[/] {len(data['seeds'])}   "
                  f"[bold]tokens[/] {retrieval.tokens}   [bold]retrieval[/] {retrieval.id}")
    console.print(nodes)
    console.print(edges)
    timings = Table(title="timings (ms)", title_justify="left", show_header=True)
    for stage in retrieval.timings_ms:
        timings.add_column(stage, justify="right")
    timings.add_row(*(f"{ms:.1f}" for ms in retrieval.timings_ms.values()))
    console.print(timings)
    console.print(Panel(escape(retrieval.browser_statement), title="open in Neo4j Browser", subtitle=escape(
        _Connection.settings().browser_url), expand=False))
    console.print(f"[link={retrieval.browser_url}]{escape(retrieval.browser_url)}[/link]", soft_wrap=True)


def _print_answer(answer) -> None:
    from rich.markup import escape
    from rich.panel import Panel

    console.print(Panel(escape(answer.text or "(empty)"), title="answer", expand=False))
    if answer.citations is not None:
        console.print(escape(answer.citations_summary()))


@app.command()
def show(retrieval_id: str = typer.Argument(..., help="the id `gqa ask` printed (r-…)"),
         as_json: bool = typer.Option(False, "--json")) -> None:
    """Print a recorded retrieval again, with its Browser statement."""
    from .retriever import browser_link, browser_statement

    statement = browser_statement(retrieval_id)
    with _store() as store:
        record = store.retrieval(retrieval_id)
    if record is None:
        raise GqaError(f"no retrieval {retrieval_id!r} is recorded")
    record["browser_statement"] = statement
    record["browser_url"] = browser_link(_Connection.settings().browser_url, statement)
    if as_json:
        console.print_json(json.dumps(record, default=str))
        return
    from rich.markup import escape

    console.print(f"[bold]{escape(record['id'])}[/]  {escape(str(record['created']))}  graph "
                  f"{escape(str(record['graph']))}\n[bold]question[/] {escape(record['question'])}")
    console.print(escape(record["textualized"] or ""))
    console.print(escape(statement))
    console.print(escape(record["browser_url"]), soft_wrap=True)


# -- chat -----------------------------------------------------------------------------------------
@app.command()
def chat(
    question: str = typer.Argument(..., help="the first question; its retrieved subgraph is kept for the chat"),
    graph: Optional[str] = typer.Option(None, "--graph", "-g"),
    checkpoint: Optional[Path] = typer.Option(None, "--checkpoint"),
    llm: Optional[str] = typer.Option(None, "--llm"),
    device: str = typer.Option("auto", "--device"),
    embedder: Optional[str] = typer.Option(None, "--embedder"),
) -> None:
    """A multi-turn conversation about one retrieved subgraph (empty line or Ctrl-D ends it)."""
    from dataclasses import replace as _replace

    from .answer import answer_question

    retrieval = _retrieve(question, graph=graph, embedder=embedder, quiet=False)
    if not retrieval.result.subgraph.node_keys:
        raise GqaError(f"graph {retrieval.graph!r} gave no candidate node for this question")
    _print_retrieval(retrieval)
    history: list[tuple[str, str]] = []
    while True:
        with console.status("generating…"):
            answer = answer_question(retrieval, checkpoint=checkpoint, llm=llm, device=device, history=history)
        _print_answer(answer)
        history.append((retrieval.question, answer.text))
        try:
            follow_up = console.input("[bold]you>[/] ").strip()
        except EOFError:
            break
        if not follow_up:
            break
        retrieval = _replace(retrieval, question=follow_up)


# -- train / eval ---------------------------------------------------------------------------------
@app.command("train-retriever")
def train_retriever_command(
    dataset: str = typer.Option(..., "--dataset", "-d", help="a stored KG dataset with questions (metaqa, webqsp)"),
    graph: Optional[str] = typer.Option(None, "--graph", help="default: the graph its questions are asked over"),
    limit: Optional[int] = typer.Option(None, "--limit", min=1, help="first N training questions"),
    epochs: int = typer.Option(8, "--epochs", min=1),
    max_edges: int = typer.Option(100, "--max-edges", min=1, help="subgraph budget at retrieval time"),
    out: Optional[Path] = typer.Option(None, "--out", "-o", help="default ~/.cache/gqa/retrievers/DATASET.pt"),
    embedder: Optional[str] = typer.Option(None, "--embedder"),
) -> None:
    """Train the learned retriever (question-conditioned triple scorer) on weak labels from a stored KG."""
    from .embed import Embedder
    from .learned_retrieval import train_learned_retriever

    model = Embedder(embedder)

    def progress(stage: str, info: dict) -> None:
        if stage == "epoch":
            console.print(f"epoch {info['epoch']}/{info['epochs']}: loss {info['loss']:.4f} ({info['seconds']:.0f} s)")
        elif stage == "labels" and (info["done"] == info["total"] or info["done"] % 2000 == 0):
            console.print(f"weak labels {info['done']:,}/{info['total']:,}")

    with _store() as store:
        trained = train_learned_retriever(store, model, dataset, graph=graph, limit=limit, epochs=epochs,
                                          max_edges=max_edges, out=out, progress=progress)
    console.print(f"trained on {trained.questions:,} questions in {trained.seconds:.0f} s; "
                  f"checkpoint {trained.path}")



def _samples(store, retriever, dataset: str, split: str, limit: Optional[int], label: str):
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    from .train.data import build_samples, static_settings

    checkpoint = getattr(retriever, "checkpoint", None)
    settings = static_settings(retriever, dataset) if checkpoint is None else {
        "retriever": "learned", "checkpoint": str(checkpoint), "mtime": checkpoint.stat().st_mtime}
    with Progress(TextColumn(f"[bold]retrieving {label}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                  console=console, transient=True) as bars:
        task = bars.add_task(label, total=None)
        return build_samples(store, retriever, dataset, split, limit=limit, settings=settings,
                             retrieve=lambda text, graph: retriever.retrieve(text, graph=graph, record=False).result,
                             on_progress=lambda done, total: bars.update(task, completed=done, total=total))


@app.command()
def train(
    dataset: str = typer.Option(..., "--dataset", "-d", help="explagraphs | scenegraphs | webqsp | metaqa | any "
                                "stored dataset with questions"),
    variant: str = typer.Option("g-retriever", "--config", "-c", help="prompt-tuning | g-retriever | lora | "
                                "g-retriever-lora"),
    gnn: str = typer.Option("graph-transformer", "--gnn", help="graph-transformer | gat | gcn"),
    llm: Optional[str] = typer.Option(None, "--llm", help="HF causal LM id or path [default smollm2-135m]"),
    out: Path = typer.Option(Path("checkpoints/run"), "--out", "-o", help="checkpoint folder (best/ and last/)"),
    seed: int = typer.Option(0, "--seed"),
    epochs: int = typer.Option(10, "--epochs", min=1),
    batch_size: int = typer.Option(8, "--batch-size", min=1),
    grad_accum: int = typer.Option(2, "--grad-accum", min=1),
    lr: float = typer.Option(1e-5, "--lr", min=0.0),
    patience: int = typer.Option(2, "--patience", min=1),
    max_steps: Optional[int] = typer.Option(None, "--max-steps", min=1),
    train_split: str = typer.Option("train", "--train-split"),
    val_split: str = typer.Option("val", "--val-split"),
    limit: Optional[int] = typer.Option(None, "--limit", min=1, help="first N questions of each split"),
    gnn_hidden: Optional[int] = typer.Option(None, "--gnn-hidden", min=1),
    gnn_layers: Optional[int] = typer.Option(None, "--gnn-layers", min=1),
    no_graph_encoder: bool = typer.Option(False, "--no-graph-encoder", help="ablation: w/o graph encoder"),
    no_projector: bool = typer.Option(False, "--no-projector", help="ablation: w/o projection layer"),
    no_textualized_graph: bool = typer.Option(False, "--no-textualized-graph", help="ablation: w/o textualized graph"),
    resume: bool = typer.Option(False, "--resume", help="continue from OUT/last"),
    device: str = typer.Option("auto", "--device"),
    embedder: Optional[str] = typer.Option(None, "--embedder"),
    retriever_kind: str = typer.Option("static", "--retriever", help="static | learned"),
    retriever_checkpoint: Optional[Path] = typer.Option(None, "--retriever-checkpoint"),
) -> None:
    """Train a configuration of the paper on stored questions; subgraphs come from gqa's own retrieval."""
    from .embed import Embedder
    from .model.config import ModelConfig
    from .model.gretriever import build_model
    from .train.trainer import TrainConfig, train as run_training

    config = ModelConfig(variant=variant, gnn=gnn, **({"llm": llm} if llm else {}),
                         **({"gnn_hidden": gnn_hidden} if gnn_hidden else {}),
                         **({"gnn_layers": gnn_layers} if gnn_layers else {}),
                         use_graph_encoder=not no_graph_encoder, use_projector=not no_projector,
                         use_textualized_graph=not no_textualized_graph)
    train_config = TrainConfig(lr=lr, batch_size=batch_size, grad_accum=grad_accum, epochs=epochs, patience=patience,
                               seed=seed, max_steps=max_steps, resume=resume)
    model_embedder = Embedder(embedder)
    config = config.replace(gnn_in_dim=model_embedder.dim, embedder=model_embedder.name)
    with _store() as store:
        retriever = _learned_or_static(store, model_embedder, retriever_kind, retriever_checkpoint, dataset)
        train_samples = _samples(store, retriever, dataset, train_split, limit, f"{dataset}/{train_split}")
        try:
            val_samples = _samples(store, retriever, dataset, val_split, limit, f"{dataset}/{val_split}")
        except GqaError:
            val_samples = []
            console.print(f"[yellow]no {val_split!r} questions: the training loss selects the best epoch[/]")
    with console.status(f"loading {config.llm}…"):
        model = build_model(config, device=device)
    trainable, total = model.parameter_counts()
    console.print(f"{variant}: {trainable:,} trainable of {total:,} parameters; {len(train_samples)} train / "
                  f"{len(val_samples)} val samples; checkpoints in {out}")
    history = run_training(model, train_samples, val_samples, train_config, out, progress=console)
    table = Table(title=f"gqa train {dataset} {variant} ({history.stop_reason})")
    for column in ("epoch", "train loss", "val loss", "seconds", "peak RSS MiB"):
        table.add_column(column, justify="right")
    for e in history.epochs:
        table.add_row(str(e.epoch), f"{e.train_loss:.4f}", "" if e.val_loss is None else f"{e.val_loss:.4f}",
                      f"{e.seconds:.0f}", f"{e.peak_rss_mib:.0f}")
    console.print(table)
    console.print(f"best checkpoint: {history.best_checkpoint}")


@app.command("eval")
def evaluate(
    dataset: str = typer.Option(..., "--dataset", "-d"),
    split: str = typer.Option("test", "--split"),
    checkpoint: Optional[Path] = typer.Option(None, "--checkpoint", help="default: the LLM alone (inference-only)"),
    llm: Optional[str] = typer.Option(None, "--llm"),
    limit: Optional[int] = typer.Option(None, "--limit", min=1),
    batch_size: int = typer.Option(8, "--batch-size", min=1),
    max_new_tokens: Optional[int] = typer.Option(None, "--max-new-tokens", min=1),
    out: Optional[Path] = typer.Option(None, "--out", "-o", help="JSON with every prediction "
                                       "[default eval-DATASET-SPLIT.json]"),
    device: str = typer.Option("auto", "--device"),
    embedder: Optional[str] = typer.Option(None, "--embedder"),
    retriever_kind: str = typer.Option("static", "--retriever", help="static | learned"),
    retriever_checkpoint: Optional[Path] = typer.Option(None, "--retriever-checkpoint"),
) -> None:
    """Score a checkpoint (or the LLM alone) on a stored split: Hit@1, strict Hit@1, F1 or accuracy,
    and the automated hallucination check."""
    from .answer import load_generator
    from .embed import Embedder
    from .model.citations import check_citations, summarize_citations
    from .train import metrics
    from .train.trainer import predict

    model_embedder = Embedder(embedder)
    with _store() as store:
        retriever = _learned_or_static(store, model_embedder, retriever_kind, retriever_checkpoint, dataset)
        samples = _samples(store, retriever, dataset, split, limit, f"{dataset}/{split}")
    with console.status("loading the model…"):
        model = load_generator(str(checkpoint) if checkpoint else None, llm, device, model_embedder.dim)
    import time as _time

    started = _time.perf_counter()
    with console.status(f"generating {len(samples)} answers…"):
        predictions = predict(model, samples, batch_size=batch_size, max_new_tokens=max_new_tokens)
    seconds = _time.perf_counter() - started
    checks = [check_citations(s.desc, p) for s, p in zip(samples, predictions)]
    citations = summarize_citations(checks)
    scores: dict[str, float] = {}
    if dataset == "explagraphs":
        scores["accuracy"] = metrics.score_explagraphs(predictions, [s.label for s in samples])
    elif dataset == "scenegraphs":
        scores["accuracy"] = metrics.score_scenegraphs(predictions, [s.label for s in samples])
    else:
        qa = metrics.score_open_questions(predictions, [s.answers for s in samples])
        scores.update({k: float(v) for k, v in qa.__dict__.items() if isinstance(v, (int, float))})
    scores.update({"citations_nodes_valid": citations.nodes_valid_fraction,
                   "citations_edges_valid": citations.edges_valid_fraction,
                   "answers_all_citations_valid": citations.all_valid_fraction})
    table = Table(title=f"gqa eval {dataset}/{split} — {model.config.variant} / {model.config.llm} "
                        f"({len(samples)} questions, {seconds:.0f} s)")
    table.add_column("metric")
    table.add_column("value", justify="right")
    for name, value in scores.items():
        table.add_row(name, f"{value:.4f}")
    console.print(table)
    out = out or Path(f"eval-{dataset}-{split}.json")
    out.write_text(json.dumps({
        "dataset": dataset, "split": split, "checkpoint": str(checkpoint) if checkpoint else None,
        "model": model.config.to_dict(), "scores": scores, "seconds": seconds,
        "predictions": [{"qid": s.qid, "prediction": p, "answers": s.answers, "label": s.label,
                         "citations_all_valid": c.all_valid} for s, p, c in zip(samples, predictions, checks)],
    }, indent=1))
    console.print(f"predictions written to {out}")


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
           bad_report=Path("gqa-bad-rows.tsv"), nodes=None, edges=None, graph=None, split=None, hops=None,
           batch_size=5000, as_json=False)
    stats(as_json=False)
    console.rule(f"gqa ask {question!r}")
    ask(question=question, graph="webqsp", retrieve_only=retrieve_only, checkpoint=None, llm=None, device="auto",
        embedder=None, seed_k=None, seed_k_edges=None, hops=None, fanout=None, max_nodes=None, max_edges=None,
        topk=None, topk_e=None, cost_e=None, retriever="static", retriever_checkpoint=None, as_json=False)


# -- stats ----------------------------------------------------------------------------------------
@app.command()
def stats(as_json: bool = typer.Option(False, "--json")) -> None:
    """What each stored dataset holds."""
    with _store() as store:
        data = store.stats()
        embedder = store.embedder_info()
    if as_json:
        console.print_json(json.dumps({"embedder": embedder and {"name": embedder[0], "dim": embedder[1]},
                                       "datasets": data}))
        return
    table = Table(title="gqa stats" + (f" — embedder {embedder[0]} ({embedder[1]}-d)" if embedder else ""))
    for column in ("dataset", "kind", "graphs", "nodes", "edges", "embedded", "questions"):
        table.add_column(column, justify="left" if column in ("dataset", "kind") else "right")
    for name, row in data.items():
        questions = ", ".join(f"{split}: {n:,}" for split, n in sorted(row["questions"].items())) or "0"
        table.add_row(name, str(row["kind"] or ""), f"{row['graphs']:,}", f"{row['nodes']:,}", f"{row['edges']:,}",
                      f"{row['embedded_nodes'] + row['embedded_edges']:,}", questions)
    if not data:
        table.caption = "the database holds no graph yet: try `gqa ingest csv --nodes … --edges … --graph NAME`"
    console.print(table)


def _quiet_libraries() -> None:
    """Model libraries print progress bars and hub warnings that are noise in a CLI."""
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
    import logging

    logging.getLogger("sentence_transformers").setLevel(logging.ERROR)
    try:
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()
        hf_logging.set_verbosity_error()
    except ImportError:
        pass


def _int_list(text: str, option: str) -> tuple[int, ...]:
    from .errors import InputError

    try:
        return tuple(int(part) for part in text.split(","))
    except ValueError:
        raise InputError(f"expected comma-separated integers, got {text!r}", field=option) from None


def main() -> None:
    import click

    _quiet_libraries()
    try:
        outcome = app(standalone_mode=False)
    except GqaError as error:
        from rich.markup import escape

        err_console.print(f"[bold red]error:[/] {escape(str(error))}", highlight=False)
        sys.exit(1)
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
    sys.exit(outcome if isinstance(outcome, int) else 0)

"""`gqa ask | show | chat`: thin layers over `qa.QA` (retrieve, then answer)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer
from rich.table import Table

from gretriever_neo4j.cli.app import app, connection_settings, console, err_console, nullcontext, store_session
from gretriever_neo4j.errors import GqaError, NotFoundError


def _overrides(seed_k, seed_k_edges, hops, fanout, max_nodes, max_edges, topk, topk_e, cost_e) -> dict:
    """Single retrieval parameters that override the graph's paper defaults (`retrieval.params.with_overrides`)."""
    given = {"seed_k": seed_k, "seed_k_edges": seed_k_edges, "hops": hops, "fanout": fanout, "max_nodes": max_nodes,
             "max_edges": max_edges, "topk": topk, "topk_e": topk_e, "cost_e": cost_e}
    return {k: v for k, v in given.items() if v is not None}


def make_qa(store, embedder: Optional[str], *, mode: str = "auto", checkpoint=None, llm=None, device="auto",
            use_llm: bool = True, reader: Optional[Path] = None, quiet: bool = False, llm_when: str = "auto",
            hold: bool = False):
    """`hold`: retrieve over graphs held in memory once read (`retrievers.cached.GraphCache`, as `gqa serve`)."""
    from gretriever_neo4j.answering.answering import Answering
    from gretriever_neo4j.embedding.embedder import Embedder
    from gretriever_neo4j.qa.qa import QA
    from gretriever_neo4j.retrievers.cached import GraphCache

    with (console.status("loading embedder…") if not quiet else nullcontext()):
        model = Embedder(embedder)
    answering = Answering(model, mode=mode, checkpoint=checkpoint, llm=llm, device=device, use_llm=use_llm,
                          reader=reader, llm_when=llm_when)
    return QA(store, model, browser_url=connection_settings().browser_url, answering=answering,
              cache=GraphCache(store) if hold else None)


@app.command()
def ask(
    question: Optional[str] = typer.Argument(None, help="the question, in quotes (or --questions FILE)"),
    graph: Optional[str] = typer.Option(None, "--graph", "-g", help="search only this stored graph "
                                        "(default: the graph of the node most similar to the question)"),
    questions: Optional[Path] = typer.Option(None, "--questions", help="a file of questions, one per line, or "
                                             "'question<TAB>answer1|answer2' (or .csv / .jsonl as `gqa ingest "
                                             "questions` reads them): JSON lines out, scores when answers are given"),
    out: Optional[Path] = typer.Option(None, "--out", "-o", help="--questions: where the JSON lines go "
                                       "[default: stdout]"),
    retrieve_only: bool = typer.Option(False, "--retrieve-only", help="show the retrieved subgraph, answer nothing"),
    free_text: bool = typer.Option(False, "--free-text", help="the paper's free-text generation instead of "
                                   "grounded answers"),
    reader_only: bool = typer.Option(False, "--reader-only", help="grounded answers from the reader alone "
                                     "(no LLM; the same as --llm-when never)"),
    llm_when: str = typer.Option("auto", "--llm-when", help="grounded answers: auto (the LLM chooses where the "
                                 "reader is unsure, if `gqa train --generator` trained it; else the reader answers "
                                 "alone) | always | never"),
    checkpoint: Optional[Path] = typer.Option(None, "--checkpoint", help="a generator trained with `gqa train "
                                              "--config …` [default: the graph's trained one, else the LLM alone]"),
    reader: Optional[Path] = typer.Option(None, "--reader", help="a reader checkpoint, 'zero-shot' or "
                                          "'rules' (hand-set weights) [default: the graph's trained one, else "
                                          "zero-shot]"),
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
    retriever: str = typer.Option("auto", "--retriever", help="auto (learned where `gqa train` trained one, "
                                  "else relation paths over a KG) | static (the paper's PCST) | learned | paths"),
    retriever_checkpoint: Optional[Path] = typer.Option(None, "--retriever-checkpoint",
                                                        help="a learned retriever checkpoint"),
    as_json: bool = typer.Option(False, "--json", help="print one JSON object"),
    subgraph: bool = typer.Option(False, "--subgraph", help="after the answer, the retrieved nodes and edges as "
                                  "tables and the timings per stage"),
    hold: bool = typer.Option(True, "--hold/--no-hold", help="--questions: read the graph into memory first and "
                              "answer from it, as `gqa serve` does (the same answers; --no-hold for a graph "
                              "too large for this machine's memory)"),
) -> None:
    """Retrieve the subgraph that answers a question and answer it: grounded in its nodes by default."""
    from gretriever_neo4j.qa.questions_file import read_questions_file

    if (question is None) == (questions is None):
        raise GqaError("give a question, or --questions FILE (not both)")
    lines = read_questions_file(questions) if questions is not None else None
    if out is not None and lines is None:
        raise GqaError("--out goes with --questions")
    in_process_only = (lines, checkpoint, reader, llm, embedder, retriever_checkpoint, seed_k, seed_k_edges, hops,
                       fanout, max_nodes, max_edges, topk, topk_e, cost_e)
    if all(option is None for option in in_process_only) and device == "auto":
        from gretriever_neo4j.qa.client import ask_server

        served = ask_server(question, graph=graph, retriever=retriever, retrieve_only=retrieve_only,
                            mode="free-text" if free_text else "auto", llm_when="never" if reader_only else llm_when)
        if served is not None:
            show_asked(served, as_json, subgraph=subgraph)
            return
    quiet = as_json or lines is not None
    with store_session() as store:
        overrides = _overrides(seed_k, seed_k_edges, hops, fanout, max_nodes, max_edges, topk, topk_e, cost_e)
        qa = make_qa(store, embedder, mode="free-text" if free_text else "auto", checkpoint=checkpoint, llm=llm,
                     device=device, use_llm=not reader_only, reader=reader, quiet=quiet, llm_when=llm_when,
                     hold=hold and lines is not None)
        options = dict(graph=graph, retriever=retriever, checkpoint=retriever_checkpoint, answer=not retrieve_only,
                       overrides=overrides)
        if lines is not None:
            if qa.cache is not None and graph is not None:  # without --graph, each graph is read when first met
                with err_console.status(f"reading {graph} into memory…"):
                    qa.cache.load(graph)
            _ask_many(qa, lines, out, source=str(questions), options=options)
            return
        with (console.status("retrieving and answering…") if not quiet else nullcontext()):
            asked = qa.ask(question, **options)
    show_asked(asked.to_dict(), as_json, subgraph=subgraph)


def _ask_many(qa, lines, out: Optional[Path], *, source: str, options: dict) -> None:
    """`gqa ask --questions FILE`: a bar while asking, then the scores as a table (stderr; rows go to stdout/--out)."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    from gretriever_neo4j.qa.batch import ask_many

    with Progress(TextColumn("[bold]asking"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                  console=err_console, transient=True) as bars:
        task = bars.add_task("asking", total=len(lines))
        summary = ask_many(qa, lines, out, options=options, on_progress=lambda p: bars.update(task, completed=p.done))
    table = Table(title=f"gqa ask --questions {source}", show_header=False)
    for key, value in summary.items():
        if value is not None:
            table.add_row(key, f"{value:.4f}" if isinstance(value, float) else str(value))
    err_console.print(table)
    if out is not None:
        err_console.print(f"{len(lines)} answers written to {out}")


def show_asked(data: dict, as_json: bool, *, subgraph: bool = False) -> None:
    """The answer first (each with the chains it rests on), then one line about the subgraph and its Browser link;
    the node and edge tables with --subgraph, or when only the retrieval was asked for."""
    if as_json:
        console.print_json(json.dumps(data, default=str))
        return
    if data.get("answer") is None:
        print_retrieval(data)
        return
    print_answer(data["answer"])
    if data["answer"].get("unsure") and data.get("id"):
        from rich.markup import escape

        console.print(f"[yellow]tell it the right answer:[/] gqa feedback {escape(data['id'])} --answer NAME",
                      soft_wrap=True)
    print_summary(data)
    if subgraph:
        print_retrieval(data, warnings=False)  # the summary said them


def print_summary(data: dict) -> None:
    from rich.markup import escape

    for warning in data.get("warnings", []):
        console.print(f"[yellow]warning:[/] {escape(warning)}")
    timings = data.get("timings_ms", {})
    answer_ms = (data.get("answer") or {}).get("seconds", 0) * 1000
    parts = [f"graph {data['graph']}", f"{len(data['nodes'])} nodes, {len(data['edges'])} edges",
             f"{data['tokens']} tokens", f"retrieval {timings.get('total', 0):.0f} ms"]
    if data.get("answer") is not None:
        parts.append(f"answer {answer_ms:.0f} ms")
    if data.get("retriever_model"):
        parts.append(f"retriever: {data['retriever_model']}")
    console.print("[dim]" + escape(" · ".join(parts)) + f" · {escape(data['id'])}[/]")
    console.print(f"open in Neo4j Browser: [link={data['browser_url']}]{escape(data['browser_url'])}[/link]",
                  soft_wrap=True)


def print_retrieval(data: dict, *, warnings: bool = True) -> None:
    """A retrieval as `Retrieval.to_dict()` (or the service) gives it."""
    from rich.markup import escape
    from rich.panel import Panel

    for warning in data.get("warnings", []) if warnings else []:
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
    console.print(f"[bold]graph[/] {escape(data['graph'])}   [bold]seeds[/] {len(data['seeds'])}   "
                  f"[bold]tokens[/] {data['tokens']}   [bold]retrieval[/] {data['id']}")
    if data.get("retriever_model"):
        console.print(f"[bold]retriever[/] {escape(data['retriever_model'])}")
    console.print(nodes)
    console.print(edges)
    timings = Table(title="timings (ms)", title_justify="left", show_header=True)
    for stage in data["timings_ms"]:
        timings.add_column(stage, justify="right")
    timings.add_row(*(f"{ms:.1f}" for ms in data["timings_ms"].values()))
    console.print(timings)
    console.print(Panel(escape(data["browser_statement"]), title="open in Neo4j Browser", subtitle=escape(
        connection_settings().browser_url), expand=False))
    console.print(f"[link={data['browser_url']}]{escape(data['browser_url'])}[/link]", soft_wrap=True)


MAX_SHOWN_ANSWERS = 20
MAX_SHOWN_PATHS = 2


def sureness(answer: dict) -> str:
    """How sure the answer is, as markup after its first line: " (unsure, 0.42)" in yellow where the answer is
    unsure, " (sure, 0.91)" in green where it is sure, " (confidence 0.72)" dimmed in between, nothing where nothing
    estimated it."""
    confidence = answer.get("confidence")
    shown = f", {confidence:.2f}" if confidence is not None else ""
    if answer.get("unsure"):
        return f" [bold yellow](unsure{shown})[/]"
    if answer.get("sure"):
        return f" [green](sure{shown})[/]"
    return f" [dim](confidence {confidence:.2f})[/]" if confidence is not None else ""


def print_answer(answer: dict) -> None:
    """An answer as `Answer.to_dict()` (or the service) gives it: how many, then each with its evidence chains."""
    from rich.markup import escape

    nodes = answer.get("nodes") or []
    if answer["mode"] == "grounded" and nodes:
        count = f"{len(nodes)} answer" + ("s" if len(nodes) != 1 else "")
        console.print(f"[bold]{count}[/] [dim]({answer['mode']})[/]{sureness(answer)}")
        # as on the page: a node's own walk score is 1.00 for every end node of the best walk, right or wrong, so
        # it is shown only where no calibrated confidence says how sure the answer is
        calibrated = answer.get("confidence") is not None
        for node in nodes[:MAX_SHOWN_ANSWERS]:
            detail = (f"  [dim]p={node['probability']:.2f}[/]" if node.get("probability") is not None
                      and not calibrated else "")
            console.print(f"  [bold green]{escape(node['text'])}[/]{detail}")
            paths = node.get("evidence_paths") or []
            for path in paths[:MAX_SHOWN_PATHS]:
                console.print(f"      [dim]because[/] {escape(path['text'])}", soft_wrap=True)
            if len(paths) > MAX_SHOWN_PATHS:
                console.print(f"      [dim]and {len(paths) - MAX_SHOWN_PATHS} more path(s)[/]")
        if len(nodes) > MAX_SHOWN_ANSWERS:
            console.print(f"  [dim]and {len(nodes) - MAX_SHOWN_ANSWERS} more (--json lists them all)[/]")
    else:
        console.print(f"[bold]answer[/] [dim]({answer['mode']})[/]: "
                      f"[bold green]{escape(answer['text'] or '(empty)')}[/]{sureness(answer)}")
    for part, described in answer["models"].items():
        console.print(f"[dim]{part}: {escape(described)}[/]")
    check = answer.get("citations")
    if check is not None:
        nodes_cited = ", ".join(check["nodes"]) or "none"
        edges = ", ".join(f"{a}-{b}" for a, b in check["edges"]) or "none"
        verdict = "all valid" if check["all_valid"] else (
            "invalid: " + ", ".join(list(check["invalid_nodes"]) + [f"{a}-{b}" for a, b in check["invalid_edges"]]))
        console.print("[dim]" + escape(f"cites nodes {nodes_cited}; edges {edges} ({check['mode']}) — {verdict}; "
                                       f"nodes valid {check['nodes_valid']:.0%}, edges valid "
                                       f"{check['edges_valid']:.0%}") + "[/]")


@app.command()
def show(retrieval_id: str = typer.Argument(..., help="the id `gqa ask` printed (r-…)"),
         as_json: bool = typer.Option(False, "--json")) -> None:
    """Print a recorded retrieval again, with its Browser statement."""
    from gretriever_neo4j.retrievers.browser import browser_link, browser_statement

    statement = browser_statement(retrieval_id)
    with store_session() as store:
        record = store.retrieval(retrieval_id)
    if record is None:
        raise NotFoundError(f"no retrieval {retrieval_id!r} is recorded")
    record["browser_statement"] = statement
    record["browser_url"] = browser_link(connection_settings().browser_url, statement)
    if as_json:
        console.print_json(json.dumps(record, default=str))
        return
    from rich.markup import escape

    console.print(f"[bold]{escape(record['id'])}[/]  {escape(str(record['created']))}  graph "
                  f"{escape(str(record['graph']))}\n[bold]question[/] {escape(record['question'])}")
    console.print(escape(record["textualized"] or ""))
    console.print(escape(statement))
    console.print(escape(record["browser_url"]), soft_wrap=True)


@app.command()
def chat(
    question: str = typer.Argument(..., help="the first question; its retrieved subgraph is kept for the chat"),
    graph: Optional[str] = typer.Option(None, "--graph", "-g"),
    checkpoint: Optional[Path] = typer.Option(None, "--checkpoint"),
    free_text: bool = typer.Option(False, "--free-text", help="free-text generation instead of grounded answers"),
    llm: Optional[str] = typer.Option(None, "--llm"),
    device: str = typer.Option("auto", "--device"),
    embedder: Optional[str] = typer.Option(None, "--embedder"),
) -> None:
    """A multi-turn conversation about one retrieved subgraph (empty line or Ctrl-D ends it)."""
    from dataclasses import replace as _replace

    with store_session() as store:
        qa = make_qa(store, embedder, mode="free-text" if free_text else "auto", checkpoint=checkpoint, llm=llm,
                     device=device)
        asked = qa.ask(question, graph=graph, answer=False)
    retrieval = asked.retrieval
    if not retrieval.result.subgraph.node_keys:
        raise GqaError(f"graph {retrieval.graph!r} gave no candidate node for this question")
    print_retrieval({**retrieval.to_dict(), "retriever_model": asked.retriever})
    history: list[tuple[str, str]] = []
    while True:
        with console.status("answering…"):
            answer = qa.answering.answer(retrieval, history=history)
        print_answer(answer.to_dict())
        history.append((retrieval.question, answer.text))
        try:
            follow_up = console.input("[bold]you>[/] ").strip()
        except EOFError:
            break
        if not follow_up:
            break
        retrieval = _replace(retrieval, question=follow_up)

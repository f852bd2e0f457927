"""`gqa quickstart`: the README's first command (Neo4j up, the sample ingested, a question answered)."""

from __future__ import annotations

import os

import typer

from gretriever_neo4j.cli.app import app, console
from gretriever_neo4j.cli.graphs import stats
from gretriever_neo4j.cli.ingest import ingest_dataset_command


@app.command()
def quickstart(
    question: str = typer.Option("what else did ben franklin invent?", "--question"),
    retrieve_only: bool = typer.Option(False, "--retrieve-only"),
) -> None:
    """Start Neo4j, load the bundled WebQSP sample, and answer a question from it (the README's first command)."""
    from importlib import resources

    from gretriever_neo4j import server

    if not os.environ.get("NEO4J_URI"):
        with console.status("starting Neo4j (the first start downloads ~140 MB of jars from Maven Central)…"):
            status = server.start(server.default_layout())
        console.print(f"[green]Neo4j is up[/]: {status.bolt_uri}, Browser at {status.browser_url}")
    sample = resources.files("gretriever_neo4j") / "samples" / "webqsp_sample.jsonl"
    ingest_dataset_command("webqsp", str(sample))
    stats(as_json=False)
    console.rule(f"gqa ask {question!r}")
    from gretriever_neo4j.cli.ask import ask

    ask(question=question, graph="webqsp", questions=None, out=None, retrieve_only=retrieve_only, free_text=False,
        reader_only=False, llm_when="auto", checkpoint=None, reader=None, llm=None,
        device="auto", embedder=None, seed_k=None,
        seed_k_edges=None, hops=None, fanout=None, max_nodes=None, max_edges=None, topk=None, topk_e=None,
        cost_e=None, retriever="auto", retriever_checkpoint=None, as_json=False, subgraph=True)



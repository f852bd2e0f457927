"""`gqa feedback`: say whether an answer was right, name the right one, and see, export or drop what was said.

    gqa feedback RETRIEVAL_ID --right | --wrong | --answer NAME [--shown KEY …]
    gqa feedback list   --graph G [--json]
    gqa feedback export --graph G [--out FILE]
    gqa feedback drop   --graph G [--yes]

The retrieval id is the one `gqa ask` printed (r-…). Each feedback becomes a train question of the graph
(`ingest.feedback`). A mistake exits 1 with one line naming the field, as every command does (`cli.app.fail`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer
from rich.markup import escape
from rich.table import Table

from gretriever_neo4j.cli.app import app, console, err_console, store_session
from gretriever_neo4j.errors import InputError

ACTIONS = ("list", "export", "drop")


@app.command()
def feedback(
    target: str = typer.Argument(..., metavar="RETRIEVAL_ID|list|export|drop",
                                 help="the retrieval `gqa ask` printed (r-…), or what to do with a graph's feedback"),
    right: bool = typer.Option(False, "--right", help="the answer shown is right"),
    wrong: bool = typer.Option(False, "--wrong", help="the answer shown is wrong (kept as what the answer is not)"),
    answer: Optional[str] = typer.Option(None, "--answer", help="the answer: a node's key or name (alone: the answer "
                                         "shown was wrong and this is the right one; with --right: confirm it)"),
    shown: Optional[list[str]] = typer.Option(None, "--shown", help="the answer shown (node key) the verdict is about; "
                                              "repeatable (default: every answer shown)"),
    graph: Optional[str] = typer.Option(None, "--graph", "-g", help="list/export/drop: the graph"),
    out: Optional[Path] = typer.Option(None, "--out", "-o", help="export: the TSV file (default: stdout)"),
    yes: bool = typer.Option(False, "--yes", "-y", help="drop: do not ask for confirmation"),
    as_json: bool = typer.Option(False, "--json", help="print JSON"),
) -> None:
    """Feedback on an answer, stored as a train question of its graph (`gqa train --graph G` learns from it)."""
    if target in ACTIONS:
        if right or wrong or answer is not None or shown:
            raise InputError(f"`gqa feedback {target}` takes --graph, not a verdict", field="verdict")
        if not graph:
            raise InputError(f"`gqa feedback {target}` needs --graph NAME", field="graph")
        {"list": _list, "export": _export, "drop": _drop}[target](graph, out=out, yes=yes, as_json=as_json)
        return
    if graph is not None or out is not None or yes:
        raise InputError("--graph, --out and --yes go with list, export or drop", field="graph")
    if right and wrong:
        raise InputError("give --right or --wrong, not both", field="verdict")
    if not (right or wrong or answer is not None):
        raise InputError("give --right, --wrong or --answer NAME", field="verdict")
    _give(target, "right" if right else "wrong", answer=answer, shown=shown or None, as_json=as_json)


def _give(retrieval_id: str, verdict: str, *, answer: Optional[str], shown: Optional[list[str]],
          as_json: bool) -> None:
    from gretriever_neo4j.ingest.feedback import give_feedback

    with store_session() as store:
        question = give_feedback(store, retrieval_id, verdict, answer=answer, shown=shown)
    if as_json:
        console.print_json(json.dumps(question.to_dict()))
        return
    what = ("kept as a negative: no answer is known, only what it is not" if question.negative else
            f"answers: {', '.join(question.answers)}")
    console.print(f"[green]{verdict}[/] — {escape(question.text)}\n"
                  f"a train question of graph {escape(question.graph)} ({escape(what)}; "
                  f"votes right {question.votes_right}, wrong {question.votes_wrong})", highlight=False)


def _list(graph: str, *, as_json: bool, **_) -> None:
    from gretriever_neo4j.ingest.feedback import list_feedback

    with store_session() as store:
        questions = list_feedback(store, graph)
    if as_json:
        console.print_json(json.dumps({"graph": graph, "questions": [q.to_dict() for q in questions]}))
        return
    table = Table(title=f"feedback on {graph} ({len(questions)} questions)")
    for column in ("retrieval", "question", "answers", "not the answer", "right", "wrong", "updated"):
        table.add_column(column, justify="right" if column in ("right", "wrong") else "left")
    for q in questions:
        table.add_row(q.qid, escape(q.text), escape(", ".join(q.answers) or "—"), escape(", ".join(q.not_answers)),
                      str(q.votes_right), str(q.votes_wrong), (q.updated or "")[:19])
    console.print(table)


def _export(graph: str, *, out: Optional[Path], as_json: bool, **_) -> None:
    from gretriever_neo4j.ingest.feedback import export_tsv, list_feedback

    with store_session() as store:
        exported = export_tsv(list_feedback(store, graph))
    if out is None:
        typer.echo(exported.text, nl=False)
    else:
        out.write_text(exported.text, encoding="utf-8")
    left = [f"{exported.negatives} without an answer" if exported.negatives else "",
            f"{exported.unwritable} whose keys hold '|', a tab or a line break" if exported.unwritable else ""]
    left = [part for part in left if part]
    err_console.print(f"{exported.written} feedback questions exported" + (f" to {out}" if out else "")
                      + (f"; left out: {', '.join(left)}" if left else ""), highlight=False)


def _drop(graph: str, *, yes: bool, **_) -> None:
    from gretriever_neo4j.ingest.feedback import list_feedback, remove_feedback

    with store_session() as store:
        count = len(list_feedback(store, graph))
        if count and not yes and not typer.confirm(f"Remove the {count} feedback questions of graph {graph!r}?",
                                                   default=False):
            console.print("nothing removed")
            raise typer.Exit(1)
        deleted = remove_feedback(store, graph)
    console.print(f"removed {deleted} feedback questions of graph {graph!r} (other questions are kept)")

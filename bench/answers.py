"""Answer quality on MetaQA validation questions (the loader's split), per hop, through the product's own path
(`qa.QA`: Neo4j retrieval, then answering), for each answering set-up:

    paper     the paper's free-text inference-only: static (PCST) retrieval, SmolLM2 writes the answer
    zero-shot grounded answers with nothing trained: static retrieval, zero-shot reader, constrained SmolLM2
    trained   what `gqa train --dataset metaqa` trained: learned retriever, trained reader, constrained LLM asked
              where the reader is unsure (the default of `gqa ask`)
    reader    the same without any LLM (`--reader-only`)
    llm       the same with the constrained LLM saying every answer (`--llm-when always`)

Reported per hop: answer in the retrieved subgraph, strict Hit@1 (the first answer is a gold one), Hit@1 (the
paper's: a gold answer occurs in the output), F1, the share of answers whose citations are all valid, and the
answering latency (after retrieval) and total latency, p50. Brackets around topic entities are removed first
(users do not type them). Needs MetaQA in Neo4j; `trained`, `reader` and `llm` need `gqa train --dataset metaqa`.

    python bench/answers.py [--per-hop 300] [--paper-per-hop 50] [--setups paper,zero-shot,trained,reader,llm]
"""

from __future__ import annotations

import argparse
import os
import random
import re
import sys
import time
from pathlib import Path

import numpy as np
from _common import REPO, command, machine, write_json

BRACKETS = re.compile(r"\[([^\]]*)\]")
SETUPS = {  # name -> (retriever kind, Answering options)
    "paper": ("static", {"mode": "free-text"}),
    "zero-shot": ("static", {"reader": "zero-shot", "llm_when": "always"}),
    "trained": ("auto", {"llm_when": "auto"}),
    "reader": ("auto", {"llm_when": "never"}),
    "llm": ("auto", {"llm_when": "always"}),
}


def sample(store, per_hop: int, seed: int, graph: str = "metaqa") -> list[dict]:
    """`per_hop` validation questions of each hop (by MetaQA's qids), brackets removed; bench/usergraph.py draws
    the same questions from the user-graph copy through this function."""
    rng = random.Random(seed)
    questions = store.questions(graph, "val")
    chosen = []
    for hop in (1, 2, 3):
        pool = [q for q in questions if q["qid"].startswith(f"{hop}hop/")]
        chosen += [{**q, "hop": hop, "text": BRACKETS.sub(r"\1", q["text"])}
                   for q in rng.sample(pool, min(per_hop, len(pool)))]
    return chosen


def run_setup(store, embedder, name: str, questions: list[dict]) -> dict:
    from gretriever_neo4j import metrics
    from gretriever_neo4j.answering.answering import Answering
    from gretriever_neo4j.errors import GqaError
    from gretriever_neo4j.qa.batch import answer_in_subgraph
    from gretriever_neo4j.qa.qa import QA

    kind, options = SETUPS[name]
    qa = QA(store, embedder, answering=Answering(embedder, **options))
    rows = []
    for q in questions:
        started = time.perf_counter()
        try:
            asked = qa.ask(q["text"], graph="metaqa", retriever=kind, record=False)
        except GqaError as error:
            rows.append({"hop": q["hop"], "error": str(error)})
            continue
        total = time.perf_counter() - started
        text = asked.answer.text
        rows.append({
            "hop": q["hop"], "question": q["text"], "gold": q["answers"], "answer": text,
            "in_subgraph": answer_in_subgraph(asked.retrieval, q["answers"]),
            "strict_hit_at_1": metrics.strict_hit_at_1(text, q["answers"]),
            "hit_at_1": metrics.hit_at_1(text, q["answers"]),
            "f1": metrics.f1_precision_recall(text, q["answers"])[0],
            "citations_valid": None if asked.answer.citations is None else asked.answer.citations.all_valid,
            "llm_spoke": "constrained" in asked.answer.models.get("generator", "") or asked.answer.mode == "free-text",
            "answer_ms": asked.answer.seconds * 1000, "total_ms": total * 1000,
            "retriever": asked.retriever, "models": asked.answer.models})
    return {"setup": name, "rows": rows, "by_hop": {hop: summarize([r for r in rows if r["hop"] == hop])
                                                   for hop in (1, 2, 3)}}


def summarize(rows: list[dict]) -> dict:
    ok = [r for r in rows if "error" not in r]
    mean = lambda key: float(np.mean([float(r[key]) for r in ok])) if ok else None
    cited = [r["citations_valid"] for r in ok if r["citations_valid"] is not None]
    return {"questions": len(rows), "errors": len(rows) - len(ok), "answer_in_subgraph": mean("in_subgraph"),
            "strict_hit_at_1": mean("strict_hit_at_1"), "hit_at_1": mean("hit_at_1"), "f1": mean("f1"),
            "citations_valid": float(np.mean(cited)) if cited else None, "llm_share": mean("llm_spoke"),
            "answer_ms_p50": float(np.percentile([r["answer_ms"] for r in ok], 50)) if ok else None,
            "total_ms_p50": float(np.percentile([r["total_ms"] for r in ok], 50)) if ok else None}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--per-hop", type=int, default=300)
    parser.add_argument("--paper-per-hop", type=int, default=50, help="the free-text set-up is slow (~4 s each)")
    parser.add_argument("--setups", default=",".join(SETUPS))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "answers.json")
    args = parser.parse_args()
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")

    from rich.console import Console
    from rich.table import Table

    from gretriever_neo4j.embedding.embedder import Embedder
    from gretriever_neo4j.settings import Neo4jSettings
    from gretriever_neo4j.store.graph_store import connected

    console = Console(width=200)
    embedder = Embedder()
    results = []
    with connected(Neo4jSettings.from_env()) as store:
        questions = sample(store, args.per_hop, args.seed)
        for name in args.setups.split(","):
            chosen = questions
            if name == "paper":
                chosen = [q for hop in (1, 2, 3)
                          for q in [x for x in questions if x["hop"] == hop][:args.paper_per_hop]]
            started = time.perf_counter()
            results.append(run_setup(store, embedder, name, chosen))
            console.print(f"{name}: {len(chosen)} questions in {time.perf_counter() - started:.0f} s")
            _write(args, results)
    table = Table(title=f"MetaQA val, answers through Neo4j ({os.cpu_count()} CPU cores, SmolLM2-135M)")
    for column in ("set-up", "hop", "n", "in subgraph", "strict Hit@1", "Hit@1", "F1", "citations valid",
                   "LLM asked", "answer p50 ms", "total p50 ms"):
        table.add_column(column, justify="right")
    fmt = lambda v: "-" if v is None else f"{v:.3f}"
    for result in results:
        for hop, s in result["by_hop"].items():
            table.add_row(result["setup"], str(hop), str(s["questions"]), fmt(s["answer_in_subgraph"]),
                          fmt(s["strict_hit_at_1"]), fmt(s["hit_at_1"]), fmt(s["f1"]), fmt(s["citations_valid"]),
                          fmt(s["llm_share"]), f"{s['answer_ms_p50']:.0f}" if s["answer_ms_p50"] else "-",
                          f"{s['total_ms_p50']:.0f}" if s["total_ms_p50"] else "-")
    console.print(table)
    console.print(f"wrote {args.out}")
    return 0


def _write(args, results) -> None:
    args.out.parent.mkdir(parents=True, exist_ok=True)
    write_json(args.out, {"machine": machine(), "command": command(), "results": results})


if __name__ == "__main__":
    sys.exit(main())

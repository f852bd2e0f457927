"""Answers on graphs nobody trained for: WebQSP and MetaQA through the product's batch path (`gqa ask --questions`).

WebQSP: the 1,628 shared test questions over the merged WebQSP graph (`gqa ingest webqsp`); MetaQA: dev questions
(`qa_dev_{1,2,3}hop.txt`, brackets removed, a seeded sample per hop) over the KB alone, ingested as a new graph
with no questions (`gqa ingest triples --source …/kb.txt --graph metaqa_kb`). Set-ups (each one `gqa ask
--questions` run, in a subprocess, exactly as a user runs it):

    static      the paper's retrieval (PCST over vector seeds), zero-shot reader
    zero-shot   relation-path retrieval, zero-shot reader (nothing trained)
    rules       relation-path retrieval, the zero-shot reader with its hand-set weights alone (`--reader rules`)
    self-sup    what `gqa train --graph G` trained from the graph alone (self-supervised), as `gqa ask` picks it
    self-sup-paths / self-sup-learned   the self-supervised reader with the retriever named

Reported per set-up (and per hop for MetaQA): answer in subgraph, strict Hit@1 (the first answer is gold), Hit@1
(a gold answer occurs among the answers), F1, answers per question, latency p50/p95 (retrieval + answer).
No WebQSP or MetaQA question is used for training by anything here. The LLM is off by default (`--llm-when
never`, the reader's answer); `--llm-when auto` lets the zero-shot set-ups ask it.

    python bench/webqsp.py [--datasets webqsp,metaqa] [--setups static,zero-shot,self-sup] [--limit N]
                           [--per-hop 200] [--llm-when never] [--out bench/results/webqsp.json]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from _common import REPO, command, machine

DATA = REPO.parent / "shared" / "data"
BRACKETS = re.compile(r"\[([^\]]*)\]")
SETUPS = {  # name -> gqa ask options
    "static": ["--retriever", "static", "--reader", "zero-shot"],
    "zero-shot": ["--retriever", "paths", "--reader", "zero-shot"],
    "rules": ["--retriever", "paths", "--reader", "rules"],  # the zero-shot reader's hand-set weights alone
    "self-sup": ["--retriever", "auto"],
    "self-sup-paths": ["--retriever", "paths"],  # the self-supervised reader over relation-path retrieval
    "self-sup-learned": ["--retriever", "learned"],
    "learned-zero-shot": ["--retriever", "learned", "--reader", "zero-shot"],  # self-supervised retriever only
}


def webqsp_questions(limit: int | None) -> list[dict]:
    rows = [json.loads(line) for line in (DATA / "webqsp" / "webqsp_evidence_test.jsonl").open()]
    rows = rows[:limit] if limit else rows
    return [{"group": "all", "question": r["question"], "answers": r["answer"]} for r in rows]


def metaqa_questions(per_hop: int, seed: int) -> list[dict]:
    out = []
    for hop in (1, 2, 3):
        lines = (DATA / "metaqa" / f"qa_dev_{hop}hop.txt").read_text().splitlines()
        for line in random.Random(seed + hop).sample(lines, min(per_hop, len(lines))):
            question, answers = line.split("\t")
            out.append({"group": f"{hop}-hop", "question": BRACKETS.sub(r"\1", question),
                        "answers": answers.split("|")})
    return out


def run_batch(graph: str, questions: list[dict], options: list[str], llm_when: str, folder: Path) -> list[dict]:
    source = folder / "questions.tsv"
    source.write_text("".join(f"{q['question']}\t{'|'.join(q['answers'])}\n" for q in questions))
    out = folder / "answers.jsonl"
    command = [str(REPO / ".venv" / "bin" / "gqa"), "ask", "--questions", str(source), "--graph", graph, "--out",
               str(out), "--llm-when", llm_when, *options]
    started = time.perf_counter()
    done = subprocess.run(command, cwd=REPO, env={**os.environ, "GQA_SERVER": "off"}, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    if rows and all("error" in row for row in rows):  # e.g. the graph is not ingested: nothing to measure
        raise SystemExit(f"every question failed, the first with: {rows[0]['error']}")
    for row, q in zip(rows, questions):
        row["group"] = q["group"]
    print(f"  {len(rows)} questions in {time.perf_counter() - started:.0f} s", file=sys.stderr)
    return rows


def stored_size(graph: str) -> dict:
    """The stored graph's nodes and edges as `gqa stats` counts them (the bundled quickstart sample is also stored
    as `webqsp`, with 308 triples where the merged test graph has tens of thousands: the size says which was
    asked)."""
    done = subprocess.run([str(REPO / ".venv" / "bin" / "gqa"), "stats", "--json"], cwd=REPO, capture_output=True,
                          text=True)
    if done.returncode != 0:
        raise SystemExit(f"gqa stats failed ({done.returncode}):\n{done.stderr[-3000:]}")
    for row in json.loads(done.stdout)["graphs"]:
        if row.get("graph") == graph:
            return {"nodes": row["nodes"], "edges": row["edges"]}
    raise SystemExit(f"graph {graph!r} is not stored: ingest it first (see this file's docstring)")


def summary(rows: list[dict]) -> dict:
    scored = [r for r in rows if "scores" in r]
    timed = [r["timings_ms"]["total"] for r in rows if "timings_ms" in r]
    mean = lambda values: round(float(np.mean(values)), 4) if values else None
    return {
        "questions": len(rows), "errors": sum(1 for r in rows if "error" in r),
        "answer_in_subgraph": mean([float(r.get("answer_in_subgraph", False)) for r in rows]),
        "strict_hit_at_1": mean([r["scores"]["strict_hit_at_1"] for r in scored]),
        "hit_at_1": mean([r["scores"]["hit_at_1"] for r in scored]),
        "f1": mean([r["scores"]["f1"] for r in scored]),
        "answers_per_question": mean([len(r["answer"].split("|")) if r.get("answer") else 0 for r in rows]),
        "ms_p50": round(float(np.percentile(timed, 50)), 1) if timed else None,
        "ms_p95": round(float(np.percentile(timed, 95)), 1) if timed else None,
        "retrievers": sorted({r.get("retriever", "") for r in rows if r.get("retriever")}),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--datasets", default="webqsp,metaqa")
    parser.add_argument("--setups", default="zero-shot,self-sup")
    parser.add_argument("--limit", type=int, default=None, help="WebQSP: first N test questions")
    parser.add_argument("--per-hop", type=int, default=200, help="MetaQA: questions per hop")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--webqsp-graph", default="webqsp")
    parser.add_argument("--metaqa-graph", default="metaqa_kb")
    parser.add_argument("--llm-when", default="never", choices=["never", "auto", "always"])
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "webqsp.json")
    parser.add_argument("--samples", type=int, default=10, help="answers kept per set-up for reading")
    parser.add_argument("--rows", type=Path, default=None, help="also write every answer row here (a folder)")
    args = parser.parse_args()
    existing = json.loads(args.out.read_text()) if args.out.is_file() else {}
    results = existing.get("results", {})
    for dataset in args.datasets.split(","):
        graph = args.webqsp_graph if dataset == "webqsp" else args.metaqa_graph
        questions = webqsp_questions(args.limit) if dataset == "webqsp" else metaqa_questions(args.per_hop,
                                                                                              args.seed)
        size = stored_size(graph)
        for setup in args.setups.split(","):
            print(f"{dataset} / {setup}: {len(questions)} questions over {graph} ({size['nodes']} nodes, "
                  f"{size['edges']} edges)", file=sys.stderr)
            with tempfile.TemporaryDirectory() as folder:
                rows = run_batch(graph, questions, SETUPS[setup], args.llm_when, Path(folder))
            if args.rows is not None:
                args.rows.mkdir(parents=True, exist_ok=True)
                (args.rows / f"{dataset}_{setup}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
            groups = sorted({r["group"] for r in rows})
            results[f"{dataset}/{setup}"] = {
                "graph": graph, "graph_size": size, "llm_when": args.llm_when, "options": SETUPS[setup],
                "groups": {g: summary([r for r in rows if r["group"] == g]) for g in groups},
                "samples": [{k: r.get(k) for k in ("question", "answer", "gold", "scores", "retriever")}
                            for r in random.Random(1).sample(rows, min(args.samples, len(rows)))]}
            args.out.parent.mkdir(parents=True, exist_ok=True)
            args.out.write_text(json.dumps({"machine": machine(), "command": command(),
                                            "limit": args.limit, "per_hop": args.per_hop, "results": results},
                                           indent=1))
    print(f"{'set-up':28} {'group':6} {'n':>5} {'in sub':>7} {'strict':>7} {'hit@1':>7} {'F1':>6} {'ans/q':>6} "
          f"{'p50 ms':>8}")
    for name, result in results.items():
        for group, s in result["groups"].items():
            print(f"{name:28} {group:6} {s['questions']:5d} {s['answer_in_subgraph']:7.3f} {s['strict_hit_at_1']:7.3f} "
                  f"{s['hit_at_1']:7.3f} {s['f1']:6.3f} {s['answers_per_question']:6.2f} {s['ms_p50']:8.0f}")
    print(f"written to {args.out}")


if __name__ == "__main__":
    main()

"""Training again after feedback, on a large graph: how long `gqa train --graph G` takes the first time, and again
after people gave feedback on a few answers, through the CLI as a user runs it.

The graph is MetaQA's KB as a user's triples (`gqa ingest triples` of `kb.txt`: 43k nodes, 134k edges; ingested
first where it is missing, ~10 min). Its trained models are deleted, so the first `gqa train` is the cold one
(retrieval trained on self-supervised questions, the reader adapted to the graph's own questions; the caches in
`GQA_HOME` are kept, so a rerun's is faster); then
`--feedback` more MetaQA dev questions (never test) are asked with `gqa ask`, each answer judged with
`gqa feedback` (right where the first answer is gold, else `--answer` the gold one), and `gqa train` runs again: the
graph unchanged, it only adapts the reader (warm). Reported: seconds and peak RSS of each run, the questions it
learned from, what its cross-validation measured. The graph and its questions stay; a rerun
replaces the questions (`--sync`) and drops the earlier run's feedback.

    python bench/warm_train.py [--graph metaqa_kb] [--questions 25] [--feedback 10]
        [--out bench/results/warm_train.json]
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import tempfile
from pathlib import Path

from _common import REPO, RESULTS, command, gqa, machine, run_gqa, write_json

METAQA = REPO.parent / "shared" / "data" / "metaqa"


def dev_questions(seed: int = 0) -> list[tuple[str, list[str]]]:
    """MetaQA's dev questions of all three hops, shuffled: (question with its entity's brackets removed, answers)."""
    rows = []
    for hops in (1, 2, 3):
        for line in (METAQA / f"qa_dev_{hops}hop.txt").read_text().splitlines():
            question, answers = line.split("\t")
            rows.append((question.replace("[", "").replace("]", ""), answers.split("|")))
    random.Random(seed).shuffle(rows)
    return rows


def _train(graph: str) -> dict:
    """`gqa train --graph G` as a user runs it: its seconds and peak RSS, and what its manifest says it learned."""
    from gretriever_neo4j.artifacts.registry import models_dir

    run = run_gqa("train", "--graph", graph)
    manifest = json.loads((models_dir(graph) / "manifest.json").read_text())
    fewshot = manifest.get("details", {}).get("fewshot", {})
    return {"seconds": round(run.seconds, 1), "peak_rss_mb": run.peak_rss_mb,
            "questions": fewshot.get("questions"), "cv_before": fewshot.get("before"),
            "cv_after": fewshot.get("after"), "adopted": fewshot.get("adopted")}


def _stored(graph: str) -> dict | None:
    return next((g for g in json.loads(gqa("stats", "--json")[0])["graphs"] if g.get("graph") == graph), None)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--graph", default="metaqa_kb")
    parser.add_argument("--questions", type=int, default=25, help="own questions before the first training")
    parser.add_argument("--feedback", type=int, default=10, help="answers judged before training again")
    parser.add_argument("--out", type=Path, default=RESULTS / "warm_train.json")
    args = parser.parse_args()
    from gretriever_neo4j.artifacts.registry import models_dir

    stored = _stored(args.graph)
    if stored is None:
        gqa("ingest", "triples", "--source", str(METAQA / "kb.txt"), "--graph", args.graph)
        stored = _stored(args.graph)
    rows = dev_questions()
    own, judged = rows[:args.questions], rows[args.questions:args.questions + args.feedback]
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        source = work / "own.tsv"  # one file name: a rerun updates the same questions
        source.write_text("".join(f"{q}\t{'|'.join(a)}\t\ttrain\n" for q, a in own))
        gqa("ingest", "questions", "--graph", args.graph, "--source", str(source), "--sync")  # only these
        gqa("feedback", "drop", "--graph", args.graph, "--yes")  # an earlier run's
        shutil.rmtree(models_dir(args.graph), ignore_errors=True)
        first = _train(args.graph)
        asked = work / "asked.tsv"
        asked.write_text("".join(f"{q}\t{'|'.join(a)}\n" for q, a in judged))
        out = work / "asked.jsonl"
        gqa("ask", "--graph", args.graph, "--questions", str(asked), "--llm-when", "never", "--out", str(out))
        verdicts = {"right": 0, "answer": 0}
        for row, (_, gold) in zip((json.loads(line) for line in out.read_text().splitlines()), judged):
            if row.get("scores", {}).get("strict_hit_at_1"):
                gqa("feedback", row["retrieval_id"], "--right")
                verdicts["right"] += 1
            else:
                gqa("feedback", row["retrieval_id"], "--answer", gold[0])
                verdicts["answer"] += 1
        again = _train(args.graph)
    result = {"machine": machine(), "command": command(), "graph": args.graph, "nodes": stored.get("nodes"),
              "edges": stored.get("edges"), "first_train": first, "feedback": verdicts, "warm_train": again}
    print(json.dumps(result, indent=1))
    write_json(args.out, result, newline=True)
    print(f"written to {args.out}")


if __name__ == "__main__":
    main()

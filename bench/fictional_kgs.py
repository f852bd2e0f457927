"""Graphs nobody trained for, as a user brings them: invented KGs and questions phrased by hand, through the
product's CLI only. The graphs and questions are in `bench/data/fictional/<set>/<graph>/` (`triples.tsv`,
`questions.tsv`; `sets.json` lists the sets in order); `bench/data/README.md` says who wrote each set, what they
had read, and which were read for misses ("tuned") or only measured ("held-out", "held-out-3").

For each graph: `gqa drop`, `gqa ingest triples`, then `gqa ask --questions` (reader answers, no LLM) with nothing
trained (zero-shot), and with `--train` also after `gqa train --graph G` (self-supervised; its minutes reported).
Reported per graph and set-up: strict Hit@1 (the first answer is gold), Hit@1, F1, answer in subgraph, p50 ms, and
strict Hit@1 per question kind ("2:" kinds take two hops); the misses are kept for reading, except for the sets
never to be tuned on.

    python bench/fictional_kgs.py [--set all|tuned|held-out|held-out-3|fourth|fifth|sixth|seventh|eighth] [--graph NAME]
        [--train] [--out bench/results/fictional_kgs.json]
"""

from __future__ import annotations

import argparse
import json
import tempfile
from collections import defaultdict
from pathlib import Path

from _common import REPO, RESULTS, command, gqa, machine, write_json

DATA = REPO / "bench" / "data" / "fictional"
SETS = json.loads((DATA / "sets.json").read_text())  # set -> {"keep_misses": bool, "graphs": [names in order]}
READER = None  # `gqa ask --reader` (--reader rules: the hand-set weights alone)


def load(set_name: str, graph: str) -> tuple[Path, list[tuple[str, list[str], str]]]:
    """A graph's triples file (as `gqa ingest triples` reads it) and its questions: (text, gold answers, kind)."""
    folder = DATA / set_name / graph
    lines = (folder / "questions.tsv").read_text(encoding="utf-8").splitlines()[1:]
    questions = [(text, answers.split("|"), kind) for text, answers, kind in (line.split("\t") for line in lines)]
    return folder / "triples.tsv", questions


def ask_all(graph: str, questions: list[tuple[str, list[str], str]], work: Path, setup: str) -> dict:
    asked = work / f"{graph}.tsv"
    asked.write_text("".join(f"{text}\t{'|'.join(gold)}\n" for text, gold, _ in questions))
    rows_file = work / f"{graph}-{setup}.jsonl"
    gqa("ask", "--graph", graph, "--questions", str(asked), "--llm-when", "never", "--out", str(rows_file),
        *(("--reader", READER) if READER else ()))
    rows = [json.loads(line) for line in rows_file.read_text().splitlines()]
    by_kind: dict[str, list[float]] = defaultdict(list)
    misses = []
    for (text, gold, kind), row in zip(questions, rows):
        by_kind[kind].append(row["scores"]["strict_hit_at_1"])
        if row["scores"]["strict_hit_at_1"] < 1:
            said = [node["text"] for node in row.get("answer_nodes", [])][:4]
            walk = (row.get("answer_nodes") or [{}])[0].get("walk")
            misses.append({"question": text, "kind": kind, "answer": said, "gold": gold[:4], "walk": walk})
    mean = lambda key: round(sum(r["scores"][key] for r in rows) / len(rows), 4)  # noqa: E731
    latencies = sorted(r["timings_ms"]["total"] for r in rows)
    return {"questions": len(rows), "strict_hit_at_1": mean("strict_hit_at_1"), "hit_at_1": mean("hit_at_1"),
            "f1": mean("f1"), "answer_in_subgraph": round(sum(r["answer_in_subgraph"] for r in rows) / len(rows), 4),
            "ms_p50": round(latencies[len(latencies) // 2], 1), "retriever": rows[0].get("retriever"),
            "by_kind": {k: f"{int(sum(v))}/{len(v)}" for k, v in by_kind.items()}, "misses": misses}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--train", action="store_true", help="also `gqa train --graph G` and ask again")
    parser.add_argument("--set", choices=sorted([*SETS, "all"]), default="all",
                        help="the graphs the zero-shot rules were tuned on, the held-out ones, or all")
    parser.add_argument("--graph", default=None, help="only this graph of the set (e.g. fictional-people)")
    parser.add_argument("--out", type=Path, default=RESULTS / "fictional_kgs.json")
    parser.add_argument("--reader", default=None, help="gqa ask --reader (rules: the hand-set weights alone)")
    parser.add_argument("--no-ingest", action="store_true", help="ask the graphs as stored (ingested before)")
    args = parser.parse_args()
    global READER
    READER = args.reader
    chosen = [(name, graph) for name in (SETS if args.set == "all" else [args.set])
              for graph in SETS[name]["graphs"] if args.graph in (None, graph)]
    if not chosen:
        parser.error(f"no graph {args.graph!r} in --set {args.set}")
    results = {}
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        for name, graph in chosen:
            source, questions = load(name, graph)
            if not args.no_ingest:
                gqa("drop", graph, "--yes", check=False)
                gqa("ingest", "triples", "--source", str(source), "--graph", graph)
            triples = len(source.read_text(encoding="utf-8").splitlines()) - 1
            results[f"{graph}/zero-shot"] = {"triples": triples, **ask_all(graph, questions, work, "zero-shot")}
            if args.train:
                minutes = round(gqa("train", "--graph", graph)[1] / 60, 2)
                results[f"{graph}/self-sup"] = {"train_minutes": minutes, **ask_all(graph, questions, work, "self-sup")}
            if not SETS[name]["keep_misses"]:  # neither written down nor shown, so that no one tunes on them
                for setup in ("zero-shot", "self-sup"):
                    results.get(f"{graph}/{setup}", {}).pop("misses", None)
                    results.get(f"{graph}/{setup}", {}).pop("by_kind", None)
    print(f"{'graph / set-up':32} {'strict':>7} {'hit@1':>7} {'f1':>7} {'in sub':>7} {'p50 ms':>7}")
    for key, row in results.items():
        print(f"{key:32} {row['strict_hit_at_1']:7.3f} {row['hit_at_1']:7.3f} {row['f1']:7.3f} "
              f"{row['answer_in_subgraph']:7.3f} {row['ms_p50']:7.0f}")
        if "by_kind" in row:
            print(f"  {' '.join(f'{k}:{v}' for k, v in row['by_kind'].items())}")
    write_json(args.out, {"machine": machine(), "command": command(), "reader": args.reader or "default",
                          "results": results}, newline=True)
    print(f"written to {args.out}")


if __name__ == "__main__":
    main()

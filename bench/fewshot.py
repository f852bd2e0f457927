"""Few-shot: how far N questions of a graph's own move it, through the CLI as a user runs it.

For each invented graph (`bench/data/fictional/<set>/<graph>/`), its questions are shuffled (seed 0); the last ones
(all but `max(--n)`, or all but the first N where the graph has too few) are the test questions, asked with nothing
of the graph's own (N = 0), then after `gqa ingest questions` of the first N as train questions and
`gqa train --graph G` (the first run trains retrieval on self-supervised questions; later ones, the graph unchanged,
only adapt the reader: warm). Reported per graph and N (`fewshot_n`): strict Hit@1 (`strict_hit1`), F1, answer
in subgraph, p50 ms, the expected calibration error of the answers' confidence (`ece`), `gqa train`'s seconds, and
what its cross-validations on the N questions measured (the lexicon: `cv_before`, `cv_after`, `adopted`; the walk
encoder tuned on them: `encoder_cv_before`, `encoder_cv_after`, `encoder_adopted`). Misses are not written: the sets
measured here are held out.

    python bench/fewshot.py [--set tenth] [--graph NAME[,NAME…]] [--n 25,100] [--out bench/results/fewshot.json]
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
from pathlib import Path

import numpy as np
from _common import RESULTS, command, gqa, machine, write_json
from fictional_kgs import SETS, load

from gretriever_neo4j.metrics import expected_calibration_error as ece


def _ask(graph: str, questions, work: Path, label: str) -> dict:
    asked = work / f"{graph}-test.tsv"
    asked.write_text("".join(f"{text}\t{'|'.join(gold)}\n" for text, gold, _ in questions))
    out = work / f"{graph}-{label}.jsonl"
    gqa("ask", "--graph", graph, "--questions", str(asked), "--llm-when", "never", "--out", str(out))
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    answered = [r for r in rows if "error" not in r]  # a question that failed counts as a miss, and is reported
    mean = lambda key: round(sum(r["scores"][key] for r in answered) / len(rows), 4)  # noqa: E731
    latencies = sorted(r["timings_ms"]["total"] for r in answered) or [0.0]
    sure = [(r["confidence"], r["scores"]["strict_hit_at_1"]) for r in answered if r.get("confidence") is not None]
    return {"questions": len(rows), "errors": len(rows) - len(answered), "strict_hit1": mean("strict_hit_at_1"),
            "f1": mean("f1"),
            "answer_in_subgraph": round(sum(r["answer_in_subgraph"] for r in answered) / len(rows), 4),
            "ms_p50": round(latencies[len(latencies) // 2], 1),
            "ece": round(ece(np.asarray([c for c, _ in sure]), np.asarray([h for _, h in sure])), 4) if sure else None,
            "reader": (answered[0].get("models", {}).get("reader") if answered else None),
            "first_error": next((r["error"] for r in rows if "error" in r), None)}


def _forget(graph: str) -> None:
    """The graph dropped and the models trained for it deleted (`gqa drop` keeps them): N = 0 means nothing of its
    own, a run before this one's included."""
    import shutil

    from gretriever_neo4j.artifacts.registry import models_dir

    gqa("drop", graph, "--yes", check=False)
    shutil.rmtree(models_dir(graph), ignore_errors=True)


def _manifest(graph: str) -> dict:
    from gretriever_neo4j.artifacts.registry import models_dir

    path = models_dir(graph) / "manifest.json"
    return json.loads(path.read_text()) if path.exists() else {}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--set", default="tenth", help="comma-separated sets of bench/data/fictional")
    parser.add_argument("--graph", default=None, help="comma-separated graphs of the sets [default: all]")
    parser.add_argument("--n", default="25,100", help="own questions, comma-separated, ascending")
    parser.add_argument("--out", type=Path, default=RESULTS / "fewshot.json")
    args = parser.parse_args()
    ns = sorted(int(n) for n in args.n.split(","))
    results = []
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        for set_name in args.set.split(","):
            for name in SETS[set_name]["graphs"]:
                if args.graph and name not in args.graph.split(","):
                    continue
                source, questions = load(set_name, name)
                random.Random(0).shuffle(questions)
                usable = [n for n in ns if len(questions) - n >= 25]
                test = questions[max(usable, default=0):]
                graph = f"fewshot-{name}"
                _forget(graph)
                gqa("ingest", "triples", "--source", str(source), "--graph", graph)
                results.append({"set": set_name, "graph": name, "fewshot_n": 0, **_ask(graph, test, work, "0")})
                print(json.dumps(results[-1]), flush=True)
                for n in usable:
                    own = work / f"{graph}-own.tsv"
                    own.write_text("".join(f"{text}\t{'|'.join(gold)}\t\ttrain\n" for text, gold, _ in questions[:n]))
                    gqa("ingest", "questions", "--graph", graph, "--source", str(own))
                    seconds = gqa("train", "--graph", graph)[1]
                    fewshot = _manifest(graph).get("details", {}).get("fewshot", {})
                    encoder = fewshot.get("walk_encoder") or {}
                    results.append({"set": set_name, "graph": name, "fewshot_n": n, "train_seconds": round(seconds, 1),
                                    "cv_before": fewshot.get("before"), "cv_after": fewshot.get("after"),
                                    "adopted": fewshot.get("adopted"), "encoder_cv_before": encoder.get("before"),
                                    "encoder_cv_after": encoder.get("after"), "encoder_adopted": encoder.get("adopted"),
                                    **_ask(graph, test, work, str(n))})
                    print(json.dumps(results[-1]), flush=True)
                _forget(graph)
    print(f"{'graph':34} {'N':>4} {'strict':>7} {'f1':>6} {'in sub':>7} {'train s':>8} {'cv':>12} {'encoder cv':>12}")
    for row in results:
        cv = f"{row['cv_before']:.2f}->{row['cv_after']:.2f}" if row.get("cv_before") is not None else ""
        tuned = (f"{row['encoder_cv_before']:.2f}->{row['encoder_cv_after']:.2f}"
                 if row.get("encoder_cv_before") is not None else "")
        print(f"{row['graph']:34} {row['fewshot_n']:4} {row['strict_hit1']:7.3f} {row['f1']:6.3f} "
              f"{row['answer_in_subgraph']:7.3f} {row.get('train_seconds', 0):8.0f} {cv:>12} {tuned:>12}")
    write_json(args.out, {"machine": machine(), "command": command(), "results": results}, newline=True)
    print(f"written to {args.out}")


if __name__ == "__main__":
    main()

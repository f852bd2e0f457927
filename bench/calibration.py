"""Is the confidence shown beside an answer to be trusted? Per invented graph: expected calibration error (ECE, 10
equal-width bins) of the answer's confidence against strict Hit@1, the share right of the answers shown as sure
(confidence >= `--sure`, by default the calibration's `sure_at`, where `gqa ask` marks an answer sure) and of
those shown as unsure, and a reliability diagram of all graphs together (PNG).
Through the CLI (`gqa ask --questions`, reader answers, no LLM), on graphs as stored (`bench/fictional_kgs.py`
ingests them). Misses are not written.

    python bench/calibration.py [--set eighth,held-out,held-out-3] [--sure 0.85] [--out bench/results/calibration.json]
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

import numpy as np
from _common import RESULTS, command, gqa, machine, write_json
from fictional_kgs import SETS, load

from gretriever_neo4j.metrics import expected_calibration_error as ece
from gretriever_neo4j.reader.confidence import CALIBRATION


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--set", default="eighth,held-out,held-out-3")
    parser.add_argument("--sure", type=float, default=CALIBRATION.sure_at)
    parser.add_argument("--out", type=Path, default=RESULTS / "calibration.json")
    args = parser.parse_args()
    results, everything = {}, []
    with tempfile.TemporaryDirectory() as folder:
        for set_name in args.set.split(","):
            for graph in SETS[set_name]["graphs"]:
                _, questions = load(set_name, graph)
                asked = Path(folder) / f"{graph}.tsv"
                asked.write_text("".join(f"{text}\t{'|'.join(gold)}\n" for text, gold, _ in questions))
                out = Path(folder) / f"{graph}.jsonl"
                gqa("ask", "--graph", graph, "--questions", str(asked), "--llm-when", "never", "--out", str(out))
                rows = [json.loads(line) for line in out.read_text().splitlines()]
                rows = [r for r in rows if r.get("confidence") is not None]
                p = np.asarray([r["confidence"] for r in rows])
                y = np.asarray([r["scores"]["strict_hit_at_1"] for r in rows])
                sure = p >= args.sure
                results[graph] = {"set": set_name, "questions": len(rows), "strict_hit1": round(float(y.mean()), 4),
                                  "ece": round(ece(p, y), 4), "ece_if_always_1": round(float(1 - y.mean()), 4),
                                  "sure": int(sure.sum()),
                                  "sure_right": round(float(y[sure].mean()), 4) if sure.any() else None,
                                  "unsure": int(sum(r["unsure"] for r in rows)),
                                  "unsure_right": (round(float(np.mean([r["scores"]["strict_hit_at_1"] for r in rows
                                                                         if r["unsure"]])), 4)
                                                   if any(r["unsure"] for r in rows) else None)}
                everything += list(zip(p.tolist(), y.tolist()))
                print(graph, results[graph], flush=True)
    p, y = np.asarray([a for a, _ in everything]), np.asarray([b for _, b in everything])
    summary = {"questions": len(p), "ece": round(ece(p, y), 4),
               "mean_ece_per_graph": round(float(np.mean([r["ece"] for r in results.values()])), 4),
               "sure_right": round(float(y[p >= args.sure].mean()), 4) if (p >= args.sure).any() else None,
               "sure_share": round(float((p >= args.sure).mean()), 4)}
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    bins = np.minimum((p * 10).astype(int), 9)
    centers = [p[bins == b].mean() for b in range(10) if (bins == b).any()]
    rates = [y[bins == b].mean() for b in range(10) if (bins == b).any()]
    counts = [int((bins == b).sum()) for b in range(10) if (bins == b).any()]
    figure, axis = plt.subplots(figsize=(4.5, 4.5))
    axis.plot([0, 1], [0, 1], "--", color="grey", label="perfectly calibrated")
    axis.plot(centers, rates, "o-", label=f"gqa (ECE {summary['ece']:.3f})")
    for x, r, c in zip(centers, rates, counts):
        axis.annotate(str(c), (x, r), textcoords="offset points", xytext=(4, -10), fontsize=7)
    axis.set_xlabel("confidence shown")
    axis.set_ylabel("share right (strict Hit@1)")
    axis.set_title(f"{len(p)} questions, {len(results)} graphs nobody read")
    axis.legend(loc="upper left", fontsize=8)
    png = args.out.with_suffix(".png")
    figure.tight_layout()
    figure.savefig(png, dpi=120)
    write_json(args.out, {"machine": machine(), "command": command(), "sure_at": args.sure, "summary": summary,
                          "graphs": results, "diagram": png.name}, newline=True)
    print(summary, f"written to {args.out} and {png}")


if __name__ == "__main__":
    main()

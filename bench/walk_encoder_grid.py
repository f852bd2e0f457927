"""How many walks the walk encoder should read and how much its similarity should weigh, offline over
`train.general_reader collect` files: for each number of candidates (a question's best walks by the hand-set
reader) and each weight, the share of questions whose walk of best reader score plus weight times the encoder's
similarity reaches a gold answer (`train.walk_encoder.choice_hit`). Measure it only on graphs the encoder was not
trained on (an encoder trained without them: `python -m train.walk_encoder … --save FOLDER`).

    python bench/walk_encoder_grid.py ENCODER DATA/*.npz [--candidates 8,16,24] [--weights 2,4,6,8,12]
        [--out bench/results/walk_encoder/grid.json]
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
from _common import REPO, RESULTS, command, machine, write_json

sys.path.insert(0, str(REPO))


def main() -> None:
    from gretriever_neo4j.reader.walk_encoder import WalkEncoder
    from train.walk_encoder import choice_hit, similarities, walk_questions

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("encoder", type=Path, help="a saved walk encoder folder")
    parser.add_argument("data", type=Path, nargs="+", help="collect files of graphs the encoder was not trained on")
    parser.add_argument("--candidates", default="8,16,24", help="comma-separated")
    parser.add_argument("--weights", default="2,4,6,8,12", help="comma-separated")
    parser.add_argument("--out", type=Path, default=RESULTS / "walk_encoder" / "grid.json")
    args = parser.parse_args()
    counts = [int(c) for c in args.candidates.split(",")]
    weights = [float(w) for w in args.weights.split(",")]

    model = WalkEncoder.load(args.encoder, onnx=False).model
    questions = walk_questions(args.data, max(counts))  # each question's walks best first by the reader
    sims = similarities(model, questions)
    graphs = sorted({q.graph for q in questions})
    rows = []
    for count in counts:
        cut = [replace(q, walks=q.walks[:count], f1=q.f1[:count], reader=q.reader[:count]) for q in questions]
        for weight in weights:
            per_graph = {g: round(choice_hit([q for q in cut if q.graph == g],
                                             [s[:count] for q, s in zip(cut, sims) if q.graph == g], weight), 4)
                         for g in graphs}
            rows.append({"candidates": count, "weight": weight, "per_graph": per_graph,
                         "mean_over_graphs": round(float(np.mean(list(per_graph.values()))), 4)})
            print(f"{count:3} walks, weight {weight:5}: {rows[-1]['mean_over_graphs']:.4f}", flush=True)
    write_json(args.out, {"machine": machine(), "command": command(), "encoder": str(args.encoder),
                          "questions": len(questions), "measured": rows})


if __name__ == "__main__":
    main()

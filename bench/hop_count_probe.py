"""Would knowing how many hops a question asks fix the walks the reader cuts short? Offline over
`train.general_reader collect` files and a walk encoder:

- the label of a question is the hop count of its answering walk (the fewest hops among its walks of best F1, 3 for
  three or more); questions no walk answers are left out;
- a logistic regression predicts it from the masked question's vector under the encoder, trained on every other
  graph (left out one graph at a time);
- the choice is the walk of best reader score plus `--weight` times the encoder's similarity among its `--candidates`
  best walks by the reader (as `gqa ask` reads them), and it is measured with nothing added, with the label known
  (walks of another hop count, or only shorter ones, ruled out), and with the predicted probabilities added as walk
  features: `short` times P(the question asks more hops than the walk takes), `log` times log P(the walk's hop
  count).

    python bench/hop_count_probe.py ENCODER DATA/*.npz [--measure g1,g2] [--out bench/results/walk_encoder/hops.json]

`--measure`: the graphs (collect files' graph names) averaged in the summary; by default all of them. The encoder
should not have been trained on them.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
from _common import REPO, RESULTS, command, machine, write_json

sys.path.insert(0, str(REPO))

SETTINGS = {"none": (0.0, 0.0), "short 0.2": (-0.2, 0.0), "short 0.4": (-0.4, 0.0), "log 0.1": (0.0, 0.1),
            "log 0.2": (0.0, 0.2)}


def main() -> None:
    from sklearn.linear_model import LogisticRegression

    from gretriever_neo4j.reader.walk_encoder import WalkEncoder
    from train.hop_reader import hop_questions

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("encoder", type=Path)
    parser.add_argument("data", type=Path, nargs="+")
    parser.add_argument("--measure", default="", help="comma-separated graph names (default: all)")
    parser.add_argument("--candidates", type=int, default=8)
    parser.add_argument("--weight", type=float, default=4.0)
    parser.add_argument("--out", type=Path, default=RESULTS / "walk_encoder" / "hops.json")
    args = parser.parse_args()

    questions = hop_questions(args.data, args.candidates)  # labelled, walks best first by the reader

    model = WalkEncoder.load(args.encoder, onnx=False).model
    texts = sorted({t for q in questions for t in (q.masked, *q.walks)})
    vectors = dict(zip(texts, model.encode(texts, normalize_embeddings=True, batch_size=64)))
    graphs = np.asarray([q.graph for q in questions])
    x = np.stack([vectors[q.masked] for q in questions])
    y = np.asarray([q.label for q in questions])
    probability = np.zeros((len(questions), 3))
    for graph in sorted(set(graphs)):
        held = graphs == graph
        fitted = LogisticRegression(max_iter=3000).fit(x[~held], y[~held])
        probability[np.ix_(held, fitted.classes_ - 1)] = fitted.predict_proba(x[held])

    # each question's candidates scored as `gqa ask` scores them: the reader plus weight times the similarity
    scores = [q.reader + args.weight * (np.stack([vectors[w] for w in q.walks]) @ vectors[q.masked]) for q in questions]

    def hit(extra) -> np.ndarray:
        return np.asarray([q.f1[int(np.argmax(s + e))] > 0 for q, s, e in zip(questions, scores, extra)], dtype=float)

    results = {"known, shorter ruled out": hit([-100.0 * (q.hops < q.label) for q in questions]),
               "known, other counts ruled out": hit([-100.0 * (q.hops != q.label) for q in questions])}
    for name, (short, log) in SETTINGS.items():
        results[f"predicted, {name}"] = hit([short * np.asarray([p[h:].sum() for h in q.hops])
                                             + log * np.log(p[q.hops - 1] + 1e-3)
                                             for q, p in zip(questions, probability)])
    measured = [g for g in args.measure.split(",") if g] or sorted(set(graphs))
    mean = {name: round(float(np.mean([h[graphs == g].mean() for g in measured])), 4) for name, h in results.items()}
    accuracy = {g: round(float((probability[graphs == g].argmax(1) + 1 == y[graphs == g]).mean()), 4)
                for g in sorted(set(graphs))}
    for name, value in mean.items():
        print(f"{name:32} {value:.4f}")
    print(f"hop count predicted right: {np.mean([accuracy[g] for g in measured]):.4f} (mean over measured graphs)")
    write_json(args.out, {"machine": machine(), "command": command(), "questions": len(questions),
                          "labels": {str(k): int((y == k).sum()) for k in (1, 2, 3)}, "measured_graphs": measured,
                          "hop_accuracy": accuracy, "choice_hit_mean_over_measured": mean})


if __name__ == "__main__":
    main()

"""The walk ranker (`reader.walk_ranker`): LightGBM's LambdaRank over the named features of each question's
shortlisted walks, trained across graphs on `train.general_reader collect --as-asked` files (what ships: each graph
read by a walk encoder that never saw it, `--walk-encoder`, as a new graph is read; docs/learned-reader.md).

A walk's relevance is round(`grades` x the F1 of its end nodes); questions no walk answers are left out. The trees
also read the walk's linear score under the hand-set weights and its distance below the question's best, and its
distance below the question's best on each feature named by `--below-best` (by default the learned ones,
`BELOW_BEST`).

`measure` reads what `gqa ask` would choose: per graph, the share of questions whose walk of best score reaches a
gold answer (F1 > 0), by the linear score alone and with the ranker added at each weight. With `--leave-out`
every graph of the files is measured by trees trained on the others; with `--test`, by trees trained on every
training file.

    python -m train.walk_ranker DATA/*.npz [--test OTHER/*.npz | --leave-out] [--weights 0.5,1,2]
        [--below-best F,...] [--save FOLDER] [--out result.json]

`--save` writes the trees trained on every training file; the ranker that ships is in
`gretriever_neo4j/reader/general/` (docs/learned-reader.md).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from .run_record import run_record

# The features whose distance below the question's best walk the trees read by default: the learned similarities
# (walk encoder, matcher, end nodes to the question) and the hop reader's.
BELOW_BEST = ("tuned_reading", "hop_reading", "matcher", "end_question")


def _inputs(questions, columns: np.ndarray, base: np.ndarray, below: np.ndarray):
    from gretriever_neo4j.reader.walk_ranker import ranker_inputs

    return [ranker_inputs(q.features, columns, base, below) for q in questions]


def fit(questions: Sequence, settings=None, seed: int = 0):
    """A `WalkRanker` trained on `questions` (`reader.learned.QuestionWalks`) under `settings` (default
    `RankerSettings`, reading every feature of `FEATURES` and the hand-set weights' score; `below_best` as given,
    none by default)."""
    import dataclasses

    import lightgbm

    from gretriever_neo4j.reader.signature_weights import FEATURES, ZERO_SHOT
    from gretriever_neo4j.reader.walk_ranker import RankerSettings, WalkRanker, feature_columns

    settings = settings or RankerSettings()
    if not settings.features:
        settings = dataclasses.replace(settings, features=tuple(FEATURES), base=tuple(ZERO_SHOT.vector()))
    columns, below = feature_columns(settings.features), feature_columns(settings.below_best)
    answered = [q for q in questions if len(q.f1) and q.f1.max() > 0]
    if not answered:
        raise ValueError("no question with a walk that answers it")
    inputs = np.vstack(_inputs(answered, columns, np.asarray(settings.base), below))
    relevance = np.concatenate([np.round(settings.grades * q.f1).astype(int) for q in answered])
    model = lightgbm.LGBMRanker(objective="lambdarank", num_leaves=settings.leaves, n_estimators=settings.trees,
                                learning_rate=settings.learning_rate, min_data_in_leaf=settings.min_in_leaf,
                                lambdarank_truncation_level=settings.truncation,
                                label_gain=[float(2 ** g - 1) for g in range(settings.grades + 1)],
                                n_jobs=1, random_state=seed, deterministic=True, force_row_wise=True, verbose=-1)
    model.fit(inputs, relevance, group=[len(q.f1) for q in answered])
    return WalkRanker(model.booster_, settings)


def choices(ranker, questions: Sequence, weights: Sequence[float], base=None) -> dict:
    """Per weight (and 0: the linear score alone), how many of `questions` have their best walk reach a gold
    answer; `base`: the linear weights (`SignatureWeights`, the hand-set ones by default)."""
    from gretriever_neo4j.reader.signature_weights import ZERO_SHOT

    vector = (base or ZERO_SHOT).vector()
    hits = {0.0: 0, **{float(w): 0 for w in weights}}
    for q in questions:
        linear = q.features @ vector
        opinion = ranker.scores(q.features)
        for weight in hits:
            score = linear + weight * (opinion - opinion.max())
            hits[weight] += int(q.f1[int(np.argmax(score))] > 0)
    return hits


def measure(train: Sequence, test: Sequence | None, weights: Sequence[float], settings=None) -> dict:
    """Per graph of `test` (or, with None, of `train`, each by trees trained on the other graphs), the questions
    and their best walk's hits at each weight; the mean over graphs; per weight, how many graphs won or lost more
    than two questions."""
    per_graph = {}
    if test is not None:
        ranker = fit(train, settings)
        groups = [(g, [q for q in test if q.graph == g], ranker) for g in sorted({q.graph for q in test})]
    else:
        groups = [(g, [q for q in train if q.graph == g], fit([q for q in train if q.graph != g], settings))
                  for g in sorted({q.graph for q in train})]
    for graph, questions, ranker in groups:
        hits = choices(ranker, questions, weights)
        per_graph[graph] = {"questions": len(questions), **{str(w): h / len(questions) for w, h in hits.items()}}
        print(graph, json.dumps(per_graph[graph]), file=sys.stderr, flush=True)
    keys = ["0.0"] + [str(float(w)) for w in weights]
    mean = {k: float(np.mean([r[k] for r in per_graph.values()])) for k in keys}
    moved = {k: {"won": sum(1 for r in per_graph.values() if (r[k] - r["0.0"]) * r["questions"] > 2.5),
                 "lost": sum(1 for r in per_graph.values() if (r["0.0"] - r[k]) * r["questions"] > 2.5)}
             for k in keys[1:]}
    return {"graphs": per_graph, "mean": mean, "more_than_two_questions": moved}


def main(argv: list[str] | None = None) -> None:
    from gretriever_neo4j.reader.learned import load_tables
    from gretriever_neo4j.reader.signature_weights import FEATURES
    from gretriever_neo4j.reader.walk_ranker import RankerSettings

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("data", type=Path, nargs="+", help="collect files (--as-asked) that train it")
    parser.add_argument("--test", type=Path, nargs="*", default=None, help="collect files to measure on")
    parser.add_argument("--leave-out", action="store_true", help="measure each training graph, left out")
    parser.add_argument("--weights", default="0.5,1,2", help="comma-separated, measured")
    parser.add_argument("--weight", type=float, default=RankerSettings.weight, help="the weight saved")
    parser.add_argument("--below-best", default=",".join(BELOW_BEST),
                        help="comma-separated features whose distance below the question's best the trees read")
    parser.add_argument("--save", type=Path, default=None, help="the folder to write the trees into")
    parser.add_argument("--out", type=Path, default=None, help="the measurement as JSON")
    args = parser.parse_args(argv)

    train = load_tables(args.data)
    weights = [float(w) for w in args.weights.split(",") if w]
    below_best = tuple(f for f in args.below_best.split(",") if f)
    if unknown := [f for f in below_best if f not in FEATURES]:
        parser.error(f"--below-best: features gqa does not compute: {', '.join(unknown)}")
    settings = RankerSettings(weight=args.weight, below_best=below_best)
    record = {**run_record("walk_ranker", argv), "graphs": len({q.graph for q in train}), "questions": len(train)}
    print(f"{len(train)} questions of {record['graphs']} graphs", file=sys.stderr)
    if args.test is not None or args.leave_out:
        test = load_tables(args.test) if args.test is not None else None
        record["measured"] = measure(train, test, weights, settings)
        print(json.dumps({k: record["measured"][k] for k in ("mean", "more_than_two_questions")}), file=sys.stderr)
    if args.save:
        import dataclasses

        record_of_training = {k: v for k, v in record.items() if k != "measured"}
        fit(train, dataclasses.replace(settings, training=record_of_training)).save(args.save)
        print(f"written to {args.save}", file=sys.stderr)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(record, indent=1) + "\n")


if __name__ == "__main__":
    main()

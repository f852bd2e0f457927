"""The general calibration of the zero-shot reader's confidence (`reader.confidence`): collected on answered
questions of stored graphs, fitted by logistic regression, checked leaving one graph out.

    python -m train.calibration collect --graph G --questions Q.tsv --out DIR/G.npz [--walk-encoder FOLDER]
        [--hop-reader FOLDER] [--walk-ranker FOLDER]
    python -m train.calibration fit DIR/*.npz --out gretriever_neo4j/reader/calibration.json [--l2 0.01]
        [--also MORE/*.npz] [--marks 0.85,0.9,0.95] [--sure-at 0.9]
    python -m train.calibration measure DIR/*.npz [--calibration FILE] [--out result.json]

`collect` asks each question through the product's retrieval and keeps, per answered question, its first answer's
`answer_evidence` and whether that answer is gold (strict Hit@1). `fit` fits `Calibration` (support log-odds,
the best walk's features standardized, an intercept; an L2 pull of `--l2` on the feature weights) on all files,
and first prints what the same fit measures on each graph when that graph is left out: expected calibration
error, and how often answers shown as sure (`Calibration.sure_at`) are right, and at each of `--marks`
(`sure_marks`: what the sure mark is chosen from, `--sure-at` the one written). Files given with `--also` are in
every one of those fits and in the written one, but never left out: what they add to a fit is then measured on the
same graphs as without them. `measure` scores a written calibration (by default the shipped one) on collect files
it was not fitted on, per graph and pooled: the check on graphs a fit never saw, read by models that never saw them.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import replace
from pathlib import Path

import numpy as np

from gretriever_neo4j.metrics import expected_calibration_error as ece
from gretriever_neo4j.reader.confidence import CALIBRATION, Calibration

from .run_record import run_record


def collect(graph: str, questions: list[tuple[str, list[str]]], walk_encoder: Path | None = None,
            hop_reader: Path | None = None, walk_ranker: Path | None = None) -> dict[str, np.ndarray]:
    """Read as `gqa ask` reads: with the walk encoder, the hop reader and the walk ranker that ship, or those in
    the folders `walk_encoder`, `hop_reader` and `walk_ranker` (ones trained without this graph: the shipped ones
    saw the read graphs, and answers there are surer than on a graph they never saw)."""
    from gretriever_neo4j.reader.confidence import answer_evidence
    from gretriever_neo4j.reader.hop_reading import HopReader
    from gretriever_neo4j.reader.learned import general_hop_reader, general_walk_encoder, general_walk_ranker
    from gretriever_neo4j.reader.signature_weights import FEATURES
    from gretriever_neo4j.reader.walk_encoder import WalkEncoder
    from gretriever_neo4j.reader.walk_ranker import WalkRanker

    from .general_reader import read_questions

    encoder = WalkEncoder.load(walk_encoder) if walk_encoder else general_walk_encoder()
    hops = HopReader.load(hop_reader) if hop_reader else general_hop_reader()
    ranker = WalkRanker.load(walk_ranker) if walk_ranker else general_walk_ranker()
    support, walk, chosen_by, right = [], [], [], []
    for _, reading, is_gold in read_questions(graph, questions, walk_encoder=encoder, hop_reader=hops,
                                              walk_ranker=ranker):
        evidence = answer_evidence(reading)
        if evidence is None:
            continue
        support.append(evidence.support)
        walk.append(evidence.walk)
        chosen_by.append(evidence.chosen_by)
        right.append(bool(is_gold[reading.answers[0]]))
    return {"support": np.asarray(support), "walk": np.asarray(walk).reshape(len(walk), len(FEATURES)),
            "chosen_by": np.asarray(chosen_by, dtype=str), "right": np.asarray(right, dtype=bool),
            "graph": np.asarray(graph)}


CHOICES = ("narrowed", "joined")  # the `Calibration` weights of what chose an answer, as `Reading.chosen_by` says


def chosen_by(data) -> np.ndarray:
    """A collect file's `chosen_by` per answer ("walks" in files collected before it was kept)."""
    return (np.asarray(data["chosen_by"], dtype=str) if "chosen_by" in data
            else np.full(len(data["right"]), "walks"))


def evidence(support: np.ndarray, walk: np.ndarray, chosen: np.ndarray) -> list:
    """The `AnswerEvidence` of each collected answer."""
    from gretriever_neo4j.reader.confidence import AnswerEvidence

    return [AnswerEvidence(float(s), tuple(w), str(c)) for s, w, c in zip(support, walk, chosen)]


def fit(support: np.ndarray, walk: np.ndarray, right: np.ndarray, l2: float = 0.01, base=None,
        chosen: np.ndarray | None = None, keep_walk_weights: bool = False):
    """The `Calibration` of logistic regression on these answers (`base` gives its other settings): the support's
    slope, the intercept, a weight for each of `CHOICES` that chose some answer (`chosen`, per answer; none where
    not given) and, unless `keep_walk_weights` keeps `base`'s, the weights of the walk features that vary (pulled
    towards 0 by `l2`)."""
    from scipy.optimize import minimize

    from gretriever_neo4j.reader.confidence import log_odds
    from gretriever_neo4j.reader.signature_weights import FEATURES

    base = base or CALIBRATION
    chosen = np.full(len(right), "walks") if chosen is None else np.asarray(chosen, dtype=str)
    choices = [c for c in CHOICES if (chosen == c).any()]
    indicators = np.column_stack([chosen == c for c in choices] or [np.zeros((len(right), 0))]).astype(float)
    if keep_walk_weights:
        # base's walk-feature term: its logit of the answer as the walks chose it, less the support's
        offset = np.asarray([base.logit(e, with_intercept=False) for e in
                             evidence(support, walk, np.full(len(right), "walks"))]) - base.slope * log_odds(support)
        x, walk_columns = np.column_stack([log_odds(support), indicators]), 0
    else:
        varies = walk.std(axis=0) > 1e-9
        means, scales = walk.mean(axis=0)[varies], walk.std(axis=0)[varies]
        offset = np.zeros(len(right))
        x = np.column_stack([log_odds(support), (walk[:, varies] - means) / scales, indicators])
        walk_columns = int(varies.sum())
    sign = 2.0 * right - 1.0

    def loss(w):
        z = x @ w[:-1] + w[-1] + offset
        return float(np.mean(np.logaddexp(0.0, -sign * z)) + l2 * np.sum(w[1:1 + walk_columns] ** 2))

    w = minimize(loss, np.zeros(x.shape[1] + 1), method="L-BFGS-B").x
    weights = dict(zip(choices, w[1 + walk_columns:-1]))
    out = replace(base, slope=round(float(w[0]), 4), intercept=round(float(w[-1]), 4),
                  **{c: round(float(weights.get(c, 0.0)), 4) for c in CHOICES})
    if keep_walk_weights:
        return out
    return replace(out, features=tuple(f for f, keep in zip(FEATURES, varies) if keep),
                   weights=tuple(round(float(v), 4) for v in w[1:1 + walk_columns]),
                   means=tuple(round(float(v), 4) for v in means), scales=tuple(round(float(v), 4) for v in scales))


SURE_MARK_MIN = 20  # a graph's share right among its sure answers is judged where it has at least this many


def sure_marks(p: np.ndarray, right: np.ndarray, graph: np.ndarray, marks) -> dict[float, dict]:
    """Per candidate mark: the share of answers at or above it (`p`, their probabilities), the share of those
    right, and the lowest such share on a graph with at least `SURE_MARK_MIN` answers marked (None: no graph has
    that many). What `Calibration.sure_at` is chosen from."""
    out = {}
    for mark in marks:
        sure = p >= mark
        marked = [right[sure & (graph == g)] for g in sorted(set(graph.tolist()))]
        per_graph = [m.mean() for m in marked if len(m) >= SURE_MARK_MIN]
        out[float(mark)] = {"share": float(sure.mean()) if len(p) else 0.0,
                            "right": float(right[sure].mean()) if sure.any() else None,
                            "worst_graph": float(min(per_graph)) if per_graph else None}
    return out


def _share(value: float | None) -> str:
    """A share right as printed; "-" where no answer was sure, so no share of them is right."""
    return "-" if value is None else f"{value:.3f}"


def measure(files, calibration) -> dict:
    """ECE, answers shown as sure (their share and how many are right), accuracy and mean confidence, per graph
    and over all the files' answers, of `calibration` on collect files."""
    from gretriever_neo4j.reader.confidence import calibrated

    def scores(p: np.ndarray, right: np.ndarray) -> dict:
        sure = p >= calibration.sure_at
        return {"answered": int(len(right)), "strict_hit1": round(float(right.mean()), 4),
                "mean_confidence": round(float(p.mean()), 4), "ece": round(ece(p, right), 4),
                "sure_share": round(float(sure.mean()), 4),
                "sure_right": round(float(right[sure].mean()), 4) if sure.any() else None}

    per_graph, pooled_p, pooled_right = {}, [], []
    for data in files:
        p = np.asarray([calibrated(e, calibration) for e in evidence(data["support"], data["walk"], chosen_by(data))],
                       dtype=float)
        right = np.asarray(data["right"], dtype=bool)
        per_graph[str(data["graph"])] = scores(p, right)
        pooled_p.append(p)
        pooled_right.append(right)
    return {"pooled": scores(np.concatenate(pooled_p), np.concatenate(pooled_right)),
            "mean_ece_per_graph": round(float(np.mean([g["ece"] for g in per_graph.values()])), 4),
            "per_graph": per_graph}


def main(argv: list[str] | None = None) -> None:
    from gretriever_neo4j.reader.confidence import calibrated

    from .general_reader import _questions

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    c = sub.add_parser("collect")
    c.add_argument("--graph", required=True)
    c.add_argument("--questions", type=Path, required=True)
    c.add_argument("--out", type=Path, required=True)
    c.add_argument("--walk-encoder", type=Path, default=None,
                   help="a walk encoder folder trained without this graph (default: the one that ships)")
    c.add_argument("--hop-reader", type=Path, default=None,
                   help="a hop reader folder trained without this graph (default: the one that ships)")
    c.add_argument("--walk-ranker", type=Path, default=None,
                   help="a walk ranker folder trained without this graph (default: the one that ships)")
    f = sub.add_parser("fit")
    f.add_argument("data", type=Path, nargs="+")
    f.add_argument("--out", type=Path, required=True)
    f.add_argument("--l2", type=float, default=0.01)
    f.add_argument("--also", type=Path, nargs="*", default=[],
                   help="collect files always fitted on, never left out")
    f.add_argument("--marks", type=lambda text: [float(m) for m in text.split(",") if m], default=[0.85, 0.9, 0.95],
                   help="comma-separated sure marks to measure, left out (default 0.85,0.9,0.95)")
    f.add_argument("--sure-at", type=float, default=None, help="the sure mark to write (default: the shipped one)")
    f.add_argument("--keep-walk-weights", action="store_true",
                   help="keep the shipped fit's walk-feature weights; fit the slope, the intercept and the choices")
    m = sub.add_parser("measure")
    m.add_argument("data", type=Path, nargs="+")
    m.add_argument("--calibration", type=Path, default=None, help="a written fit (default: the one that ships)")
    m.add_argument("--out", type=Path, default=None, help="the measurement as JSON")
    args = parser.parse_args(argv)
    if args.command == "measure":
        result = measure([np.load(path) for path in args.data],
                         Calibration.load(args.calibration) if args.calibration else CALIBRATION)
        for name, row in result["per_graph"].items():
            print(f"{name:40} {row['answered']:4} right {row['strict_hit1']:.3f}  ece {row['ece']:.3f}"
                  f"  sure {row['sure_share']:.2f} right {_share(row['sure_right'])}")
        pooled = result["pooled"]
        print(f"all: ece {pooled['ece']:.3f}, mean per graph {result['mean_ece_per_graph']:.3f}, sure "
              f"{pooled['sure_share']:.2f} of answers, {_share(pooled['sure_right'])} right")
        if args.out:
            record = {**run_record("calibration", argv), "calibration": str(args.calibration or "shipped")}
            args.out.write_text(json.dumps({**record, **result}, indent=1) + "\n")
        return
    if args.command == "collect":
        data = collect(args.graph, _questions(args.questions), args.walk_encoder, args.hop_reader, args.walk_ranker)
        args.out.parent.mkdir(parents=True, exist_ok=True)
        np.savez_compressed(args.out, **data)
        print(f"{args.out}: {len(data['right'])} answered questions, {data['right'].mean():.3f} right")
        return
    files = [np.load(path) for path in args.data]
    also = [np.load(path) for path in args.also]
    support = np.concatenate([d["support"] for d in files + also])
    walk = np.concatenate([d["walk"] for d in files + also])
    right = np.concatenate([d["right"] for d in files + also])
    chosen = np.concatenate([chosen_by(d) for d in files + also])
    # the --also rows are named "": in every fit, never held out nor measured
    graph = np.concatenate([np.full(len(d["right"]), str(d["graph"])) for d in files]
                           + [np.full(len(d["right"]), "") for d in also])
    measured = graph != ""
    base = replace(CALIBRATION, sure_at=args.sure_at) if args.sure_at else CALIBRATION  # what every fit carries
    left_out = np.zeros(len(right))
    names = sorted(set(graph[measured]))
    for name in names:
        held = graph == name
        calibration = fit(support[~held], walk[~held], right[~held], args.l2, base=base, chosen=chosen[~held],
                          keep_walk_weights=args.keep_walk_weights)
        left_out[held] = [calibrated(e, calibration) for e in evidence(support[held], walk[held], chosen[held])]
        sure = left_out[held] >= calibration.sure_at
        print(f"{name:40} {held.sum():4} right {right[held].mean():.3f}  ece {ece(left_out[held], right[held]):.3f}"
              f"  sure {sure.sum():3} right {_share(right[held][sure].mean() if sure.any() else None)}")
    for mark, row in sure_marks(left_out[measured], right[measured], graph[measured], args.marks).items():
        print(f"sure at {mark:.3f}: {row['share']:.2f} of answers marked, {_share(row['right'])} right, "
              f"the worst graph with >= {SURE_MARK_MIN} marked {_share(row['worst_graph'])}")
    sure = left_out[measured] >= base.sure_at
    print(f"left out, all: ece {ece(left_out[measured], right[measured]):.3f}, mean per graph "
          f"{np.mean([ece(left_out[graph == g], right[graph == g]) for g in names]):.3f}, "
          f"sure {sure.mean():.2f} of answers, {_share(right[measured][sure].mean() if sure.any() else None)} right")
    calibration = fit(support, walk, right, args.l2, base=base, chosen=chosen,
                      keep_walk_weights=args.keep_walk_weights)
    calibration.save(args.out)
    print(f"written {args.out} ({len(right)} answered questions of {len(files) + len(also)} files)")


if __name__ == "__main__":
    main()

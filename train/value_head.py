"""The hop reader's value head (`reader.hop_reading`): one logistic unit over the hop reader's question vector, the
probability that a question asks for a number or a date, trained across invented graphs' questions.

A question's label is whether every gold answer is a value (`retrieval.texts.is_a_value`). Its entity is masked
as the reader masks it ("X"), here by the longest node name of its graph that the question holds. The fit is an
L2-penalized logistic regression (penalty `l2` times half the squared weights, the loss summed over questions)
over `HopReaderConfig.scale` times the unit vector of the hop reader's encoder, which stays as it is.

With `--test` (`train.general_reader collect --as-asked` files of graphs left out of training) it measures what
`gqa ask` would gain: per graph, the share of questions whose walk of best `features · ZERO_SHOT` (with the
shipped weight of `value_reading`: as the reader scores it) reaches the best F1 among its walks, with the feature
at 0 and at each of `--weights`.

    python -m train.value_head --sets tuned,fourth,... [--data bench/data/fictional] [--hops FOLDER]
        [--test DATA/*.npz] [--save FOLDER] [--out result.json]

`--save` writes the head into a hop reader's folder; the one that ships is in
`gretriever_neo4j/reader/general/hops/` (docs/learned-reader.md).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

from .run_record import run_record


def _node_names(folder: Path) -> list[str]:
    """The subjects and objects of a graph's triple files (every `.tsv` but `questions.tsv`), longest first."""
    names = set()
    for path in sorted(folder.glob("*.tsv")):
        if path.name == "questions.tsv":
            continue
        for line in path.read_text(encoding="utf-8").splitlines():
            parts = line.split("\t")
            if len(parts) >= 3:
                names.update(p for p in (parts[0], parts[2]) if len(p) > 2)
    return sorted(names, key=len, reverse=True)


def masked(question: str, names: list[str]) -> str:
    """`question` with the longest of `names` (longest first) it holds, in any case, replaced by "X"."""
    lowered = question.lower()
    for name in names:
        at = lowered.find(name.lower())
        if at >= 0:
            return question[:at] + "X" + question[at + len(name):]
    return question


def labelled_questions(data: Path, sets: list[str]) -> tuple[list[str], np.ndarray, list[str]]:
    """(masked questions, asks a value, graph) of every graph of `sets` under `data` (`sets.json`)."""
    from gretriever_neo4j.retrieval.texts import is_a_value

    from .general_reader import _questions

    listing = json.loads((data / "sets.json").read_text())
    texts, labels, graphs = [], [], []
    for name in sets:
        for graph in listing[name]["graphs"]:
            folder = data / name / graph
            names = _node_names(folder)
            for question, answers in _questions(folder / "questions.tsv"):
                if answers:
                    texts.append(masked(question, names))
                    labels.append(all(is_a_value(a) for a in answers))
                    graphs.append(graph)
    return texts, np.asarray(labels, dtype=bool), graphs


def fit(vectors: np.ndarray, labels: np.ndarray, l2: float = 1.0) -> tuple[np.ndarray, float]:
    """(weight, bias) of a logistic regression, by L-BFGS on the summed log-loss plus `l2` / 2 times the squared
    weights (the bias unpenalized)."""
    import torch

    x = torch.tensor(vectors, dtype=torch.float64)
    y = torch.tensor(labels, dtype=torch.float64)
    weight = torch.zeros(x.shape[1], dtype=torch.float64, requires_grad=True)
    bias = torch.zeros((), dtype=torch.float64, requires_grad=True)
    optimizer = torch.optim.LBFGS([weight, bias], max_iter=500, line_search_fn="strong_wolfe")

    def closure():
        optimizer.zero_grad()
        loss = (torch.nn.functional.binary_cross_entropy_with_logits(x @ weight + bias, y, reduction="sum")
                + 0.5 * l2 * weight.pow(2).sum())
        loss.backward()
        return loss

    optimizer.step(closure)
    return weight.detach().numpy(), float(bias.detach())


def measure(paths: list[Path], probability, weights: list[float]) -> dict:
    """Per graph of `collect` files, the share of questions whose walk of best reader score (the collected
    features times `ZERO_SHOT`, plus weight times `value_reading` from `probability(masked)`) reaches the best F1
    among its walks; the mean over graphs and the questions won and lost against weight 0."""
    from gretriever_neo4j.reader.hop_reading import HopReaderConfig, value_reading
    from gretriever_neo4j.reader.signature_weights import FEATURES, ZERO_SHOT
    from gretriever_neo4j.retrieval.texts import is_a_value

    from .general_reader import collected_questions

    column = list(FEATURES).index("value_reading")
    base = ZERO_SHOT.vector()
    base[column] = 0.0
    floor = HopReaderConfig.floor
    per_graph: dict[str, dict[float, list[bool]]] = {}
    for data, rows in collected_questions(paths):
        f1 = data["f1"][rows]
        ends = [[n for n in str(e).split("\x1f") if n] for e in data["end_names"][rows]]
        on_values = np.asarray([bool(e) and all(is_a_value(n) for n in e) for e in ends])
        p = probability(str(data["masked"][rows[0]]))
        feature = value_reading(p, on_values, floor)
        scores = data["features"][rows] @ base
        hits = per_graph.setdefault(str(data["graph"]), {w: [] for w in [0.0, *weights]})
        for w in hits:
            chosen = int(np.argmax(scores + w * feature))
            hits[w].append(bool(f1.max() > 0 and f1[chosen] >= f1.max() - 1e-9))
    result = {"graphs": {}, "mean": {}, "won": {}, "lost": {}}
    for graph, hits in sorted(per_graph.items()):
        result["graphs"][graph] = {str(w): round(float(np.mean(h)), 4) for w, h in hits.items()}
    for w in [0.0, *weights]:
        result["mean"][str(w)] = round(float(np.mean([np.mean(h[w]) for h in per_graph.values()])), 4)
        if w:
            result["won"][str(w)] = sum(int(a < b) for h in per_graph.values() for a, b in zip(h[0.0], h[w]))
            result["lost"][str(w)] = sum(int(a > b) for h in per_graph.values() for a, b in zip(h[0.0], h[w]))
    return result


def main(argv: list[str] | None = None) -> None:
    from gretriever_neo4j.reader.hop_reading import HopReader, write_value_head
    from gretriever_neo4j.reader.learned import GENERAL, HOP_READER

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sets", required=True, help="comma-separated sets of --data whose questions train it")
    parser.add_argument("--data", type=Path, default=Path("bench/data/fictional"))
    parser.add_argument("--hops", type=Path, default=GENERAL / HOP_READER, help="the hop reader whose vector it reads")
    parser.add_argument("--l2", type=float, default=1.0)
    parser.add_argument("--test", type=Path, nargs="*", default=[], help="collect files (--as-asked) to measure on")
    parser.add_argument("--weights", default="0.1,0.2,0.3", help="comma-separated, measured")
    parser.add_argument("--save", type=Path, default=None, help="the hop reader's folder to write the head into")
    parser.add_argument("--out", type=Path, default=None, help="the measurement as JSON")
    args = parser.parse_args(argv)

    reader = HopReader.load(args.hops)
    sets = [s for s in args.sets.split(",") if s]
    texts, labels, graphs = labelled_questions(args.data, sets)
    scale = reader.config.scale
    weight, bias = fit(scale * np.asarray(reader.encoder.vectors(texts)), labels, args.l2)
    record = {**run_record("value_head", argv), "sets": sets, "graphs": len(set(graphs)), "questions": len(texts),
              "asking_a_value": int(labels.sum()), "l2": args.l2}
    print(f"{len(texts)} questions of {len(set(graphs))} graphs, {int(labels.sum())} asking a value", file=sys.stderr)
    if args.test:
        probe = HopReader(reader.encoder, reader.weight, reader.bias, reader.config, (weight, np.float64(bias)))
        record["measured"] = measure(args.test, probe.value_probability,
                                     [float(w) for w in args.weights.split(",") if w])
        print(json.dumps({k: record["measured"][k] for k in ("mean", "won", "lost")}), file=sys.stderr)
    if args.save:
        write_value_head(args.save, weight, bias, {k: v for k, v in record.items() if k != "measured"})
        print(f"written to {args.save}", file=sys.stderr)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(record, indent=1) + "\n")


if __name__ == "__main__":
    main()

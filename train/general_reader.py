"""The general reader's training data and fit: walk-signature features of many graphs' questions, and the
`SignatureWeights` fitted on them (`reader.learned`).

    python -m train.general_reader collect --graph G --questions Q.tsv --out DIR/G.npz [--limit N] [--seed S]
        [--as-asked [--walk-encoder FOLDER]]
    python -m train.general_reader fit DIR/*.npz --out W.json [--l2 0.1]
    python -m train.general_reader score DIR/*.npz --weights W.json
    python -m train.general_reader ablate DIR/*.npz [--out R.json]

`collect` asks each question of a stored graph through the product's retrieval (no answer recorded), reads the
subgraph with the zero-shot reader, and keeps, per question, the features of every shortlisted walk signature
(`reader.coverage.coverage_features`) and how well each one's end nodes answer it (F1 against the gold answers).
With `--as-asked` it reads as `gqa ask` does: the shipped walk encoder and hop reader fill their features, and the
shortlist is the reader's own (`--walk-encoder`: another encoder instead of the shipped one, such as one trained
without this graph; without `--as-asked`: no learned feature, 48 walks shortlisted, the general reader's training
data). `fit` / `score` are `reader.learned.fit_weights` / `signature_hit` over such files. `ablate` measures what
each hand-set feature adds to the choice (`ablation`).
"""

from __future__ import annotations

import argparse
import dataclasses
import random
import sys
from pathlib import Path

import numpy as np


def _questions(path: Path) -> list[tuple[str, list[str]]]:
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if "\t" not in line or line.startswith("question\t"):
            continue
        text, answers = line.split("\t")[:2]
        rows.append((text, [a for a in answers.split("|") if a]))
    return rows


def read_questions(graph: str, questions: list[tuple[str, list[str]]], shortlist: int | None = None,
                   walk_encoder=None, hop_reader=None, walk_ranker=None):
    """Each question of a stored graph asked through the product's retrieval (no answer recorded) and read by the
    zero-shot reader (its default settings, or reading `shortlist` walks; with `walk_encoder`, `hop_reader` and
    `walk_ranker` where they are given): yields (input, reading, is_gold per node of its view)."""
    from gretriever_neo4j import metrics
    from gretriever_neo4j.answering.answering import Answering
    from gretriever_neo4j.embedding.embedder import Embedder
    from gretriever_neo4j.qa.qa import QA
    from gretriever_neo4j.reader import ZeroShotReader, read, reader_input
    from gretriever_neo4j.reader.signature_weights import ZERO_SHOT
    from gretriever_neo4j.settings import Neo4jSettings
    from gretriever_neo4j.store.graph_store import connected

    with connected(Neo4jSettings.from_env()) as store:
        embedder = Embedder(None)
        qa = QA(store, embedder, answering=Answering(embedder, use_llm=False, llm_when="never"))
        embed = embedder.embed
        reader = ZeroShotReader(embed, weights=ZERO_SHOT if shortlist is None
                                else dataclasses.replace(ZERO_SHOT, shortlist=shortlist), walk_encoder=walk_encoder,
                                hop_reader=hop_reader, walk_ranker=walk_ranker)
        for q, (text, gold) in enumerate(questions):
            retrieval = qa.retrieve(text, graph=graph, record=False)
            full = embed([text])[0]
            hints = retrieval.result.seed_keys if retrieval.retriever in ("learned", "paths") else ()
            item = reader_input(text, retrieval.result, full, hints, retrieval.retriever == "paths")
            reading = read(reader, item, embed([item.masked])[0], full)
            wanted = {metrics.normalize(a) for a in gold}
            is_gold = np.asarray([metrics.normalize(t) in wanted or metrics.normalize(k) in wanted
                                  for k, t in zip(item.view.node_keys, item.view.node_texts)], dtype=bool)
            yield item, reading, is_gold
            if (q + 1) % 50 == 0:
                print(f"{graph}: {q + 1}/{len(questions)}", file=sys.stderr, flush=True)


def collect(graph: str, questions: list[tuple[str, list[str]]], shortlist: int | None = 48, walk_encoder=None,
            hop_reader=None) -> dict[str, np.ndarray]:
    """The collect file's arrays for `graph`'s `questions` (`read_questions`'s arguments)."""
    from gretriever_neo4j.reader.learned import end_node_f1, walk_ends
    from gretriever_neo4j.reader.signature_weights import FEATURES
    from gretriever_neo4j.reader.walk_shapes import signature_question

    features, f1s, owner, shortlisted, walk_texts, masked_texts, end_names = [], [], [], [], [], [], []
    for q, (item, reading, is_gold) in enumerate(read_questions(graph, questions, shortlist, walk_encoder,
                                                                hop_reader)):
        table = reading.signature_table
        if table is None or not len(table.used):
            continue
        f1 = end_node_f1(reading, is_gold)
        features.append(table.features)
        f1s.append(f1[table.used])
        shortlisted.append(table.shortlisted)
        owner.append(np.full(len(table.used), q, np.int64))
        view, walks_ = item.view, reading.walks
        walk_texts.append(np.asarray([signature_question(view.relation_texts, walks_.signatures[s])
                                      for s in table.used.tolist()], dtype=str))
        end_names.append(np.asarray(["\x1f".join(view.node_texts[n] for n in ends)
                                     for ends in walk_ends(reading.walks, view, reading.anchors,
                                                              table.used.tolist())], dtype=str))
        masked_texts.append(np.full(len(table.used), item.masked, dtype=object).astype(str))
    cat = (lambda parts, empty: np.concatenate(parts) if parts else empty)  # noqa: E731
    return {"features": cat(features, np.zeros((0, len(FEATURES)))),
            "f1": cat(f1s, np.zeros(0)), "question": cat(owner, np.zeros(0, np.int64)),
            "shortlisted": cat(shortlisted, np.zeros(0, bool)), "graph": np.asarray(graph),
            "walk_text": cat(walk_texts, np.zeros(0, str)), "masked": cat(masked_texts, np.zeros(0, str)),
            "end_names": cat(end_names, np.zeros(0, str))}


def collected_questions(paths: list[Path]):
    """(data, rows) for each question of `collect` files: the file's arrays and the rows of its shortlisted
    walks."""
    from gretriever_neo4j.reader.learned import read_collected

    for path in paths:
        data = read_collected(path)
        keep = data["shortlisted"]
        for q in np.unique(data["question"][keep]):
            yield data, np.flatnonzero(keep & (data["question"] == q))


def ablation(paths: list[Path]) -> dict:
    """What each hand-set feature with a weight adds to the walk chosen (`signature_hit`, mean over the files'
    graphs): the change with its weight at zero, alone; then with every feature whose zero changed nothing at zero
    together. Only what reads collect files made `--as-asked` says what `gqa ask` would lose."""
    from gretriever_neo4j.reader.learned import load_tables, signature_hit
    from gretriever_neo4j.reader.signature_weights import FEATURES, ZERO_SHOT, SignatureWeights

    graphs = {path.stem: load_tables([path]) for path in paths}

    def mean_hit(vector: np.ndarray) -> float:
        changed = SignatureWeights.from_vector(vector, temperature=ZERO_SHOT.temperature, shortlist=ZERO_SHOT.shortlist)
        return float(np.mean([signature_hit(questions, changed) for questions in graphs.values()]))

    base = ZERO_SHOT.vector()
    hit = mean_hit(base)
    alone = {}
    for i, name in enumerate(FEATURES):
        if base[i] != 0:
            zeroed = base.copy()
            zeroed[i] = 0.0
            alone[name] = round(mean_hit(zeroed) - hit, 4)
    idle = [name for name, change in alone.items() if change == 0]
    together = base.copy()
    together[[list(FEATURES).index(name) for name in idle]] = 0.0
    return {"graphs": sorted(graphs), "questions": sum(len(q) for q in graphs.values()), "hit": round(hit, 4),
            "zeroed_alone": alone, "idle": idle, "idle_zeroed_together": round(mean_hit(together) - hit, 4)}


def matcher_questions(paths: list[Path], embed) -> list:
    """The walk matcher's training questions from `collect` files: the masked question, each shortlisted walk
    read as a question and the mean of its end nodes' names, embedded by `embed` (unit vectors)."""
    from gretriever_neo4j.reader.walk_matcher import MatcherQuestion, unit

    rows_of, texts = [], set()
    for data, rows in collected_questions(paths):
        names = [str(n).split("\x1f") if str(n) else [] for n in data["end_names"][rows]]
        item = (str(data["masked"][rows[0]]), [str(t) for t in data["walk_text"][rows]], names,
                data["f1"][rows], str(data["graph"]))
        rows_of.append(item)
        texts.update([item[0], *item[1], *(n for group in names for n in group)])
    ordered = sorted(texts)
    vectors = dict(zip(ordered, unit(embed(ordered))))
    dim = len(next(iter(vectors.values())))
    out = []
    for masked, walks, names, f1, graph in rows_of:
        ends = np.stack([unit(np.mean([vectors[n] for n in group], 0)) if group else np.zeros(dim, np.float32)
                         for group in names])
        out.append(MatcherQuestion(vectors[masked], np.stack([vectors[w] for w in walks]), ends, f1, graph))
    return out


def main(argv: list[str] | None = None) -> None:
    from gretriever_neo4j.reader.learned import FitConfig, fit_weights, load_tables, signature_hit
    from gretriever_neo4j.reader.signature_weights import ZERO_SHOT, SignatureWeights

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    c = sub.add_parser("collect")
    c.add_argument("--graph", required=True)
    c.add_argument("--questions", type=Path, required=True)
    c.add_argument("--out", type=Path, required=True)
    c.add_argument("--limit", type=int, default=None)
    c.add_argument("--seed", type=int, default=0)
    c.add_argument("--as-asked", action="store_true", help="read as `gqa ask` does (the shipped walk encoder and hop "
                   "reader, the reader's own shortlist)")
    c.add_argument("--walk-encoder", type=Path, default=None,
                   help="with --as-asked: a walk encoder folder to read with (one trained without this graph reads it "
                   "as a new graph is read; default: the one that ships)")
    f = sub.add_parser("fit")
    f.add_argument("data", type=Path, nargs="+")
    f.add_argument("--out", type=Path, required=True)
    f.add_argument("--l2", type=float, default=FitConfig.l2)
    s = sub.add_parser("score")
    s.add_argument("data", type=Path, nargs="+")
    s.add_argument("--weights", type=Path, default=None)
    a = sub.add_parser("ablate", help="what each hand-set feature adds to the walk chosen")
    a.add_argument("data", type=Path, nargs="+")
    a.add_argument("--out", type=Path, default=None, help="the measurement as JSON")
    m = sub.add_parser("matcher", help="train the walk matcher and write the general reader (weights + matcher)")
    m.add_argument("data", type=Path, nargs="+")
    m.add_argument("--out", type=Path, required=True, help="a folder (gretriever_neo4j/reader/general)")
    m.add_argument("--weight", type=float, default=0.02, help="the matcher's weight among the walk features")
    m.add_argument("--epochs", type=int, default=20)
    args = parser.parse_args(argv)
    if args.command == "matcher":
        from gretriever_neo4j.embedding.embedder import Embedder
        from gretriever_neo4j.reader.learned import WEIGHTS_FILE
        from gretriever_neo4j.reader.walk_matcher import MatcherConfig, train_matcher

        questions = matcher_questions(args.data, Embedder(None).embed)
        matcher = train_matcher(questions, MatcherConfig(epochs=args.epochs))
        matcher.save(args.out)
        dataclasses.replace(ZERO_SHOT, matcher=args.weight).save(args.out / WEIGHTS_FILE)
        print(f"written {args.out}: {len(questions)} questions")
    elif args.command == "collect":
        questions = _questions(args.questions)
        if args.limit is not None and len(questions) > args.limit:
            questions = random.Random(args.seed).sample(questions, args.limit)
        if args.as_asked:
            from gretriever_neo4j.reader.learned import general_hop_reader, general_walk_encoder
            from gretriever_neo4j.reader.walk_encoder import WalkEncoder

            encoder = WalkEncoder.load(args.walk_encoder) if args.walk_encoder else general_walk_encoder()
            data = collect(args.graph, questions, None, encoder, general_hop_reader())
        else:
            data = collect(args.graph, questions)
        args.out.parent.mkdir(parents=True, exist_ok=True)
        np.savez_compressed(args.out, **data)
        print(f"{args.out}: {len(set(data['question'].tolist()))} questions, {len(data['f1'])} walks")
    elif args.command == "ablate":
        import json

        from .run_record import run_record

        result = ablation(args.data)
        for name, change in sorted(result["zeroed_alone"].items(), key=lambda item: item[1]):
            print(f"{name:28} {100 * change:+.1f} points")
        print(f"hit {result['hit']:.4f} over {result['questions']} questions; {len(result['idle'])} features change "
              f"nothing alone, {100 * result['idle_zeroed_together']:+.1f} points together")
        if args.out:
            args.out.parent.mkdir(parents=True, exist_ok=True)
            args.out.write_text(json.dumps({**run_record("general_reader", argv), **result}, indent=1) + "\n")
    elif args.command == "fit":
        weights = fit_weights(load_tables(args.data), FitConfig(l2=args.l2))
        args.out.parent.mkdir(parents=True, exist_ok=True)
        weights.save(args.out)
        print(f"written {args.out}")
    else:
        weights = SignatureWeights.load(args.weights) if args.weights else ZERO_SHOT
        for path in args.data:
            print(f"{path.stem:40} {signature_hit(load_tables([path]), weights):.3f}")


if __name__ == "__main__":
    main()

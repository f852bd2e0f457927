"""The hop reader (`reader.hop_reading`): MiniLM with low-rank adapters and a linear head, trained across graphs to
read from a question's words how many hops it asks (1, 2, 3 or more).

It reads `train.general_reader collect` files. A question's label is the hop count of its answering walk: the
fewest named hops among its walks of best F1 (3 for three or more); questions no walk answers are left out.
Training is cross-entropy over the masked questions, `epochs` passes in batches of `batch`.

With `--test` (collect files left out of training) it measures what `gqa ask` would gain: the share of the test
questions whose chosen walk reaches a gold answer, among each question's `candidates` best walks by the reader,
scored as `gqa ask` scores them (the reader plus 4 times a walk encoder's similarity, `--encoder`), with nothing
added and with each `--weights` times the feature `hop_reading`; and how often the hop count is read right. The
walk encoder should not have been trained on the test graphs.

    python -m train.hop_reader DATA/*.npz [--test DATA/g1.npz,...] [--encoder FOLDER] [--epochs 2] [--batch 32]
        [--save FOLDER] [--out result.json]

`--save` writes what `gqa ask` reads; the one that ships is in `gretriever_neo4j/reader/general/hops/`
(docs/learned-reader.md).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from gretriever_neo4j.reader.hop_reading import HOPS, HopReaderConfig, walk_hops, write

from .run_record import run_record


@dataclass(frozen=True)
class HopTrainingConfig:
    rank: int = 8  # of the adapters over every layer's attention and feed-forward maps
    alpha: int = 16
    epochs: int = 2
    learning_rate: float = 5e-4  # the adapters'
    head_learning_rate: float = 1e-3
    batch: int = 32
    scale: float = HopReaderConfig.scale
    seed: int = 0


@dataclass
class HopQuestion:
    masked: str
    label: int  # 1, 2 or HOPS
    graph: str
    walks: list[str]  # the `candidates` best walks by the reader, for measuring
    hops: np.ndarray
    reader: np.ndarray
    f1: np.ndarray


def hop_questions(paths, candidates: int = 16) -> list[HopQuestion]:
    """The answerable questions of `collect` files, labelled, with their `candidates` best walks by the reader."""
    from gretriever_neo4j.reader.signature_weights import FEATURES, ZERO_SHOT

    from .general_reader import collected_questions

    vector = ZERO_SHOT.vector()
    for name in ("tuned_reading", "hop_reading"):  # what the collect files hold is read without either
        vector[list(FEATURES).index(name)] = 0.0
    out = []
    for data, rows in collected_questions(paths):
        f1 = data["f1"][rows].astype(float)
        if f1.max() <= 0:
            continue
        features = data["features"][rows]
        hops = walk_hops(features)
        reader = features @ vector
        best = np.argsort(-reader, kind="stable")[:candidates]
        out.append(HopQuestion(str(data["masked"][rows[0]]), int(hops[f1 >= f1.max() - 1e-9].min()),
                               str(data["graph"]), [str(t) for t in data["walk_text"][rows][best]], hops[best],
                               reader[best], f1[best]))
    return out


def train(questions: list[HopQuestion], config: HopTrainingConfig, log=True):
    """(model, head): MiniLM (a SentenceTransformer) with adapters, and a torch linear head over `scale` times its
    unit sentence vector, trained on the questions' labels."""
    import torch

    from gretriever_neo4j.reader.walk_encoder import WalkEncoderConfig, with_lora

    from .walk_encoder import load_encoder

    torch.manual_seed(config.seed)
    model = with_lora(load_encoder(), WalkEncoderConfig(adapter="lora", rank=config.rank, alpha=config.alpha))
    head = torch.nn.Linear(model[0].auto_model.config.hidden_size, HOPS)
    optimizer = torch.optim.AdamW([
        {"params": [p for p in model.parameters() if p.requires_grad], "lr": config.learning_rate},
        {"params": head.parameters(), "lr": config.head_learning_rate}])
    order = list(range(len(questions)))
    shuffle = random.Random(config.seed)
    labels = torch.tensor([q.label - 1 for q in questions])
    model.train()
    for epoch in range(config.epochs):
        shuffle.shuffle(order)
        started, total = time.perf_counter(), 0.0
        for first in range(0, len(order), config.batch):
            batch = order[first:first + config.batch]
            vectors = model(model.preprocess([questions[i].masked for i in batch]))["sentence_embedding"]
            vectors = torch.nn.functional.normalize(vectors, dim=-1)
            loss = torch.nn.functional.cross_entropy(head(config.scale * vectors), labels[batch])
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
            total += float(loss.detach()) * len(batch)
        if log:
            print(f"epoch {epoch + 1}: loss {total / max(1, len(order)):.3f} "
                  f"({time.perf_counter() - started:.0f} s)", file=sys.stderr, flush=True)
    model.eval()
    return model, head


def probabilities(model, head, texts: list[str], scale: float) -> np.ndarray:
    import torch

    vectors = model.encode(texts, normalize_embeddings=True, convert_to_tensor=True, batch_size=64)
    with torch.no_grad():
        return torch.softmax(head(scale * vectors), -1).numpy()


def measure(questions: list[HopQuestion], probability: np.ndarray, encoder, weights) -> dict:
    """Per weight, the mean over graphs of the share of questions whose walk of best reader score plus 4 times
    the encoder's similarity plus weight times `hop_reading` reaches an answer; and the hop count read right."""
    from gretriever_neo4j.reader.signature_weights import ZERO_SHOT

    floor = HopReaderConfig.floor
    base = [q.reader + ZERO_SHOT.tuned_reading * encoder.similarities(q.masked, q.walks) for q in questions]
    graphs = sorted({q.graph for q in questions})

    def mean_over_graphs(per_question) -> float:
        per_question = np.asarray(per_question, dtype=float)
        return round(float(np.mean([per_question[[q.graph == g for q in questions]].mean() for g in graphs])), 4)

    out = {"hops_read_right": mean_over_graphs([p.argmax() + 1 == q.label for q, p in zip(questions, probability)]),
           "choice_hit": {}}
    for weight in weights:
        out["choice_hit"][str(weight)] = mean_over_graphs([
            q.f1[int(np.argmax(s + weight * np.log(p[q.hops - 1] + floor)))] > 0
            for q, s, p in zip(questions, base, probability)])
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("data", type=Path, nargs="+", help="collect files to train on (those in --test excluded)")
    parser.add_argument("--test", default="", help="comma-separated collect files held out and measured on")
    parser.add_argument("--encoder", type=Path, default=None,
                        help="the walk encoder the measure reads (default: the one that ships)")
    parser.add_argument("--weights", default="0,0.1,0.15,0.2,0.3", help="comma-separated, measured")
    parser.add_argument("--epochs", type=int, default=HopTrainingConfig.epochs)
    parser.add_argument("--batch", type=int, default=HopTrainingConfig.batch)
    parser.add_argument("--save", type=Path, default=None, help="a folder for the hop reader")
    parser.add_argument("--out", type=Path, default=None, help="the measurement as JSON")
    args = parser.parse_args(argv)
    from gretriever_neo4j.reader.walk_encoder import WalkEncoder, WalkEncoderConfig, tuned_state

    config = HopTrainingConfig(epochs=args.epochs, batch=args.batch)
    test = {Path(p).resolve() for p in args.test.split(",") if p}
    files = [p for p in args.data if p.resolve() not in test]
    questions = hop_questions(files)
    print(f"{len(questions)} questions of {len(files)} files; labels "
          f"{np.bincount([q.label for q in questions], minlength=HOPS + 1)[1:].tolist()}", file=sys.stderr)
    model, head = train(questions, config)
    ran = run_record("hop_reader", argv)
    record = {**asdict(config), "questions": len(questions), "files": sorted(p.name for p in files), **ran}
    result = {**ran, "config": asdict(config), "trained_on": record["files"]}
    if test:
        from gretriever_neo4j.reader.learned import GENERAL

        held = hop_questions(sorted(test))
        encoder = WalkEncoder.load(args.encoder or GENERAL, onnx=False)
        weights = [float(w) for w in args.weights.split(",")]
        result.update(measured_on=sorted(p.name for p in test), questions=len(held),
                      **measure(held, probabilities(model, head, [q.masked for q in held], config.scale),
                                encoder, weights))
        print(json.dumps(result["choice_hit"]), f"hops read right {result['hops_read_right']}", file=sys.stderr)
    if args.save:
        adapters = WalkEncoderConfig(adapter="lora", rank=config.rank, alpha=config.alpha, candidates=1,
                                     training={"hop_reader": True})
        state = tuned_state(model, adapters)
        write(args.save, adapters, state, {k: v.detach().numpy() for k, v in head.state_dict().items()},
              HopReaderConfig(scale=config.scale, training=record))
        print(f"written to {args.save}", file=sys.stderr)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()

"""A walk encoder: the embedder (MiniLM) with its last layers fine-tuned so that a question, its anchor masked, lies
nearest the walk that answers it, read as a question ("what is the profession of the parents of the spouse of
X"). The frozen embedder relates a question to a walk only by their words; tuned on graphs whose answers are known,
it learns how people phrase walks, and that carries over to graphs it never saw.

It reads `train.general_reader collect` files (each question's shortlisted walks: the reader's features, the walk
texts, the F1 of each walk's end nodes). Each question keeps its `candidates` best walks by the reader's own score
(the features times the hand-set weights); training is a listwise softmax over their similarities (scaled by
`scale`), the walks of best F1 as targets. The measure, on held-out files, is the share of questions whose chosen
walk reaches a gold answer: the reader's score plus `weight` times the similarity, for each weight of a grid, with
the frozen embedder and with the tuned one.

    python -m train.walk_encoder DATA/*.npz [--test DATA/g1.npz,DATA/g2.npz] [--split GRAPH]
        [--adapter lora|layers] [--rank 8] [--layers 2] [--epochs 2] [--candidates 8] [--learning-rate R]
        [--save FOLDER]
        [--out result.json]

`--adapter lora` trains low-rank adapters over every layer (`--rank`); `layers` trains the last `--layers` layers
whole.

`--save` writes what `gqa ask` reads (`reader.walk_encoder`). The one that ships, in
`gretriever_neo4j/reader/general/`, is two of these (8 and 16 candidates, the same files, nothing held out)
averaged by `train.walk_encoder_soup`. The measurements are in docs/learned-reader.md.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import random
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from gretriever_neo4j.reader.walk_encoder import (
    CONFIG_FILE,
    LAYERS_FILE,
    WalkEncoderConfig,
    save,
    tuned_layers,
    with_lora,
)

from .run_record import run_record

LEARNING_RATES = {"lora": 5e-4, "layers": 5e-5}  # per kind of tuning (docs/learned-reader.md: what each measured)


@dataclass(frozen=True)
class EncoderConfig:
    adapter: str = "lora"  # low-rank adapters over every layer ("lora") or the last `layers` layers whole
    rank: int = 8  # of the adapters
    alpha: int = 16  # the adapters' scaling is alpha / rank
    layers: int = 2  # the last transformer layers trained whole, with adapter "layers"
    epochs: int = 2
    learning_rate: float = LEARNING_RATES["lora"]
    batch: int = 8  # questions per optimizer step
    scale: float = 20.0  # similarity -> logit
    candidates: int = 8  # a question's best walks by the reader's score, trained and measured on
    seed: int = 0


@dataclass
class WalkQuestion:
    masked: str
    walks: list[str]
    f1: np.ndarray
    reader: np.ndarray  # the reader's score of each walk (features times the hand-set weights)
    graph: str


def walk_questions(paths, candidates: int) -> list[WalkQuestion]:
    """The questions of `collect` files, each with its `candidates` best shortlisted walks by the reader."""
    from gretriever_neo4j.reader.signature_weights import ZERO_SHOT

    from .general_reader import collected_questions

    vector = ZERO_SHOT.vector()
    out = []
    for data, rows in collected_questions(paths):
        reader = data["features"][rows] @ vector
        best = np.argsort(-reader, kind="stable")[:candidates]
        rows = rows[best]
        out.append(WalkQuestion(str(data["masked"][rows[0]]), [str(t) for t in data["walk_text"][rows]],
                                data["f1"][rows].astype(float), reader[best], str(data["graph"])))
    return out


def load_encoder():
    from sentence_transformers import SentenceTransformer

    from gretriever_neo4j.embedding.embedder import resolve_model_location

    return SentenceTransformer(resolve_model_location(None), device="cpu")


def trainable(model, config: EncoderConfig):
    """`model` (a SentenceTransformer) ready to tune: new adapters (`with_lora`), or its last `config.layers`
    layers unfrozen and the rest frozen."""
    import torch

    torch.manual_seed(config.seed)  # the adapters' initial values
    if config.adapter == "lora":
        return with_lora(model, saved_config(config))
    for parameter in model[0].auto_model.parameters():
        parameter.requires_grad = False
    for layer in tuned_layers(model, config.layers):
        for parameter in layer.parameters():
            parameter.requires_grad = True
    return model


def fine_tune(model, questions: list[WalkQuestion], config: EncoderConfig, log=True, top: int | None = None,
              lower_states: dict | None = None):
    """`model`'s trainable parameters (`trainable`) tuned on `questions` in place: a listwise softmax over each
    question's walks, its best walks the targets. Each optimizer step reads `config.batch` questions in one forward
    pass, every distinct text of them once (walks repeat across a graph's questions).

    `top`: only what is trainable in the last `top` layers is tuned, the rest frozen; what the layers below compute
    is read once per text (`_LowerLayers`) and each step runs the last `top` alone, a third of the work for 2 of
    MiniLM's 6 (docs/feedback.md: what it saves `gqa train`). `lower_states`: those states by text, shared by
    tunings that start from the same weights below the last `top` layers (cross-validation's folds), each text read
    once for all of them; filled in place."""
    import torch

    torch.manual_seed(config.seed)
    usable = [q for q in questions if q.f1.max() > 0 and len(q.walks) > 1]
    lower = None
    if top is not None:
        tuned = {id(p) for layer in tuned_layers(model, top) for p in layer.parameters()}
        for parameter in model.parameters():
            parameter.requires_grad = parameter.requires_grad and id(parameter) in tuned
        lower = _LowerLayers(model, top, [t for q in usable for t in (q.masked, *q.walks)], lower_states)
    parameters = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(parameters, lr=config.learning_rate)
    order = random.Random(config.seed)
    model.train()
    with lower or contextlib.nullcontext():
        for epoch in range(config.epochs):
            order.shuffle(usable)
            started, total = time.perf_counter(), 0.0
            for first in range(0, len(usable), config.batch):
                batch = usable[first:first + config.batch]
                texts = list(dict.fromkeys(t for q in batch for t in (q.masked, *q.walks)))
                where = {t: i for i, t in enumerate(texts)}
                features = model.preprocess(texts)
                if lower is not None:
                    lower.feed(texts, features)
                vectors = torch.nn.functional.normalize(model(features)["sentence_embedding"], dim=-1)
                loss = 0.0
                for q in batch:
                    logits = config.scale * (vectors[[where[w] for w in q.walks]] @ vectors[where[q.masked]])
                    target = torch.tensor((q.f1 >= q.f1.max() - 1e-9).astype(np.float32))
                    loss = loss - (torch.log_softmax(logits, 0) * target).sum() / target.sum() / config.batch
                loss.backward()
                optimizer.step()
                optimizer.zero_grad()
                total += float(loss.detach()) * config.batch
            if log:
                print(f"epoch {epoch + 1}: loss {total / max(1, len(usable)):.3f} "
                      f"({time.perf_counter() - started:.0f} s)", file=sys.stderr, flush=True)
    model.eval()
    return model


class _LowerLayers:
    """What the layers below the last `top` of a SentenceTransformer (a BERT-like encoder) compute for each of
    `texts`, read once (frozen, without dropout). Inside `with`, the model runs its last `top` layers alone: its
    embedding layer's output is replaced (a forward hook) by these states of the texts last `feed`, padded as
    `preprocess` padded them; the padding is masked out, so the result is what the whole model computes.
    `states`: those already read (by text), by a model with the same weights below its last `top` layers; the texts
    not in it are read and added to it."""

    def __init__(self, model, top: int, texts: list[str], states: dict | None = None, batch: int = 64):
        import torch

        self.top = top
        self.bert = model[0].auto_model  # with adapters too, the encoder itself (as `tuned_layers` reads it)
        self.states: dict[str, torch.Tensor] = {} if states is None else states
        self._fed = None
        distinct = [t for t in dict.fromkeys(texts) if t not in self.states]
        was_training = model.training
        model.eval()
        with torch.no_grad():
            for first in range(0, len(distinct), batch):
                chunk = distinct[first:first + batch]
                features = model.preprocess(chunk)
                hidden = self.bert(**{k: v for k, v in features.items() if k in _BERT_INPUTS},
                                   output_hidden_states=True).hidden_states[-top - 1]
                for text, states, mask in zip(chunk, hidden, features["attention_mask"]):
                    self.states[text] = states[:int(mask.sum())].clone()
        model.train(was_training)

    def feed(self, texts: list[str], features: dict) -> None:
        """The states of `texts`, padded to `features` (what `preprocess` made of them), for the next forward."""
        import torch

        size = self.states[texts[0]].shape[-1]
        fed = torch.zeros(len(texts), features["input_ids"].shape[1], size)
        for i, text in enumerate(texts):
            fed[i, :len(self.states[text])] = self.states[text]
        self._fed = fed

    def __enter__(self):
        import torch

        self._layers = self.bert.encoder.layer
        self.bert.encoder.layer = torch.nn.ModuleList(list(self._layers)[-self.top:])
        self._hook = self.bert.embeddings.register_forward_hook(lambda module, args, output: self._fed)
        return self

    def __exit__(self, *exc) -> None:
        self._hook.remove()
        self.bert.encoder.layer = self._layers


_BERT_INPUTS = ("input_ids", "attention_mask", "token_type_ids")


def saved_config(config: EncoderConfig, training: dict | None = None) -> WalkEncoderConfig:
    """What `gqa ask` reads of an encoder trained under `config`."""
    from gretriever_neo4j.embedding.embedder import canonical_name

    return WalkEncoderConfig(base=canonical_name(None), adapter=config.adapter, layers=config.layers,
                             rank=config.rank, alpha=config.alpha, candidates=config.candidates,
                             training=training or {})


def similarities(model, questions: list[WalkQuestion]) -> list[np.ndarray]:
    """Per question, the cosine of each walk text to the masked question."""
    texts = sorted({t for q in questions for t in (q.masked, *q.walks)})
    vectors = dict(zip(texts, model.encode(texts, normalize_embeddings=True, convert_to_numpy=True,
                                           batch_size=64)))
    return [np.stack([vectors[w] for w in q.walks]) @ vectors[q.masked] for q in questions]


def choice_hit(questions: list[WalkQuestion], sims: list[np.ndarray], weight: float) -> float:
    """The share of questions whose walk of best reader score plus `weight` times similarity reaches an answer."""
    return float(np.mean([q.f1[int(np.argmax(q.reader + weight * s))] > 0 for q, s in zip(questions, sims)]))


WEIGHTS = (0.0, 0.5, 1.0, 2.0, 4.0)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("data", type=Path, nargs="+", help="collect files to train on (those in --test excluded)")
    parser.add_argument("--test", default="", help="comma-separated collect files held out and measured on")
    parser.add_argument("--split", default="", help="a graph of the training files whose questions are split: "
                        "every second one held out and measured on, the others trained on")
    parser.add_argument("--adapter", choices=("lora", "layers"), default=EncoderConfig.adapter)
    parser.add_argument("--rank", type=int, default=EncoderConfig.rank)
    parser.add_argument("--layers", type=int, default=EncoderConfig.layers)
    parser.add_argument("--epochs", type=int, default=EncoderConfig.epochs)
    parser.add_argument("--candidates", type=int, default=EncoderConfig.candidates,
                        help="a question's best walks by the reader, trained and measured on")
    parser.add_argument("--learning-rate", type=float, default=None, help="by default LEARNING_RATES[adapter]")
    parser.add_argument("--save", type=Path, default=None, help="a folder for what was tuned and its config")
    parser.add_argument("--out", type=Path, default=None, help="the measurement as JSON")
    args = parser.parse_args(argv)
    config = EncoderConfig(adapter=args.adapter, rank=args.rank, alpha=2 * args.rank, layers=args.layers,
                           epochs=args.epochs, candidates=args.candidates,
                           learning_rate=args.learning_rate or LEARNING_RATES[args.adapter])
    test_paths = [Path(p) for p in args.test.split(",") if p]
    train_paths = [p for p in args.data if p.resolve() not in {t.resolve() for t in test_paths}]
    train, test = walk_questions(train_paths, config.candidates), walk_questions(test_paths, config.candidates)
    if args.split:
        split = [q for q in train if q.graph == args.split]
        train = [q for q in train if q.graph != args.split] + split[::2]
        test = test + split[1::2]
    model = load_encoder()
    frozen = similarities(model, test)
    model = fine_tune(trainable(model, config), train, config)
    tuned = similarities(model, test)
    graphs = sorted({q.graph for q in test})
    result = {**run_record("walk_encoder", argv), "config": asdict(config),
              "train_files": [p.name for p in train_paths], "train_questions": len(train),
              "test_questions": len(test), "measured": []}
    for name, sims in (("frozen", frozen), ("tuned", tuned)) if test else ():
        for weight in WEIGHTS:
            per_graph = {g: choice_hit([q for q in test if q.graph == g],
                                       [s for q, s in zip(test, sims) if q.graph == g], weight) for g in graphs}
            row = {"encoder": name, "weight": weight, "mean_over_graphs": float(np.mean(list(per_graph.values()))),
                   "per_graph": per_graph}
            result["measured"].append(row)
            print(f"{name:7} weight {weight:4}: {row['mean_over_graphs']:.3f}", flush=True)
    if args.save:
        save(model, saved_config(config, {**asdict(config), "files": result["train_files"], "questions": len(train)}),
             args.save)
        size = sum((args.save / name).stat().st_size for name in (CONFIG_FILE, LAYERS_FILE))
        print(f"written {args.save} ({size / 1e6:.1f} MB)")
    if args.out:
        args.out.write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()

"""The trained reader: question-conditioned scores for the nodes of a retrieved subgraph.

A node's logit is the best score of the relation walks that reach it from the question's anchors, plus a term
for the node itself:

    walk(q, s)  = MLP(relu(Wq q + sum_p Wp [r_p ; dir_p] + len_emb[|s|]))     q: the question, anchors masked
    node(q, v)  = (U q_full) . (V v) + w . flags(v)                            flags: anchor, named, similarity
    logit(v)    = max over walks s reaching v of walk(q, s)  + node(q, v)      (no walk: a learnt constant)

The walk term learns *how* the answer relates to what the question names (a relation path, in any KG's own
relation texts); the node term learns *what kind* of node answers (a year, a person) and that the entities a
question names are rarely its answer. Training: binary cross-entropy per node plus a listwise term (softmax
over the question's nodes, mass on the gold ones), so the top-ranked node is right as well as the set. After
training, the answer threshold is calibrated on validation questions to maximise F1 (`calibrate`).
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from gretriever_neo4j.errors import InputError
from gretriever_neo4j.progress import OnProgress, notify
from gretriever_neo4j.reader.features import NODE_FLAGS, ReaderExample
from gretriever_neo4j.settings import from_known_fields, require_positive_integers

CHECKPOINT_FORMAT = "gqa-reader/1"


@dataclass(frozen=True)
class ReaderConfig:
    max_hops: int = 3
    hidden: int = 256
    node_rank: int = 64  # width of the question-node bilinear term
    epochs: int = 12
    min_steps: int = 400  # small graphs' question sets get more epochs, so that the reader still learns
    batch_questions: int = 64
    learning_rate: float = 2e-3
    weight_decay: float = 1e-5
    listwise_weight: float = 0.2  # heavier, it learns the training answers rather than the walks to them
    node_term: bool = True  # the question-node bilinear term (off: walks and flags alone)
    seed: int = 0

    def __post_init__(self) -> None:
        require_positive_integers(self, ("max_hops", "hidden", "node_rank", "epochs", "batch_questions"))
        if isinstance(self.min_steps, bool) or not isinstance(self.min_steps, int) or self.min_steps < 0:
            raise InputError(f"must be an integer >= 0, got {self.min_steps!r}", field="min_steps")
        if not (self.learning_rate > 0 and math.isfinite(self.learning_rate)):
            raise InputError(f"must be a positive number, got {self.learning_rate!r}", field="learning_rate")

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ReaderConfig:
        return from_known_fields(cls, data, "reader settings")


def build_module(dim: int, config: ReaderConfig):
    import torch
    from torch import nn

    class PathReader(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.question = nn.Linear(dim, config.hidden)
            self.steps = nn.ModuleList(nn.Linear(dim + 1, config.hidden, bias=False) for _ in range(config.max_hops))
            self.length = nn.Embedding(config.max_hops + 1, config.hidden)
            self.walk = nn.Sequential(nn.ReLU(), nn.Linear(config.hidden, config.hidden), nn.ReLU(),
                                      nn.Linear(config.hidden, 1))
            self.node_question = nn.Linear(dim, config.node_rank, bias=False)
            self.node_vector = nn.Linear(dim, config.node_rank, bias=False)
            self.flags = nn.Linear(len(NODE_FLAGS), 1)
            self.no_walk = nn.Parameter(torch.tensor(-4.0))

        def forward(self, batch: Batch, node_table, relation_table):
            """(node logits in the batch's node order, signature logits in its signature order)."""
            q = self.question(batch.question)[batch.sig_question]  # (S, h)
            steps = torch.zeros_like(q)
            for p, layer in enumerate(self.steps):
                rel = batch.sig_relation[:, p]
                present = rel >= 0
                if present.any():
                    vec = torch.cat([relation_table[rel.clamp(min=0)], batch.sig_direction[:, p:p + 1].float()], 1)
                    steps = steps + layer(vec) * present.unsqueeze(1)
            sig_logit = self.walk(q + steps + self.length(batch.sig_length)).squeeze(1)  # (S,)
            pair_logit = sig_logit[batch.pair_sig]
            walk_logit = torch.full((batch.num_nodes,), -1e4, dtype=sig_logit.dtype)
            walk_logit = walk_logit.scatter_reduce(0, batch.pair_node, pair_logit, reduce="amax", include_self=True)
            walk_logit = torch.where(walk_logit <= -1e4 + 1, self.no_walk.expand_as(walk_logit), walk_logit)
            logit = walk_logit + self.flags(batch.node_flags).squeeze(1)
            if config.node_term:
                nodes = node_table[batch.node_ids]
                logit = logit + (self.node_question(batch.question_full)[batch.node_question]
                                 * self.node_vector(nodes)).sum(1)
            return logit, sig_logit

    return PathReader()


@dataclass
class Batch:
    """Several examples flattened, with offsets applied (torch tensors)."""

    question: Any
    question_full: Any
    node_ids: Any
    node_flags: Any
    node_question: Any  # question of each node
    pair_node: Any
    pair_sig: Any
    sig_relation: Any
    sig_direction: Any
    sig_length: Any
    sig_question: Any
    labels: Any
    node_offsets: list[int]

    @property
    def num_nodes(self) -> int:
        return int(self.node_ids.shape[0])


def collate(examples: Sequence[ReaderExample]) -> Batch:
    import torch

    node_offsets, sig_offsets = [0], [0]
    for example in examples:
        node_offsets.append(node_offsets[-1] + example.num_nodes)
        sig_offsets.append(sig_offsets[-1] + len(example.sig_length))

    def cat(name: str, dtype=np.int64):
        return torch.from_numpy(np.concatenate([np.asarray(getattr(e, name), dtype=dtype) for e in examples]))

    labels = None
    if all(e.labels is not None for e in examples):
        labels = cat("labels", np.float32)
    return Batch(
        question=torch.from_numpy(np.stack([e.question for e in examples]).astype(np.float32)),
        question_full=torch.from_numpy(np.stack([e.question_full for e in examples]).astype(np.float32)),
        node_ids=cat("node_ids"),
        node_flags=torch.from_numpy(np.concatenate([e.node_flags for e in examples]).astype(np.float32)
                                    .reshape(-1, len(NODE_FLAGS))),
        node_question=torch.from_numpy(np.repeat(np.arange(len(examples)), [e.num_nodes for e in examples])),
        pair_node=torch.from_numpy(np.concatenate([e.pair_node + node_offsets[i] for i, e in enumerate(examples)])
                                   .astype(np.int64)),
        pair_sig=torch.from_numpy(np.concatenate([e.pair_sig + sig_offsets[i] for i, e in enumerate(examples)])
                                  .astype(np.int64)),
        sig_relation=torch.from_numpy(np.concatenate([e.sig_relation for e in examples]).astype(np.int64)),
        sig_direction=torch.from_numpy(np.concatenate([e.sig_direction for e in examples]).astype(np.int64)),
        sig_length=cat("sig_length"),
        sig_question=torch.from_numpy(np.repeat(np.arange(len(examples)), [len(e.sig_length) for e in examples])),
        labels=labels, node_offsets=node_offsets)


# -- training --------------------------------------------------------------------------------------------

@dataclass
class ReaderHistory:
    examples: int = 0
    with_answer: int = 0  # examples whose subgraph holds a gold answer (the others teach only negatives)
    epoch_losses: list[float] = dataclasses.field(default_factory=list)
    seconds: float = 0.0
    threshold: float = 0.5
    validation: dict[str, float] = dataclasses.field(default_factory=dict)

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


def train_module(examples: Sequence[ReaderExample], node_table: np.ndarray, relation_table: np.ndarray,
                 config: ReaderConfig, progress: OnProgress | None = None):
    """-> (torch module in eval mode, ReaderHistory). Examples need labels."""
    import torch

    usable = [e for e in examples if e.labels is not None and e.num_nodes > 0]
    if not usable:
        raise InputError("no reader example has nodes and labels", field="examples")
    history = ReaderHistory(examples=len(usable), with_answer=sum(int(e.labels.max() > 0) for e in usable))
    if history.with_answer == 0:
        raise InputError("no retrieved subgraph holds a gold answer: the reader has nothing to learn from",
                         field="examples")
    torch.manual_seed(config.seed)
    module = build_module(node_table.shape[1], config)
    nodes = torch.from_numpy(np.asarray(node_table, np.float32))
    relations = torch.from_numpy(np.asarray(relation_table, np.float32))
    optimiser = torch.optim.AdamW(module.parameters(), lr=config.learning_rate, weight_decay=config.weight_decay)
    batches = math.ceil(len(usable) / config.batch_questions)
    epochs = max(config.epochs, math.ceil(config.min_steps / batches))
    steps = batches * epochs
    scheduler = torch.optim.lr_scheduler.OneCycleLR(optimiser, max_lr=config.learning_rate, total_steps=steps)
    generator = np.random.default_rng(config.seed)
    started = time.perf_counter()
    module.train()
    for epoch in range(epochs):
        order = generator.permutation(len(usable))
        total = 0.0
        for start in range(0, len(usable), config.batch_questions):
            batch = collate([usable[i] for i in order[start:start + config.batch_questions]])
            logits, _ = module(batch, nodes, relations)
            loss = _loss(logits, batch, config)
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            scheduler.step()
            total += float(loss.detach()) * (len(batch.node_offsets) - 1)
        history.epoch_losses.append(total / len(usable))
        notify(progress, "epoch", epoch + 1, epochs, loss=history.epoch_losses[-1],
               seconds=time.perf_counter() - started)
    module.eval()
    history.seconds = time.perf_counter() - started
    return module, history


def _loss(logits, batch: Batch, config: ReaderConfig):
    import torch
    import torch.nn.functional as F

    bce = F.binary_cross_entropy_with_logits(logits, batch.labels)
    listwise = []
    for i in range(len(batch.node_offsets) - 1):
        lo, hi = batch.node_offsets[i], batch.node_offsets[i + 1]
        gold = batch.labels[lo:hi] > 0
        if gold.any():
            log_p = torch.log_softmax(logits[lo:hi], 0)
            listwise.append(-torch.logsumexp(log_p[gold], 0))
    if not listwise or config.listwise_weight == 0:
        return bce
    return bce + config.listwise_weight * torch.stack(listwise).mean()


def predict_logits(module, examples: Sequence[ReaderExample], node_table: np.ndarray, relation_table: np.ndarray,
                   batch_questions: int = 256) -> list[tuple[np.ndarray, np.ndarray]]:
    """(node logits, signature logits) per example."""
    import torch

    out: list[tuple[np.ndarray, np.ndarray]] = []
    nodes = torch.from_numpy(np.asarray(node_table, np.float32))
    relations = torch.from_numpy(np.asarray(relation_table, np.float32))
    with torch.no_grad():
        for start in range(0, len(examples), batch_questions):
            chunk = list(examples[start:start + batch_questions])
            nonempty = [e for e in chunk if e.num_nodes]
            node_logits, sig_logits = (t.numpy() for t in module(collate(nonempty), nodes, relations)) \
                if nonempty else (np.zeros(0), np.zeros(0))
            node_at = sig_at = 0
            for e in chunk:
                sigs = len(e.sig_length) if e.num_nodes else 0
                out.append((node_logits[node_at:node_at + e.num_nodes].astype(np.float64),
                            sig_logits[sig_at:sig_at + sigs].astype(np.float64)))
                node_at += e.num_nodes
                sig_at += sigs
    return out


# -- calibration -------------------------------------------------------------------------------------------

def answer_set(probabilities: np.ndarray, threshold: float) -> list[int]:
    """Local node ids answered: every node at or above the threshold, best first, and at least the best."""
    if len(probabilities) == 0:
        return []
    order = np.lexsort((np.arange(len(probabilities)), -probabilities))
    chosen = [int(i) for i in order if probabilities[i] >= threshold]
    return chosen or [int(order[0])]


def set_f1(chosen: Sequence[int], labels: np.ndarray) -> float:
    gold = int(labels.sum())
    hits = int(sum(labels[i] > 0 for i in chosen))
    if not hits:
        return 0.0
    return 2 * hits / (len(chosen) + gold)


def calibrate(probabilities: Sequence[np.ndarray], labels: Sequence[np.ndarray]) -> tuple[float, float]:
    """(threshold, mean F1): the threshold in 0.05..0.95 that maximises the mean F1 of `answer_set` against the
    labels, over questions whose subgraph holds a gold answer (ties: the higher threshold)."""
    pairs = [(p, l) for p, l in zip(probabilities, labels) if len(l) and l.max() > 0]
    if not pairs:
        return 0.5, 0.0
    best = (0.5, -1.0)
    for threshold in np.round(np.arange(0.05, 0.951, 0.05), 2).tolist():
        score = float(np.mean([set_f1(answer_set(p, threshold), l) for p, l in pairs]))
        if score >= best[1]:
            best = (threshold, score)
    return best


def sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-np.clip(x, -60, 60)))


# -- checkpoints --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class ReaderInfo:
    """What a reader checkpoint says about itself (beside the weights)."""

    config: ReaderConfig
    dim: int
    embedder: str
    graph: str | None
    dataset: str | None
    threshold: float
    history: dict


def save_reader(path: str | Path, module, config: ReaderConfig, *, embedder: str, graph: str | None,
                dataset: str | None, threshold: float, history: dict | None = None) -> Path:
    from gretriever_neo4j.artifacts.tagged_files import write_tagged

    return write_tagged(path, {
        "format": CHECKPOINT_FORMAT, "config": config.to_dict(), "dim": int(module.question.in_features),
        "embedder": embedder, "graph": graph, "dataset": dataset, "threshold": float(threshold),
        "history": history or {}, "state_dict": {k: v.detach().cpu() for k, v in module.state_dict().items()}})


def load_reader(path: str | Path):
    """-> (torch module in eval mode, ReaderInfo)."""
    from gretriever_neo4j.artifacts.tagged_files import read_tagged

    data = read_tagged(path, CHECKPOINT_FORMAT, "reader")
    config = ReaderConfig.from_dict(data["config"])
    module = build_module(int(data["dim"]), config)
    module.load_state_dict(data["state_dict"])
    module.eval()
    return module, ReaderInfo(config=config, dim=int(data["dim"]), embedder=str(data["embedder"]),
                              graph=data.get("graph"), dataset=data.get("dataset"),
                              threshold=float(data["threshold"]), history=dict(data.get("history") or {}))

"""Graph-encoder probe: G-Retriever's GNN and pooling with a linear head, no LLM.

It answers "how far does the graph alone go?" in seconds per epoch, and its trained encoder warm-starts the
G-Retriever's (`warm_start`): the GNN is built exactly as `build_model` builds it for the same ModelConfig, so
its weights load one to one. The pooled graph vector is the node mean (what G-Retriever feeds its projector),
optionally joined by the mean of the edge text embeddings (`edge_pool`): in ExplaGraphs the stance often sits in
a relation ("not capable of", "antonym of"), and a graph transformer only mixes edge features into the messages
a node receives, so a direct view of them is one of the things the probe measures.
"""

from __future__ import annotations

import random
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import torch
import torch.nn.functional as F
from torch import nn
from torch_geometric.utils import scatter

from .config import ModelConfig
from .gnn import build_graph_encoder, mean_pool
from .sample import QASample, collate


class GraphProbe(nn.Module):
    """logits = head(pool(gnn(graph))); `pooled` is what a G-Retriever projector would receive."""

    def __init__(self, config: ModelConfig, num_classes: int, *, edge_pool: bool = False, extra_dim: int = 0,
                 use_graph: bool = True, head_hidden: int = 0):
        super().__init__()
        self.config = config
        self.edge_pool = edge_pool
        self.gnn = build_graph_encoder(config.gnn, in_dim=config.gnn_in_dim, hidden=config.gnn_hidden,
                                       out_dim=config.gnn_hidden, layers=config.gnn_layers, heads=config.gnn_heads,
                                       dropout=config.gnn_dropout) if config.use_graph_encoder else None
        width = config.gnn_hidden if self.gnn is not None else config.gnn_in_dim
        # `extra_dim`: per-sample features beside the graph (the bench's "graph + question text" probe).
        # `use_graph=False` leaves the graph out (a baseline on the extra features alone).
        self.extra_dim = extra_dim
        self.use_graph = use_graph
        graph_width = width + (config.gnn_in_dim if edge_pool else 0) if use_graph else 0
        # `head_hidden` > 0: an MLP head, which can weigh the graph against the extra features (a linear head
        # only adds their votes).
        self.head = nn.Linear(graph_width + extra_dim, num_classes) if not head_hidden else nn.Sequential(
            nn.Linear(graph_width + extra_dim, head_hidden), nn.ReLU(), nn.Dropout(0.2),
            nn.Linear(head_hidden, num_classes))

    def pooled(self, graph, num_graphs: int) -> torch.Tensor:
        x = graph.x.float()
        nodes = self.gnn(x, graph.edge_index, graph.edge_attr.float()) if self.gnn is not None else x
        pooled = mean_pool(nodes, graph.batch, num_graphs)
        if self.edge_pool:
            # Edges belong to the graph of their source node.
            owner = graph.batch[graph.edge_index[0]] if graph.edge_index.numel() else graph.batch[:0]
            edges = scatter(graph.edge_attr.float(), owner, dim=0, dim_size=num_graphs, reduce="mean")
            pooled = torch.cat([pooled, edges], dim=-1)
        return pooled

    def forward(self, graph, num_graphs: int, extra: torch.Tensor | None = None) -> torch.Tensor:
        if not self.use_graph:
            return self.head(extra)
        pooled = self.pooled(graph, num_graphs)
        return self.head(pooled if extra is None else torch.cat([pooled, extra], dim=-1))


@dataclass(frozen=True)
class ProbeConfig:
    lr: float = 1e-3
    weight_decay: float = 1e-2
    epochs: int = 40
    batch_size: int = 32
    patience: int = 10  # epochs without a better validation accuracy before stopping
    balanced_loss: bool = True  # class weights inverse to the training frequencies
    seed: int = 0


@dataclass
class ProbeHistory:
    epochs: list[dict] = field(default_factory=list)  # epoch, train_loss, train_acc, val_acc, val_predicted, seconds
    best_epoch: int | None = None
    best_val_accuracy: float | None = None


def train_probe(probe: GraphProbe, train: Sequence[QASample], val: Sequence[QASample], labels: Sequence[str],
                config: ProbeConfig = ProbeConfig(), extra: dict[str, torch.Tensor] | None = None) -> ProbeHistory:
    """Train in place on cross-entropy over `labels`; the probe ends with its best validation epoch's weights
    (the last epoch's without validation samples). `extra`: qid -> features for a probe built with extra_dim."""
    random.seed(config.seed)
    torch.manual_seed(config.seed)
    targets = torch.tensor([list(labels).index(s.label) for s in train])
    counts = torch.bincount(targets, minlength=len(labels)).float().clamp(min=1)
    weight = (counts.sum() / (len(labels) * counts)) if config.balanced_loss else None
    optimizer = torch.optim.AdamW(probe.parameters(), lr=config.lr, weight_decay=config.weight_decay)
    history = ProbeHistory()
    best_state = None
    generator = torch.Generator().manual_seed(config.seed)
    for epoch in range(config.epochs):
        started = time.perf_counter()
        probe.train()
        order = torch.randperm(len(train), generator=generator).tolist()
        losses, correct = [], 0
        for start in range(0, len(order), config.batch_size):
            chunk = order[start:start + config.batch_size]
            batch = collate([train[i] for i in chunk])
            logits = probe(batch.graph, len(chunk), _extra(extra, batch.qids))
            loss = F.cross_entropy(logits, targets[chunk], weight=weight)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            losses.append(float(loss.detach()))
            correct += int((logits.argmax(-1) == targets[chunk]).sum())
        record = {"epoch": epoch, "train_loss": sum(losses) / len(losses), "train_acc": correct / len(train)}
        if val:
            accuracy, predicted = probe_accuracy(probe, val, labels, extra)
            record.update(val_acc=accuracy, val_predicted=predicted)
        record["seconds"] = time.perf_counter() - started
        history.epochs.append(record)
        score = record.get("val_acc", -record["train_loss"])
        if history.best_val_accuracy is None or score > history.best_val_accuracy:
            history.best_epoch, history.best_val_accuracy = epoch, score
            best_state = {k: v.detach().clone() for k, v in probe.state_dict().items()}
        elif epoch - history.best_epoch >= config.patience:
            break
    if best_state is not None and val:
        probe.load_state_dict(best_state)
    return history


@torch.no_grad()
def probe_predictions(probe: GraphProbe, samples: Sequence[QASample], labels: Sequence[str],
                      batch_size: int = 128, extra: dict[str, torch.Tensor] | None = None) -> list[str]:
    was_training = probe.training
    probe.eval()
    out: list[str] = []
    try:
        for start in range(0, len(samples), batch_size):
            batch = collate(list(samples[start:start + batch_size]))
            logits = probe(batch.graph, len(batch), _extra(extra, batch.qids))
            out.extend(labels[i] for i in logits.argmax(-1).tolist())
    finally:
        probe.train(was_training)
    return out


def probe_accuracy(probe: GraphProbe, samples: Sequence[QASample], labels: Sequence[str],
                   extra: dict[str, torch.Tensor] | None = None) -> tuple[float, dict[str, float]]:
    """(accuracy, share of each predicted label)."""
    predicted = probe_predictions(probe, samples, labels, extra=extra)
    accuracy = sum(p == s.label for p, s in zip(predicted, samples)) / len(samples)
    return accuracy, {label: predicted.count(label) / len(predicted) for label in labels}


def warm_start(model: nn.Module, probe: GraphProbe) -> list[str]:
    """Copy the probe's graph encoder into a G-Retriever's (`model.gnn`); returns the tensors copied. The
    projector stays as built: the probe's head maps to labels, not to the LLM's embedding space."""
    if probe.gnn is None or getattr(model, "gnn", None) is None:
        return []
    state = probe.gnn.state_dict()
    own = model.gnn.state_dict()
    if set(state) != set(own) or any(state[k].shape != own[k].shape for k in own):
        raise ValueError("the probe's graph encoder does not match the model's; build both from one ModelConfig")
    model.gnn.load_state_dict(state)
    return sorted(f"gnn.{k}" for k in state)


def _extra(extra: dict[str, torch.Tensor] | None, qids: Sequence[str]) -> torch.Tensor | None:
    return None if extra is None else torch.stack([extra[qid] for qid in qids])

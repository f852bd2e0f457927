"""One question with its retrieved subgraph, as the model consumes it, and the batching of many.

A subgraph arrives twice: as tensors for the graph encoder (node/edge text embeddings, local edge index) and as
its textualization (`desc`, the CSV the LLM reads). Graphs with zero nodes are legal: a question whose retrieval
found nothing still gets an answer, from the question alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import torch
from torch_geometric.data import Batch, Data

from ..errors import InputError


def format_question(question: str) -> str:
    """The question as the reference prompts for open questions (WebQSP, MetaQA)."""
    return f"Question: {question}\nAnswer: "


def answers_label(answers: Sequence[str]) -> str:
    """The training target for open questions: gold answers joined by '|', lower-cased, as the reference does."""
    return "|".join(answers).lower()


@dataclass
class QASample:
    qid: str
    question: str  # exactly what the LLM reads after the subgraph, e.g. format_question(text)
    desc: str  # textualized subgraph: node CSV, blank line, edge CSV ("" when not available)
    label: str  # training target text
    answers: list[str]  # gold answers, for metrics
    x: torch.Tensor  # [N, d] node text embeddings
    edge_index: torch.Tensor  # [2, E] local node indices
    edge_attr: torch.Tensor | None = None  # [E, d] edge text embeddings; may be None only when E == 0
    graph_id: str | None = None
    dataset: str | None = None
    extra: dict = field(default_factory=dict)  # anything a caller wants to carry along (e.g. node keys)

    def __post_init__(self) -> None:
        self.x = _as_matrix(self.x, "x", self.qid, torch.float32)
        self.edge_index = _as_edge_index(self.edge_index, self.qid)
        if self.edge_attr is None:
            if self.edge_count:
                raise InputError(f"sample {self.qid}: {self.edge_count} edges but no edge_attr", field="edge_attr")
            self.edge_attr = torch.zeros(0, self.embedding_dim)
        self.edge_attr = _as_matrix(self.edge_attr, "edge_attr", self.qid, torch.float32)
        if self.edge_attr.shape[0] != self.edge_count:
            raise InputError(f"sample {self.qid}: edge_attr has {self.edge_attr.shape[0]} rows for "
                             f"{self.edge_count} edges", field="edge_attr")
        if self.edge_count and int(self.edge_index.max()) >= self.node_count:
            raise InputError(f"sample {self.qid}: edge_index refers to node {int(self.edge_index.max())} but the "
                             f"graph has {self.node_count} nodes", field="edge_index")
        if self.edge_count and int(self.edge_index.min()) < 0:
            raise InputError(f"sample {self.qid}: edge_index has a negative node index", field="edge_index")
        if self.node_count and self.edge_count and self.edge_attr.shape[1] != self.x.shape[1]:
            raise InputError(f"sample {self.qid}: edge_attr has {self.edge_attr.shape[1]} columns but x has "
                             f"{self.x.shape[1]}; nodes and edges must come from one embedder", field="edge_attr")
        self.answers = [str(a) for a in self.answers]

    @property
    def node_count(self) -> int:
        return int(self.x.shape[0])

    @property
    def edge_count(self) -> int:
        return int(self.edge_index.shape[1])

    @property
    def embedding_dim(self) -> int:
        """Width of the node features; 0 for an empty graph built without a known width."""
        return int(self.x.shape[1])

    def graph(self, dim: int | None = None) -> Data:
        """The PyG graph; `dim` widens an empty graph's (0, 0) feature matrices to the batch's width."""
        width = self.embedding_dim if dim is None else dim
        x = self.x if self.node_count else torch.zeros(0, width)
        edge_attr = self.edge_attr if self.edge_count else torch.zeros(0, width)
        return Data(x=x, edge_index=self.edge_index, edge_attr=edge_attr, num_nodes=self.node_count)


@dataclass
class QABatch:
    qids: list[str]
    questions: list[str]
    descs: list[str]
    labels: list[str]
    answers: list[list[str]]
    graph: Batch  # all graphs; graph.batch maps nodes to their sample
    node_counts: torch.Tensor  # [B] nodes per graph; zero for empty graphs

    def __len__(self) -> int:
        return len(self.qids)

    @property
    def num_graphs(self) -> int:
        return len(self.qids)


def collate(samples: Sequence[QASample]) -> QABatch:
    """Batch samples for the model; graphs of any size, empty ones included, share one PyG Batch."""
    if not samples:
        raise InputError("cannot batch zero samples")
    widths = {s.embedding_dim for s in samples if s.node_count}
    if len(widths) > 1:
        raise InputError(f"samples mix node embedding widths {sorted(widths)}; one embedder must produce them all",
                         field="x")
    # An empty graph's declared width carries no information: it takes the batch's.
    declared = [s.embedding_dim for s in samples if s.embedding_dim]
    width = widths.pop() if widths else (declared[0] if declared else 0)
    graph = Batch.from_data_list([s.graph(width) for s in samples])
    return QABatch(
        qids=[s.qid for s in samples],
        questions=[s.question for s in samples],
        descs=[s.desc for s in samples],
        labels=[s.label for s in samples],
        answers=[list(s.answers) for s in samples],
        graph=graph,
        node_counts=torch.tensor([s.node_count for s in samples], dtype=torch.long),
    )


def _as_matrix(value: object, name: str, qid: str, dtype: torch.dtype) -> torch.Tensor:
    tensor = torch.as_tensor(value, dtype=dtype)
    if tensor.dim() == 1 and tensor.numel() == 0:
        return tensor.reshape(0, 0)
    if tensor.dim() != 2:
        raise InputError(f"sample {qid}: {name} must be a matrix, got shape {tuple(tensor.shape)}", field=name)
    if not torch.isfinite(tensor).all():
        raise InputError(f"sample {qid}: {name} holds NaN or infinite values", field=name)
    return tensor


def _as_edge_index(value: object, qid: str) -> torch.Tensor:
    tensor = torch.as_tensor(value, dtype=torch.long)
    if tensor.numel() == 0:
        return torch.zeros(2, 0, dtype=torch.long)
    if tensor.dim() != 2 or tensor.shape[0] != 2:
        raise InputError(f"sample {qid}: edge_index must have shape [2, E], got {tuple(tensor.shape)}",
                         field="edge_index")
    return tensor

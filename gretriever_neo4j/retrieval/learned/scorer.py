"""The learned retriever's scorer: the torch module that training fits (`build_scorer`), the same network as
numpy arrays for inference (`ScorerWeights`, first layer split per input part), the structure features both
feed it, and the question text whose vector conditions it (`scoring_text`). Torch is imported only when a
module is built."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from gretriever_neo4j.retrieval.kg import UNREACHED
from gretriever_neo4j.retrieval.learned.config import RetrieverConfig
from gretriever_neo4j.retrieval.linking import mask_mentions

DEGREE_SCALE = 10.0  # log1p(degree) / DEGREE_SCALE keeps the feature near [0, 1] for graphs up to ~20k degree


def _torch():
    import torch

    return torch


def build_scorer(dim: int, config: RetrieverConfig):
    """The MLP as a torch module: forward(q, h, r, t, structure) -> (n, 2) logits: [relevance, answer]."""
    torch = _torch()
    nn = torch.nn

    class TripleScorer(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.question = nn.Linear(dim, config.hidden)
            self.head = nn.Linear(dim, config.hidden, bias=False)
            self.relation = nn.Linear(dim, config.hidden, bias=False)
            self.tail = nn.Linear(dim, config.hidden, bias=False)
            self.structure = nn.Linear(config.structure_width, config.hidden, bias=False)
            self.hidden_layer = nn.Linear(config.hidden, config.hidden)
            self.out = nn.Linear(config.hidden, 2)

        def forward(self, q, h, r, t, s):
            first = self.question(q) + self.head(h) + self.relation(r) + self.tail(t) + self.structure(s)
            return self.out(torch.relu(self.hidden_layer(torch.relu(first))))

    torch.manual_seed(config.seed)
    return TripleScorer()


def structure_features(head_distance: np.ndarray, tail_distance: np.ndarray, head_degree: np.ndarray,
                       tail_degree: np.ndarray, config: RetrieverConfig) -> np.ndarray:
    """(n, structure_width) float32: one-hot distances (UNREACHED or > max_hops -> "farther"), log degrees."""
    buckets = config.distance_buckets
    out = np.zeros((len(head_distance), 2 * buckets + 2), dtype=np.float32)
    rows = np.arange(len(head_distance))
    out[rows, _bucket(head_distance, config)] = 1.0
    out[rows, buckets + _bucket(tail_distance, config)] = 1.0
    out[:, 2 * buckets] = np.log1p(head_degree) / DEGREE_SCALE
    out[:, 2 * buckets + 1] = np.log1p(tail_degree) / DEGREE_SCALE
    return out


def _bucket(distance: np.ndarray, config: RetrieverConfig) -> np.ndarray:
    distance = np.asarray(distance, dtype=np.int64)
    return np.where((distance == UNREACHED) | (distance > config.max_hops), config.max_hops + 1, distance)


@dataclass(frozen=True, eq=False)
class ScorerWeights:
    """The trained scorer as numpy arrays, with the first layer split per input part."""

    question: np.ndarray  # (hidden, dim)
    question_bias: np.ndarray
    head: np.ndarray
    relation: np.ndarray
    tail: np.ndarray
    structure: np.ndarray  # (hidden, structure_width)
    hidden: np.ndarray
    hidden_bias: np.ndarray
    out: np.ndarray  # (2, hidden): relevance and answer heads
    out_bias: np.ndarray

    @classmethod
    def from_module(cls, module) -> ScorerWeights:
        state = {k: v.detach().cpu().numpy().astype(np.float32) for k, v in module.state_dict().items()}
        return cls(question=state["question.weight"], question_bias=state["question.bias"], head=state["head.weight"],
                   relation=state["relation.weight"], tail=state["tail.weight"], structure=state["structure.weight"],
                   hidden=state["hidden_layer.weight"], hidden_bias=state["hidden_layer.bias"], out=state["out.weight"],
                   out_bias=state["out.bias"])

    def logits(self, first_layer: np.ndarray) -> np.ndarray:
        """(n, 2): relevance (the triple lies on the question's path) and answer (it also ends at an answer)."""
        activation = np.maximum(first_layer, 0.0)
        activation = np.maximum(activation @ self.hidden.T + self.hidden_bias, 0.0)
        return (activation @ self.out.T + self.out_bias).reshape(-1, 2)



def scoring_text(question: str, topic_names: Iterable[str], config: RetrieverConfig) -> str:
    """The text whose vector conditions the scorer: the question, topic names masked when configured."""
    return mask_mentions(question, topic_names) if config.mask_topics else question

"""The learned retriever's settings (`RetrieverConfig`): beam, budget, seeds, labels, selection and training,
checked when made and read back from a checkpoint's dict."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from gretriever_neo4j.errors import InputError
from gretriever_neo4j.settings import from_known_fields, require_positive_integers


@dataclass(frozen=True)
class RetrieverConfig:
    max_hops: int = 3
    hidden: int = 256
    beam_nodes: int = 64  # new nodes expanded per hop
    max_scored_per_hop: int = 20_000  # incident triples scored per hop, best frontier nodes first
    max_edges: int = 200  # budget of the returned subgraph (half as many lose 3-hop answers)
    max_seeds: int = 3  # exact name matches used as seeds
    seed_min_ratio: float = 0.5  # ...whose link probability is at least this times the best match's
    seed_fallback: int = 1  # fused (fulltext + vector) seeds when nothing matches a name exactly
    labels: str = "pattern"  # "pattern" (weak_labels.pattern_edges) or "shortest" (shortest_path_edges)
    selection: str = "mixed"  # which head ranks triples for the budget: "answer", "relevance", or "mixed"
    answer_share: float = 0.5  # "mixed": this share of the budget by the answer head, the rest by relevance
    mask_topics: bool = True  # score with the question's vector after replacing the seeds' names by "X"
    positives_per_question: int = 32
    hard_negatives_per_question: int = 48
    random_negatives_per_question: int = 16
    epochs: int = 6
    batch_size: int = 1024
    learning_rate: float = 2e-3
    weight_decay: float = 1e-5
    seed: int = 0

    def __post_init__(self) -> None:
        require_positive_integers(self, ("max_hops", "hidden", "beam_nodes", "max_scored_per_hop", "max_seeds",
                                         "epochs", "batch_size", "positives_per_question"))
        for name in ("max_edges", "seed_fallback", "hard_negatives_per_question", "random_negatives_per_question",
                     "seed"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise InputError(f"must be an integer >= 0, got {value!r}", field=name)
        if self.labels not in ("pattern", "shortest"):
            raise InputError(f"must be 'pattern' or 'shortest', got {self.labels!r}", field="labels")
        if self.selection not in ("answer", "relevance", "mixed"):
            raise InputError(f"must be 'answer', 'relevance' or 'mixed', got {self.selection!r}", field="selection")
        if not 0.0 <= self.answer_share <= 1.0:
            raise InputError(f"must lie in [0, 1], got {self.answer_share!r}", field="answer_share")
        if not (self.learning_rate > 0 and math.isfinite(self.learning_rate)):
            raise InputError(f"must be a positive number, got {self.learning_rate!r}", field="learning_rate")

    @property
    def distance_buckets(self) -> int:
        return self.max_hops + 2  # 0..max_hops, then "farther"

    @property
    def structure_width(self) -> int:
        return 2 * self.distance_buckets + 2

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RetrieverConfig:
        return from_known_fields(cls, data, "retriever settings")

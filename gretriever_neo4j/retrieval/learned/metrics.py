"""Metrics of a learned retrieval: whether (`answer_hit`) and how much (`answer_coverage`) of the gold answers
the subgraph holds, its size, and a percentile helper for reports."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from gretriever_neo4j.retrieval.in_memory import RetrievalResult
from gretriever_neo4j.retrieval.textualize import count_tokens


def answer_hit(result: RetrievalResult, answers: Iterable[str]) -> bool:
    """Whether any gold answer is a node of the retrieved subgraph (compared by key and by text)."""
    wanted = set(answers)
    return any(key in wanted for key in result.subgraph.node_keys) or any(
        result.candidate.node_texts[i] in wanted for i in result.subgraph.node_indices)


def answer_coverage(result: RetrievalResult, answers: Iterable[str]) -> float:
    """Fraction of the distinct gold answers that are nodes of the retrieved subgraph."""
    wanted = set(answers)
    if not wanted:
        return 0.0
    present = set(result.subgraph.node_keys) | {result.candidate.node_texts[i] for i in result.subgraph.node_indices}
    return len(wanted & present) / len(wanted)


def subgraph_size(result: RetrievalResult) -> dict[str, int]:
    return {"nodes": len(result.subgraph.node_keys), "edges": len(result.subgraph.edges),
            "tokens": count_tokens(result.text)}


def percentile(values: Sequence[float], q: float) -> float:
    return float(np.percentile(np.asarray(values, dtype=np.float64), q)) if len(values) else float("nan")

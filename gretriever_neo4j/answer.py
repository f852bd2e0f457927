"""Answering one question: a retrieved subgraph -> the generator -> text, with its citations checked.

The generator is a trained checkpoint (`gqa train`), or else the LLM alone (inference-only). An inference-only
model is also asked to cite its evidence by node ids and edges; a trained model keeps the prompt it was trained
on, and its citations are judged by the fallback rule (nodes named in the answer) of `model.citations`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from .model.citations import CITATION_INSTRUCTION, CitationCheck, answer_text, check_citations
from .retriever import Retrieval


@dataclass
class Answer:
    text: str  # the answer without its Evidence line
    raw: str  # what the model generated
    citations: CitationCheck | None
    model: str
    seconds: float

    def citations_summary(self) -> str:
        check = self.citations
        if check is None:
            return ""
        nodes = ", ".join(check.cited_nodes) or "none"
        edges = ", ".join(f"{a}-{b}" for a, b in check.cited_edges) or "none"
        verdict = "all valid" if check.all_valid else (
            f"invalid: {', '.join(list(check.invalid_nodes) + [f'{a}-{b}' for a, b in check.invalid_edges])}")
        return (f"cites nodes {nodes}; edges {edges} ({check.mode}) — {verdict}; "
                f"nodes valid {check.nodes_valid_fraction:.0%}, edges valid {check.edges_valid_fraction:.0%}")

    def to_dict(self) -> dict:
        check = self.citations
        return {
            "text": self.text, "raw": self.raw, "model": self.model, "seconds": self.seconds,
            "citations": None if check is None else {
                "mode": check.mode, "nodes": list(check.cited_nodes), "edges": [list(e) for e in check.cited_edges],
                "invalid_nodes": list(check.invalid_nodes), "invalid_edges": [list(e) for e in check.invalid_edges],
                "nodes_valid": check.nodes_valid_fraction, "edges_valid": check.edges_valid_fraction,
                "all_valid": check.all_valid},
        }


@lru_cache(maxsize=2)
def load_generator(checkpoint: str | None, llm: str | None, device: str, embedder_dim: int):
    """A trained checkpoint, or the LLM alone; cached so that `gqa chat` loads it once."""
    if checkpoint:
        from .train.checkpoint import load_checkpoint

        return load_checkpoint(Path(checkpoint), llm=llm, device=device, embedder_dim=embedder_dim)
    from .model.config import DEFAULT_LLM, ModelConfig
    from .model.gretriever import build_model

    return build_model(ModelConfig(variant="inference-only", llm=llm or DEFAULT_LLM, gnn_in_dim=embedder_dim),
                       device=device)


def answer_question(retrieval: Retrieval, *, checkpoint: str | Path | None = None, llm: str | None = None,
                    device: str = "auto", history: list[tuple[str, str]] | None = None) -> Answer:
    """`history` holds earlier (question, answer) turns about the same subgraph (`gqa chat`)."""
    from .model.sample import format_question
    from .train.data import sample_from_retrieval
    from .train.trainer import predict

    dim = retrieval.result.candidate.dim
    model = load_generator(str(checkpoint) if checkpoint else None, llm, device, dim)
    question = retrieval.question
    if history:
        turns = "\n".join(f"Earlier question: {q}\nEarlier answer: {a}" for q, a in history)
        question = f"{turns}\n{question}"
    sample = sample_from_retrieval(retrieval.result, qid=retrieval.id, dataset=retrieval.dataset,
                                   question=question, answers=[])
    if model.config.variant == "inference-only" and retrieval.dataset != "explagraphs":
        sample.question = format_question(f"{question}\n{CITATION_INSTRUCTION}")
    started = time.perf_counter()
    raw = predict(model, [sample], batch_size=1)[0].strip()
    seconds = time.perf_counter() - started
    return Answer(text=answer_text(raw).strip(), raw=raw, citations=check_citations(sample.desc, raw),
                  model=f"{model.config.variant} / {model.config.llm}", seconds=seconds)

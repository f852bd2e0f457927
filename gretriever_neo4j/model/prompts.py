"""How a question and its retrieved subgraph become a model sample: the prompt the LLM reads after the subgraph,
the target label, and the sample itself (node and edge vectors, local edge index, textualized subgraph). Training
builds its samples with these, and answering asks the trained model with the very same."""

from __future__ import annotations

from collections.abc import Sequence

import torch

from gretriever_neo4j.model.sample import QASample, answers_label, format_question
from gretriever_neo4j.retrieval.in_memory import RetrievalResult

CLASSIFICATION = {"explagraphs", "scenegraphs"}
# Classification datasets whose answers are one of a few labels: generation is constrained to them.
LABEL_SETS = {"explagraphs": ("support", "counter")}
# Bumped whenever `prompt_for` changes what a sample holds, so cached samples are rebuilt.
PROMPT_VERSION = 2


def prompt_for(dataset: str, question: str) -> str:
    """What the LLM reads after the subgraph.

    Open questions as the reference prompts them. ExplaGraphs: the loader stores G-Retriever's whole prompt
    ("Argument 1: …\nArgument 2: …\nQuestion: Do argument 1 and argument 2 support or counter each other?
    Answer in one word in the form of 'support' or 'counter'.\n\nAnswer:"); training and evaluation read the
    arguments and a short question instead, because every token costs a CPU training step its share and the
    answer is constrained to the two labels anyway."""
    if dataset == "explagraphs":
        return compact_stance_prompt(question)
    return format_question(question)


def compact_stance_prompt(question: str) -> str:
    head, marker, _ = question.partition("\nQuestion: Do argument 1 and argument 2 support or counter")
    if not marker:
        return question  # not the loader's prompt: leave it as it is
    return f"{head}\nSupport or counter?"


def label_for(dataset: str, answers: Sequence[str]) -> str:
    return answers[0] if dataset in CLASSIFICATION and answers else answers_label(answers)


def sample_from_retrieval(result: RetrievalResult, *, qid: str, dataset: str, question: str,
                          answers: Sequence[str], graph_id: str | None = None) -> QASample:
    candidate, sub = result.candidate, result.subgraph
    nodes = list(sub.node_indices)
    return QASample(
        qid=qid, question=prompt_for(dataset, question), desc=sub.text, label=label_for(dataset, answers),
        answers=list(answers), x=torch.from_numpy(candidate.node_embeddings[nodes].copy()),
        edge_index=torch.tensor([[e.src for e in sub.edges], [e.dst for e in sub.edges]], dtype=torch.long
                                ).reshape(2, -1),
        edge_attr=torch.from_numpy(candidate.edge_embeddings[list(sub.edge_indices)].copy()),
        graph_id=graph_id, dataset=dataset, extra={"node_keys": list(sub.node_keys)})

"""Training the reader from retrieved subgraphs of a graph's questions, and scoring it.

The caller retrieves (any retriever) and turns each result into a `ReaderInput` (`reader_input`); here the
questions are embedded in batches, turned into examples over shared vector tables, the module is trained, and
the answer threshold is calibrated on the validation questions.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from gretriever_neo4j.errors import InputError
from gretriever_neo4j.progress import OnProgress
from gretriever_neo4j.reader import ReaderInput
from gretriever_neo4j.reader.features import ReaderExample, VectorTable, build_example
from gretriever_neo4j.reader.model import (
    ReaderConfig,
    ReaderHistory,
    answer_set,
    calibrate,
    predict_logits,
    set_f1,
    sigmoid,
    train_module,
)
from gretriever_neo4j.reader.paths import walks


@dataclass
class ExampleSet:
    examples: list[ReaderExample]
    nodes: VectorTable
    relations: VectorTable


def build_examples(items: Sequence[ReaderInput], answers: Sequence[Sequence[str]],
                   embed: Callable, config: ReaderConfig,
                   nodes: VectorTable | None = None, relations: VectorTable | None = None) -> ExampleSet:
    """Examples for `items` (labels from `answers`: node keys or texts). `embed(texts) -> (n, d)`."""
    if len(items) != len(answers):
        raise InputError(f"{len(items)} retrievals for {len(answers)} answer lists", field="answers")
    dim = next((item.view.dim for item in items if item.view.dim), 0)
    nodes = nodes or VectorTable(dim)
    relations = relations or VectorTable(dim)
    vectors = np.asarray(embed([item.masked for item in items] + [item.question for item in items]), np.float32)
    masked, full = vectors[:len(items)], vectors[len(items):]
    examples = []
    for i, (item, gold) in enumerate(zip(items, answers)):
        found = walks(item.view, item.anchors, config.max_hops) if item.anchors else walks(item.view, [], 1)
        examples.append(build_example(item.question, item.view, found, item.anchors, masked[i], full[i],
                                      config.max_hops, nodes=nodes, relations=relations, answers=gold))
    return ExampleSet(examples=examples, nodes=nodes, relations=relations)


@dataclass(frozen=True)
class ReaderScores:
    questions: int
    answer_in_subgraph: float  # a gold answer is a node of the subgraph
    strict_hit_at_1: float  # the top-ranked node is a gold answer
    f1: float  # of the answer set at the calibrated threshold
    threshold: float

    def to_dict(self) -> dict:
        return dict(self.__dict__)


def score(module, data: ExampleSet, threshold: float) -> ReaderScores:
    predictions = predict_logits(module, data.examples, data.nodes.matrix, data.relations.matrix)
    hits, f1s, present = [], [], []
    for example, (logits, _) in zip(data.examples, predictions):
        labels = example.labels if example.labels is not None else np.zeros(example.num_nodes)
        present.append(float(labels.max() > 0) if len(labels) else 0.0)
        if not len(logits):
            hits.append(0.0)
            f1s.append(0.0)
            continue
        chosen = answer_set(sigmoid(logits), threshold)
        hits.append(float(labels[chosen[0]] > 0))
        f1s.append(set_f1(chosen, labels))
    count = len(data.examples)
    mean = lambda values: float(np.mean(values)) if values else 0.0
    return ReaderScores(questions=count, answer_in_subgraph=mean(present), strict_hit_at_1=mean(hits), f1=mean(f1s),
                        threshold=threshold)


def train_reader(train: ExampleSet, val: ExampleSet | None, config: ReaderConfig,
                 progress: OnProgress | None = None):
    """-> (module, ReaderHistory with the calibrated threshold and validation scores). `val` must share
    `train`'s vector tables (pass them to `build_examples`)."""
    module, history = train_module(train.examples, train.nodes.matrix, train.relations.matrix, config, progress)
    calibration = val if val is not None and val.examples else train
    predictions = predict_logits(module, calibration.examples, calibration.nodes.matrix,
                                 calibration.relations.matrix)
    history.threshold, _ = calibrate([sigmoid(logits) for logits, _ in predictions],
                                     [e.labels for e in calibration.examples])
    history.validation = score(module, calibration, history.threshold).to_dict()
    return module, history


__all__ = ["ExampleSet", "ReaderConfig", "ReaderHistory", "ReaderScores", "build_examples", "score", "train_reader"]

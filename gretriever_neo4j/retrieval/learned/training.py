"""Training the learned retriever's scorer: weak labels per question (`weak_labels`), positives and sampled
negatives from the neighbourhood the beam will score (`sample_examples`), then binary cross-entropy on both
heads (`train_retriever`). Torch is imported only when training starts."""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from gretriever_neo4j.errors import InputError
from gretriever_neo4j.progress import OnProgress, notify
from gretriever_neo4j.retrieval.kg import UNREACHED, KnowledgeGraph
from gretriever_neo4j.retrieval.learned.config import RetrieverConfig
from gretriever_neo4j.retrieval.learned.scorer import _torch, build_scorer, scoring_text, structure_features
from gretriever_neo4j.retrieval.learned.sources import KnowledgeGraphSource
from gretriever_neo4j.retrieval.weak_labels import WeakLabels, pattern_edges, shortest_path_edges


@dataclass(frozen=True)
class TrainingQuestion:
    text: str
    topic_keys: list[str]
    answer_keys: list[str]


@dataclass(frozen=True, eq=False)
class TrainingExamples:
    question: np.ndarray  # (n,) index into the question vectors
    head: np.ndarray
    relation: np.ndarray
    tail: np.ndarray
    head_distance: np.ndarray
    tail_distance: np.ndarray
    label: np.ndarray  # float32 0/1: the triple is labelled
    answer_label: np.ndarray  # float32 0/1: labelled, and an end of it is an answer (not a topic)

    def __len__(self) -> int:
        return len(self.label)


def training_texts(kg: KnowledgeGraph, questions: Sequence[TrainingQuestion], config: RetrieverConfig) -> list[str]:
    """What `train_retriever` embeds for each question (the topics' node texts masked, when configured)."""
    return [scoring_text(q.text, [kg.node_texts[i] for i in kg.indices(q.topic_keys).tolist()], config)
            for q in questions]


def weak_labels(kg: KnowledgeGraph, question: TrainingQuestion, config: RetrieverConfig) -> WeakLabels:
    sources, answers = kg.indices(question.topic_keys), kg.indices(question.answer_keys)
    if config.labels == "pattern":
        return pattern_edges(kg, sources, answers, config.max_hops)
    return shortest_path_edges(kg, sources, answers, config.max_hops)


def sample_examples(kg: KnowledgeGraph, question_index: int, labels: WeakLabels, sources: np.ndarray,
                    answers: np.ndarray, config: RetrieverConfig, rng: np.random.Generator) -> TrainingExamples | None:
    """Positives: labelled triples (at most `positives_per_question`). Hard negatives: other triples incident to
    the sources and to the labelled paths' nodes (what the beam scores when it follows the right path). Random
    negatives: triples incident to random nodes within `max_hops - 1` (what it scores after a wrong turn)."""
    positives = labels.edges
    if positives.size == 0:
        return None
    dist = labels.distances
    path_nodes = np.unique(np.concatenate([sources, kg.head[positives], kg.tail[positives]]))
    path_nodes = path_nodes[(dist[path_nodes] != UNREACHED) & (dist[path_nodes] < config.max_hops)]
    hard = np.setdiff1d(kg.incident(path_nodes).edge, positives)
    inner = np.flatnonzero((dist > 0) & (dist < config.max_hops))
    random_nodes = rng.choice(inner, size=min(8, inner.size), replace=False) if inner.size else inner
    loose = np.setdiff1d(kg.incident(random_nodes).edge, positives) if random_nodes.size else random_nodes

    def pick(pool: np.ndarray, count: int) -> np.ndarray:
        return pool if pool.size <= count else rng.choice(pool, size=count, replace=False)

    chosen_positives = pick(positives, config.positives_per_question)
    negatives = np.union1d(pick(hard, config.hard_negatives_per_question),
                           pick(loose, config.random_negatives_per_question))
    edges = np.concatenate([chosen_positives, negatives])
    head, tail = kg.head[edges], kg.tail[edges]
    label = np.concatenate([np.ones(len(chosen_positives)), np.zeros(len(negatives))]).astype(np.float32)
    targets = np.setdiff1d(answers, sources)
    ends_at_answer = np.isin(head, targets) | np.isin(tail, targets)
    return TrainingExamples(
        question=np.full(len(edges), question_index, dtype=np.int64), head=head, relation=kg.relation[edges],
        tail=tail, head_distance=dist[head], tail_distance=dist[tail], label=label,
        answer_label=(label * ends_at_answer).astype(np.float32))


def _concat(parts: list[TrainingExamples]) -> TrainingExamples:
    return TrainingExamples(*(np.concatenate([getattr(p, f.name) for p in parts])
                              for f in dataclasses.fields(TrainingExamples)))


@dataclass
class TrainingHistory:
    questions: int = 0
    questions_labelled: int = 0
    examples: int = 0
    labelling_seconds: float = 0.0
    embedding_seconds: float = 0.0
    training_seconds: float = 0.0
    epoch_losses: list[float] = dataclasses.field(default_factory=list)

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


def train_retriever(kg: KnowledgeGraph, questions: Sequence[TrainingQuestion], embedder, config: RetrieverConfig,
                    progress: OnProgress | None = None, *,
                    question_vectors: np.ndarray | None = None, threads: int | None = None):
    """Train the scorer on `questions` over `kg` (which needs embeddings). `embedder` embeds the question texts
    (`embedder.embed(texts) -> (n, d)`, texts from `training_texts`), unless `question_vectors` (of those
    texts) are given. `progress` is told about each
    stage and epoch. `threads` sets torch's CPU threads while training (small models train fastest on one,
    and far slower on two when other processes compete for the cores). Returns (torch module, TrainingHistory)."""
    torch = _torch()
    previous_threads = torch.get_num_threads()
    if threads is not None:
        torch.set_num_threads(max(int(threads), 1))
    try:
        return _train(kg, questions, embedder, config, progress, question_vectors)
    finally:
        torch.set_num_threads(previous_threads)


def _train(kg: KnowledgeGraph, questions: Sequence[TrainingQuestion], embedder, config: RetrieverConfig,
           progress: OnProgress | None, question_vectors: np.ndarray | None):
    torch = _torch()
    KnowledgeGraphSource(kg)  # checks the embeddings
    history = TrainingHistory(questions=len(questions))
    rng = np.random.default_rng(config.seed)

    started = time.perf_counter()
    parts = []
    for i, question in enumerate(questions):
        labels = weak_labels(kg, question, config)
        examples = sample_examples(kg, i, labels, kg.indices(question.topic_keys), kg.indices(question.answer_keys),
                                   config, rng)
        if examples is not None:
            parts.append(examples)
        if (i + 1) % 1000 == 0:
            notify(progress, "labels", i + 1, len(questions))
    history.labelling_seconds = time.perf_counter() - started
    history.questions_labelled = len(parts)
    if not parts:
        raise InputError("no training question has a labelled path from its topic entities to an answer",
                         field="questions")
    examples = _concat(parts)
    history.examples = len(examples)

    started = time.perf_counter()
    if question_vectors is None:
        question_vectors = np.asarray(embedder.embed(training_texts(kg, questions, config)), dtype=np.float32)
    history.embedding_seconds = time.perf_counter() - started

    model = build_scorer(kg.dim, config)
    optimiser = torch.optim.AdamW(model.parameters(), lr=config.learning_rate, weight_decay=config.weight_decay)
    loss_fn = torch.nn.BCEWithLogitsLoss()
    q_table = torch.from_numpy(np.asarray(question_vectors, dtype=np.float32))
    node_table = torch.from_numpy(kg.node_embeddings)
    relation_table = torch.from_numpy(kg.relation_embeddings)
    degree = kg.degree
    structure = torch.from_numpy(structure_features(examples.head_distance, examples.tail_distance,
                                                    degree[examples.head], degree[examples.tail], config))
    columns = {name: torch.from_numpy(getattr(examples, name)) for name in ("question", "head", "relation", "tail")}
    target = torch.from_numpy(np.stack([examples.label, examples.answer_label], axis=1))
    generator = torch.Generator().manual_seed(config.seed)
    steps_per_epoch = math.ceil(len(examples) / config.batch_size)
    scheduler = torch.optim.lr_scheduler.OneCycleLR(optimiser, max_lr=config.learning_rate,
                                                    total_steps=steps_per_epoch * config.epochs)
    started = time.perf_counter()
    model.train()
    for epoch in range(config.epochs):
        order = torch.randperm(len(examples), generator=generator)
        total = 0.0
        for start in range(0, len(examples), config.batch_size):
            batch = order[start:start + config.batch_size]
            logits = model(q_table[columns["question"][batch]], node_table[columns["head"][batch]],
                           relation_table[columns["relation"][batch]], node_table[columns["tail"][batch]],
                           structure[batch])
            loss = loss_fn(logits, target[batch])
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            scheduler.step()
            total += loss.detach().item() * len(batch)
        history.epoch_losses.append(total / len(examples))
        notify(progress, "epoch", epoch + 1, config.epochs, loss=history.epoch_losses[-1],
               seconds=time.perf_counter() - started)
    model.eval()
    history.training_seconds = time.perf_counter() - started
    return model, history

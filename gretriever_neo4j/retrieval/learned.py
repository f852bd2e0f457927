"""A learned, question-conditioned retriever (beyond the paper), in the spirit of SubgraphRAG (Li et al., 2024).

Scorer
    An MLP over [question vector, head vector, relation vector, tail vector, structure] -> two logits, where
    structure = one-hot hop distance of head and of tail from the seeds (0..max_hops, "farther") and the log
    degree of both ends. Head "relevance": the triple lies on the question's reasoning path. Head "answer": it
    does and one of its ends is an answer. The first layer is a sum of per-part projections (the same function
    as one linear layer over the concatenation), so every node's projection is computed once per graph and a
    triple costs a few vector additions. The question vector is that of the question with the seeds' names
    masked ("who directed X"): what is asked, not what it is asked about (`mask_topics`).

Training
    Binary cross-entropy on weak labels (`weak_labels.pattern_edges`, or plain shortest paths) from the gold
    topic entities to the gold answers. Negatives are sampled from the candidate neighbourhood the retriever
    will score: the incident triples of the labelled paths' nodes (hard) and of random nodes within reach.
    CPU, minutes.

Inference (a beam, bounded)
    Seeds come from hybrid linking (`linking.link_seeds`). Hop by hop (at most `max_hops`) the incident triples
    of the frontier are scored, and only the `beam_nodes` best new nodes (by relevance of their best triple)
    become the next frontier, so hubs are scored but never expanded blindly. Then triples are taken greedily
    for the budget (`max_edges`), each with the chain of triples that connected it to a seed, so the result is
    connected: half of the budget by the answer head, the rest by relevance (`selection`). It is returned as the
    paper's `RetrievalResult` (CandidateGraph + Selection + textualisation), which the generator consumes
    unchanged. Nothing here knows a relation name.

The graph is reached through a source: a `KnowledgeGraph` in memory, or `StoreGraphSource` over Neo4j
(`GraphStore.kg_incident` etc.), which fetches only the neighbourhood it expands.
"""

from __future__ import annotations

import copy

import dataclasses
import math
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from gretriever_neo4j.errors import ConfigError, InputError
from gretriever_neo4j.retrieval.candidates import CandidateGraph
from gretriever_neo4j.retrieval.kg import UNREACHED, Incident, KnowledgeGraph
from gretriever_neo4j.retrieval.linking import InMemoryLinking, MentionPrior, StoreLinking, link_seeds, mask_mentions
from gretriever_neo4j.retrieval.pcst import Selection
from gretriever_neo4j.retrieval.in_memory import RetrievalResult
from gretriever_neo4j.retrieval.textualize import count_tokens, textualize
from gretriever_neo4j.retrieval.weak_labels import WeakLabels, pattern_edges, shortest_path_edges

CHECKPOINT_FORMAT = "gqa-learned-retriever/1"
LEARNED_STAGES = ("seeds", "embed_masked", "scoring", "selection", "textualize")
DEGREE_SCALE = 10.0  # log1p(degree) / DEGREE_SCALE keeps the feature near [0, 1] for graphs up to ~20k degree


@dataclass(frozen=True)
class RetrieverConfig:
    max_hops: int = 3
    hidden: int = 256
    beam_nodes: int = 64  # new nodes expanded per hop
    max_scored_per_hop: int = 20_000  # incident triples scored per hop, best frontier nodes first
    max_edges: int = 200  # budget of the returned subgraph (at 100, 3-hop MetaQA loses the answer in 4%)
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
        for name in ("max_hops", "hidden", "beam_nodes", "max_scored_per_hop", "max_seeds", "epochs", "batch_size",
                     "positives_per_question"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise InputError(f"must be an integer >= 1, got {value!r}", field=name)
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
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ConfigError(f"unknown retriever settings {unknown}; known: {sorted(known)}")
        return cls(**data)


# -- the scorer ---------------------------------------------------------------------------------------

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


# -- graph sources --------------------------------------------------------------------------------------

class GraphSource(Protocol):
    """What the beam needs from a graph; ids are the source's own integers."""

    def node_ids(self, keys: Sequence[str]) -> np.ndarray: ...
    def incident(self, nodes: np.ndarray) -> Incident: ...
    def triples(self, edges: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]: ...
    def degrees(self, nodes: np.ndarray) -> np.ndarray: ...
    def node_vectors(self, nodes: np.ndarray) -> np.ndarray: ...
    def node_texts(self, nodes: np.ndarray) -> list[str]: ...
    def relation_vectors(self, relations: np.ndarray) -> np.ndarray: ...
    def candidate_graph(self, nodes: np.ndarray, edges: np.ndarray) -> CandidateGraph: ...


class KnowledgeGraphSource:
    """A `KnowledgeGraph` with embeddings, as a GraphSource."""

    def __init__(self, kg: KnowledgeGraph):
        if kg.node_embeddings is None or kg.relation_embeddings is None:
            raise InputError("the knowledge graph needs node and relation embeddings", field="kg")
        self.kg = kg
        self.num_nodes = kg.num_nodes
        self._degree = kg.degree

    def node_ids(self, keys: Sequence[str]) -> np.ndarray:
        return self.kg.indices(keys)

    def incident(self, nodes: np.ndarray) -> Incident:
        return self.kg.incident(nodes)

    def triples(self, edges: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return self.kg.head[edges], self.kg.relation[edges], self.kg.tail[edges]

    def degrees(self, nodes: np.ndarray) -> np.ndarray:
        return self._degree[nodes]

    def node_vectors(self, nodes: np.ndarray) -> np.ndarray:
        return self.kg.node_embeddings[nodes]

    def node_texts(self, nodes: np.ndarray) -> list[str]:
        return [self.kg.node_texts[n] for n in np.asarray(nodes, dtype=np.int64).tolist()]

    def relation_vectors(self, relations: np.ndarray) -> np.ndarray:
        return self.kg.relation_embeddings[relations]

    def candidate_graph(self, nodes: np.ndarray, edges: np.ndarray) -> CandidateGraph:
        return self.kg.to_candidate_graph(nodes, edges)

    def linking(self) -> InMemoryLinking:
        return InMemoryLinking(self.kg)


class StoreGraphSource:
    """A stored graph reached through `GraphStore`, fetching only what the beam touches.

    Nodes, relation texts and edges get local integer ids in order of first sight; vectors and degrees are
    fetched once per node (`kg_node_vectors`) and once per relation text (`kg_relation_vectors`)."""

    def __init__(self, store, graph: str, *, max_incident_per_node: int = 10_000):
        self.store = store
        self.graph = graph
        self.max_incident_per_node = max_incident_per_node
        self._node_index: dict[str, int] = {}
        self._node_keys: list[str] = []
        self._node_texts: list[str] = []
        self._node_vectors: list[np.ndarray] = []
        self._node_degrees: list[int] = []
        self._relation_index: dict[str, int] = {}
        self._relation_vectors: list[np.ndarray] = []
        self._edge_index: dict[str, int] = {}
        self._edge_refs: list[str] = []
        self._edge_triples: list[tuple[int, int, int]] = []
        self._incidence: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}

    @property
    def num_nodes(self) -> int:
        return len(self._node_keys)

    def _register_nodes(self, keys: Iterable[str]) -> None:
        missing = [k for k in dict.fromkeys(keys) if k not in self._node_index]
        if not missing:
            return
        rows = {row["key"]: row for row in self.store.kg_node_vectors(self.graph, missing)}
        for key in missing:
            row = rows.get(key)
            if row is None:
                continue
            self._node_index[key] = len(self._node_keys)
            self._node_keys.append(key)
            self._node_texts.append(row["text"] or "")
            self._node_vectors.append(np.asarray(row["embedding"], dtype=np.float32))
            self._node_degrees.append(int(row["degree"]))

    def _register_relations(self, texts: Iterable[str]) -> None:
        missing = [t for t in dict.fromkeys(texts) if t not in self._relation_index]
        if not missing:
            return
        vectors = self.store.kg_relation_vectors(self.graph, missing)
        for text in missing:
            self._relation_index[text] = len(self._relation_vectors)
            self._relation_vectors.append(np.asarray(vectors[text], dtype=np.float32))

    def node_ids(self, keys: Sequence[str]) -> np.ndarray:
        self._register_nodes(keys)
        found = dict.fromkeys(self._node_index[k] for k in keys if k in self._node_index)
        return np.fromiter(found, dtype=np.int64, count=len(found))

    def incident(self, nodes: np.ndarray) -> Incident:
        nodes = np.asarray(nodes, dtype=np.int64).reshape(-1)
        todo = [n for n in dict.fromkeys(nodes.tolist()) if n not in self._incidence]
        if todo:
            by_key = self.store.kg_incident(self.graph, [self._node_keys[n] for n in todo], self.max_incident_per_node)
            rows = [row for n in todo for row in by_key.get(self._node_keys[n], [])]
            self._register_nodes(k for row in rows for k in (row["src"], row["dst"]))
            self._register_relations(row["text"] for row in rows)
            for n in todo:
                edges, neighbours, outgoing = [], [], []
                for row in by_key.get(self._node_keys[n], []):
                    if row["ref"] not in self._edge_index:
                        self._edge_index[row["ref"]] = len(self._edge_refs)
                        self._edge_refs.append(row["ref"])
                        self._edge_triples.append((self._node_index[row["src"]], self._relation_index[row["text"]],
                                                   self._node_index[row["dst"]]))
                    edge = self._edge_index[row["ref"]]
                    if edge in edges:  # an undirected match lists a self-loop twice
                        continue
                    edges.append(edge)
                    neighbours.append(self._node_index[row["neighbour"]])
                    outgoing.append(row["src"] == self._node_keys[n])
                self._incidence[n] = (np.asarray(edges, np.int64), np.asarray(neighbours, np.int64),
                                      np.asarray(outgoing, bool))
        parts = [self._incidence[n] for n in nodes.tolist()]
        counts = [len(p[0]) for p in parts]
        owner = np.repeat(np.arange(len(nodes), dtype=np.int64), counts)
        if not parts or sum(counts) == 0:
            empty = np.zeros(0, np.int64)
            return Incident(owner=empty, edge=empty, neighbour=empty, outgoing=np.zeros(0, bool))
        return Incident(owner=owner, edge=np.concatenate([p[0] for p in parts]),
                        neighbour=np.concatenate([p[1] for p in parts]), outgoing=np.concatenate([p[2] for p in parts]))

    def triples(self, edges: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        table = np.asarray(self._edge_triples, dtype=np.int64).reshape(-1, 3)[np.asarray(edges, dtype=np.int64)]
        return table[:, 0], table[:, 1], table[:, 2]

    def degrees(self, nodes: np.ndarray) -> np.ndarray:
        return np.asarray(self._node_degrees, dtype=np.int64)[np.asarray(nodes, dtype=np.int64)]

    def node_vectors(self, nodes: np.ndarray) -> np.ndarray:
        return np.stack([self._node_vectors[n] for n in np.asarray(nodes, dtype=np.int64).tolist()])

    def node_texts(self, nodes: np.ndarray) -> list[str]:
        return [self._node_texts[n] for n in np.asarray(nodes, dtype=np.int64).tolist()]

    def relation_vectors(self, relations: np.ndarray) -> np.ndarray:
        return np.stack([self._relation_vectors[r] for r in np.asarray(relations, dtype=np.int64).tolist()])

    def candidate_graph(self, nodes: np.ndarray, edges: np.ndarray) -> CandidateGraph:
        nodes = np.asarray(nodes, dtype=np.int64).reshape(-1)
        edges = np.asarray(edges, dtype=np.int64).reshape(-1)
        local = {n: i for i, n in enumerate(nodes.tolist())}
        head, relation, tail = self.triples(edges) if len(edges) else (np.zeros(0, np.int64),) * 3
        relation_texts = list(self._relation_index)
        dim = len(self._node_vectors[0]) if self._node_vectors else 0
        return CandidateGraph(
            node_keys=[self._node_keys[n] for n in nodes.tolist()],
            node_texts=[self._node_texts[n] for n in nodes.tolist()],
            node_embeddings=self.node_vectors(nodes) if len(nodes) else np.zeros((0, dim), np.float32),
            edge_src=np.asarray([local[h] for h in head.tolist()], dtype=np.int64),
            edge_dst=np.asarray([local[t] for t in tail.tolist()], dtype=np.int64),
            edge_texts=[relation_texts[r] for r in relation.tolist()],
            edge_embeddings=self.relation_vectors(relation) if len(edges) else np.zeros((0, dim), np.float32),
            node_refs=None, edge_refs=[self._edge_refs[e] for e in edges.tolist()])

    def linking(self) -> StoreLinking:
        return StoreLinking(self.store)


def as_source(graph) -> GraphSource:
    if isinstance(graph, KnowledgeGraph):
        return KnowledgeGraphSource(graph)
    return graph


# -- training ---------------------------------------------------------------------------------------------

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


def scoring_text(question: str, topic_names: Iterable[str], config: RetrieverConfig) -> str:
    """The text whose vector conditions the scorer: the question, topic names masked when configured."""
    return mask_mentions(question, topic_names) if config.mask_topics else question


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
                    progress: Callable[[str, dict], None] | None = None, *,
                    question_vectors: np.ndarray | None = None, threads: int | None = None):
    """Train the scorer on `questions` over `kg` (which needs embeddings). `embedder` embeds the question texts
    (`embedder.embed(texts) -> (n, d)`, texts from `training_texts`), unless `question_vectors` (of those
    texts) are given. `progress(stage, info)` is told about each
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
           progress: Callable[[str, dict], None] | None, question_vectors: np.ndarray | None):
    torch = _torch()
    KnowledgeGraphSource(kg)  # checks the embeddings
    history = TrainingHistory(questions=len(questions))
    report = progress or (lambda stage, info: None)
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
            report("labels", {"done": i + 1, "total": len(questions)})
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
        report("epoch", {"epoch": epoch + 1, "epochs": config.epochs, "loss": history.epoch_losses[-1],
                         "seconds": time.perf_counter() - started})
    model.eval()
    history.training_seconds = time.perf_counter() - started
    return model, history


# -- checkpoints ------------------------------------------------------------------------------------------

def save_checkpoint(path: str | Path, model, config: RetrieverConfig, embedder_name: str,
                    prior: MentionPrior | None = None) -> Path:
    """One file: the config (as a dict), the state dict, the embedder's name, the input width, the mention prior."""
    from gretriever_neo4j.artifacts.tagged_files import write_tagged

    return write_tagged(path, {
        "format": CHECKPOINT_FORMAT, "config": dataclasses.asdict(config), "embedder": embedder_name,
        "dim": int(model.question.in_features),
        "state_dict": {k: v.detach().cpu() for k, v in model.state_dict().items()},
        "mention_prior": None if prior is None else prior.to_dict()})


def load_checkpoint(path: str | Path):
    """-> (torch module in eval mode, RetrieverConfig, embedder name, MentionPrior or None)."""
    from gretriever_neo4j.artifacts.tagged_files import read_tagged

    data = read_tagged(path, CHECKPOINT_FORMAT, "retriever")
    config = RetrieverConfig.from_dict(data["config"])
    model = build_scorer(int(data["dim"]), config)
    model.load_state_dict(data["state_dict"])
    model.eval()
    prior = MentionPrior.from_dict(data["mention_prior"]) if data.get("mention_prior") else None
    return model, config, str(data["embedder"]), prior


# -- inference --------------------------------------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class BeamResult:
    edges: np.ndarray  # every scored edge, in order of scoring
    logits: np.ndarray  # (n, 2): their relevance and answer logits
    via: np.ndarray  # the frontier node each was scored from
    parent: dict[int, tuple[int, int]]  # admitted node -> (edge that admitted it, the node it came from)

    @property
    def relevance(self) -> np.ndarray:
        return self.logits[:, 0]

    @property
    def answer(self) -> np.ndarray:
        return self.logits[:, 1]


class LearnedRetriever:
    """Retrieval with a trained scorer over a graph source (a KnowledgeGraph, or StoreGraphSource)."""

    def __init__(self, model, config: RetrieverConfig, graph, *, embedder_name: str | None = None,
                 prior: MentionPrior | None = None, linking=None, graph_name: str | None = None,
                 embed: Callable[[list[str]], np.ndarray] | None = None):
        if config.mask_topics and embed is None:
            raise ConfigError("this retriever scores with the masked question's vector: pass embed= (the "
                              "embedder's embed function, the model named in the checkpoint)")
        self.config = config
        self.embed = embed
        self.weights = ScorerWeights.from_module(model)
        self.source = as_source(graph)
        self.embedder_name = embedder_name
        self.prior = prior
        self.graph_name = graph_name if graph_name is not None else getattr(self.source, "graph", None)
        self.linking = linking if linking is not None else self.source.linking()
        self._node_projection: dict[str, np.ndarray] = {}
        self._relation_projection: np.ndarray | None = None
        if isinstance(self.source, KnowledgeGraphSource):  # small enough to project every node once
            kg = self.source.kg
            self._node_projection = {"head": kg.node_embeddings @ self.weights.head.T,
                                     "tail": kg.node_embeddings @ self.weights.tail.T}
            self._relation_projection = kg.relation_embeddings @ self.weights.relation.T

    @classmethod
    def from_checkpoint(cls, path: str | Path, graph, **options) -> LearnedRetriever:
        model, config, embedder_name, prior = load_checkpoint(path)
        return cls(model, config, graph, embedder_name=embedder_name, prior=prior, **options)

    def over(self, graph) -> LearnedRetriever:
        """The same trained scorer over another source. A `StoreGraphSource` grows as the beam meets nodes, so a
        server gives each request its own and shares only this retriever's weights."""
        other = copy.copy(self)
        other.source = as_source(graph)
        other.linking = other.source.linking()
        other.graph_name = getattr(other.source, "graph", self.graph_name)
        if not isinstance(other.source, KnowledgeGraphSource):
            other._node_projection, other._relation_projection = {}, None
        return other

    # projections: precomputed for an in-memory graph, computed per call for a store-backed one
    def _project(self, part: str, nodes: np.ndarray) -> np.ndarray:
        if part in self._node_projection:
            return self._node_projection[part][nodes]
        weight = self.weights.head if part == "head" else self.weights.tail
        return self.source.node_vectors(nodes) @ weight.T

    def _project_relations(self, relations: np.ndarray) -> np.ndarray:
        if self._relation_projection is not None:
            return self._relation_projection[relations]
        return self.source.relation_vectors(relations) @ self.weights.relation.T

    def score_triples(self, question_projection: np.ndarray, head: np.ndarray, relation: np.ndarray,
                      tail: np.ndarray, head_distance: np.ndarray, tail_distance: np.ndarray) -> np.ndarray:
        source = self.source
        structure = structure_features(head_distance, tail_distance, source.degrees(head), source.degrees(tail),
                                       self.config)
        first = (question_projection + self._project("head", head) + self._project_relations(relation)
                 + self._project("tail", tail) + structure @ self.weights.structure.T)
        return self.weights.logits(first)

    def seeds_for(self, question: str, question_vector: np.ndarray | None) -> list[str]:
        config = self.config
        link = link_seeds(question, question_vector, self.linking, self.graph_name, k=max(config.seed_fallback, 1),
                          prior=self.prior)
        return link.preferred(config.seed_fallback, config.seed_min_ratio)[:config.max_seeds]

    def beam(self, seeds: np.ndarray, question_vector: np.ndarray) -> BeamResult:
        """Score hop by hop from the seeds, expanding the `beam_nodes` best new nodes each hop."""
        config = self.config
        q = self.weights.question @ np.asarray(question_vector, dtype=np.float32).reshape(-1) + self.weights.question_bias
        seeds = np.asarray(list(dict.fromkeys(np.asarray(seeds, dtype=np.int64).tolist())), dtype=np.int64)
        hop_of = np.full(self.source.num_nodes, UNREACHED, dtype=np.int64)  # hop at which a node was admitted
        hop_of[seeds] = 0
        parent: dict[int, tuple[int, int]] = {}
        scored = np.zeros(0, dtype=np.int64)
        all_edges, all_via, all_logits = [], [], []
        frontier = seeds
        for hop in range(1, config.max_hops + 1):
            if frontier.size == 0:
                break
            incident = self.source.incident(frontier)
            hop_of = _grown(hop_of, self.source.num_nodes)  # a store-backed source meets new nodes as it goes
            count = min(len(incident.edge), config.max_scored_per_hop)  # owners come best frontier node first
            edge, owner_pos = incident.edge[:count], incident.owner[:count]
            fresh = ~np.isin(edge, scored)
            edge, first = np.unique(edge[fresh], return_index=True)  # an edge between frontier nodes comes twice
            if edge.size == 0:
                break
            via = frontier[owner_pos[fresh][first]]
            head, relation, tail = self.source.triples(edge)
            distance = lambda nodes: np.where(hop_of[nodes] == UNREACHED, hop, hop_of[nodes])
            logits = self.score_triples(q, head, relation, tail, distance(head), distance(tail))
            scored = np.union1d(scored, edge)
            all_edges.append(edge)
            all_via.append(via)
            all_logits.append(logits)
            other = np.where(head == via, tail, head)
            frontier = self._admit(other, edge, via, logits[:, 0], hop_of, parent, hop)  # expansion by relevance
        if not all_edges:
            empty = np.zeros(0, np.int64)
            return BeamResult(edges=empty, logits=np.zeros((0, 2)), via=empty, parent=parent)
        return BeamResult(edges=np.concatenate(all_edges), logits=np.concatenate(all_logits),
                          via=np.concatenate(all_via), parent=parent)

    def _admit(self, other: np.ndarray, edge: np.ndarray, via: np.ndarray, scores: np.ndarray, hop_of: np.ndarray,
               parent: dict[int, tuple[int, int]], hop: int) -> np.ndarray:
        """The best `beam_nodes` nodes not reached before, each with the best-scoring edge that reaches it
        (equal scores: lower edge id). Marks them in `hop_of` and records their parent edge."""
        new = np.flatnonzero(hop_of[other] == UNREACHED)
        order = new[np.lexsort((edge[new], -scores[new]))]  # best first
        nodes, first = np.unique(other[order], return_index=True)  # each node's best edge
        best = np.sort(first)[:self.config.beam_nodes]  # positions in `order`, best nodes first
        admitted = other[order[best]]
        hop_of[admitted] = hop
        for node, e, v in zip(admitted.tolist(), edge[order[best]].tolist(), via[order[best]].tolist()):
            parent[node] = (e, v)
        return admitted

    def choose(self, beam: BeamResult, max_edges: int) -> list[int]:
        """The budget's edges by the configured rule: by the answer head, by the relevance head, or "mixed":
        the first `answer_share` of the budget by the answer head (paths to the likeliest answers), the rest
        by relevance (the question's paths, whatever they end at)."""
        config = self.config
        if config.selection == "answer":
            return self.select(beam, beam.answer, max_edges)
        if config.selection == "relevance":
            return self.select(beam, beam.relevance, max_edges)
        first = self.select(beam, beam.answer, int(round(config.answer_share * max_edges)))
        return self.select(beam, beam.relevance, max_edges, chosen=first)

    @staticmethod
    def select(beam: BeamResult, priority: np.ndarray, max_edges: int, chosen: Sequence[int] = ()) -> list[int]:
        """Edges by `priority` (best first; equal: lower edge id), each with the chain that connects it to a
        seed, appended to `chosen` (already connected) until `max_edges`; an edge whose chain does not fit is
        skipped. Parents always precede their children in the result."""
        chosen = dict.fromkeys(chosen)
        if max_edges <= len(chosen):
            return list(chosen)
        order = np.lexsort((beam.edges, -np.asarray(priority)))
        for i in order.tolist():
            if len(chosen) >= max_edges:
                break
            edge = int(beam.edges[i])
            if edge in chosen:
                continue
            chain, node = [edge], int(beam.via[i])
            while node in beam.parent:
                parent_edge, node = beam.parent[node]
                if parent_edge in chosen:
                    break
                chain.append(parent_edge)
            if len(chosen) + len(chain) <= max_edges:
                for e in reversed(chain):
                    chosen[e] = None
        return list(chosen)

    def retrieve(self, question: str, question_vector: np.ndarray, *, seeds: Sequence[str] | None = None,
                 max_edges: int | None = None) -> RetrievalResult:
        """The connected subgraph for `question` (at most `max_edges` triples, default the config's), with its
        text. `seeds` (node keys) skip linking."""
        budget = self.config.max_edges if max_edges is None else max_edges
        if budget < 0:
            raise InputError(f"must be >= 0, got {budget}", field="max_edges")
        question_vector = np.asarray(question_vector, dtype=np.float32).reshape(-1)
        timings: dict[str, float] = {}
        started = time.perf_counter()
        seed_keys = list(seeds) if seeds is not None else self.seeds_for(question, question_vector)
        seed_ids = self.source.node_ids(seed_keys)
        timings["seeds"] = _ms_since(started)
        started = time.perf_counter()
        if self.config.mask_topics:
            masked = scoring_text(question, self.source.node_texts(seed_ids), self.config)
            question_vector = np.asarray(self.embed([masked]), dtype=np.float32)[0]
        timings["embed_masked"] = _ms_since(started)
        started = time.perf_counter()
        beam = self.beam(seed_ids, question_vector)
        timings["scoring"] = _ms_since(started)
        started = time.perf_counter()
        edges = np.asarray(self.choose(beam, budget), dtype=np.int64)
        head, _, tail = self.source.triples(edges) if edges.size else (np.zeros(0, np.int64),) * 3
        nodes = np.asarray(list(dict.fromkeys(seed_ids.tolist() + np.stack([head, tail], 1).reshape(-1).tolist())),
                           dtype=np.int64)
        candidate = self.source.candidate_graph(nodes, edges)
        score_of = dict(zip(beam.edges.tolist(), beam.relevance.tolist()))
        selection = Selection(node_indices=np.arange(candidate.num_nodes, dtype=np.int64),
                              edge_indices=np.arange(candidate.num_edges, dtype=np.int64),
                              node_prizes=np.zeros(candidate.num_nodes),
                              edge_prizes=np.asarray([score_of[e] for e in edges.tolist()], dtype=np.float64),
                              whole_graph=False)
        timings["selection"] = _ms_since(started)
        started = time.perf_counter()
        subgraph = textualize(candidate, selection.node_indices, selection.edge_indices)
        timings["textualize"] = _ms_since(started)
        return RetrievalResult(seed_keys=[k for k in seed_keys if k in set(candidate.node_keys)], candidate=candidate,
                               selection=selection, subgraph=subgraph, timings_ms=timings)


def _grown(array: np.ndarray, size: int) -> np.ndarray:
    if len(array) >= size:
        return array
    return np.concatenate([array, np.full(size - len(array), UNREACHED, dtype=array.dtype)])


def _ms_since(started: float) -> float:
    return (time.perf_counter() - started) * 1000.0


# -- evaluation ---------------------------------------------------------------------------------------------

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

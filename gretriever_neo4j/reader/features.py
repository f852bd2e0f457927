"""A reader example: one question over one retrieved subgraph, as index arrays into shared vector tables.

Training holds thousands of examples; their node and relation vectors repeat (the same KG nodes, nine MetaQA
relations), so an example stores integer ids into `VectorTable`s and the vectors are stored once. At inference
the tables are the subgraph's own vectors.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from gretriever_neo4j.reader.paths import SubgraphView, Walks, named_nodes

NODE_FLAGS = ("anchor", "named", "similarity")  # per-node features besides the walk scores


class VectorTable:
    """Distinct keys -> rows of one growing float32 matrix."""

    def __init__(self, dim: int):
        self.dim = dim
        self._index: dict[str, int] = {}
        self._rows: list[np.ndarray] = []
        self._matrix: np.ndarray | None = None

    def ids(self, keys: Sequence[str], vectors: np.ndarray) -> np.ndarray:
        out = np.empty(len(keys), dtype=np.int64)
        for i, key in enumerate(keys):
            row = self._index.get(key)
            if row is None:
                row = self._index[key] = len(self._rows)
                self._rows.append(np.asarray(vectors[i], dtype=np.float32))
                self._matrix = None
            out[i] = row
        return out

    @property
    def matrix(self) -> np.ndarray:
        if self._matrix is None:
            self._matrix = (np.stack(self._rows) if self._rows else np.zeros((0, self.dim), np.float32))
        return self._matrix

    def __len__(self) -> int:
        return len(self._rows)


@dataclass(frozen=True, eq=False)
class ReaderExample:
    question: np.ndarray  # (d,) the question with its anchors masked: what is asked
    question_full: np.ndarray  # (d,) the question as asked
    node_ids: np.ndarray  # (N,) rows of the node table, in local node order
    node_flags: np.ndarray  # (N, len(NODE_FLAGS)) float32
    pair_node: np.ndarray  # (P,) local node of each (node, signature) pair
    pair_sig: np.ndarray  # (P,) its signature
    sig_relation: np.ndarray  # (S, max_hops) rows of the relation table, -1 past the signature's end
    sig_direction: np.ndarray  # (S, max_hops) 0 forward, 1 backward (0 past the end)
    sig_length: np.ndarray  # (S,)
    labels: np.ndarray | None = None  # (N,) 1.0 for gold answers

    @property
    def num_nodes(self) -> int:
        return len(self.node_ids)


def signature_arrays(walks: Walks, relation_rows: np.ndarray, max_hops: int
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(relation rows, directions, lengths) of every signature, padded to `max_hops` steps."""
    count = len(walks.signatures)
    relation = np.full((count, max_hops), -1, dtype=np.int64)
    direction = np.zeros((count, max_hops), dtype=np.int64)
    length = np.zeros(count, dtype=np.int64)
    for s, signature in enumerate(walks.signatures):
        length[s] = len(signature)
        for p, (r, d) in enumerate(signature[:max_hops]):
            relation[s, p] = relation_rows[r]
            direction[s, p] = d
    return relation, direction, length


def node_flags(question: str, view: SubgraphView, anchors: Sequence[int], question_full: np.ndarray) -> np.ndarray:
    flags = np.zeros((view.num_nodes, len(NODE_FLAGS)), dtype=np.float32)
    if view.num_nodes == 0:
        return flags
    flags[list(anchors), 0] = 1.0
    named = named_nodes(question, view.node_texts)
    flags[named, 1] = 1.0
    vectors = view.node_vectors
    norms = np.linalg.norm(vectors, axis=1) * max(float(np.linalg.norm(question_full)), 1e-12)
    flags[:, 2] = (vectors @ np.asarray(question_full, np.float32)) / np.maximum(norms, 1e-12)
    return flags


def build_example(question: str, view: SubgraphView, walks: Walks, anchors: Sequence[int], question_vector: np.ndarray,
                  question_full: np.ndarray, max_hops: int, *, nodes: VectorTable | None = None,
                  relations: VectorTable | None = None, answers: Sequence[str] | None = None) -> ReaderExample:
    """The example for one question. With tables, vectors go into them (training); without, the ids are the
    view's own rows (inference). `answers` (node keys or texts) label the nodes."""
    if nodes is not None:
        node_ids = nodes.ids(view.node_keys, view.node_vectors)
        relation_rows = relations.ids(view.relation_texts, view.relation_vectors)
    else:
        node_ids = np.arange(view.num_nodes, dtype=np.int64)
        relation_rows = np.arange(len(view.relation_texts), dtype=np.int64)
    sig_relation, sig_direction, sig_length = signature_arrays(walks, relation_rows, max_hops)
    labels = None
    if answers is not None:
        gold = {a.strip().lower() for a in answers}
        labels = np.asarray([1.0 if (k.strip().lower() in gold or t.strip().lower() in gold) else 0.0
                             for k, t in zip(view.node_keys, view.node_texts)], dtype=np.float32)
    return ReaderExample(
        question=np.asarray(question_vector, np.float32).reshape(-1),
        question_full=np.asarray(question_full, np.float32).reshape(-1),
        node_ids=node_ids, node_flags=node_flags(question, view, anchors, question_full),
        pair_node=walks.pair_node, pair_sig=walks.pair_sig, sig_relation=sig_relation,
        sig_direction=sig_direction, sig_length=sig_length, labels=labels)

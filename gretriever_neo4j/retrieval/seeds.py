"""Similarity to the question and deterministic top-k ranking, shared by the in-memory and Neo4j paths.

The Neo4j path applies `rank_top` / `seed_nodes` to the hits its vector indexes return, so both paths
break ties the same way. Ties are the norm, not the exception: a knowledge graph has thousands of edges
with the same relation text and therefore the same embedding.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from gretriever_neo4j.errors import InputError
from gretriever_neo4j.threads import blas_on_one_thread

SCORE_DECIMALS = 6  # scores are rounded to this before ordering, so Java-vs-numpy float noise cannot flip ties
COSINE_EPS = 1e-8  # as torch.nn.CosineSimilarity: a zero vector has similarity 0 to everything


def round_scores(scores: np.ndarray | Sequence[float]) -> np.ndarray:
    return np.round(np.asarray(scores, dtype=np.float64), SCORE_DECIMALS)


def cosine_to_query(embeddings: np.ndarray, query: np.ndarray,
                    distinct: tuple[np.ndarray, np.ndarray] | None = None) -> np.ndarray:
    """Cosine similarity of each row to `query`, float32 in, float64 out (computed in float64).

    Identical rows get bit-identical scores (each distinct row is scored once), so ties between edges with
    the same relation text are exact, whatever blocking the BLAS kernel used. `distinct` is
    `distinct_rows(embeddings)`, for callers that keep it between questions.
    """
    matrix = np.asarray(embeddings, dtype=np.float32)
    query = np.asarray(query, dtype=np.float32).reshape(-1)
    if matrix.ndim != 2:
        raise InputError(f"expected a 2-d array, got shape {matrix.shape}", field="embeddings")
    if matrix.shape[0] == 0:
        return np.zeros(0, dtype=np.float64)
    if matrix.shape[1] != query.shape[0]:
        raise InputError(f"question embedding has dimension {query.shape[0]}, graph embeddings "
                         f"{matrix.shape[1]}", field="question_embedding")
    rows, inverse = distinct if distinct is not None else distinct_rows(matrix)
    rows = rows.astype(np.float64)
    q = query.astype(np.float64)
    norms = np.maximum(np.linalg.norm(rows, axis=1), COSINE_EPS) * max(float(np.linalg.norm(q)), COSINE_EPS)
    return (rows @ q / norms)[inverse]


EXACT_TOP = 4096  # rows per question scored in float64 (see PreparedRows.row_cosine)


class PreparedRows:
    """`cosine_to_query`'s question-independent half, kept per graph: the distinct rows (float32, the matrix
    itself when its rows are all distinct, so nothing is copied) and their float64 norms.

    `row_cosine(q)` scores every row with one float32 matrix-vector product, then scores again in float64, as
    `cosine_to_query` does, the `EXACT_TOP` best rows: those are the ones seeds and prizes are taken from, and
    there the ranks are exact (after `round_scores`). A graph of at most `EXACT_TOP` distinct rows is scored
    exactly throughout. Keeping float64 rows instead would cost 3 KB per node of a 384-d graph."""

    def __init__(self, matrix: np.ndarray, distinct: tuple[np.ndarray, np.ndarray] | None = None):
        if distinct is None:  # (given, the matrix is only asked its width: it may be a candidates.RowTable)
            matrix = np.ascontiguousarray(np.asarray(matrix, dtype=np.float32))
            first, inverse = _first_of_equal_rows(matrix)
            if len(first) > len(matrix) // 2:  # mostly distinct (node vectors): the matrix is its own table,
                distinct = (matrix, first[inverse])  # each row scored as its first equal row is: no copy
            else:
                distinct = (matrix[first], inverse)
        rows, self.inverse = distinct
        self.rows = np.ascontiguousarray(rows, dtype=np.float32)
        self.norms = np.zeros(len(self.rows))
        for start in range(0, len(self.rows), 16384):  # float64 norms without a float64 copy of the rows
            block = self.rows[start:start + 16384].astype(np.float64)
            self.norms[start:start + len(block)] = np.maximum(np.linalg.norm(block, axis=1), COSINE_EPS)
        self.dim = matrix.shape[1] if len(matrix.shape) == 2 else 0

    def cosine(self, query: np.ndarray) -> np.ndarray:
        if len(self.inverse) == 0:
            return np.zeros(0, dtype=np.float64)
        return self.row_cosine(query)[self.inverse]

    def row_cosine(self, query: np.ndarray) -> np.ndarray:
        """The cosine of each distinct row (`cosine` spreads them over the rows they stand for)."""
        q = np.asarray(query, dtype=np.float32).reshape(-1)
        if q.shape[0] != self.dim:
            raise InputError(f"question embedding has dimension {q.shape[0]}, graph embeddings {self.dim}",
                             field="question_embedding")
        q64 = q.astype(np.float64)
        norms = self.norms * max(float(np.linalg.norm(q64)), COSINE_EPS)
        if len(self.rows) <= EXACT_TOP:
            return _float64_dots(self.rows, None, q64) / norms
        scores = _float32_dots(self.rows, q).astype(np.float64) / norms
        top = np.argpartition(-scores, EXACT_TOP)[:EXACT_TOP]
        scores[top] = _float64_dots(self.rows, top, q64) / norms[top]
        return scores


# Rows past which one question's product is split over the cores, a part per thread (numpy lets go of the GIL in
# its BLAS call), where numpy's BLAS runs one thread (`threads.one_blas_thread`, in the processes that answer
# questions): a product of a few hundred thousand rows takes tens of milliseconds on one core, a third less on two.
_SPLIT_ROWS = 65_536
_parts: ThreadPoolExecutor | None = None
_parts_lock = threading.Lock()


def _float32_dots(rows: np.ndarray, q: np.ndarray) -> np.ndarray:
    """`rows @ q`, in parts on several threads where the rows are many."""
    cores = min(os.cpu_count() or 1, 4)
    if len(rows) < _SPLIT_ROWS or cores < 2 or not blas_on_one_thread():  # else BLAS spreads it itself
        return rows @ q
    global _parts
    with _parts_lock:
        if _parts is None:
            _parts = ThreadPoolExecutor(max_workers=cores, thread_name_prefix="gqa-dots")
    out = np.empty(len(rows), dtype=np.float32)
    bounds = np.linspace(0, len(rows), cores + 1).astype(np.int64)

    def part(i: int) -> None:
        out[bounds[i]:bounds[i + 1]] = rows[bounds[i]:bounds[i + 1]] @ q

    for done in [_parts.submit(part, i) for i in range(cores)]:
        done.result()
    return out


_DOT_BLOCK = 512  # rows converted to float64 at a time: 1.5 MB, in cache (all 4,096 at once: 3x slower)


def _float64_dots(rows: np.ndarray, which: np.ndarray | None, q64: np.ndarray) -> np.ndarray:
    """`rows[which].astype(float64) @ q64` (every row when `which` is None), a block of rows at a time: each
    row's dot product is summed as in one product, so the result is the same to the last bit."""
    count = len(rows) if which is None else len(which)
    out = np.empty(count, dtype=np.float64)
    for start in range(0, count, _DOT_BLOCK):
        block = rows[start:start + _DOT_BLOCK] if which is None else rows[which[start:start + _DOT_BLOCK]]
        out[start:start + len(block)] = block.astype(np.float64) @ q64
    return out


def distinct_rows(matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(distinct rows, index of each row's distinct row): `distinct[inverse]` rebuilds `matrix`."""
    matrix = np.ascontiguousarray(matrix, dtype=np.float32)
    first, inverse = _first_of_equal_rows(matrix)
    return matrix[first], inverse


def _first_of_equal_rows(matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(index of the first row of each distinct row, in byte order; each row's distinct row)."""
    if matrix.shape[0] == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    as_bytes = matrix.view(np.dtype((np.void, matrix.dtype.itemsize * matrix.shape[1])))
    _, first, inverse = np.unique(as_bytes.reshape(-1), return_index=True, return_inverse=True)
    return first.astype(np.int64), inverse.reshape(-1).astype(np.int64)


def rank_top(scores: np.ndarray | Sequence[float], keys: Sequence[str], k: int) -> np.ndarray:
    """Indices of the `k` best entries: rounded score descending, then key ascending.

    Keys should be unique; equal keys with equal scores keep their input order.
    """
    scores = round_scores(scores).reshape(-1)
    if len(keys) != len(scores):
        raise InputError(f"{len(scores)} scores but {len(keys)} keys", field="keys")
    k = min(max(int(k), 0), len(scores))
    if k == 0:
        return np.zeros(0, dtype=np.int64)
    # Only entries scoring at least the k-th best can make the cut: sort those few in Python.
    threshold = np.partition(scores, len(scores) - k)[len(scores) - k]
    contenders = np.flatnonzero(scores >= threshold).tolist()
    contenders.sort(key=lambda i: (-scores[i], keys[i]))
    return np.asarray(contenders[:k], dtype=np.int64)


def rank_top_by_rank(scores: np.ndarray, ranks: np.ndarray, k: int) -> np.ndarray:
    """`rank_top` with each key's precomputed rank in key order (`candidates.string_ranks`) instead of the keys:
    the same result, without building strings for the many ties of a knowledge graph."""
    scores = round_scores(scores).reshape(-1)
    k = min(max(int(k), 0), len(scores))
    if k == 0:
        return np.zeros(0, dtype=np.int64)
    threshold = np.partition(scores, len(scores) - k)[len(scores) - k]
    contenders = np.flatnonzero(scores >= threshold)
    order = np.lexsort((ranks[contenders], -scores[contenders]))  # stable: equal ranks keep input order
    return contenders[order[:k]]


def edge_rank_key(src_key: str, text: str, dst_key: str) -> str:
    """The tie-break key of an edge among equal scores: (source key, text, target key) in that order.

    Content-based, so it is the same whichever backend stored the edge.
    """
    return "\x1f".join((src_key, text, dst_key))


class _EdgeRankKeys(Sequence[str]):
    """Edge rank keys built on access: `rank_top` reads only the keys of its few contenders."""

    def __init__(self, src_keys: Sequence[str], texts: Sequence[str], dst_keys: Sequence[str]):
        self.src_keys, self.texts, self.dst_keys = src_keys, texts, dst_keys

    def __len__(self) -> int:
        return len(self.texts)

    def __getitem__(self, i):
        return edge_rank_key(self.src_keys[i], self.texts[i], self.dst_keys[i])


def seed_nodes(node_keys: Sequence[str], node_scores: np.ndarray | Sequence[float],
               edge_src_keys: Sequence[str], edge_texts: Sequence[str], edge_dst_keys: Sequence[str],
               edge_scores: np.ndarray | Sequence[float], *, k_nodes: int, k_edges: int) -> list[str]:
    """Seed node keys: the top `k_nodes` nodes, then source and target of each of the top `k_edges` edges.

    Order: node hits in rank order, then edge endpoints (source before target) in edge rank order;
    a key appearing twice keeps its first place. Edge ties are broken by `edge_rank_key`.
    """
    if not len(edge_src_keys) == len(edge_texts) == len(edge_dst_keys):
        raise InputError("edge source keys, texts and target keys differ in length", field="edges")
    top_nodes = rank_top(node_scores, node_keys, k_nodes)
    top_edges = rank_top(edge_scores, _EdgeRankKeys(edge_src_keys, edge_texts, edge_dst_keys), k_edges)
    ordered = [node_keys[i] for i in top_nodes.tolist()]
    for i in top_edges.tolist():
        ordered += [edge_src_keys[i], edge_dst_keys[i]]
    return list(dict.fromkeys(ordered))


def cosine_from_neo4j_score(score: float | np.ndarray) -> float | np.ndarray:
    """Neo4j's cosine vector index reports (1 + cos) / 2; this undoes that."""
    return 2.0 * np.asarray(score, dtype=np.float64) - 1.0

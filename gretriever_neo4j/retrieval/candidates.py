"""The in-memory candidate graph that every retrieval stage after data access works on.

Both retrieval paths (the in-memory reference and the Neo4j store) produce a `CandidateGraph`; everything
downstream (PCST, textualisation) is a pure function of it, which is what makes the two paths comparable.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from gretriever_neo4j.errors import InvariantError
from gretriever_neo4j.retrieval.element_ids import ElementIds, IdIndex, as_stored
from gretriever_neo4j.retrieval.seeds import PreparedRows, cosine_to_query, distinct_rows, edge_rank_key

# Joins the parts of a content-derived edge id. U+001F sorts below every printable character, so ordering
# joined ids equals ordering the (src, text, dst) tuples as long as no part contains it.
ID_SEPARATOR = "\x1f"


def content_edge_id(src_key: str, text: str, dst_key: str, occurrence: int = 0) -> str:
    """Stable edge id derived from content, used where the backend supplies no id of its own.

    `occurrence` numbers exact duplicate triples so that ids stay unique; duplicates are indistinguishable,
    so which one gets which number cannot change any result.
    """
    return ID_SEPARATOR.join((src_key, text, dst_key, str(occurrence)))


@dataclass(frozen=True, eq=False)
class Incidence:
    """Compressed incidence lists: edges touching node i are `edge[offsets[i]:offsets[i+1]]`, by edge index.

    A self-loop is listed once; every other edge is listed under both endpoints.
    """

    offsets: np.ndarray  # (N+1,) int64
    edge: np.ndarray  # (2E - self loops,) int64 edge index
    neighbour: np.ndarray  # same length, int64 index of the other endpoint

    def of(self, node_index: int) -> tuple[np.ndarray, np.ndarray]:
        start, stop = self.offsets[node_index], self.offsets[node_index + 1]
        return self.edge[start:stop], self.neighbour[start:stop]


class RowTable:
    """An (E, d) float32 matrix stored as a table of distinct rows and one row index per entry: a knowledge
    graph's edges share their relation's vector, so its whole candidate graph holds R vectors, not E copies.
    Indexing (`table[i]`, `table[array]`) gives ndarray rows as the matrix would; `np.asarray` materialises it
    (nothing in retrieval does: `distinct()` hands the table over as it is)."""

    def __init__(self, table: np.ndarray, rows: np.ndarray):
        self.table = _as_matrix(table, "edge_embeddings")
        self.rows = np.ascontiguousarray(np.asarray(rows).reshape(-1), dtype=np.int32)
        if self.rows.size and (self.rows.min() < 0 or self.rows.max() >= len(self.table)):
            raise InvariantError(f"a row index is out of range for {len(self.table)} rows", field="edge_embeddings")

    @property
    def shape(self) -> tuple[int, int]:
        return (len(self.rows), self.table.shape[1])

    ndim = 2
    dtype = np.dtype(np.float32)

    def __len__(self) -> int:
        return len(self.rows)

    def __getitem__(self, index):
        return self.table[self.rows[index]]

    def __array__(self, dtype=None, copy=None):
        matrix = self.table[self.rows]
        return matrix if dtype is None else matrix.astype(dtype, copy=False)

    def tolist(self) -> list[list[float]]:
        return self.table[self.rows].tolist()

    def distinct(self) -> tuple[np.ndarray, np.ndarray]:
        """`seeds.distinct_rows` of the matrix, from the table alone."""
        distinct, inverse = distinct_rows(self.table)
        if len(self.rows) == 0:
            return distinct[:0], np.zeros(0, dtype=np.int64)
        used, remap = np.unique(inverse[self.rows], return_inverse=True)  # only rows some entry uses
        return distinct[used], remap.reshape(-1).astype(np.int64)


@dataclass(frozen=True, eq=False)
class CandidateGraph:
    """Nodes and edges with texts and float32 embeddings; edges reference nodes by index.

    `node_refs` / `edge_refs` are opaque backend ids (e.g. Neo4j element ids) carried through untouched so a
    result can be located in the database. An empty graph (no nodes, no edges) is legal.
    """

    node_keys: list[str]
    node_texts: list[str]
    node_embeddings: np.ndarray  # (N, d) float32
    edge_src: np.ndarray  # (E,) int64 index into nodes
    edge_dst: np.ndarray  # (E,) int64
    edge_texts: list[str]
    edge_embeddings: np.ndarray | RowTable  # (E, d) float32
    node_refs: Sequence[str] | None = None  # a list, or `ElementIds` for a whole graph loaded from Neo4j
    edge_refs: Sequence[str] | None = None

    def __post_init__(self) -> None:
        set_field = object.__setattr__  # frozen: normalise once, here
        set_field(self, "node_keys", list(self.node_keys))
        set_field(self, "node_texts", list(self.node_texts))
        set_field(self, "edge_texts", list(self.edge_texts))
        set_field(self, "node_embeddings", _as_matrix(self.node_embeddings, "node_embeddings"))
        if not isinstance(self.edge_embeddings, RowTable):
            set_field(self, "edge_embeddings", _as_matrix(self.edge_embeddings, "edge_embeddings"))
        set_field(self, "edge_src", _as_index_vector(self.edge_src, "edge_src"))
        set_field(self, "edge_dst", _as_index_vector(self.edge_dst, "edge_dst"))
        set_field(self, "node_refs", as_stored(self.node_refs))
        set_field(self, "edge_refs", as_stored(self.edge_refs))
        self._validate()

    def _validate(self) -> None:
        n, e = len(self.node_keys), len(self.edge_src)
        _require_length("node_texts", self.node_texts, n)
        _require_length("node_embeddings", self.node_embeddings, n)
        _require_length("edge_dst", self.edge_dst, e)
        _require_length("edge_texts", self.edge_texts, e)
        _require_length("edge_embeddings", self.edge_embeddings, e)
        if self.node_refs is not None:
            _require_length("node_refs", self.node_refs, n)
        if self.edge_refs is not None:
            _require_length("edge_refs", self.edge_refs, e)
            if not (self.edge_refs.is_unique() if isinstance(self.edge_refs, ElementIds)
                    else len(set(self.edge_refs)) == e):
                raise InvariantError("edge refs must be unique", field="edge_refs")
        for name, texts in (("node_keys", self.node_keys), ("node_texts", self.node_texts),
                            ("edge_texts", self.edge_texts)):
            bad = next((i for i, t in enumerate(texts) if not isinstance(t, str)), None)
            if bad is not None:
                raise InvariantError(f"entry {bad} is {type(texts[bad]).__name__}, expected str", field=name)
        if len(set(self.node_keys)) != n:
            duplicate = next(k for k, c in Counter(self.node_keys).items() if c > 1)
            raise InvariantError(f"duplicate node key {duplicate!r}", field="node_keys")
        for name, index in (("edge_src", self.edge_src), ("edge_dst", self.edge_dst)):
            if e and (index.min() < 0 or index.max() >= n):
                bad = int(np.flatnonzero((index < 0) | (index >= n))[0])
                raise InvariantError(f"edge {bad} points at node {int(index[bad])}, graph has {n} nodes",
                                 field=name)
        if e and self.edge_embeddings.shape[1] != self.node_embeddings.shape[1]:
            raise InvariantError(f"edge embeddings have dimension {self.edge_embeddings.shape[1]}, node "
                             f"embeddings {self.node_embeddings.shape[1]}", field="edge_embeddings")

    @classmethod
    def from_records(cls, nodes: Iterable[tuple[str, str, Sequence[float]]],
                     edges: Iterable[tuple[str, str, str, Sequence[float]]], *, dim: int | None = None,
                     node_refs: Sequence[str] | None = None,
                     edge_refs: Sequence[str] | None = None) -> CandidateGraph:
        """Build from `(key, text, embedding)` nodes and `(src_key, text, dst_key, embedding)` edges.

        `dim` fixes the embedding width of an empty graph; otherwise it is read from the first row.
        """
        nodes, edges = list(nodes), list(edges)
        key_to_index: dict[str, int] = {}
        for i, (key, _, _) in enumerate(nodes):
            if key in key_to_index:
                raise InvariantError(f"duplicate node key {key!r}", field=f"nodes[{i}]")
            key_to_index[key] = i
        src, dst = [], []
        for i, (src_key, _, dst_key, _) in enumerate(edges):
            for end, key, column in (("source", src_key, src), ("target", dst_key, dst)):
                if key not in key_to_index:
                    raise InvariantError(f"{end} {key!r} is not a node", field=f"edges[{i}]")
                column.append(key_to_index[key])
        width = dim if dim is not None else (len(nodes[0][2]) if nodes else 0)
        return cls(
            node_keys=[key for key, _, _ in nodes],
            node_texts=[text for _, text, _ in nodes],
            node_embeddings=_stack([emb for _, _, emb in nodes], width, "nodes"),
            edge_src=np.asarray(src, dtype=np.int64),
            edge_dst=np.asarray(dst, dtype=np.int64),
            edge_texts=[text for _, text, _, _ in edges],
            edge_embeddings=_stack([emb for _, _, _, emb in edges], width, "edges"),
            node_refs=node_refs,
            edge_refs=edge_refs,
        )

    @classmethod
    def empty(cls, dim: int = 0) -> CandidateGraph:
        return cls.from_records([], [], dim=dim)

    @property
    def num_nodes(self) -> int:
        return len(self.node_keys)

    @property
    def num_edges(self) -> int:
        return len(self.edge_src)

    @property
    def dim(self) -> int:
        return int(self.node_embeddings.shape[1])

    @cached_property
    def key_to_index(self) -> dict[str, int]:
        return {key: i for i, key in enumerate(self.node_keys)}

    @cached_property
    def edge_ids(self) -> Sequence[str]:
        """The backend's ids (`edge_refs`) when given, else content-derived ids (`content_edge_id`)."""
        if isinstance(self.edge_refs, ElementIds):
            return self.edge_refs
        if self.edge_refs is not None:
            return list(self.edge_refs)
        seen: Counter[tuple[str, str, str]] = Counter()
        ids = []
        for s, text, d in zip(self.edge_src.tolist(), self.edge_texts, self.edge_dst.tolist()):
            triple = (self.node_keys[s], text, self.node_keys[d])
            ids.append(content_edge_id(*triple, seen[triple]))
            seen[triple] += 1
        return ids

    @cached_property
    def edge_id_to_index(self) -> Mapping[str, int]:
        if isinstance(self.edge_ids, ElementIds):
            return IdIndex(self.edge_ids)
        return {edge_id: i for i, edge_id in enumerate(self.edge_ids)}

    @cached_property
    def incidence(self) -> Incidence:
        not_loop = self.edge_src != self.edge_dst
        edge_index = np.arange(self.num_edges, dtype=np.int64)
        owner = np.concatenate([self.edge_src, self.edge_dst[not_loop]])
        edge = np.concatenate([edge_index, edge_index[not_loop]])
        neighbour = np.concatenate([self.edge_dst, self.edge_src[not_loop]])
        order = np.lexsort((edge, owner))
        offsets = np.zeros(self.num_nodes + 1, dtype=np.int64)
        np.cumsum(np.bincount(owner, minlength=self.num_nodes), out=offsets[1:])
        return Incidence(offsets=offsets, edge=edge[order], neighbour=neighbour[order])

    # Question-independent work, done once per graph and kept: it dominates the cost on a whole KG.

    @property  # not kept: `prepared_edges` keeps what scoring needs
    def distinct_edge_embeddings(self) -> tuple[np.ndarray, np.ndarray]:
        if isinstance(self.edge_embeddings, RowTable):
            return self.edge_embeddings.distinct()
        return distinct_rows(self.edge_embeddings)

    @cached_property
    def prepared_nodes(self) -> PreparedRows:
        return PreparedRows(self.node_embeddings)

    @cached_property
    def prepared_edges(self) -> PreparedRows:
        return PreparedRows(self.edge_embeddings, self.distinct_edge_embeddings)

    def node_similarity(self, question_embedding: np.ndarray) -> np.ndarray:
        """(N,) float64 cosine of each node embedding to the question (see `seeds.cosine_to_query`)."""
        if self.num_nodes and np.asarray(question_embedding).reshape(-1).shape[0] != self.dim:
            return cosine_to_query(self.node_embeddings, question_embedding)  # raises the dimension error
        return self.prepared_nodes.cosine(question_embedding)

    def edge_similarity(self, question_embedding: np.ndarray) -> np.ndarray:
        if self.num_edges and np.asarray(question_embedding).reshape(-1).shape[0] != self.dim:
            return cosine_to_query(self.edge_embeddings, question_embedding)
        return self.prepared_edges.cosine(question_embedding)

    @cached_property
    def edges_by_distinct_row(self) -> list[np.ndarray]:
        """Edges grouped by their distinct embedding row (a KG's relation), each group in rank-key order."""
        inverse = self.prepared_edges.inverse
        order = np.lexsort((self.edge_rank_key_ranks, inverse))  # stable: equal ranks keep index order
        bounds = np.searchsorted(inverse[order], np.arange(len(self.prepared_edges.rows) + 1))
        return [order[bounds[i]:bounds[i + 1]] for i in range(len(bounds) - 1)]

    def top_edges(self, question_embedding: np.ndarray, k: int) -> np.ndarray:
        """`seeds.rank_top_by_rank(edge_similarity(q), edge_rank_key_ranks, k)`, computed per distinct row: a
        knowledge graph's edges share a handful of relation vectors, so its scores tie in large blocks."""
        from gretriever_neo4j.retrieval.seeds import round_scores

        k = min(max(int(k), 0), self.num_edges)
        if k == 0:
            return np.zeros(0, dtype=np.int64)
        row_scores = round_scores(self.prepared_edges.row_cosine(question_embedding))
        groups = self.edges_by_distinct_row
        ranks = self.edge_rank_key_ranks
        chosen: list[np.ndarray] = []
        taken = 0
        for score in np.unique(row_scores)[::-1]:  # best score first
            rows = np.flatnonzero(row_scores == score)
            block = groups[rows[0]] if len(rows) == 1 else np.concatenate([groups[r] for r in rows])
            if len(rows) > 1:
                block = block[np.lexsort((block, ranks[block]))]
            chosen.append(block[:k - taken])
            taken += len(chosen[-1])
            if taken >= k:
                break
        return np.concatenate(chosen)

    @cached_property
    def edge_rank_key_ranks(self) -> np.ndarray:
        """Rank of each edge's `seeds.edge_rank_key` (source key, text, target key) in key order."""
        keys = self.node_keys
        return string_ranks([edge_rank_key(keys[s], t, keys[d]) for s, t, d in
                             zip(self.edge_src.tolist(), self.edge_texts, self.edge_dst.tolist())])

    @cached_property
    def node_key_ranks(self) -> np.ndarray:
        """Rank of each node key in code-point order (ties impossible: keys are unique)."""
        return string_ranks(self.node_keys)

    @cached_property
    def edge_text_ranks(self) -> np.ndarray:
        return string_ranks(self.edge_texts)

    @cached_property
    def edge_id_ranks(self) -> np.ndarray:
        if isinstance(self.edge_ids, ElementIds):
            return self.edge_ids.string_ranks()
        return string_ranks(self.edge_ids)

    def subgraph(self, node_indices: Sequence[int] | np.ndarray,
                 edge_indices: Sequence[int] | np.ndarray) -> CandidateGraph:
        """The graph restricted to the given nodes and edges, in the given orders (indices renumbered)."""
        node_indices = np.asarray(node_indices, dtype=np.int64).reshape(-1)
        edge_indices = np.asarray(edge_indices, dtype=np.int64).reshape(-1)
        local = np.full(self.num_nodes, -1, dtype=np.int64)
        local[node_indices] = np.arange(len(node_indices))
        src, dst = local[self.edge_src[edge_indices]], local[self.edge_dst[edge_indices]]
        if (src < 0).any() or (dst < 0).any():
            raise InvariantError("an edge's endpoint is not among the chosen nodes", field="edge_indices")
        nodes, edges = node_indices.tolist(), edge_indices.tolist()
        return CandidateGraph(
            node_keys=[self.node_keys[i] for i in nodes],
            node_texts=[self.node_texts[i] for i in nodes],
            node_embeddings=self.node_embeddings[node_indices],
            edge_src=src,
            edge_dst=dst,
            edge_texts=[self.edge_texts[i] for i in edges],
            edge_embeddings=self.edge_embeddings[edge_indices],
            node_refs=None if self.node_refs is None else [self.node_refs[i] for i in nodes],
            edge_refs=None if self.edge_refs is None else [self.edge_refs[i] for i in edges],
        )


def string_ranks(values: Sequence[str]) -> np.ndarray:
    """Rank of each string in code-point order (equal strings share a rank)."""
    rank = {value: i for i, value in enumerate(sorted(set(values)))}
    return np.asarray([rank[v] for v in values], dtype=np.int64)


def _as_matrix(values, name: str) -> np.ndarray:
    matrix = np.asarray(values, dtype=np.float32)
    if matrix.ndim == 1 and matrix.size == 0:
        matrix = matrix.reshape(0, 0)
    if matrix.ndim != 2:
        raise InvariantError(f"expected a 2-d array, got shape {matrix.shape}", field=name)
    if not np.isfinite(matrix).all():
        raise InvariantError("contains NaN or infinity", field=name)
    return np.ascontiguousarray(matrix)


def _as_index_vector(values, name: str) -> np.ndarray:
    vector = np.asarray(values)
    if vector.size == 0:
        return np.zeros(0, dtype=np.int64)
    if vector.ndim != 1 or not np.issubdtype(vector.dtype, np.integer):
        raise InvariantError(f"expected a 1-d integer array, got {vector.dtype} of shape {vector.shape}",
                         field=name)
    return vector.astype(np.int64, copy=False)


def _require_length(name: str, values, expected: int) -> None:
    if len(values) != expected:
        raise InvariantError(f"has {len(values)} entries, expected {expected}", field=name)


def _stack(rows: list[Sequence[float]], width: int, name: str) -> np.ndarray:
    if not rows:
        return np.zeros((0, width), dtype=np.float32)
    bad = next((i for i, row in enumerate(rows) if len(row) != width), None)
    if bad is not None:
        raise InvariantError(f"embedding has {len(rows[bad])} values, expected {width}", field=f"{name}[{bad}]")
    return np.asarray(rows, dtype=np.float32)


@dataclass(frozen=True, eq=False)
class ScoredCandidateGraph(CandidateGraph):
    """A candidate graph whose similarities to one question were computed by the backend.

    The Neo4j path scores every candidate node and edge in Cypher while it expands, so that vectors need not
    travel to the client for PCST; only the rows of the finally selected nodes and edges are filled in
    afterwards (`fill_embeddings`). The other rows stay zero: nothing downstream of PCST reads them.
    """

    node_scores: np.ndarray | None = None  # (N,) cosine to the question
    edge_scores: np.ndarray | None = None  # (E,)

    def __post_init__(self) -> None:
        super().__post_init__()
        for name, size in (("node_scores", self.num_nodes), ("edge_scores", self.num_edges)):
            scores = np.asarray(getattr(self, name), dtype=np.float64).reshape(-1)
            if scores.shape[0] != size:
                raise InvariantError(f"{scores.shape[0]} scores for {size} rows", field=name)
            object.__setattr__(self, name, scores)

    def node_similarity(self, question_embedding: np.ndarray) -> np.ndarray:
        return self.node_scores

    def edge_similarity(self, question_embedding: np.ndarray) -> np.ndarray:
        return self.edge_scores

    def fill_embeddings(self, node_rows: dict[int, Sequence[float]], edge_rows: dict[int, Sequence[float]]) -> None:
        for index, vector in node_rows.items():
            self.node_embeddings[index] = vector
        for index, vector in edge_rows.items():
            self.edge_embeddings[index] = vector

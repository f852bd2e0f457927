"""A compact in-memory knowledge graph: integer ids, relation ids, and undirected incidence in CSR arrays.

Built from triples (a loader's records, a list, or the store via `GraphStore.kg_triples`). Weak labelling and
the learned retriever walk it with vectorised numpy gathers, so a breadth-first search over the whole of
MetaQA's KB (43k entities, 134k triples) takes milliseconds.

Node keys are what the store calls `Node.key`; node texts default to the keys (as in MetaQA). Embeddings are
optional and attached with `with_embeddings`: one row per node and one per distinct relation text (every edge
with the same text shares its relation's vector, as the stored edges do).
"""

from __future__ import annotations

import dataclasses
from array import array
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from gretriever_neo4j.errors import InputError, InvariantError
from gretriever_neo4j.records import GraphRecord
from gretriever_neo4j.retrieval.candidates import CandidateGraph, RowTable, string_ranks
from gretriever_neo4j.retrieval.element_ids import ElementIds

UNREACHED = -1


@dataclass(frozen=True)
class Incident:
    """Flattened incidence of a batch of nodes: entry i says that `edge[i]` touches `nodes[owner[i]]` and
    leads to `neighbour[i]`. `outgoing[i]` is True when the owner is the edge's head (a self-loop counts as
    outgoing, once)."""

    owner: np.ndarray
    edge: np.ndarray
    neighbour: np.ndarray
    outgoing: np.ndarray


class _RowBlocks:
    """Equal-length float rows appended one by one into float32 blocks, joined once at the end."""

    def __init__(self, block_rows: int = 8192):
        self.block_rows = block_rows
        self.blocks: list[np.ndarray] = []
        self.filled = 0  # rows in the last block

    def append(self, row) -> None:
        if not self.blocks or self.filled == self.block_rows:
            self.blocks.append(np.empty((self.block_rows, len(row)), dtype=np.float32))
            self.filled = 0
        if len(row) != self.blocks[-1].shape[1]:
            raise InvariantError(f"a stored vector has {len(row)} values, others {self.blocks[-1].shape[1]}",
                                 field="embedding")
        self.blocks[-1][self.filled] = row
        self.filled += 1

    def matrix(self) -> np.ndarray:
        if not self.blocks:
            return np.zeros((0, 0), dtype=np.float32)
        self.blocks[-1] = self.blocks[-1][:self.filled]
        joined = np.concatenate(self.blocks) if len(self.blocks) > 1 else self.blocks[0].copy()
        self.blocks = []
        return joined


@dataclass(frozen=True, eq=False)
class KnowledgeGraph:
    node_keys: list[str]
    node_texts: list[str]
    relation_texts: list[str]  # distinct relation texts; `relation[e]` indexes them
    head: np.ndarray  # (E,) int64
    relation: np.ndarray  # (E,) int64
    tail: np.ndarray  # (E,) int64
    edge_refs: Sequence[str] | None = None  # backend ids (Neo4j element ids, compact), when loaded from a store
    node_embeddings: np.ndarray | None = None  # (N, d) float32
    relation_embeddings: np.ndarray | None = None  # (R, d) float32
    node_refs: Sequence[str] | None = None  # backend ids of the nodes, when loaded from a store

    def __post_init__(self) -> None:
        set_field = object.__setattr__
        for name in ("head", "relation", "tail"):
            set_field(self, name, np.ascontiguousarray(np.asarray(getattr(self, name), dtype=np.int64).reshape(-1)))
        n, e, r = len(self.node_keys), len(self.head), len(self.relation_texts)
        if len(self.node_texts) != n:
            raise InvariantError(f"{len(self.node_texts)} node texts for {n} nodes", field="node_texts")
        if len(self.relation) != e or len(self.tail) != e:
            raise InvariantError("head, relation and tail differ in length", field="relation")
        if self.edge_refs is not None and len(self.edge_refs) != e:
            raise InvariantError(f"{len(self.edge_refs)} edge refs for {e} edges", field="edge_refs")
        if self.node_refs is not None and len(self.node_refs) != n:
            raise InvariantError(f"{len(self.node_refs)} node refs for {n} nodes", field="node_refs")
        for name, index, size in (("head", self.head, n), ("tail", self.tail, n), ("relation", self.relation, r)):
            if e and (index.min() < 0 or index.max() >= size):
                raise InvariantError(f"an index is out of range for {size} entries", field=name)
        for name, matrix, rows in (("node_embeddings", self.node_embeddings, n),
                                   ("relation_embeddings", self.relation_embeddings, r)):
            if matrix is not None:
                matrix = np.ascontiguousarray(np.asarray(matrix, dtype=np.float32))
                if matrix.ndim != 2 or matrix.shape[0] != rows:
                    raise InvariantError(f"expected {rows} rows, got shape {matrix.shape}", field=name)
                set_field(self, name, matrix)

    # -- construction ------------------------------------------------------------------------------
    @classmethod
    def from_triples(cls, triples: Iterable[Sequence[str]], *, node_texts: Mapping[str, str] | None = None,
                     nodes: Iterable[str] = (), edge_refs: Sequence[str] | None = None) -> KnowledgeGraph:
        """`(head key, relation text, tail key)` triples; `nodes` adds isolated nodes, `node_texts` maps keys
        to texts (default: the key). Duplicate triples are kept (they are distinct stored edges)."""
        key_index: dict[str, int] = {}
        relation_index: dict[str, int] = {}
        for key in nodes:
            key_index.setdefault(key, len(key_index))
        head, relation, tail = array("q"), array("q"), array("q")  # 8 bytes an id, not a Python int's 36
        for i, triple in enumerate(triples):
            if len(triple) != 3 or not all(isinstance(part, str) for part in triple):
                raise InputError(f"expected (head, relation, tail) strings, got {triple!r}", field=f"triples[{i}]")
            h, r, t = triple
            head.append(key_index.setdefault(h, len(key_index)))
            relation.append(relation_index.setdefault(r, len(relation_index)))
            tail.append(key_index.setdefault(t, len(key_index)))
        keys = list(key_index)
        texts = node_texts or {}
        return cls(node_keys=keys, node_texts=[texts.get(k, k) for k in keys], relation_texts=list(relation_index),
                   head=np.frombuffer(head, dtype=np.int64), relation=np.frombuffer(relation, dtype=np.int64),
                   tail=np.frombuffer(tail, dtype=np.int64),
                   edge_refs=None if edge_refs is None else list(edge_refs))

    @classmethod
    def from_records(cls, records: Iterable[object], graph_id: str | None = None) -> KnowledgeGraph:
        """The union of a loader's GraphRecords (of `graph_id`, when given); other records are ignored."""
        texts: dict[str, str] = {}
        triples: list[tuple[str, str, str]] = []
        for record in records:
            if not isinstance(record, GraphRecord) or (graph_id is not None and record.graph_id != graph_id):
                continue
            for node in record.nodes:
                texts.setdefault(node.key, node.text)
            triples.extend((edge.src, edge.text, edge.dst) for edge in record.edges)
        return cls.from_triples(triples, node_texts=texts, nodes=texts)

    @classmethod
    def from_store(cls, store, graph: str, *, with_embeddings: bool = True) -> KnowledgeGraph:
        """Streams the stored graph's nodes and triples (`GraphStore.kg_nodes` / `kg_triples`)."""
        keys, texts, node_refs = [], {}, {}
        vectors = _RowBlocks()  # float32 rows in large blocks: a list of Python floats (or of small arrays)
        missing = []            # per node costs several times the vector, and its memory stays taken
        for row in store.kg_nodes(graph, with_embeddings=with_embeddings):
            keys.append(row["key"])
            texts[row["key"]] = row["text"]
            node_refs[row["key"]] = row.get("ref")
            if with_embeddings:
                if row["embedding"] is None:
                    missing.append(row["key"])
                elif not missing:
                    vectors.append(row["embedding"])
        refs: list[str] = []

        def triples():  # streamed into ids by `from_triples`: no list of string tuples for the whole graph
            for row in store.kg_triples(graph):
                refs.append(row["ref"])
                yield row["src"], row["text"], row["dst"]

        kg = cls.from_triples(triples(), node_texts=texts, nodes=keys, edge_refs=refs)
        have_node_refs = all(node_refs.get(k) is not None for k in kg.node_keys)
        kg = dataclasses.replace(  # element ids as one prefix + an int64 each: ~8 bytes an edge instead of ~110
            kg, edge_refs=ElementIds.compact(refs),
            node_refs=ElementIds.compact([node_refs[k] for k in kg.node_keys]) if have_node_refs else None)
        if not with_embeddings:
            return kg
        if missing:
            raise InputError(f"{len(missing)} stored node(s) have no vector, e.g. {missing[0]!r}; re-embed them "
                             "(ingest again, or `--reembed`)", field="embedding")
        relation_vectors = store.kg_relation_vectors(graph, kg.relation_texts)
        node_vectors = vectors.matrix()
        dim = node_vectors.shape[1]  # an empty graph is legal; its width is 0
        rel = np.asarray([relation_vectors[t] for t in kg.relation_texts], dtype=np.float32).reshape(
            len(kg.relation_texts), dim)
        return kg.with_embeddings(node_vectors, rel)

    def with_embeddings(self, node_embeddings: np.ndarray, relation_embeddings: np.ndarray) -> KnowledgeGraph:
        return dataclasses.replace(self, node_embeddings=node_embeddings, relation_embeddings=relation_embeddings)

    def embedded(self, embed) -> KnowledgeGraph:
        """Embeddings from `embed(texts) -> (n, d)` for every node text and relation text."""
        return self.with_embeddings(np.asarray(embed(self.node_texts), dtype=np.float32),
                                    np.asarray(embed(self.relation_texts), dtype=np.float32))

    # -- lookups -----------------------------------------------------------------------------------
    @property
    def num_nodes(self) -> int:
        return len(self.node_keys)

    @property
    def num_edges(self) -> int:
        return len(self.head)

    @property
    def dim(self) -> int:
        if self.node_embeddings is None:
            raise InvariantError("the knowledge graph has no embeddings; attach them with with_embeddings()",
                             field="node_embeddings")
        return int(self.node_embeddings.shape[1])

    @cached_property
    def key_to_index(self) -> dict[str, int]:
        return {key: i for i, key in enumerate(self.node_keys)}

    @cached_property
    def node_key_ranks(self) -> np.ndarray:
        """node -> rank of its key in code-point order (as `CandidateGraph.node_key_ranks`)."""
        return string_ranks(self.node_keys)

    @cached_property
    def relation_text_ranks(self) -> np.ndarray:
        """relation -> rank of its text among all relation texts."""
        return string_ranks(self.relation_texts)

    def indices(self, keys: Iterable[str]) -> np.ndarray:
        """Indices of the known keys among `keys`, in order, without duplicates; unknown keys are dropped."""
        found = dict.fromkeys(self.key_to_index[k] for k in keys if k in self.key_to_index)
        return np.fromiter(found, dtype=np.int64, count=len(found))

    def edge_texts(self, edges: np.ndarray) -> list[str]:
        return [self.relation_texts[r] for r in self.relation[np.asarray(edges, dtype=np.int64)].tolist()]

    def edge_ids(self, edges: np.ndarray) -> list[str]:
        """Backend ids when loaded from a store, else `str(edge index)`."""
        edges = np.asarray(edges, dtype=np.int64).tolist()
        if self.edge_refs is not None:
            return [self.edge_refs[e] for e in edges]
        return [str(e) for e in edges]

    @cached_property
    def _csr(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        not_loop = self.head != self.tail
        edge_index = np.arange(self.num_edges, dtype=np.int64)
        owner = np.concatenate([self.head, self.tail[not_loop]])
        edge = np.concatenate([edge_index, edge_index[not_loop]])
        neighbour = np.concatenate([self.tail, self.head[not_loop]])
        outgoing = np.concatenate([np.ones(self.num_edges, bool), np.zeros(int(not_loop.sum()), bool)])
        order = np.argsort(owner, kind="stable")
        offsets = np.zeros(self.num_nodes + 1, dtype=np.int64)
        np.cumsum(np.bincount(owner, minlength=self.num_nodes), out=offsets[1:])
        return offsets, edge[order], neighbour[order], outgoing[order]

    @property
    def degree(self) -> np.ndarray:
        offsets = self._csr[0]
        return offsets[1:] - offsets[:-1]

    def incident(self, nodes: np.ndarray) -> Incident:
        """Every incidence of the given nodes (both directions), grouped by owner in input order."""
        offsets, edge, neighbour, outgoing = self._csr
        nodes = np.asarray(nodes, dtype=np.int64).reshape(-1)
        starts = offsets[nodes]
        counts = offsets[nodes + 1] - starts
        total = int(counts.sum())
        owner = np.repeat(np.arange(len(nodes), dtype=np.int64), counts)
        first = np.cumsum(counts) - counts
        positions = np.arange(total, dtype=np.int64) - np.repeat(first, counts) + np.repeat(starts, counts)
        return Incident(owner=owner, edge=edge[positions], neighbour=neighbour[positions],
                        outgoing=outgoing[positions])

    def distances(self, sources: np.ndarray, max_hops: int) -> np.ndarray:
        """Undirected hop distance from the nearest source, `UNREACHED` (-1) beyond `max_hops`."""
        dist = np.full(self.num_nodes, UNREACHED, dtype=np.int64)
        frontier = np.unique(np.asarray(sources, dtype=np.int64))
        dist[frontier] = 0
        for hop in range(1, max_hops + 1):
            if frontier.size == 0:
                break
            reached = self.incident(frontier).neighbour
            reached = np.unique(reached[dist[reached] == UNREACHED])
            dist[reached] = hop
            frontier = reached
        return dist

    def to_candidate_graph(self, nodes: np.ndarray, edges: np.ndarray) -> CandidateGraph:
        """The given nodes and edges (endpoints must be among the nodes) as a CandidateGraph, in that order."""
        nodes = np.asarray(nodes, dtype=np.int64).reshape(-1)
        edges = np.asarray(edges, dtype=np.int64).reshape(-1)
        local = np.full(self.num_nodes, -1, dtype=np.int64)
        local[nodes] = np.arange(len(nodes))
        src, dst = local[self.head[edges]], local[self.tail[edges]]
        if (src < 0).any() or (dst < 0).any():
            raise InvariantError("an edge's endpoint is not among the chosen nodes", field="edges")
        dim = self.dim
        whole = len(nodes) == self.num_nodes and bool(np.array_equal(nodes, np.arange(self.num_nodes)))
        relation_embeddings = (self.relation_embeddings if self.relation_embeddings is not None
                               else np.zeros((len(self.relation_texts), dim), np.float32))
        return CandidateGraph(
            node_keys=[self.node_keys[i] for i in nodes.tolist()],
            node_texts=[self.node_texts[i] for i in nodes.tolist()],
            node_embeddings=(self.node_embeddings if whole else self.node_embeddings[nodes]),  # no copy of all
            edge_src=src, edge_dst=dst,
            edge_texts=self.edge_texts(edges),
            edge_embeddings=RowTable(relation_embeddings, self.relation[edges]),
            # the whole graph (what `gqa serve` holds) keeps its element ids compact
            edge_refs=(self.edge_refs.take(edges) if whole and isinstance(self.edge_refs, ElementIds)
                       else self.edge_ids(edges)),
            node_refs=(None if self.node_refs is None else self.node_refs if whole
                       else [self.node_refs[i] for i in nodes.tolist()]))

    def to_whole_candidate_graph(self) -> CandidateGraph:
        return self.to_candidate_graph(np.arange(self.num_nodes), np.arange(self.num_edges))

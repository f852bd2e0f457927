"""Graph sources: what the learned beam (and the relation-path beam) reads a graph through. A `KnowledgeGraph`
in memory (`KnowledgeGraphSource`), or a stored graph (`StoreGraphSource`), which calls only methods of the store
object it is given (`kg_node_vectors`, `kg_relation_vectors`, `kg_incident`) and fetches only what it expands."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol

import numpy as np

from gretriever_neo4j.errors import InputError
from gretriever_neo4j.retrieval.candidates import CandidateGraph, string_ranks
from gretriever_neo4j.retrieval.kg import Incident, KnowledgeGraph
from gretriever_neo4j.retrieval.linking import InMemoryLinking, StoreLinking


class GraphSource(Protocol):
    """What the beam needs from a graph; ids are the source's own integers."""

    def node_ids(self, keys: Sequence[str]) -> np.ndarray: ...
    def incident(self, nodes: np.ndarray) -> Incident: ...
    def triples(self, edges: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]: ...
    def degrees(self, nodes: np.ndarray) -> np.ndarray: ...
    def node_vectors(self, nodes: np.ndarray) -> np.ndarray: ...
    def node_texts(self, nodes: np.ndarray) -> list[str]: ...
    def relation_texts(self, relations: np.ndarray) -> list[str]: ...
    def relation_vectors(self, relations: np.ndarray) -> np.ndarray: ...
    def candidate_graph(self, nodes: np.ndarray, edges: np.ndarray) -> CandidateGraph: ...
    # orders that do not depend on the source's ids: sorting the ids given by these sorts them by node key /
    # relation text (`candidates.string_ranks`)
    def node_ranks(self, nodes: np.ndarray) -> np.ndarray: ...
    def relation_ranks(self, relations: np.ndarray) -> np.ndarray: ...


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

    def relation_texts(self, relations: np.ndarray) -> list[str]:
        return [self.kg.relation_texts[r] for r in np.asarray(relations, dtype=np.int64).tolist()]

    def relation_vectors(self, relations: np.ndarray) -> np.ndarray:
        return self.kg.relation_embeddings[relations]

    def candidate_graph(self, nodes: np.ndarray, edges: np.ndarray) -> CandidateGraph:
        return self.kg.to_candidate_graph(nodes, edges)

    def node_ranks(self, nodes: np.ndarray) -> np.ndarray:
        return self.kg.node_key_ranks[np.asarray(nodes, dtype=np.int64)]

    def relation_ranks(self, relations: np.ndarray) -> np.ndarray:
        return self.kg.relation_text_ranks[np.asarray(relations, dtype=np.int64)]

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
        self._relation_texts: list[str] = []
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
            self._node_vectors.append(np.asarray(row["embedding"], dtype=np.float32))  # no copy of a float32 array
            self._node_degrees.append(int(row["degree"]))

    def _register_relations(self, texts: Iterable[str]) -> None:
        missing = [t for t in dict.fromkeys(texts) if t not in self._relation_index]
        if not missing:
            return
        vectors = self.store.kg_relation_vectors(self.graph, missing)
        for text in missing:
            self._relation_index[text] = len(self._relation_vectors)
            self._relation_texts.append(text)
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
                edges, neighbours, outgoing = {}, [], []  # edges: a dict for its order and O(1) membership
                for row in by_key.get(self._node_keys[n], []):
                    if row["ref"] not in self._edge_index:
                        self._edge_index[row["ref"]] = len(self._edge_refs)
                        self._edge_refs.append(row["ref"])
                        self._edge_triples.append((self._node_index[row["src"]], self._relation_index[row["text"]],
                                                   self._node_index[row["dst"]]))
                    edge = self._edge_index[row["ref"]]
                    if edge in edges:  # an undirected match lists a self-loop twice
                        continue
                    edges[edge] = None
                    neighbours.append(self._node_index[row["neighbour"]])
                    outgoing.append(row["src"] == self._node_keys[n])
                self._incidence[n] = (np.fromiter(edges, np.int64, len(edges)), np.asarray(neighbours, np.int64),
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

    def relation_texts(self, relations: np.ndarray) -> list[str]:
        """Relation ids (in order of first sight) -> their texts."""
        return [self._relation_texts[r] for r in np.asarray(relations, dtype=np.int64).tolist()]

    def relation_vectors(self, relations: np.ndarray) -> np.ndarray:
        return np.stack([self._relation_vectors[r] for r in np.asarray(relations, dtype=np.int64).tolist()])

    def candidate_graph(self, nodes: np.ndarray, edges: np.ndarray) -> CandidateGraph:
        nodes = np.asarray(nodes, dtype=np.int64).reshape(-1)
        edges = np.asarray(edges, dtype=np.int64).reshape(-1)
        local = {n: i for i, n in enumerate(nodes.tolist())}
        head, relation, tail = self.triples(edges) if len(edges) else (np.zeros(0, np.int64),) * 3
        dim = len(self._node_vectors[0]) if self._node_vectors else 0
        return CandidateGraph(
            node_keys=[self._node_keys[n] for n in nodes.tolist()],
            node_texts=[self._node_texts[n] for n in nodes.tolist()],
            node_embeddings=self.node_vectors(nodes) if len(nodes) else np.zeros((0, dim), np.float32),
            edge_src=np.asarray([local[h] for h in head.tolist()], dtype=np.int64),
            edge_dst=np.asarray([local[t] for t in tail.tolist()], dtype=np.int64),
            edge_texts=self.relation_texts(relation),
            edge_embeddings=self.relation_vectors(relation) if len(edges) else np.zeros((0, dim), np.float32),
            node_refs=None, edge_refs=[self._edge_refs[e] for e in edges.tolist()])

    def node_ranks(self, nodes: np.ndarray) -> np.ndarray:
        return string_ranks([self._node_keys[n] for n in np.asarray(nodes, dtype=np.int64).tolist()])

    def relation_ranks(self, relations: np.ndarray) -> np.ndarray:
        return string_ranks([self._relation_texts[r] for r in np.asarray(relations, dtype=np.int64).tolist()])

    def linking(self) -> StoreLinking:
        return StoreLinking(self.store)


def as_source(graph) -> GraphSource:
    if isinstance(graph, KnowledgeGraph):
        return KnowledgeGraphSource(graph)
    return graph

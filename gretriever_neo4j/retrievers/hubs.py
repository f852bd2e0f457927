"""A KG's hubs held by the Neo4j-path retriever: their incident edges and far ends' vectors, ranked here.

Most questions over a KG meet the same few nodes of thousands of edges (a genre, a year, a language). Ranking a
hub's edges in Cypher reads every far end's vector from the store again for every question: 50 MetaQA questions
scanned 6,900 incident edges each, most of them on hubs, at about 10 us an edge, which was most of a static
retrieval's time through Neo4j. A hub met once is kept (its edges' rows and its far ends' vectors) and later
questions rank it with one matrix product, under the same contract as `cypher/neighbourhood_incident` (the best
`limit` edges by the sum of the edge text's and the far end's cosines to the question).

Bounded: at most `capacity` edges in all (2.7 KB each with 384-d vectors: 80 MiB at the default, which holds all
41 MetaQA nodes of 256 edges or more); the least recently used hub goes first. Reading a hub whole
costs its first question about 0.2 s for 4,000 edges. A graph's hubs are let go when its version moves (every
completed change draws a new one, never given before), so no question ranks an edge, text or vector a change has
replaced.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from gretriever_neo4j.store.rows import cos_of_score

_COLUMNS = ("edge_id", "src", "dst", "text", "neighbour", "neighbour_text", "neighbour_ref")


@dataclass(frozen=True)
class Hub:
    """One node's incident edges as `neighbourhood_incident` lists them, with its far ends' vectors."""

    text: str
    ref: str
    vector: np.ndarray  # the node's own unit vector
    columns: dict[str, tuple[str, ...]]  # per row: edge_id, src, dst, text, neighbour, neighbour_text, neighbour_ref
    texts: tuple[str, ...]  # the distinct edge texts
    text_index: np.ndarray  # per row: its text's position in `texts`
    neighbours: np.ndarray  # per row: the far end's vector as stored (float32)
    inverse_norms: np.ndarray  # per row: 1 / the far end's norm (float64)

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> Hub | None:
        """From a `GraphStore.hub_incident` row; None where a vector is missing (being re-embedded)."""
        incident = row["incident"]
        if row["embedding"] is None or any(e["neighbour_embedding"] is None for e in incident):
            return None
        texts = tuple(sorted({e["text"] for e in incident}))
        position = {text: i for i, text in enumerate(texts)}
        neighbours = np.asarray([e["neighbour_embedding"] for e in incident], dtype=np.float32)
        neighbours = neighbours.reshape(len(incident), -1)
        norms = np.linalg.norm(neighbours.astype(np.float64), axis=1)
        own = np.asarray(row["embedding"], dtype=np.float64)
        columns = {name: tuple(e[name] for e in incident) for name in _COLUMNS}
        return cls(text=row["text"], ref=row["ref"], vector=own / max(float(np.linalg.norm(own)), 1e-12),
                   columns=columns, texts=texts, text_index=np.asarray([position[e["text"]] for e in incident]),
                   neighbours=neighbours, inverse_norms=1.0 / np.maximum(norms, 1e-12))

    def cos(self, unit_question: np.ndarray) -> float:
        return float(self.vector @ unit_question)

    def best(self, unit_question: np.ndarray, relation_cos: Mapping[str, float],
             limit: int) -> list[dict[str, Any]] | None:
        """The best `limit` incident edges, as `GraphStore.incident_edges` lists them (with `edge_cos` and
        `neighbour_cos`), best first, ties broken as Cypher breaks them (far end's key, text, edge id). None when an
        edge text has no known cosine."""
        if not len(self):
            return []
        text_cos = self._text_cos(relation_cos)
        if text_cos is None:
            return None
        # In float64, as the reference path computes it (`seeds.cosine_to_query`): the scores rounded for ranking
        # then tie where its scores tie (float32 did not).
        neighbour_cos = (self.neighbours @ unit_question) * self.inverse_norms
        edge_cos = np.asarray(text_cos)[self.text_index]
        total = edge_cos + neighbour_cos
        if len(total) > limit:
            cut = np.partition(total, len(total) - limit)[len(total) - limit]
            chosen = np.flatnonzero(total >= cut)
        else:
            chosen = np.arange(len(total))
        columns = self.columns
        order = sorted(chosen.tolist(), key=lambda i: (-total[i], columns["neighbour"][i], columns["text"][i],
                                                       columns["edge_id"][i]))
        return [{**{name: columns[name][i] for name in _COLUMNS}, "edge_cos": float(edge_cos[i]),
                 "neighbour_cos": float(neighbour_cos[i])} for i in order[:limit]]

    def within(self, inside: Collection[str], relation_cos: Mapping[str, float]) -> list[dict[str, Any]] | None:
        """Every incident edge whose far end is in `inside`, unordered, as `GraphStore.incident_edges_within` lists
        them (with `edge_cos`); None when an edge text has no known cosine."""
        text_cos = self._text_cos(relation_cos)
        if text_cos is None:
            return None
        columns = self.columns
        return [{"edge_id": columns["edge_id"][i], "src": columns["src"][i], "dst": columns["dst"][i],
                 "text": columns["text"][i], "neighbour": neighbour, "edge_cos": text_cos[self.text_index[i]]}
                for i, neighbour in enumerate(columns["neighbour"]) if neighbour in inside]

    def _text_cos(self, relation_cos: Mapping[str, float]) -> list[float] | None:
        """Each of `texts`' cosine to the question after the round trip Cypher's score makes ((1 + cos) / 2 and
        back); None when one has no known cosine."""
        known = [relation_cos.get(text) for text in self.texts]
        if any(c is None for c in known):
            return None
        return [cos_of_score((1.0 + c) / 2.0) for c in known]

    def __len__(self) -> int:
        return len(self.text_index)


class HubReads:
    """The hubs (nodes of at least `hub` edges) a retriever met, per graph at one version; shared by a server's
    threads."""

    def __init__(self, hub: int = 256, capacity: int = 30_000):
        self.hub, self.capacity = hub, capacity
        self._hubs: OrderedDict[tuple[str, str], Hub] = OrderedDict()
        self._edges = 0
        self._versions: dict[str, Any] = {}
        self._lock = threading.Lock()

    def held(self, graph: str, version: Any, keys: Sequence[str]) -> dict[str, Hub]:
        with self._lock:
            self._at(graph, version)
            found = {}
            for key in keys:
                hub = self._hubs.get((graph, key))
                if hub is not None:
                    self._hubs.move_to_end((graph, key))
                    found[key] = hub
            return found

    def keep(self, store, graph: str, version: Any, keys: Sequence[str]) -> None:
        """Reads these hubs whole and keeps them, unless the graph's version moved meanwhile."""
        with self._lock:
            keys = [key for key in keys if (graph, key) not in self._hubs]
        if not keys:
            return
        read = {key: Hub.from_row(row) for key, row in store.hub_incident(graph, keys).items()}
        with self._lock:
            if self._versions.setdefault(graph, version) != version:  # a write since: another version's now
                return
            for key, hub in read.items():
                if hub is not None and (graph, key) not in self._hubs and len(hub) <= self.capacity:
                    self._hubs[(graph, key)] = hub
                    self._edges += len(hub)
            while self._edges > self.capacity:
                self._edges -= len(self._hubs.popitem(last=False)[1])

    def _at(self, graph: str, version: Any) -> None:
        """Lets go of the graph's hubs if they were read at another version (lock held)."""
        if graph in self._versions and self._versions[graph] != version:
            for key in [k for k in self._hubs if k[0] == graph]:
                self._edges -= len(self._hubs.pop(key))
        self._versions[graph] = version

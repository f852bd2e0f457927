"""What travels between `GraphStore` and Neo4j: a shipped statement's text with its parameters as the driver is
given them (`statement`), the rows one write transaction carries (`WriteBatch`), vectors as a query parameter, and
Neo4j's scores and keys read back (cosines, natural order)."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gretriever_neo4j import cypher


@dataclass
class WriteBatch:
    """Everything one transaction writes. Vectors are sent once per distinct text; rows point at them."""

    graphs: list[dict[str, Any]] = field(default_factory=list)
    nodes: list[dict[str, Any]] = field(default_factory=list)  # graph, dataset, key, text, vector
    node_vectors: list[list[float]] = field(default_factory=list)
    relations: list[dict[str, Any]] = field(default_factory=list)  # graph, dataset, text, vector
    relation_vectors: list[list[float]] = field(default_factory=list)
    edges: list[dict[str, Any]] = field(default_factory=list)  # graph, dataset, src, text, dst (written after
    # their relations: an edge's vector is its (graph, text)'s)
    questions: list[dict[str, Any]] = field(default_factory=list)



def vectors_param(vectors: np.ndarray) -> list[list[float]]:
    return np.asarray(vectors, dtype=np.float32).astype(np.float64).tolist()


# The driver formats every statement's parameters for its debug log whether or not that log is on (neo4j 6.4,
# `Bolt5x5.run`: `" ".join(map(repr, fields))`). A batch of 1,600 vectors took 0.25 s to format, ten times what
# sending it takes: most of an ingest's write time. Large parameters therefore say only their size when printed.
_LOGGED_ITEMS = 16


class _SizedList(list):
    def __repr__(self) -> str:
        return f"<list of {len(self)}>"


class _SizedMap(dict):
    def __repr__(self) -> str:
        return f"<map of {len(self)}>"


def driver_params(params: dict[str, Any]) -> dict[str, Any]:
    """`params` with each list or map of more than a few items in a subclass that prints as its size; the driver
    packs them as it packs lists and maps."""
    def sized(value: Any) -> Any:
        if isinstance(value, list) and len(value) > _LOGGED_ITEMS:
            return _SizedList(value)
        if isinstance(value, dict) and len(value) > _LOGGED_ITEMS:
            return _SizedMap(value)
        return value

    return {name: sized(value) for name, value in params.items()}


def statement(name: str, params: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """A shipped statement's text and its parameters as the driver is given them (`driver_params`)."""
    query = cypher.load(name)
    return query.text, driver_params(query.bind(**params))


def natural_key(key: str) -> tuple:
    """Per-sample graphs number their nodes "0", "1", …, "10"; keep that order."""
    return (0, int(key), "") if key.isdigit() else (1, 0, key)


def cos_of_score(score: float) -> float:
    """Neo4j reports cosine similarity normalised to [0, 1] as (1 + cos) / 2; we work with cos."""
    return 2.0 * float(score) - 1.0


def with_cos(row: dict[str, Any]) -> dict[str, Any]:
    return {**row, "cos": cos_of_score(row["score"])}


def record_dict(record) -> dict[str, Any]:
    """A driver record as a plain dict. `Record.data()` rebuilds every value recursively in Python (14 s for
    MetaQA's 43k node vectors, against 0.8 s to decode them); our statements return plain values, lists and
    maps, so `dict(record)` is the same thing, and `data()` is kept for a record that holds graph entities."""
    out = dict(record)
    return record.data() if any(_holds_entity(value) for value in out.values()) else out


def _holds_entity(value) -> bool:
    entities = _entity_types()
    if isinstance(value, entities):
        return True
    if isinstance(value, list):  # the first element says it all: lists here hold one kind of thing (a vector,
        return bool(value) and _holds_entity(value[0])  # or maps collected from one pattern)
    if isinstance(value, dict):
        return any(map(_holds_entity, value.values()))
    return False


@functools.cache
def _entity_types() -> tuple[type, ...]:
    """Imported once: an import statement per value cost 1.6 s in 18 s of learned retrieval (a row per neighbour)."""
    from neo4j.graph import Node, Path, Relationship

    return Node, Relationship, Path

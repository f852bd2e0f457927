"""The text the LLM reads: a subgraph as two CSV tables, composed exactly as G-Retriever composes them.

The reference writes `nodes.to_csv(index=False) + '\\n' + edges.to_csv(index=False, columns=[src, edge_attr,
dst])` with pandas. pandas writes through the standard csv module with QUOTE_MINIMAL and '\\n' line endings,
which is what we use. Node ids are local (0..n-1 in the order of the selected nodes); the reference prints
the ids the nodes had in its per-sample graph, which do not exist for a subgraph of a stored knowledge graph.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from gretriever_neo4j.errors import InputError
from gretriever_neo4j.retrieval.candidates import CandidateGraph

NODE_HEADER = ("node_id", "node_attr")
EDGE_HEADER = ("src", "edge_attr", "dst")


@dataclass(frozen=True)
class SubgraphEdge:
    src: int  # local node id
    text: str
    dst: int
    ref: str | None  # the backend's id, when the candidate graph carried one


@dataclass(frozen=True)
class TextualizedSubgraph:
    text: str
    node_keys: list[str]  # local id -> node key
    node_refs: list[str] | None  # local id -> backend id
    edges: list[SubgraphEdge]
    node_indices: list[int]  # local id -> index in the candidate graph
    edge_indices: list[int]

    def to_dict(self) -> dict:
        return {
            "text": self.text,
            "node_keys": list(self.node_keys),
            "node_refs": None if self.node_refs is None else list(self.node_refs),
            "edges": [{"src": e.src, "text": e.text, "dst": e.dst, "ref": e.ref} for e in self.edges],
            "node_indices": list(self.node_indices),
            "edge_indices": list(self.edge_indices),
        }


def csv_table(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    """One table as pandas' `to_csv(index=False)` writes it."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, quoting=csv.QUOTE_MINIMAL, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return buffer.getvalue()


def graph_csv(node_texts: Sequence[str], edges: Iterable[tuple[int, str, int]]) -> str:
    """Nodes table, a blank line, edges table: the reference's `nodes_csv + '\\n' + edges_csv`."""
    return csv_table(NODE_HEADER, enumerate(node_texts)) + "\n" + csv_table(EDGE_HEADER, edges)


def textualize(graph: CandidateGraph, node_idx: Sequence[int] | np.ndarray,
               edge_idx: Sequence[int] | np.ndarray) -> TextualizedSubgraph:
    """Describe the chosen nodes and edges of `graph`; every edge's endpoints must be chosen nodes."""
    nodes = np.asarray(node_idx, dtype=np.int64).reshape(-1).tolist()
    edges = np.asarray(edge_idx, dtype=np.int64).reshape(-1).tolist()
    _require_indices(nodes, graph.num_nodes, "node_idx")
    _require_indices(edges, graph.num_edges, "edge_idx")
    local = {node: i for i, node in enumerate(nodes)}
    if len(local) != len(nodes):
        raise InputError("a node is listed twice", field="node_idx")
    subgraph_edges = []
    for e in edges:
        src, dst = int(graph.edge_src[e]), int(graph.edge_dst[e])
        if src not in local or dst not in local:
            raise InputError(f"edge {e} has an endpoint outside the chosen nodes", field="edge_idx")
        subgraph_edges.append(SubgraphEdge(src=local[src], text=graph.edge_texts[e], dst=local[dst],
                                           ref=None if graph.edge_refs is None else graph.edge_refs[e]))
    text = graph_csv([graph.node_texts[i] for i in nodes], [(e.src, e.text, e.dst) for e in subgraph_edges])
    return TextualizedSubgraph(
        text=text,
        node_keys=[graph.node_keys[i] for i in nodes],
        node_refs=None if graph.node_refs is None else [graph.node_refs[i] for i in nodes],
        edges=subgraph_edges,
        node_indices=nodes,
        edge_indices=edges,
    )


# A word, a number, or one punctuation mark: roughly what subword tokenizers split English graph text into.
_TOKEN_ESTIMATE = re.compile(r"\w+|[^\w\s]")


def count_tokens(text: str, tokenizer=None) -> int:
    """Tokens in `text`: exact with a Hugging Face tokenizer (no special tokens, as the model adds the
    description), else an estimate counting words and punctuation marks separately, which undercounts
    rare words that a subword tokenizer splits."""
    if tokenizer is not None:
        return len(tokenizer(text, add_special_tokens=False)["input_ids"])
    return len(_TOKEN_ESTIMATE.findall(text))


def _require_indices(indices: list[int], size: int, field: str) -> None:
    bad = next((i for i in indices if not 0 <= i < size), None)
    if bad is not None:
        raise InputError(f"index {bad} is out of range for {size} entries", field=field)

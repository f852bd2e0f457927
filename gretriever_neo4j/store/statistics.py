"""The store's statistics tallied from the rows of the `stats_*` statements: per graph and per dataset, nodes,
edges, embedded texts and questions per split, and per graph where an ingest read it from (source, source_query:
None for a graph written before gqa recorded them). Pure: `GraphStore.statistics` reads the rows."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any


def tally_statistics(graph_records: Iterable[dict[str, Any]], node_rows: Iterable[dict[str, Any]],
                     edge_rows: Iterable[dict[str, Any]],
                     question_rows: Iterable[dict[str, Any]]) -> dict[str, dict[str, dict[str, Any]]]:
    """{"graphs": per graph, "datasets": per dataset}, from the rows of `stats_graph_records`,
    `stats_graph_nodes`, `stats_graph_edges` and `stats_graph_questions`."""
    graphs: dict[str, dict[str, Any]] = {}
    datasets: dict[str, dict[str, Any]] = {}

    def graph(name: str) -> dict[str, Any]:
        return graphs.setdefault(name, {"dataset": None, "kind": None, "source": None, "source_query": None,
                                        "nodes": 0, "edges": 0, "embedded_nodes": 0, "embedded_edges": 0,
                                        "questions": {}})

    def dataset(name: str) -> dict[str, Any]:
        return datasets.setdefault(name, {"kind": None, "graphs": 0, "nodes": 0, "edges": 0,
                                          "embedded_nodes": 0, "embedded_edges": 0, "questions": {}})

    for row in graph_records:
        g = graph(row["graph"])
        g["dataset"], g["kind"] = row["dataset"], row["kind"]
        g["source"], g["source_query"] = row.get("source"), row.get("source_query")
        d = dataset(row["dataset"])
        d["kind"], d["graphs"] = row["kind"], d["graphs"] + 1
    for row in node_rows:
        g, d = graph(row["graph"]), dataset(row["dataset"])
        g["dataset"] = g["dataset"] or row["dataset"]
        g["nodes"], g["embedded_nodes"] = row["nodes"], row["embedded"]
        d["nodes"] += row["nodes"]
        d["embedded_nodes"] += row["embedded"]
    for row in edge_rows:
        g, d = graph(row["graph"]), dataset(row["dataset"])
        g["edges"], g["embedded_edges"] = g["edges"] + row["edges"], g["embedded_edges"] + row["embedded"]
        d["edges"] += row["edges"]
        d["embedded_edges"] += row["embedded"]
    for row in question_rows:
        d = dataset(row["dataset"])
        d["questions"][row["split"]] = d["questions"].get(row["split"], 0) + row["questions"]
        if row["graph"] is not None:
            per_graph = graph(row["graph"])["questions"]
            per_graph[row["split"]] = per_graph.get(row["split"], 0) + row["questions"]
    return {"graphs": dict(sorted(graphs.items())), "datasets": dict(sorted(datasets.items()))}

"""What a user has stored, graph by graph: `gqa stats`, `/api/graphs` and the web page's graph list.

A knowledge graph (one per user load, or a dataset's KB) is a row of its own, with where it was read from (`source`
in words, and the `source_query` of `gqa ingest neo4j --query`), its questions per split and the models `gqa train`
trained for it (and when); a dataset of many small per-sample graphs (ExplaGraphs, scenes, CSV graphs) is one row
that counts them, with the source of its first graph that has one. Pure over the store's per-graph statistics
(`GraphStore.statistics()["graphs"]`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

COUNTS = ("nodes", "edges", "embedded_nodes", "embedded_edges")


def graph_rows(graph_stats: dict[str, dict[str, Any]],
               trained: Callable[[str], Any] | None = None) -> list[dict[str, Any]]:
    """One row per knowledge graph and per dataset of per-sample graphs, sorted by dataset then name.

    `trained(name)` returns `registry.TrainedModels` (or None); per-sample datasets keep theirs under the
    dataset's name."""
    if trained is None:
        from gretriever_neo4j.artifacts.registry import load_trained as trained
    rows: list[dict[str, Any]] = []
    groups: dict[str, dict[str, Any]] = {}
    for name, stats in graph_stats.items():
        if stats.get("kind") == "kg":
            rows.append({"graph": name, "dataset": stats.get("dataset"), "kind": "kg", "graphs": 1,
                         "source": stats.get("source"), "source_query": stats.get("source_query"),
                         **{k: stats.get(k, 0) for k in COUNTS}, "questions": dict(stats.get("questions", {})),
                         "models": _models(trained(name))})
            continue
        dataset = stats.get("dataset") or name
        group = groups.setdefault(dataset, {"graph": None, "dataset": dataset, "kind": stats.get("kind"),
                                            "graphs": 0, "source": None, "source_query": None,
                                            **{k: 0 for k in COUNTS}, "questions": {}})
        group["graphs"] += 1
        if group["source"] is None and stats.get("source"):
            group["source"], group["source_query"] = stats["source"], stats.get("source_query")
        for key in COUNTS:
            group[key] += stats.get(key, 0)
        for split, count in stats.get("questions", {}).items():
            group["questions"][split] = group["questions"].get(split, 0) + count
    for dataset, group in groups.items():
        group["models"] = _models(trained(dataset))
        rows.append(group)
    return sorted(rows, key=lambda row: (str(row["dataset"]), str(row["graph"] or "")))


def _models(models) -> dict[str, Any]:
    if models is None:
        return {}
    parts = [part for part in ("retriever", "reader", "generator") if getattr(models, part, None)]
    return {"parts": parts, "trained_at": models.created} if parts else {}

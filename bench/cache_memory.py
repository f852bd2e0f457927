"""Memory of a knowledge graph held in memory as `gqa serve` holds it (`retrievers.cached.GraphCache.load`).

Loads a stored KG the way the cache does (`KnowledgeGraph.from_store`, then its whole candidate graph and every
question-independent structure `cached.warm` precomputes) and reports the resident memory each part adds, in
MiB and in bytes per edge, and the load time. Run it in a fresh process per measurement (RSS only grows).

    python bench/cache_memory.py [--graph metaqa] [--label NAME] [--out bench/results/cache_memory.json]
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import time
from pathlib import Path

from _common import REPO, machine, write_json


def rss_mib() -> float:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--graph", default="metaqa")
    parser.add_argument("--label", default="current")
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "cache_memory.json")
    args = parser.parse_args()

    from gretriever_neo4j.retrieval.kg import KnowledgeGraph
    from gretriever_neo4j.retrievers.cached import PREPARED
    from gretriever_neo4j.settings import Neo4jSettings
    from gretriever_neo4j.store.graph_store import connected

    row: dict = {"graph": args.graph, "label": args.label, "parts_mib": {}}
    with connected(Neo4jSettings.from_env()) as store:
        gc.collect()
        start_rss, started = rss_mib(), time.perf_counter()
        kg = KnowledgeGraph.from_store(store, args.graph)
        gc.collect()
        row["parts_mib"]["knowledge_graph"] = rss_mib() - start_rss
        before = rss_mib()
        candidate = kg.to_whole_candidate_graph()
        gc.collect()
        row["parts_mib"]["candidate_graph"] = rss_mib() - before
        for part in PREPARED:
            before = rss_mib()
            getattr(candidate, part)
            gc.collect()
            row["parts_mib"][part] = rss_mib() - before
        row["load_s"] = time.perf_counter() - started
        row["nodes"], row["edges"] = kg.num_nodes, kg.num_edges
        row["added_mib"] = rss_mib() - start_rss
        row["bytes_per_edge"] = row["added_mib"] * 2**20 / max(kg.num_edges, 1)
    row["parts_mib"] = {k: round(v, 1) for k, v in row["parts_mib"].items()}
    for key in ("load_s", "added_mib", "bytes_per_edge"):
        row[key] = round(row[key], 1)
    print(f"{args.graph} ({args.label}): {row['nodes']:,} nodes, {row['edges']:,} edges, load {row['load_s']} s, "
          f"+{row['added_mib']} MiB = {row['bytes_per_edge']:,.0f} bytes/edge")
    for part, mib in row["parts_mib"].items():
        print(f"  {part:<22} {mib:>8.1f} MiB")
    existing = json.loads(args.out.read_text()) if args.out.is_file() else {}
    runs = [r for r in existing.get("runs", []) if (r["graph"], r["label"]) != (args.graph, args.label)]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    write_json(args.out, {"machine": machine(), "command": "python bench/cache_memory.py --graph G --label L",
                          "runs": runs + [row]}, newline=True)


if __name__ == "__main__":
    main()

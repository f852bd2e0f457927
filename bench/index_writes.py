"""What the node vector index's HNSW build setting costs an ingest's writes (issue 18), A/B on one server.

For each `--ef` in turn (repeat one to see the noise): the `node_embedding` index is built again with
`ef_construction` = ef (M 16; `rebuild_s`, over every stored node vector), the server is left to settle, then
MetaQA's KB is ingested into a scratch graph through the product's ingest with every text's vector known
beforehand (the `metaqa` graph's stored vectors: no embedding), so `write_s` is the write path alone: batching, the
transactions, their index updates at commit. The scratch graph is dropped after each run and the index is left
built with this version's setting (`store.graph_store.NODE_INDEX_BUILD`). Needs the `metaqa` graph
(`gqa ingest metaqa`). Prints a table and writes JSON.

    python bench/index_writes.py [--ef 32,100,32,100] [--out bench/results/index_writes.json]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import uuid
from pathlib import Path

import numpy as np
from _common import REPO, command, machine, write_json


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data" / "metaqa")
    parser.add_argument("--ef", default="32,100,32,100")
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "index_writes.json")
    args = parser.parse_args()

    from rich.console import Console
    from rich.table import Table
    from scale import kb_triples, records, settle

    from gretriever_neo4j.ingest.graphs import ingest
    from gretriever_neo4j.settings import Neo4jSettings
    from gretriever_neo4j.store.graph_store import NODE_INDEX_BUILD, connected

    triples = kb_triples(args.data / "kb.txt")
    runs = []
    with connected(Neo4jSettings.from_env()) as store:
        vectors = {row["text"]: np.asarray(row["embedding"], np.float32) for row in store.kg_nodes("metaqa")}
        vectors.update({text: np.asarray(v, np.float32) for text, v in store.graph_relations("metaqa").items()})
        missing = {text for h, r, t in triples for text in (h, r, t)} - vectors.keys()
        if missing:
            print(f"the stored `metaqa` graph lacks {len(missing):,} of the KB's texts: `gqa ingest metaqa` first")
            return 1
        dim = store.embedder_info()[1]
        try:
            for ef in [int(x) for x in args.ef.split(",")]:
                started = time.perf_counter()
                store.rebuild_node_index(dim, {**NODE_INDEX_BUILD, "vector.hnsw.ef_construction": ef})
                rebuild = time.perf_counter() - started
                settle()
                graph = f"indexwrites{uuid.uuid4().hex[:6]}"
                started = time.perf_counter()
                report = ingest(records(triples, graph, graph), store,
                                lambda texts: np.stack([vectors[t] for t in texts]), dataset=graph)
                seconds = time.perf_counter() - started
                store.drop_graph(graph)
                runs.append({"ef_construction": ef, "rebuild_s": rebuild, "write_s": seconds,
                             "edges_per_s": report.edges_written / seconds, "edges": report.edges_written,
                             "nodes": report.nodes_written})
                print(runs[-1], flush=True)
                settle()
        finally:
            if store.node_index_outdated():
                store.rebuild_node_index(dim)
    by_ef: dict[int, list[dict]] = {}
    for run in runs:
        by_ef.setdefault(run["ef_construction"], []).append(run)
    summary = {str(ef): {"write_s_median": statistics.median(r["write_s"] for r in rows),
                         "edges_per_s_median": statistics.median(r["edges_per_s"] for r in rows),
                         "rebuild_s_median": statistics.median(r["rebuild_s"] for r in rows), "runs": len(rows)}
               for ef, rows in by_ef.items()}
    write_json(args.out, {"machine": machine(), "command": command(), "runs": runs, "by_ef_construction": summary},
               newline=True)
    table = Table(title="node vector index build setting vs the write path (MetaQA KB, no embedding)")
    for column in ("ef_construction", "runs", "write s (median)", "edges/s (median)", "index rebuild s"):
        table.add_column(column, justify="right")
    for ef, row in summary.items():
        table.add_row(ef, str(row["runs"]), f"{row['write_s_median']:.1f}", f"{row['edges_per_s_median']:,.0f}",
                      f"{row['rebuild_s_median']:.1f}")
    Console(width=160).print(table)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

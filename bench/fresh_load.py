"""Loads one stored KG the way `gqa serve` holds it (`GraphCache.load`), in this fresh process, and prints JSON:
seconds and RSS added. `bench/scale.py` runs it so that memory freed earlier in its own process is not counted.

    python bench/fresh_load.py GRAPH
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from scale import current_rss_mib  # noqa: E402  (bench/ is this script's own folder on sys.path)


def main() -> int:
    import numpy  # noqa: F401  what a server process has loaded before its first graph
    import torch  # noqa: F401

    from gretriever_neo4j.retrievers.cached import GraphCache
    from gretriever_neo4j.settings import Neo4jSettings
    from gretriever_neo4j.store.graph_store import connected

    graph = sys.argv[1]
    with connected(Neo4jSettings.from_env()) as store:
        store.graph_info(graph)  # the driver's connection pool is up before measuring
        before, started = current_rss_mib(), time.perf_counter()
        cached = GraphCache(store).load(graph)
        seconds, added = time.perf_counter() - started, current_rss_mib() - before
    print(json.dumps({"cache_load_s": seconds, "cache_rss_added_mib": added, "edges": cached.kg.num_edges}))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The node vector index's build settings against what they cost and what they find (issue 18: ingest writes).

HNSW's `ef_construction` sets how hard each insert searches for its neighbours: most of what a vector costs when
it is written (the index is updated at commit) and how well the graph is later searched. This measures, on the
stored graphs' real MiniLM vectors (every `(:Node)` with one, as the product's index holds every graph):

- `populate_s`: building the index over all of them (`CREATE VECTOR INDEX` then `db.awaitIndexes`), the same
  inserts an ingest pays at commit;
- `recall_at_10` per graph: of the exact 10 best nodes of the graph for a question (a scan), the share the index
  finds when asked for `ask` hits across all graphs and filtered to the graph (`seed_nodes_vector.cypher`'s query;
  the product asks max(16 k, 128)), compared as multisets of scores so that tied nodes count once each;
- `query_p50_ms`: that query, per question.

The vectors are copied to a scratch label first (`VectorBench`, deleted at the end) so the product's index and
graphs are not touched. Questions: up to `--questions` stored questions of each graph named by `--graphs`
(`graph=question graph`). Prints a table and writes JSON.

    python bench/vector_index.py [--configs 100/16,32/16] [--asks 128,256,512] [--out bench/results/vector_index.json]
"""

from __future__ import annotations

import argparse
import collections
import random
import re
import sys
import time
from pathlib import Path

import numpy as np
from _common import REPO, command, machine, write_json

BRACKETS = re.compile(r"\[([^\]]*)\]")

# Fixed statements (names and labels are constants; everything else is a parameter).
COPY = ("MATCH (n:Node) WHERE n.embedding IS NOT NULL "
        "CALL (n) { CREATE (:VectorBench {graph: n.graph, key: n.key, embedding: n.embedding}) } "
        "IN TRANSACTIONS OF 5000 ROWS")
GRAPH_INDEX = "CREATE INDEX vector_bench_graph IF NOT EXISTS FOR (n:VectorBench) ON (n.graph)"
CREATE_INDEX = "CREATE VECTOR INDEX vector_bench FOR (n:VectorBench) ON n.embedding OPTIONS $options"
DROP_INDEX = "DROP INDEX vector_bench IF EXISTS"
DROP_GRAPH_INDEX = "DROP INDEX vector_bench_graph IF EXISTS"
AWAIT = "CALL db.awaitIndexes($seconds)"
EXACT = ("MATCH (n:VectorBench {graph: $graph}) RETURN vector.similarity.cosine(n.embedding, $vector) AS score "
         "ORDER BY score DESC LIMIT $k")
QUERY = ("CALL db.index.vector.queryNodes('vector_bench', $ask, $vector) YIELD node, score "
         "WHERE node.graph = $graph RETURN score")
CLEAN = "MATCH (n:VectorBench) CALL (n) { DELETE n } IN TRANSACTIONS OF 10000 ROWS"
COUNT = "MATCH (n:VectorBench) RETURN count(*) AS nodes"


def found(exact: list[float], got: list[float]) -> int:
    """How many of the exact best scores the index returned (rounded: Java and the scan agree to 1e-6)."""
    return sum((collections.Counter(round(s, 5) for s in exact)
                & collections.Counter(round(s, 5) for s in got)).values())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--graphs", default="metaqa_kb=metaqa,webqsp=webqsp",
                        help="graph=question graph, comma separated: whose questions are asked of which graph")
    parser.add_argument("--configs", default="100/16,32/16", help="ef_construction/m pairs, comma separated")
    parser.add_argument("--asks", default="128,256,512")
    parser.add_argument("--questions", type=int, default=200)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "vector_index.json")
    args = parser.parse_args()
    sys.path.insert(0, str(REPO))
    from gretriever_neo4j.embedding.embedder import Embedder
    from gretriever_neo4j.settings import Neo4jSettings
    from gretriever_neo4j.store.graph_store import connected
    from gretriever_neo4j.store.rows import vectors_param

    settings = Neo4jSettings.from_env()
    rng = random.Random(args.seed)
    with connected(settings) as store:
        driver = store._driver

        def run(statement: str, **params):
            with driver.session(database=store.database) as session:
                return [dict(row) for row in session.run(statement, params)]

        embedder = Embedder()
        asked: list[tuple[str, list[float]]] = []
        for pair in args.graphs.split(","):
            graph, question_graph = pair.split("=")
            questions = [q for split in ("val", "test", "train") for q in store.questions(question_graph, split)]
            for q in rng.sample(questions, min(args.questions, len(questions))):
                vector = embedder.embed_query(BRACKETS.sub(r"\1", q["text"])).vector
                asked.append((graph, vectors_param(np.asarray(vector)[None, :])[0]))
        try:
            run(GRAPH_INDEX)
            run(COPY)
            run(AWAIT, seconds=600)
            nodes = run(COUNT)[0]["nodes"]
            exact = [[r["score"] for r in run(EXACT, graph=g, vector=v, k=args.k)] for g, v in asked]
            rows = []
            for config in args.configs.split(","):
                ef, m = (int(x) for x in config.split("/"))
                run(DROP_INDEX)
                started = time.perf_counter()
                run(CREATE_INDEX, options={"indexConfig": {
                    "vector.dimensions": len(asked[0][1]), "vector.similarity_function": "cosine",
                    "vector.quantization.enabled": False, "vector.hnsw.ef_construction": ef, "vector.hnsw.m": m}})
                run(AWAIT, seconds=1800)
                populate_s = time.perf_counter() - started
                for ask in (int(a) for a in args.asks.split(",")):
                    hits, wanted, times = collections.Counter(), collections.Counter(), []
                    for (graph, vector), best in zip(asked, exact):
                        t0 = time.perf_counter()
                        got = sorted((r["score"] for r in run(QUERY, ask=ask, vector=vector, graph=graph)),
                                     reverse=True)[:args.k]
                        times.append(time.perf_counter() - t0)
                        hits[graph] += found(best, got)
                        wanted[graph] += len(best)
                    row = {"ef_construction": ef, "m": m, "ask": ask, "populate_s": round(populate_s, 1),
                           "populate_nodes_per_s": round(nodes / populate_s),
                           "recall_at_10": {g: round(hits[g] / wanted[g], 4) for g in wanted},
                           "query_p50_ms": round(1000 * float(np.median(times)), 2)}
                    rows.append(row)
                    print(f"ef {ef:4d} m {m:3d} ask {ask:5d}  populate {populate_s:6.1f} s  "
                          + "  ".join(f"{g} {r:.4f}" for g, r in row["recall_at_10"].items())
                          + f"  query p50 {row['query_p50_ms']:.1f} ms", flush=True)
        finally:
            run(DROP_INDEX)
            run(CLEAN)
            run(DROP_GRAPH_INDEX)
    write_json(args.out, {"machine": machine(), "command": command(), "nodes": nodes, "questions": len(asked),
                          "k": args.k, "rows": rows}, newline=True)


if __name__ == "__main__":
    main()

"""`gqa ingest rdf` on generated N-Triples: parse rate, write rate without embedding, and peak memory by file size.

    python bench/rdf_ingest.py [--triples 200000] [--write-edges 60000] [--repeats 2]
                               [--out bench/results/rdf_ingest.json]

* `rdf_parse_triples_per_s`: triples of the file per second of one whole read by the loader (both of its passes:
  labels into SQLite, then the triples into records), no database.
* `rdf_write_edges_per_s`: edges per second of the product's `ingest` writing the first `--write-edges` edges'
  records to Neo4j: nodes with their vectors (each inserted into the node vector index at commit), relation texts,
  edges. Embedding is left out by doing it beforehand: the records are parsed and every text embedded by the
  default embedder before the clock starts, and `ingest` is given those vectors (as `bench/index_writes.py` does).
  Real vectors matter: random unit vectors (no structure for the HNSW search to follow) are much slower to insert
  than real ones, so a bench on them measures a write no user makes.
* `rdf_graph_write_edges_per_s`: the same write with the node vectors sent but not written (so not indexed): the
  graph alone. The difference between the two is the vector index's share, also given per node
  (`vector_index_ms_per_node`). Each is the median of `--repeats` runs, the two alternating, each after the server
  has settled; the graphs written are dropped afterwards. Needs the running server (`gqa db start`).
* `rdf_peak_rss_mb`: the peak resident memory of a process that reads files of 1x and 4x `--triples` (it should not
  grow with the file).

The generated file: entities e0..eN with English and German labels, typed literals (years, decimals), blank-node
records, camelCase predicates; every fifth entity has no label (its IRI's local name is its text). About 0.7 new
nodes per edge in its first 60,000 edges (literals and records), against about 0.3 in MetaQA's KB, so a node's
vector costs an edge here more than there. A write of a few batches also pays for the pipeline filling and
draining (the first batch's nodes and the last one's edges are written alone): the default 60,000 edges (12
batches) measures nearer the steady rate of a large file than 20,000 (4 batches) does.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
XSD = "http://www.w3.org/2001/XMLSchema#"
LABEL = "<http://www.w3.org/2000/01/rdf-schema#label>"


def generate(path: Path, triples: int) -> int:
    """An N-Triples file of about `triples` lines; returns the exact count."""
    written = 0
    with open(path, "w", encoding="utf-8") as out:
        i = 0
        while written < triples:
            e, nxt = f"<http://ex.org/entity/e{i}>", f"<http://ex.org/entity/e{(i * 7 + 3) % max(triples // 6, 2)}>"
            lines = [f"{e} <http://ex.org/prop/relatedTo{i % 40}> {nxt} .",
                     f'{e} <http://ex.org/prop/foundingYear> "{1800 + i % 220}"^^<{XSD}gYear> .',
                     f'{e} <http://ex.org/prop/areaKm2> "{i % 9000}.{i % 100}"^^<{XSD}decimal> .',
                     f"{e} <http://ex.org/prop/statement> _:s{i} .",
                     f'_:s{i} <http://ex.org/prop/pointInTime> "19{i % 100:02d}-01-01"^^<{XSD}date> .']
            if i % 5:
                lines += [f'{e} {LABEL} "Entity number {i}"@en .', f'{e} {LABEL} "Ding Nummer {i}"@de .']
            out.write("\n".join(lines) + "\n")
            written += len(lines)
            i += 1
    return written


def parse_rate(path: Path, triples: int) -> dict:
    from gretriever_neo4j.loaders import get_loader

    started = time.perf_counter()
    edges = sum(len(record.edges) for record in get_loader("rdf").read(path, graph="bench"))
    seconds = time.perf_counter() - started
    return {"triples": triples, "edges": edges, "seconds": round(seconds, 2),
            "rdf_parse_triples_per_s": round(triples / seconds)}


def peak_rss_mb(path: Path) -> float:
    """Peak RSS of a fresh process that reads `path` whole through the loader."""
    code = ("import resource, sys\nfrom gretriever_neo4j.loaders import get_loader\n"
            "n = sum(len(r.edges) for r in get_loader('rdf').read(sys.argv[1]))\n"
            "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)")
    done = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, check=True)
    return round(float(done.stdout.strip().splitlines()[-1]), 1)


def write_rate(path: Path, edges: int, repeats: int) -> dict:
    """The write of the file's first `edges` edges with every vector known beforehand, with and without writing the
    node vectors, alternating; see the module docstring."""
    import statistics
    from dataclasses import replace

    import numpy as np
    from scale import settle

    from gretriever_neo4j.embedding.embedder import Embedder
    from gretriever_neo4j.ingest.graphs import ingest
    from gretriever_neo4j.loaders import get_loader
    from gretriever_neo4j.settings import Neo4jSettings
    from gretriever_neo4j.store.graph_store import connected

    records = list(get_loader("rdf").read(path, graph="bench", limit=edges))
    texts = sorted({node.text for r in records for node in r.nodes} | {edge.text for r in records for edge in r.edges})
    model = Embedder()
    started = time.perf_counter()
    vectors = dict(zip(texts, model.embed(texts)))
    embedding_s = time.perf_counter() - started
    print(f"embedded {len(texts):,} texts beforehand in {embedding_s:.0f} s (not counted)", flush=True)
    runs: list[dict] = []
    with connected(Neo4jSettings.from_env()) as store:
        store.ensure_schema(model.name, model.dim)
        without_vectors = graph_only(store)
        for attempt in range(repeats):
            for kind, target in (("with vectors", store), ("graph only", without_vectors)):
                settle(max_seconds=60)
                graph = f"bench-rdf-{os.getpid()}-{attempt}-{kind.split()[0]}"
                started = time.perf_counter()
                try:
                    report = ingest([replace(record, graph_id=graph) for record in records], target,
                                    lambda batch: np.stack([vectors[text] for text in batch]), dataset="rdf")
                    seconds = time.perf_counter() - started
                finally:
                    store.drop_graph(graph)
                runs.append({"kind": kind, "seconds": round(seconds, 2), "edges_written": report.edges_written,
                             "nodes_written": report.nodes_written,
                             "edges_per_s": round(report.edges_written / seconds)})
                print(json.dumps(runs[-1]), flush=True)
    median = {kind: statistics.median(run["seconds"] for run in runs if run["kind"] == kind)
              for kind in ("with vectors", "graph only")}
    written = runs[0]
    return {"edges_written": written["edges_written"], "nodes_written": written["nodes_written"],
            "embedding_s_beforehand": round(embedding_s, 1), "repeats": repeats,
            "rdf_write_edges_per_s": round(written["edges_written"] / median["with vectors"]),
            "rdf_graph_write_edges_per_s": round(written["edges_written"] / median["graph only"]),
            "vector_index_ms_per_node": round(1000 * (median["with vectors"] - median["graph only"])
                                              / written["nodes_written"], 3),
            "runs": runs}


_VECTOR_CALL = "CALL db.create.setNodeVectorProperty(n, 'embedding', $vectors[row.vector])"


def graph_only(store):
    """A store on `store`'s driver and database whose node writes leave the vectors out: `nodes_upsert` without its
    vector call, so the vectors travel as the product sends them and nothing writes or indexes them."""
    from gretriever_neo4j.store.graph_store import GraphStore
    from gretriever_neo4j.store.rows import statement

    class GraphOnly(GraphStore):
        @staticmethod
        def _tx(tx, name: str, **params) -> int:
            text, bound = statement(name, params)
            if name == "nodes_upsert":
                if _VECTOR_CALL not in text:
                    raise SystemExit("cypher/nodes_upsert.cypher no longer writes vectors as this bench expects")
                text = text.replace(_VECTOR_CALL, "")
            records = list(tx.run(text, bound))
            return int(records[0]["written"]) if records and "written" in records[0].keys() else 0

    return GraphOnly(store._driver, store.database)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--triples", type=int, default=200_000)
    parser.add_argument("--write-edges", type=int, default=60_000)
    parser.add_argument("--repeats", type=int, default=2, help="runs of each write, alternating; medians reported")
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "rdf_ingest.json")
    args = parser.parse_args()
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="gqa-bench-rdf-") as folder:
        small, large = Path(folder) / "small.nt", Path(folder) / "large.nt"
        n_small, n_large = generate(small, args.triples), generate(large, 4 * args.triples)
        print(f"generated {n_small:,} and {n_large:,} triples", flush=True)
        parse = parse_rate(small, n_small)
        print(json.dumps(parse), flush=True)
        rss = {f"{n_small}_triples": peak_rss_mb(small), f"{n_large}_triples": peak_rss_mb(large)}
        print(json.dumps(rss), flush=True)
        write = write_rate(small, args.write_edges, args.repeats)
        print(json.dumps({k: v for k, v in write.items() if k != "runs"}), flush=True)
    result = {
        "command": "python bench/rdf_ingest.py " + " ".join(sys.argv[1:]),
        "machine": {"platform": platform.platform(), "cpus": os.cpu_count(), "python": platform.python_version(),
                    "load_average_1m": {"start": load_before, "end": os.getloadavg()[0]}},
        "rdf_parse_triples_per_s": parse["rdf_parse_triples_per_s"],
        "rdf_write_edges_per_s": write["rdf_write_edges_per_s"],
        "rdf_graph_write_edges_per_s": write["rdf_graph_write_edges_per_s"],
        "rdf_peak_rss_mb": rss,
        "targets": {"rdf_parse_triples_per_s": 20_000, "rdf_write_edges_per_s": 8_000,
                    "rdf_peak_rss_mb": "flat in file size"},
        "parse": parse, "write": write,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()

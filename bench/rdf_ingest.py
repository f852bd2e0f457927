"""`gqa ingest rdf` on generated N-Triples: parse rate, write rate without embedding, and peak memory by file size.

    python bench/rdf_ingest.py [--triples 200000] [--write-edges 20000] [--out bench/results/rdf_ingest.json]

* `rdf_parse_triples_per_s`: triples of the file per second of one whole read by the loader (both of its passes:
  labels into SQLite, then the triples into records), no database.
* `rdf_write_edges_per_s`: edges per second that `ingest` writes to Neo4j, its embedding time left out (the vectors
  are random unit vectors, made in microseconds). Needs the running server (`gqa db start`); the graph it writes is
  dropped afterwards.
* `rdf_peak_rss_mb`: the peak resident memory of a process that reads files of 1x and 4x `--triples` (it should not
  grow with the file).

The generated file: entities e0..eN with English and German labels, typed literals (years, decimals), blank-node
records, camelCase predicates; every fifth entity has no label (its IRI's local name is its text).
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


def write_rate(path: Path, edges: int) -> dict:
    import numpy as np

    from gretriever_neo4j.embedding.embedder import Embedder
    from gretriever_neo4j.ingest.graphs import ingest
    from gretriever_neo4j.loaders import get_loader
    from gretriever_neo4j.settings import Neo4jSettings
    from gretriever_neo4j.store.graph_store import connected

    model = Embedder()  # its name and size only: the store's schema is the default embedder's
    rng = np.random.default_rng(0)

    def embed(texts: list[str]) -> np.ndarray:
        vectors = rng.standard_normal((len(texts), model.dim)).astype(np.float32)
        return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)

    graph = f"bench-rdf-{os.getpid()}"
    with connected(Neo4jSettings.from_env()) as store:
        store.ensure_schema(model.name, model.dim)
        try:
            report = ingest(get_loader("rdf").read(path, graph=graph, limit=edges), store, embed, dataset="rdf")
        finally:
            store.drop_graph(graph)
    writing = report.seconds - report.embed_seconds
    return {"edges_written": report.edges_written, "nodes_written": report.nodes_written,
            "seconds": round(report.seconds, 2), "embed_seconds": round(report.embed_seconds, 2),
            "rdf_write_edges_per_s": round(report.edges_written / writing)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--triples", type=int, default=200_000)
    parser.add_argument("--write-edges", type=int, default=20_000)
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "rdf_ingest.json")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="gqa-bench-rdf-") as folder:
        small, large = Path(folder) / "small.nt", Path(folder) / "large.nt"
        n_small, n_large = generate(small, args.triples), generate(large, 4 * args.triples)
        print(f"generated {n_small:,} and {n_large:,} triples", flush=True)
        parse = parse_rate(small, n_small)
        print(json.dumps(parse), flush=True)
        rss = {f"{n_small}_triples": peak_rss_mb(small), f"{n_large}_triples": peak_rss_mb(large)}
        print(json.dumps(rss), flush=True)
        write = write_rate(small, args.write_edges)
        print(json.dumps(write), flush=True)
    result = {
        "command": "python bench/rdf_ingest.py " + " ".join(sys.argv[1:]),
        "machine": {"platform": platform.platform(), "cpus": os.cpu_count(), "python": platform.python_version(),
                    "load_average_1m": os.getloadavg()[0]},
        "rdf_parse_triples_per_s": parse["rdf_parse_triples_per_s"],
        "rdf_write_edges_per_s": write["rdf_write_edges_per_s"],
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

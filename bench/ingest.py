"""Ingest benchmark: the MetaQA KB (and its questions) into an empty Neo4j, against embedding alone.

Starts a throwaway Neo4j (its own data folder and ports; the jar cache of `gqa db` is shared), then runs, each
in a fresh process so that peak RSS and caches are its own:
  embed    embedding-only: every distinct node and edge text of the source through the embedder
  ingest   `gqa ingest metaqa` into the empty database
  again    the same ingest a second time (idempotent: nothing to embed or write)
and prints a table and writes JSON. Targets: ingest <= 1.7x embed; again <= 0.2x ingest.

    python bench/ingest.py [--source ../shared/data/metaqa] [--out bench/results/ingest.json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import REPO


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def phase_embed(source: str) -> dict:
    from gretriever_neo4j.embedding.embedder import Embedder
    from gretriever_neo4j.loaders import get_loader
    from gretriever_neo4j.records import GraphRecord

    texts: dict[str, None] = {}
    for record in get_loader("metaqa").read(source):
        if isinstance(record, GraphRecord):
            texts.update((n.text, None) for n in record.nodes)
            texts.update((e.text, None) for e in record.edges)
    embedder = Embedder()
    started = time.perf_counter()
    embedder.embed(list(texts))
    return {"seconds": time.perf_counter() - started, "texts": len(texts)}


def phase_ingest(source: str) -> dict:
    from gretriever_neo4j.embedding.embedder import Embedder
    from gretriever_neo4j.ingest.graphs import ingest_dataset
    from gretriever_neo4j.settings import Neo4jSettings
    from gretriever_neo4j.store.graph_store import connected

    embedder = Embedder()  # model loading is not part of either measurement
    with connected(Neo4jSettings.from_env()) as store:
        started = time.perf_counter()
        report = ingest_dataset(store, embedder, "metaqa", source)
        seconds = time.perf_counter() - started
    return {"seconds": seconds, "nodes_written": report.nodes_written, "edges_written": report.edges_written,
            "nodes_read": report.nodes_read, "edges_read": report.edges_read, "questions": report.questions,
            "texts_embedded": report.texts_embedded, "embed_seconds_inside": report.embed_seconds}


def run_phase(name: str, source: str, env: dict) -> dict:
    result = subprocess.run([sys.executable, __file__, "--phase", name, "--source", source], env=env,
                            capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise SystemExit(f"phase {name} failed:\n{result.stderr[-4000:]}")
    return json.loads(result.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--source", default=str(REPO.parent / "shared" / "data" / "metaqa"))
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "ingest.json")
    parser.add_argument("--phase", choices=("embed", "ingest"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.phase:
        os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
        result = phase_embed(args.source) if args.phase == "embed" else phase_ingest(args.source)
        result["peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(json.dumps(result))
        return 0

    from rich.console import Console
    from rich.table import Table

    from gretriever_neo4j import server

    console = Console()
    with tempfile.TemporaryDirectory(prefix="gqa-bench-") as tmp:
        layout = server.ServerLayout.at(tmp, jar_cache=server.default_layout().jar_cache)
        bolt, http = _free_port(), _free_port()
        with console.status("starting a throwaway Neo4j…"):
            server.start(layout, bolt_port=bolt, http_port=http)
        env = {**os.environ, "NEO4J_URI": f"bolt://127.0.0.1:{bolt}",
               "NEO4J_PASSWORD": server.ensure_password(layout), "PYTHONUNBUFFERED": "1"}
        try:
            results = {}
            for name, label in (("embed", "embedding only"), ("ingest", "ingest (empty database)"),
                                ("again", "ingest again (idempotent)")):
                with console.status(f"{label}…"):
                    results[name] = run_phase("embed" if name == "embed" else "ingest", args.source, env)
        finally:
            server.stop(layout)
    first = results["ingest"]
    summary = {
        "machine": {"platform": platform.platform(), "cpus": os.cpu_count(), "python": sys.version.split()[0]},
        "source": args.source, "phases": results,
        "nodes_per_second": first["nodes_written"] / first["seconds"],
        "edges_per_second": first["edges_written"] / first["seconds"],
        "ingest_over_embed": first["seconds"] / results["embed"]["seconds"],
        "again_over_ingest": results["again"]["seconds"] / first["seconds"],
    }
    table = Table(title=f"ingest MetaQA ({os.cpu_count()} cores)")
    for column in ("phase", "seconds", "nodes written", "edges written", "texts embedded", "peak RSS MiB"):
        table.add_column(column, justify="right")
    table.add_row("embedding only", f"{results['embed']['seconds']:.1f}", "", "", f"{results['embed']['texts']:,}",
                  f"{results['embed']['peak_rss_mib']:.0f}")
    for name in ("ingest", "again"):
        r = results[name]
        table.add_row(name, f"{r['seconds']:.1f}", f"{r['nodes_written']:,}", f"{r['edges_written']:,}",
                      f"{r['texts_embedded']:,}", f"{r['peak_rss_mib']:.0f}")
    console.print(table)
    console.print(f"nodes/s {summary['nodes_per_second']:,.0f}  edges/s {summary['edges_per_second']:,.0f}  "
                  f"ingest/embed {summary['ingest_over_embed']:.2f} (target <= 1.7)  "
                  f"again/ingest {summary['again_over_ingest']:.2f} (target <= 0.2)")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(summary, indent=2))
    console.print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Scale: a knowledge graph ten times MetaQA's, against one of MetaQA's size, in the same Neo4j.

The graphs are synthetic and seeded, with MetaQA's degree distribution: copy 0 is MetaQA's KB as it is; copies
1..k-1 rename every entity ("Tom Hanks #3") and rewire `--rewire` of their triples' tails into a random other copy,
so the copies form one connected graph while every entity keeps its degree. The 1x graph is copy 0 alone.
For each scale: ingest throughput (through the product's ingest: validation, embedding, batched transactions; then
the write rate apart from embedding, by ingesting the same triples again into a scratch graph with every text's
vector already in the embedder's cache),
static retrieval through Neo4j and learned retrieval through Neo4j (the MetaQA checkpoint of `gqa train`), once the
server is idle again (`settle`), on MetaQA validation questions (whose entities are copy 0's), p50/p95, Neo4j store
size, and the client's peak RSS;
then the same retrievals over the graph held in memory as `gqa serve` holds it (its load time and RSS measured in
a fresh process, `bench/fresh_load.py`, as a server starts).
Both graphs are deleted at the end unless --keep. Prints a table and writes JSON.

    python bench/scale.py [--factor 10] [--questions 100] [--out bench/results/scale.json]
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import re
import resource
import sys
import time
import uuid
from pathlib import Path

import numpy as np
from _common import REPO, command, machine

BRACKETS = re.compile(r"\[([^\]]*)\]")


def kb_triples(path: Path) -> list[tuple[str, str, str]]:
    """MetaQA's kb.txt as the loader parses it (a malformed line stops the bench, as it stops `gqa ingest`)."""
    from gretriever_neo4j.loaders.metaqa import parse_kb_line

    return [parse_kb_line(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def scaled(triples, factor: int, rewire: float, seed: int):
    """Copies of the KB; copy c > 0 renames entities `name #c` and sends `rewire` of its tails to another copy."""
    rng = random.Random(seed)
    name = lambda entity, copy: entity if copy == 0 else f"{entity} #{copy}"
    for copy in range(factor):
        for head, relation, tail in triples:
            target = copy
            if copy and factor > 1 and rng.random() < rewire:
                target = rng.randrange(factor)
            yield name(head, copy), relation, name(tail, target)


def records(triples, graph: str, dataset: str, batch: int = 5000):
    from gretriever_neo4j.records import Edge, GraphRecord, Node

    chunk: list = []
    for triple in triples:
        chunk.append(triple)
        if len(chunk) == batch:
            yield _record(chunk, graph, dataset, Edge, GraphRecord, Node)
            chunk = []
    if chunk:
        yield _record(chunk, graph, dataset, Edge, GraphRecord, Node)


def _record(chunk, graph, dataset, Edge, GraphRecord, Node):
    names = sorted({x for h, _, t in chunk for x in (h, t)})
    return GraphRecord(graph_id=graph, dataset=dataset, kind="kg", nodes=[Node(n, n) for n in names],
                       edges=[Edge(h, r, t) for h, r, t in chunk])


def store_size_mib() -> float | None:
    """The bundled server's database folder (store files and indexes, not transaction logs); None when gqa does
    not manage the server (Docker, a cluster)."""
    from gretriever_neo4j.server import ServerLayout

    folder = ServerLayout.default().data_dir / "databases" / "neo4j"
    if not folder.is_dir():
        return None
    return sum(f.stat().st_size for f in folder.rglob("*") if f.is_file()) / 2 ** 20


def settle(max_seconds: float = 600, window: float = 3.0, busy: float = 0.1) -> float:
    """Waits until the bundled server is idle (under `busy` of a core over `window` seconds): after an ingest,
    Lucene merges the vector index's segments in the background for a minute or more, and latencies measured
    meanwhile share the two cores with it (3x slower, in memory too). Returns the seconds waited; 0 when gqa does
    not manage the server."""
    from gretriever_neo4j.server import ServerLayout
    from gretriever_neo4j.server.pids import running_pid

    pid = running_pid(ServerLayout.default())
    if pid is None:
        return 0.0
    ticks = os.sysconf("SC_CLK_TCK")
    cpu = lambda: sum(int(x) for x in Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[11:13]) / ticks
    started = time.perf_counter()
    while time.perf_counter() - started < max_seconds:
        before = cpu()
        time.sleep(window)
        if cpu() - before < busy * window:
            break
    return time.perf_counter() - started


def save(path: Path, results: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(results, indent=1, default=str))


def available_mib() -> float:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemAvailable:"):
            return int(line.split()[1]) / 1024
    return float("inf")


def current_rss_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def load_in_fresh_process(graph: str) -> dict:
    """`bench/fresh_load.py`: the graph loaded as `gqa serve` loads it, in a new interpreter (seconds, MiB)."""
    import subprocess

    done = subprocess.run([sys.executable, str(REPO / "bench" / "fresh_load.py"), graph], capture_output=True,
                          text=True, check=True)
    measured = json.loads(done.stdout.strip().splitlines()[-1])
    return {"cache_load_s": measured["cache_load_s"], "cache_rss_added_mib": measured["cache_rss_added_mib"]}


def issue_keys(row: dict) -> dict:
    """The measures under the names issue 18 reads them by (a program compares runs by these keys)."""
    mib = row.get("cache_rss_added_mib")
    store_mib = row.get("store_mib_added")
    write_rate = row.get("write_apart_edges_per_s")  # measured apart from embedding, else the writer thread's
    if write_rate is None and row.get("write_s"):
        write_rate = row["edges_written"] / row["write_s"]
    return {"edges": row["edges_written"], "ingest_edges_per_s": row["edges_per_s"],
            "ingest_write_edges_per_s": write_rate,
            "neo4j_static_p50_ms": row.get("static_p50_ms"), "neo4j_learned_p50_ms": row.get("learned_p50_ms"),
            "memory_static_p50_ms": row.get("cached_static_p50_ms"),
            "memory_learned_p50_ms": row.get("cached_learned_p50_ms"), "memory_load_s": row.get("cache_load_s"),
            "memory_bytes_per_edge": mib * 2**20 / row["edges_written"] if mib is not None else None,
            "store_bytes": store_mib * 2**20 if store_mib is not None else None}


def write_apart(store, embedder, triples, graph: str, dataset: str, ingest) -> dict[str, float]:
    """The same triples ingested once more, into a graph of their own, while the embedder's cache holds every text
    (the first ingest embedded them): the product's whole write path (batching, the stored-already checks, the
    transactions and their index updates) with no embedding beside it, which the first ingest's writer thread
    shares the two cores with. The graph is dropped at once."""
    embedded_before, started = embedder.texts_embedded, time.perf_counter()
    report = ingest(records(triples, graph, dataset), store, embedder.embed, dataset=dataset)
    seconds = time.perf_counter() - started
    store.drop_graph(graph)
    return {"write_apart_s": seconds, "write_apart_edges_per_s": report.edges_written / seconds,
            "write_apart_texts_embedded": embedder.texts_embedded - embedded_before}


def latencies(kind: str, retriever, graph: str, asked: list[str]) -> dict[str, float]:
    """p50/p95 milliseconds of `retriever.retrieve` over the questions, after three warm-up questions."""
    for question in asked[:3]:
        retriever.retrieve(question, graph=graph, record=False)
    ms = []
    for question in asked:
        started = time.perf_counter()
        retriever.retrieve(question, graph=graph, record=False)
        ms.append((time.perf_counter() - started) * 1000)
    return {f"{kind}_p50_ms": float(np.percentile(ms, 50)), f"{kind}_p95_ms": float(np.percentile(ms, 95))}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data" / "metaqa")
    parser.add_argument("--factor", type=int, default=10)
    parser.add_argument("--rewire", type=float, default=0.1)
    parser.add_argument("--questions", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--keep", action="store_true")
    parser.add_argument("--no-write-apart", dest="write_apart", action="store_false",
                        help="skip the second, write-only ingest that measures writing apart from embedding")
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "scale.json")
    args = parser.parse_args()

    from rich.console import Console
    from rich.table import Table

    from gretriever_neo4j import threads
    from gretriever_neo4j.artifacts.registry import legacy_retriever, load_trained
    from gretriever_neo4j.embedding.embedder import Embedder
    from gretriever_neo4j.ingest.graphs import ingest
    from gretriever_neo4j.retrievers.base import RetrievalContext
    from gretriever_neo4j.retrievers.cached import CachedStaticRetriever, GraphCache
    from gretriever_neo4j.retrievers.learned import LearnedKGRetriever
    from gretriever_neo4j.retrievers.neo4j import StaticRetriever
    from gretriever_neo4j.settings import Neo4jSettings
    from gretriever_neo4j.store.graph_store import connected

    threads.one_blas_thread()  # as `gqa serve` and `gqa ask` run: the in-memory latencies are theirs
    console = Console(width=200)
    embedder = Embedder()
    base = kb_triples(args.data / "kb.txt")
    prefix = f"scale{uuid.uuid4().hex[:6]}"
    trained = load_trained("metaqa")  # `gqa train --dataset metaqa`, else `gqa train-retriever --dataset metaqa`
    checkpoint = trained.path("retriever") if trained and trained.retriever else None
    if checkpoint is None and legacy_retriever("metaqa").is_file():
        checkpoint = legacy_retriever("metaqa")
    results: dict = {"machine": machine(), "command": command(), "learned_checkpoint": str(checkpoint), "scales": {}}
    with connected(Neo4jSettings.from_env()) as store:
        questions = store.questions("metaqa", "val")
        rng = random.Random(args.seed)
        asked = [BRACKETS.sub(r"\1", q["text"]) for q in rng.sample(questions, args.questions)]
        graphs = []
        try:
            for factor in sorted({1, args.factor}):  # --factor 1: the 1x graph alone
                graph = f"{prefix}-x{factor}"
                graphs.append(graph)
                triples = list(scaled(base, factor, args.rewire, args.seed))
                size_before = store_size_mib()
                started = time.perf_counter()
                report = ingest(records(triples, graph, prefix), store, embedder.embed, dataset=prefix)
                seconds = time.perf_counter() - started
                store.await_indexes()
                distinct = len({x for h, _, t in triples for x in (h, t)})
                row = {"triples": len(triples), "nodes": distinct, "nodes_written": report.nodes_written,
                       "edges_written": report.edges_written, "ingest_s": seconds,
                       "edges_per_s": report.edges_written / seconds, "nodes_per_s": distinct / seconds,
                       "store_mib_added": (store_size_mib() - size_before) if size_before is not None else None,
                       "write_s": report.write_seconds, "embed_s": report.embed_seconds}
                row["settle_s"] = settle()  # latencies on a server done with the ingest's index merges
                context = RetrievalContext(store, embedder)
                static = StaticRetriever(context)
                learned = LearnedKGRetriever(context, checkpoint) if checkpoint else None
                for kind, retriever in (("static", static), ("learned", learned)):
                    if retriever is not None:
                        row.update(latencies(kind, retriever, graph, asked))
                row["client_peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
                results["scales"][f"{factor}x"] = row
                save(args.out, results)  # a later stage that runs out of memory loses nothing measured
                # What `gqa serve` does: the graph held in memory (adjacency + vectors), retrieval over it.
                one = results["scales"].get("1x", {})
                if factor > 1 and "cache_rss_added_mib" in one:
                    needed = 1.5 * factor * one["cache_rss_added_mib"]  # loading holds Python copies of vectors
                    if needed > available_mib():
                        row["cache_skipped"] = (f"would need ~{needed:,.0f} MiB (1x added "
                                                f"{one['cache_rss_added_mib']:,.0f}), {available_mib():,.0f} free")
                        console.print(f"{factor}x: {row}")
                        continue
                # Load time and memory in a fresh process, as `gqa serve` starts: RSS measured here would count
                # (or, after malloc_trim, give back) what this process freed before.
                row.update(load_in_fresh_process(graph))
                cache = GraphCache(store)
                cache.load(graph)
                row.update(latencies("cached_static", CachedStaticRetriever(context, cache), graph, asked))
                if checkpoint:
                    row.update(latencies("cached_learned", LearnedKGRetriever(context, checkpoint, cache=cache),
                                         graph, asked))
                del cache
                gc.collect()
                row.update(issue_keys(row))
                save(args.out, results)
                console.print(f"{factor}x: {row}")
            if args.write_apart:  # last: dropping a scratch graph leaves Neo4j busy for a while (index merges)
                for factor in sorted({1, args.factor}):
                    row = results["scales"][f"{factor}x"]
                    triples = list(scaled(base, factor, args.rewire, args.seed))
                    settle()
                    row.update(write_apart(store, embedder, triples, f"{prefix}-x{factor}-w", prefix, ingest))
                    row.update(issue_keys(row))
                    save(args.out, results)
        finally:
            if not args.keep:
                for graph in graphs:
                    store.drop_graph(graph)  # what `gqa drop` does: batched transactions
    one, many = results["scales"].get("1x"), results["scales"].get(f"{args.factor}x")
    if one and many:
        results["ratios"] = {"static_p50": many["static_p50_ms"] / one["static_p50_ms"],
                             "learned_p50": (many.get("learned_p50_ms") or np.nan)
                             / (one.get("learned_p50_ms") or np.nan),
                             "ingest_edges_per_s": many["edges_per_s"] / one["edges_per_s"],
                             "cached_static_p50": (many.get("cached_static_p50_ms") or np.nan)
                             / (one.get("cached_static_p50_ms") or np.nan),
                             "cached_learned_p50": (many.get("cached_learned_p50_ms") or np.nan)
                             / (one.get("cached_learned_p50_ms") or np.nan)}
    save(args.out, results)
    table = Table(title=f"scale: MetaQA-shaped KG at 1x and {args.factor}x, {os.cpu_count()} CPU cores")
    for column in ("scale", "triples", "nodes", "edges/s", "nodes/s", "static p50/p95 ms", "learned p50/p95 ms",
                   "in memory: static / learned p50 ms", "load s / +RSS MiB", "store MiB added", "client peak RSS MiB"):
        table.add_column(column, justify="right")
    nan = float("nan")
    for name, row in results["scales"].items():
        table.add_row(name, f"{row['triples']:,}", f"{row['nodes']:,}", f"{row['edges_per_s']:.0f}",
                      f"{row['nodes_per_s']:.0f}", f"{row['static_p50_ms']:.0f} / {row['static_p95_ms']:.0f}",
                      f"{row.get('learned_p50_ms', nan):.0f} / {row.get('learned_p95_ms', nan):.0f}",
                      f"{row.get('cached_static_p50_ms', nan):.0f} / {row.get('cached_learned_p50_ms', nan):.0f}",
                      f"{row.get('cache_load_s', nan):.0f} / {row.get('cache_rss_added_mib', nan):.0f}",
                      "-" if row["store_mib_added"] is None else f"{row['store_mib_added']:.0f}",
                      f"{row['client_peak_rss_mib']:.0f}")
    console.print(table)
    if "ratios" in results:
        console.print(f"ratios {args.factor}x/1x: {results['ratios']}")
    console.print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Retrieval quality and latency on the loaded knowledge graphs, Neo4j path vs the in-memory reference.

Needs the KGs in Neo4j (`gqa ingest metaqa --source ../shared/data/metaqa`, `gqa ingest webqsp --source
../shared/data/webqsp/webqsp_evidence_test.jsonl`). For a fixed sample of questions (MetaQA validation questions per
hop, WebQSP evidence questions) it reports answer-in-subgraph and topic-entity-in-subgraph rates, median subgraph
size and tokens, and latency p50/p95 per stage, for the Neo4j path and, in the same run on the same questions, for
the reference path over the whole KG held in memory.

    python bench/retrieval.py [--per-hop 100] [--webqsp 200] [--out bench/results/retrieval.json]
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import re
import statistics
import sys
import time
from pathlib import Path

import numpy as np
from rich.console import Console
from rich.table import Table

from gretriever_neo4j.embedding.embedder import Embedder
from gretriever_neo4j.retrieval.in_memory import retrieve as reference_retrieve
from gretriever_neo4j.retrieval.params import params_for
from gretriever_neo4j.retrievers.base import RetrievalContext
from gretriever_neo4j.retrievers.neo4j import StaticRetriever
from gretriever_neo4j.settings import Neo4jSettings
from gretriever_neo4j.store.graph_store import connected

STAGES = ("embed", "vector_search", "neighbourhood", "pcst", "textualize", "total")
BRACKETS = re.compile(r"\[([^\]]*)\]")


def sample_questions(store, per_hop: int, webqsp: int, seed: int = 0) -> list[dict]:
    rng = random.Random(seed)
    chosen = []
    metaqa = store.questions("metaqa", "val")
    for hop in (1, 2, 3):
        pool = [q for q in metaqa if q["qid"].startswith(f"{hop}hop/")]
        for q in rng.sample(pool, min(per_hop, len(pool))):
            chosen.append({**q, "group": f"metaqa {hop}-hop", "text": BRACKETS.sub(r"\1", q["text"])})
    pool = [q for q in store.questions("webqsp", "test") if q["answers"]]
    for q in rng.sample(pool, min(webqsp, len(pool))):
        chosen.append({**q, "group": "webqsp"})
    return chosen


def quality(texts: list[str], question: dict) -> tuple[bool, bool]:
    present = {t.lower() for t in texts}
    answer = any(a.lower() in present for a in question["answers"])
    topic = any(t.lower() in present for t in question["topic_entities"])
    return answer, topic


def percentile(values: list[float], q: float) -> float:
    return float(np.percentile(values, q)) if values else float("nan")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--per-hop", type=int, default=100)
    parser.add_argument("--webqsp", type=int, default=200)
    parser.add_argument("--out", type=Path, default=Path("bench/results/retrieval.json"))
    args = parser.parse_args()
    console = Console()
    embedder = Embedder()
    rows: dict[str, dict[str, list]] = {}
    with connected(Neo4jSettings.from_env()) as store:
        questions = sample_questions(store, args.per_hop, args.webqsp)
        retriever = StaticRetriever(RetrievalContext(store, embedder))
        graphs = sorted({q["graph"] for q in questions})
        in_memory, load_seconds = {}, {}
        for graph in graphs:
            started = time.perf_counter()
            in_memory[graph] = retriever.whole_graph(graph)
            load_seconds[graph] = time.perf_counter() - started
        for q in questions[: min(5, len(questions))]:  # warm caches, JIT and the reference's incidence lists
            retriever.retrieve(q["text"], graph=q["graph"], record=False)
            info = store.graph_info(q["graph"])
            reference_retrieve(in_memory[q["graph"]], embedder.embed_query(q["text"]).vector,
                               params_for(info["dataset"], info["kind"]))
        infos = {g: store.graph_info(g) for g in graphs}
        for q in questions:
            row = rows.setdefault(q["group"], {"answer": [], "topic": [], "nodes": [], "edges": [], "tokens": [],
                                               "ref_answer": [], **{s: [] for s in STAGES},
                                               **{f"ref_{s}": [] for s in STAGES}})
            result = retriever.retrieve(q["text"], graph=q["graph"], record=False)
            texts = [result.result.candidate.node_texts[i] for i in result.result.subgraph.node_indices]
            answer, topic = quality(texts, q)
            row["answer"].append(answer)
            row["topic"].append(topic)
            row["nodes"].append(len(texts))
            row["edges"].append(len(result.result.subgraph.edges))
            row["tokens"].append(result.tokens)
            for stage in STAGES:
                row[stage].append(result.timings_ms.get(stage, 0.0))

            params = params_for(infos[q["graph"]]["dataset"], infos[q["graph"]]["kind"])
            started = time.perf_counter()
            vector = embedder.embed_query(q["text"]).vector
            embed_ms = (time.perf_counter() - started) * 1000
            reference = reference_retrieve(in_memory[q["graph"]], vector, params)
            ref_timings = {"embed": embed_ms, "vector_search": reference.timings_ms["seeds"],
                           "neighbourhood": reference.timings_ms["neighbourhood"],
                           "pcst": reference.timings_ms["pcst"], "textualize": reference.timings_ms["textualize"]}
            ref_timings["total"] = sum(ref_timings.values())
            for stage in STAGES:
                row[f"ref_{stage}"].append(ref_timings[stage])
            ref_texts = [reference.candidate.node_texts[i] for i in reference.subgraph.node_indices]
            row["ref_answer"].append(quality(ref_texts, q)[0])

    summary = {}
    for group, row in rows.items():
        summary[group] = {
            "questions": len(row["answer"]),
            "answer_in_subgraph": statistics.fmean(row["answer"]),
            "topic_entity_in_subgraph": statistics.fmean(row["topic"]),
            "reference_answer_in_subgraph": statistics.fmean(row["ref_answer"]),
            "median_nodes": statistics.median(row["nodes"]),
            "median_edges": statistics.median(row["edges"]),
            "median_tokens": statistics.median(row["tokens"]),
            "neo4j_ms": {s: {"p50": percentile(row[s], 50), "p95": percentile(row[s], 95)} for s in STAGES},
            "reference_ms": {s: {"p50": percentile(row[f"ref_{s}"], 50), "p95": percentile(row[f"ref_{s}"], 95)}
                             for s in STAGES},
        }
        summary[group]["total_p50_ratio_neo4j_to_reference"] = (
            summary[group]["neo4j_ms"]["total"]["p50"] / summary[group]["reference_ms"]["total"]["p50"])

    quality_table = Table(title="retrieval quality (static method of the paper)")
    for column in ("questions", "group", "answer in subgraph", "topic entity in subgraph", "reference answer",
                   "median nodes", "median edges", "median tokens"):
        quality_table.add_column(column, justify="right")
    for group, s in summary.items():
        quality_table.add_row(str(s["questions"]), group, f"{s['answer_in_subgraph']:.3f}",
                              f"{s['topic_entity_in_subgraph']:.3f}", f"{s['reference_answer_in_subgraph']:.3f}",
                              f"{s['median_nodes']:g}", f"{s['median_edges']:g}", f"{s['median_tokens']:g}")
    console.print(quality_table)
    latency = Table(title="latency ms, p50 / p95 (Neo4j path | in-memory reference)")
    latency.add_column("group")
    for stage in STAGES:
        latency.add_column(stage, justify="right")
    latency.add_column("total p50 ratio", justify="right")
    for group, s in summary.items():
        latency.add_row(group + " neo4j", *(f"{s['neo4j_ms'][st]['p50']:.1f} / {s['neo4j_ms'][st]['p95']:.1f}"
                                            for st in STAGES), f"{s['total_p50_ratio_neo4j_to_reference']:.2f}")
        latency.add_row(group + " reference", *(
            f"{s['reference_ms'][st]['p50']:.1f} / {s['reference_ms'][st]['p95']:.1f}" for st in STAGES), "")
    console.print(latency)
    machine = {"platform": platform.platform(), "python": sys.version.split()[0],
               "cpus": __import__("os").cpu_count()}
    console.print(f"machine: {machine}; in-memory KG load seconds: "
                  + ", ".join(f"{g} {s:.1f}" for g, s in load_seconds.items()))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"machine": machine, "load_seconds": load_seconds, "groups": summary}, indent=2))
    console.print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

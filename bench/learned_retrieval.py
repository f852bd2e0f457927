"""Static (the paper's) vs learned retrieval on MetaQA validation questions, measured in one run.

The knowledge graph is built in memory from `kb.txt` with the MetaQA loader (no Neo4j needed); the split is the
loader's (dev files split 80/20 into train/val with seed 42). The learned retriever is trained here on a fixed
sample of the train split, checkpointed, reloaded from the checkpoint, and evaluated on a fixed sample of the val
split; the static retrieval is `retrieval.in_memory.retrieve` with `params_for("metaqa")` over the whole KG.
Both get the same question vectors (brackets stripped). Reported per hop: topic-entity recall (the topic among
the seeds), answer-in-subgraph at budgets 10/25/50/100/200 edges (learned) and at PCST's own size (static),
answer coverage, median subgraph nodes/edges/tokens, retrieval latency p50/p95 given the question vector
(linking included for the learned retriever, and so is its embedding of the masked question, uncached).
Embeddings of the KG and the sampled questions are cached under $GQA_HOME/cache/bench_learned. With
--neo4j-linking the questions are also linked through a real Neo4j's fulltext and vector indexes.

    .venv/bin/python bench/learned_retrieval.py [--train-per-hop 6000] [--val-per-hop 300] [--epochs 8]
        [--static-per-hop 300] [--threads 1] [--neo4j-linking] [--out bench/results/learned_retrieval.json]
"""

from __future__ import annotations

import os

from _common import REPO

# One BLAS thread: on a 2-core machine shared with other processes, OpenBLAS's second thread makes the
# small per-question matrix products several times slower, not faster. Set before numpy loads.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse
import dataclasses
import hashlib
import json
import platform
import sys
import time
from pathlib import Path

import numpy as np
from rich.console import Console
from rich.table import Table

from gretriever_neo4j.embedding.embedder import Embedder
from gretriever_neo4j.loaders import metaqa
from gretriever_neo4j.records import QuestionRecord
from gretriever_neo4j.retrieval.in_memory import retrieve as static_retrieve
from gretriever_neo4j.retrieval.kg import KnowledgeGraph
from gretriever_neo4j.retrieval.learned import (
    LearnedRetriever,
    RetrieverConfig,
    TrainingQuestion,
    answer_coverage,
    answer_hit,
    percentile,
    save_checkpoint,
    subgraph_size,
    train_retriever,
    training_texts,
)
from gretriever_neo4j.retrieval.linking import InMemoryLinking, MentionPrior, strip_topic_markers
from gretriever_neo4j.retrieval.params import params_for
from gretriever_neo4j.settings import gqa_home

BUDGETS = (10, 25, 50, 100, 200)
HOPS = (1, 2, 3)


def cached_embeddings(embedder: Embedder, texts: list[str], label: str) -> np.ndarray:
    digest = hashlib.sha256("\n".join([embedder.name, *texts]).encode()).hexdigest()[:16]
    path = gqa_home() / "cache" / "bench_learned" / f"{label}-{digest}.npy"
    if path.is_file():
        return np.load(path)
    vectors = np.asarray(embedder.embed(texts), dtype=np.float32)
    path.parent.mkdir(parents=True, exist_ok=True)
    np.save(path, vectors)
    return vectors


def sample(questions: list[QuestionRecord], split: str, per_hop: int, seed: int) -> list[QuestionRecord]:
    rng = np.random.default_rng(seed)
    chosen = []
    for hop in HOPS:
        pool = [q for q in questions if q.split == split and q.qid.startswith(f"{hop}hop/")]
        picks = rng.choice(len(pool), size=min(per_hop, len(pool)), replace=False)
        chosen += [pool[i] for i in sorted(picks.tolist())]
    return chosen


def hop_of(question: QuestionRecord) -> int:
    return int(question.qid.split("hop/")[0])


def summarise(rows: list[dict]) -> dict:
    out: dict = {"questions": len(rows)}
    for key in rows[0]:
        values = [row[key] for row in rows]
        if isinstance(values[0], bool):
            out[key] = float(np.mean(values))
        elif key.startswith("ms"):
            out[key + "_p50"], out[key + "_p95"] = percentile(values, 50), percentile(values, 95)
        else:
            out[key + "_median"] = float(np.median(values))
            if key.startswith("coverage"):
                out[key + "_mean"] = float(np.mean(values))
    return out


def evaluate_learned(retriever: LearnedRetriever, questions, vectors) -> dict[int, dict]:
    rows: dict[int, list[dict]] = {hop: [] for hop in HOPS}
    for question, vector in zip(questions, vectors):
        text = strip_topic_markers(question.text)
        started = time.perf_counter()
        result = retriever.retrieve(text, vector)  # linking included, default budget (100)
        ms = (time.perf_counter() - started) * 1000.0
        row = {"topic_in_seeds": question.topic_entities[0] in result.seed_keys}
        for budget in BUDGETS:
            budgeted = result if budget == retriever.config.max_edges else retriever.retrieve(
                text, vector, seeds=result.seed_keys, max_edges=budget)
            row[f"answer_in_subgraph@{budget}"] = answer_hit(budgeted, question.answers)
        gold = retriever.retrieve(text, vector, seeds=question.topic_entities)
        row["answer_in_subgraph@100_gold_seeds"] = answer_hit(gold, question.answers)
        size = subgraph_size(result)
        row.update({"coverage@100": answer_coverage(result, question.answers), "nodes": size["nodes"],
                    "edges": size["edges"], "tokens": size["tokens"], "ms_total": ms,
                    "ms_seeds": result.timings_ms["seeds"], "ms_embed_masked": result.timings_ms["embed_masked"],
                    "ms_scoring": result.timings_ms["scoring"]})
        rows[hop_of(question)].append(row)
    return {hop: summarise(r) for hop, r in rows.items() if r}


def evaluate_static(kg: KnowledgeGraph, questions, vectors) -> dict[int, dict]:
    graph = kg.to_whole_candidate_graph()
    params = params_for("metaqa")
    rows: dict[int, list[dict]] = {hop: [] for hop in HOPS}
    for question, vector in zip(questions, vectors):
        started = time.perf_counter()
        result = static_retrieve(graph, vector, params)
        ms = (time.perf_counter() - started) * 1000.0
        size = subgraph_size(result)
        rows[hop_of(question)].append({
            "topic_in_seeds": question.topic_entities[0] in result.seed_keys,
            "answer_in_subgraph": answer_hit(result, question.answers),
            "coverage": answer_coverage(result, question.answers),
            "nodes": size["nodes"], "edges": size["edges"], "tokens": size["tokens"], "ms_total": ms})
    return {hop: summarise(r) for hop, r in rows.items() if r}


def table(results: dict, console: Console) -> None:
    grid = Table(title="MetaQA val: static (paper) vs learned retrieval", show_lines=False)
    for column in ("method", "hop", "n", "topic in seeds", "ans@10", "ans@25", "ans@50", "ans@100", "ans@200",
                   "ans@100 gold seeds", "coverage", "nodes", "edges", "tokens", "p50 ms", "p95 ms"):
        grid.add_column(column, justify="right" if column not in ("method",) else "left")
    fmt = lambda value: "-" if value is None else f"{value:.3f}"
    for hop, row in results.get("static", {}).items():
        grid.add_row("static (PCST)", str(hop), str(row["questions"]), fmt(row["topic_in_seeds"]), "-", "-", "-",
                     fmt(row["answer_in_subgraph"]) + " (own size)", "-", "-", fmt(row["coverage_mean"]),
                     f"{row['nodes_median']:.0f}", f"{row['edges_median']:.0f}", f"{row['tokens_median']:.0f}",
                     f"{row['ms_total_p50']:.0f}", f"{row['ms_total_p95']:.0f}")
    for hop, row in results["learned"].items():
        grid.add_row("learned", str(hop), str(row["questions"]), fmt(row["topic_in_seeds"]),
                     *(fmt(row[f"answer_in_subgraph@{b}"]) for b in BUDGETS),
                     fmt(row["answer_in_subgraph@100_gold_seeds"]), fmt(row["coverage@100_mean"]),
                     f"{row['nodes_median']:.0f}", f"{row['edges_median']:.0f}", f"{row['tokens_median']:.0f}",
                     f"{row['ms_total_p50']:.1f}", f"{row['ms_total_p95']:.1f}")
    console.print(grid)
    if "neo4j_linking" in results:
        linking = Table(title="Seed linking through Neo4j (fulltext + vector indexes), MetaQA val, brackets stripped")
        for column in ("hop", "n", "topic in retriever's seeds", "topic in top-3", "p50 ms", "p95 ms"):
            linking.add_column(column, justify="right")
        for hop, row in results["neo4j_linking"].items():
            linking.add_row(str(hop), str(row["questions"]), fmt(row["topic_in_seeds"]), fmt(row["topic_in_top3"]),
                            f"{row['ms_total_p50']:.1f}", f"{row['ms_total_p95']:.1f}")
        console.print(linking)


def neo4j_linking(kg: KnowledgeGraph, questions, vectors, prior: MentionPrior, config: RetrieverConfig,
                  console: Console) -> dict[int, dict]:
    """Links the questions through a real Neo4j (NEO4J_URI / NEO4J_PASSWORD) after writing MetaQA's entities
    (nodes only, with the cached vectors) under a fresh graph name, which is deleted afterwards."""
    import uuid

    from gretriever_neo4j.ingest.graphs import ingest
    from gretriever_neo4j.records import GraphRecord, Node
    from gretriever_neo4j.retrieval.linking import link_seeds
    from gretriever_neo4j.settings import Neo4jSettings
    from gretriever_neo4j.store.graph_store import GraphStore, open_driver

    prefix = f"benchlr{uuid.uuid4().hex[:8]}"
    graph = f"{prefix}_metaqa"
    vector_of = dict(zip(kg.node_texts, kg.node_embeddings))
    rows: dict[int, list[dict]] = {hop: [] for hop in HOPS}
    settings = Neo4jSettings.from_env()
    driver = open_driver(settings)
    store = GraphStore(driver, settings.database)
    try:
        started = time.perf_counter()
        record = GraphRecord(graph_id=graph, dataset=prefix, kind="kg",
                             nodes=[Node(key=k, text=t) for k, t in zip(kg.node_keys, kg.node_texts)])
        ingest([record], store, lambda texts: np.stack([vector_of[t] for t in texts]), dataset=prefix)
        store.await_indexes()
        console.log(f"wrote {kg.num_nodes} nodes to Neo4j as {graph} in {time.perf_counter() - started:.0f} s")
        for question, vector in zip(questions, vectors):
            started = time.perf_counter()
            link = link_seeds(strip_topic_markers(question.text), vector, store, graph, k=3, prior=prior)
            seeds = link.preferred(config.seed_fallback, config.seed_min_ratio)[:config.max_seeds]
            ms = (time.perf_counter() - started) * 1000.0
            topic = question.topic_entities[0]
            rows[hop_of(question)].append({"topic_in_seeds": topic in seeds, "topic_in_top3": topic in link.seeds,
                                           "ms_total": ms})
    finally:
        # Test-style cleanup (as tests/conftest.py does): everything under the fresh prefix.
        for statement in ("MATCH (n:Node) WHERE n.graph = $graph WITH n LIMIT 5000 DETACH DELETE n "
                          "RETURN count(*) AS deleted",
                          "MATCH (g:Graph) WHERE g.id = $graph DETACH DELETE g RETURN count(*) AS deleted"):
            while driver.execute_query(statement, graph=graph).records[0]["deleted"]:
                pass
        driver.close()
    return {hop: summarise(r) for hop, r in rows.items() if r}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data" / "metaqa")
    parser.add_argument("--train-per-hop", type=int, default=6000)
    parser.add_argument("--val-per-hop", type=int, default=300)
    parser.add_argument("--static-per-hop", type=int, default=None, help="default: --val-per-hop; 0 skips static")
    parser.add_argument("--epochs", type=int, default=8)
    parser.add_argument("--hidden", type=int, default=RetrieverConfig.hidden)
    parser.add_argument("--threads", type=int, default=1, help="torch threads while training")
    parser.add_argument("--checkpoint", type=Path, default=gqa_home() / "models" / "learned_retriever_metaqa.pt")
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "learned_retrieval.json")
    parser.add_argument("--neo4j-linking", action="store_true",
                        help="also link the validation questions through Neo4j (NEO4J_URI, NEO4J_PASSWORD): writes "
                             "MetaQA's 43k entities under a fresh graph name and deletes them afterwards")
    args = parser.parse_args()
    console = Console(width=None if sys.stdout.isatty() else 200)
    timings: dict[str, float] = {}

    def stage(name: str, started: float) -> None:
        timings[name] = round(time.perf_counter() - started, 2)
        console.log(f"{name}: {timings[name]:.1f} s")

    started = time.perf_counter()
    records = list(metaqa.read(args.data))
    kg = KnowledgeGraph.from_records(records)
    questions = [r for r in records if isinstance(r, QuestionRecord)]
    train = sample(questions, "train", args.train_per_hop, seed=0)
    val = sample(questions, "val", args.val_per_hop, seed=1)
    stage("load", started)
    console.log(f"KG: {kg.num_nodes} nodes, {kg.num_edges} triples, {len(kg.relation_texts)} relations; "
                f"{len(train)} training and {len(val)} validation questions")

    started = time.perf_counter()
    embedder = Embedder()
    kg = kg.with_embeddings(cached_embeddings(embedder, kg.node_texts, "nodes"),
                            cached_embeddings(embedder, kg.relation_texts, "relations"))
    config = RetrieverConfig(epochs=args.epochs, hidden=args.hidden)
    training = [TrainingQuestion(strip_topic_markers(q.text), q.topic_entities, q.answers) for q in train]
    train_vectors = cached_embeddings(embedder, training_texts(kg, training, config), "train")
    val_vectors = cached_embeddings(embedder, [strip_topic_markers(q.text) for q in val], "val")
    stage("embeddings (cached after the first run)", started)

    started = time.perf_counter()
    model, history = train_retriever(
        kg, training, embedder, config,
        progress=lambda p: console.log(f"epoch {p.done}/{p.total}: loss {p.info['loss']:.4f}, "
                                       f"{p.info['seconds']:.0f} s")
        if p.stage == "epoch" else None,
        question_vectors=train_vectors, threads=args.threads)
    stage("training (labels + epochs)", started)

    started = time.perf_counter()
    linking = InMemoryLinking(kg)
    prior = MentionPrior.fit([(q.text, q.topic_entities) for q in questions if q.split == "train"], linking, None)
    stage("mention prior (all train-split questions)", started)

    checkpoint = save_checkpoint(args.checkpoint, model, config, embedder.name, prior)
    import torch

    torch.set_num_threads(1)  # per-question work is small: one thread (as for BLAS above)
    # The masked question is embedded per call, past the embedder's text cache (MetaQA's masked questions are
    # templates, so a cache would make this step free and the latency flattering).
    uncached = lambda texts: np.stack([embedder.embed_query(text).vector for text in texts])
    retriever = LearnedRetriever.from_checkpoint(checkpoint, kg, linking=linking, embed=uncached)
    started = time.perf_counter()
    results: dict = {"learned": evaluate_learned(retriever, val, val_vectors)}
    stage("learned evaluation", started)

    static_per_hop = args.val_per_hop if args.static_per_hop is None else args.static_per_hop
    if static_per_hop > 0:
        chosen = [i for hop in HOPS for i in [j for j, q in enumerate(val) if hop_of(q) == hop][:static_per_hop]]
        started = time.perf_counter()
        results["static"] = evaluate_static(kg, [val[i] for i in chosen], val_vectors[chosen])
        stage("static evaluation", started)

    if args.neo4j_linking:
        started = time.perf_counter()
        results["neo4j_linking"] = neo4j_linking(kg, val, val_vectors, prior, config, console)
        stage("linking through Neo4j", started)

    table(results, console)
    report = {
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform(), "python": platform.python_version(),
                    "threads": {"blas": os.environ.get("OPENBLAS_NUM_THREADS"), "torch_training": args.threads,
                                "torch_inference": 1},
                    "note": "2-core machine shared with other processes; latencies are wall-clock"},
        "command": " ".join([Path(sys.executable).name, *sys.argv]),
        "data": str(args.data), "embedder": embedder.name, "checkpoint": str(checkpoint),
        "config": dataclasses.asdict(config), "training": history.to_dict(), "stage_seconds": timings,
        "results": {method: {str(hop): row for hop, row in rows.items()} for method, rows in results.items()},
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2))
    console.log(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Bring-your-own-graph path, end to end: public data loaded only through `gqa ingest triples` + `gqa ingest
questions` (no dataset loader), trained with `gqa train --graph`, measured through the product's own path.

MetaQA as a user graph (graph `metaqa-user` by default)
    `kb.txt` goes in as a triples file; the dev questions are written as a questions TSV with columns id, question
    (brackets kept, as MetaQA writes them), answers, topic_entities (the bracketed entity) and split. The split
    column repeats the MetaQA loader's rule (each hop's dev file 80/20 train/val, `train_test_split` with seed 42,
    recomputed here with `_common.shuffle_split`) and the ids are the loader's ("1hop/dev/12"), so the validation
    sample below is the very sample bench/answers.py draws from the loader-ingested graph `metaqa`: the two paths
    are compared question for question. `gqa train --graph metaqa-user --limit N` trains the learned retriever on N
    training questions (all with --limit 0) and the reader on 6,000. Reported per hop on the validation sample:
    answer in the retrieved subgraph and strict Hit@1 / Hit@1 of the grounded answer (`gqa ask`'s default set-up,
    or --llm-when never for the reader alone), and how often automatic linking (what `gqa ingest questions` does
    for rows without topic entities) finds the bracketed topic entity.

WebQSP evidence as a user graph (graph `webqsp-user`)
    The union of the evidence file's triples as a triples file; its 1,628 test questions as JSON lines with their
    `q_entity` topics, split `--split train=0.6,val=0.2,test=0.2 --seed 42` at ingest. The learned retriever
    (`gqa train-retriever --graph webqsp-user`) trains on the train part; static (the paper's PCST) vs learned
    answer-in-subgraph on the test part. Not comparable to the paper's protocol (which trains on WebQSP's own
    train split and tests on all test questions): it compares the two retrievers with each other only.

    python bench/usergraph.py [--limit 6000] [--per-hop 300] [--llm-when auto] [--skip-metaqa] [--skip-webqsp]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from pathlib import Path

import numpy as np
from _common import REPO, command, gqa, machine
from answers import sample  # noqa: E402  the very sample bench/answers.py draws: same qids, same questions

DATA = REPO.parent / "shared" / "data"
BRACKETS = re.compile(r"\[([^\]]*)\]")


# -- MetaQA ---------------------------------------------------------------------------------------------------

def metaqa_questions_file(work: Path) -> Path:
    from gretriever_neo4j.loaders._common import shuffle_split

    path = work / "metaqa_questions.tsv"
    out = ["id\tquestion\tanswers\ttopic_entities\tsplit"]
    for hop in (1, 2, 3):
        lines = (DATA / "metaqa" / f"qa_dev_{hop}hop.txt").read_text(encoding="utf-8").split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        splits = ["train"] * len(lines)
        for position in shuffle_split(len(lines), 0.2, 42)[1]:
            splits[position] = "val"
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            question, answers = line.split("\t")
            topics = "|".join(dict.fromkeys(m.strip() for m in BRACKETS.findall(question)))
            out.append(f"{hop}hop/dev/{number}\t{question}\t{answers}\t{topics}\t{splits[number - 1]}")
    path.write_text("\n".join(out) + "\n", encoding="utf-8")
    return path


def run_metaqa(args, store, embedder, work: Path) -> dict:
    graph = args.metaqa_graph
    kb = DATA / "metaqa" / "kb.txt"
    gqa("ingest", "triples", "--source", str(kb), "--graph", graph, "--sync")  # a second run writes nothing
    ingested = json.loads(gqa("ingest", "questions", "--graph", graph, "--source", str(metaqa_questions_file(work)),
                              "--json")[0])
    train_args = ["train", "--graph", graph] + (["--limit", str(args.limit)] if args.limit else [])
    started = time.perf_counter()
    gqa(*train_args)
    train_seconds = time.perf_counter() - started
    questions = sample(store, args.per_hop, args.seed, graph)
    rows = answer_rows(store, embedder, graph, questions, args.llm_when)
    linking = link_rows(store, embedder, graph, questions)
    return {"graph": graph, "ingest_questions": ingested, "train_seconds": train_seconds,
            "retriever_questions": args.limit or "all", "llm_when": args.llm_when,
            "by_hop": {hop: {**summarize([r for r in rows if r["hop"] == hop]),
                             "topic_linked": float(np.mean([l for l, q in zip(linking, questions) if q["hop"] == hop]))}
                       for hop in (1, 2, 3)}}


def answer_rows(store, embedder, graph: str, questions: list[dict], llm_when: str) -> list[dict]:
    from gretriever_neo4j import metrics
    from gretriever_neo4j.answering.answering import Answering
    from gretriever_neo4j.qa.batch import answer_in_subgraph
    from gretriever_neo4j.qa.qa import QA

    qa = QA(store, embedder, answering=Answering(embedder, llm_when=llm_when))
    rows = []
    for q in questions:
        asked = qa.ask(q["text"], graph=graph, retriever="auto", record=False)
        text = asked.answer.text
        rows.append({"hop": q["hop"], "in_subgraph": answer_in_subgraph(asked.retrieval, q["answers"]),
                     "strict_hit_at_1": metrics.strict_hit_at_1(text, q["answers"]),
                     "hit_at_1": metrics.hit_at_1(text, q["answers"]), "retriever": asked.retriever})
    return rows


def link_rows(store, embedder, graph: str, questions: list[dict]) -> list[bool]:
    from gretriever_neo4j.ingest.questions import _link
    from gretriever_neo4j.records import QuestionRecord

    records = [QuestionRecord(qid=q["qid"], dataset=graph, text=q["text"], answers=q["answers"], split="val",
                              graph_id=graph) for q in questions]
    return [bool(set(linked) & set(q["topic_entities"]))
            for (linked, _), q in zip(_link(store, embedder, graph, records, None), questions)]


def summarize(rows: list[dict]) -> dict:
    mean = lambda key: float(np.mean([float(r[key]) for r in rows])) if rows else None
    return {"questions": len(rows), "answer_in_subgraph": mean("in_subgraph"),
            "strict_hit_at_1": mean("strict_hit_at_1"), "hit_at_1": mean("hit_at_1")}


# -- WebQSP ---------------------------------------------------------------------------------------------------

def webqsp_files(work: Path) -> tuple[Path, Path]:
    triples, questions, seen = [], [], set()
    for line in (DATA / "webqsp" / "webqsp_evidence_test.jsonl").read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        for triple in row["graph"]:
            if tuple(triple) not in seen and all("\t" not in part and part.strip() for part in triple):
                seen.add(tuple(triple))
                triples.append("\t".join(part.strip() for part in triple))
        questions.append(json.dumps({"id": row["id"], "question": row["question"], "answers": row["answer"],
                                     "topic_entities": row["q_entity"]}))
    kb, qs = work / "webqsp_kb.tsv", work / "webqsp_questions.jsonl"
    kb.write_text("\n".join(triples) + "\n", encoding="utf-8")
    qs.write_text("\n".join(questions) + "\n", encoding="utf-8")
    return kb, qs


def run_webqsp(args, store, embedder, work: Path) -> dict:
    from gretriever_neo4j.qa.batch import answer_in_subgraph
    from gretriever_neo4j.qa.qa import QA

    graph = args.webqsp_graph
    kb, questions_file = webqsp_files(work)
    gqa("ingest", "triples", "--source", str(kb), "--graph", graph, "--sync")
    ingested = json.loads(gqa("ingest", "questions", "--graph", graph, "--source", str(questions_file), "--split",
                              "train=0.6,val=0.2,test=0.2", "--seed", "42", "--sync", "--json")[0])
    gqa("train-retriever", "--graph", graph)
    test = store.questions(graph, "test")
    qa = QA(store, embedder)
    out = {"graph": graph, "ingest_questions": ingested, "split": "train=0.6,val=0.2,test=0.2 seed 42"}
    for kind in ("static", "learned"):
        hits, edges, started = [], [], time.perf_counter()
        for q in test:
            retrieval = qa.retrieve(q["text"], graph=graph, retriever=kind, record=False)
            hits.append(answer_in_subgraph(retrieval, q["answers"]))
            edges.append(len(retrieval.result.subgraph.edges))
        out[kind] = {"questions": len(test), "answer_in_subgraph": float(np.mean(hits)) if hits else None,
                     "median_edges": float(np.median(edges)) if edges else None,
                     "seconds": time.perf_counter() - started}
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--metaqa-graph", default="metaqa-user")
    parser.add_argument("--webqsp-graph", default="webqsp-user")
    parser.add_argument("--limit", type=int, default=6000, help="training questions of the learned retriever "
                        "(0: all 31k; the 2 shared cores make that ~20 min)")
    parser.add_argument("--per-hop", type=int, default=300)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--llm-when", default="auto", choices=("auto", "always", "never"))
    parser.add_argument("--skip-metaqa", action="store_true")
    parser.add_argument("--skip-webqsp", action="store_true")
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "usergraph.json")
    args = parser.parse_args()
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    os.environ["GQA_SERVER"] = "off"

    from rich.console import Console
    from rich.table import Table

    from gretriever_neo4j.embedding.embedder import Embedder
    from gretriever_neo4j.settings import Neo4jSettings, gqa_home
    from gretriever_neo4j.store.graph_store import connected

    console = Console(width=160)
    work = gqa_home() / "cache" / "bench_usergraph"
    work.mkdir(parents=True, exist_ok=True)
    embedder = Embedder()
    results: dict = {"machine": machine(), "command": command()}
    with connected(Neo4jSettings.from_env()) as store:
        if not args.skip_metaqa:
            results["metaqa"] = run_metaqa(args, store, embedder, work)
            write(args.out, results)
        if not args.skip_webqsp:
            results["webqsp"] = run_webqsp(args, store, embedder, work)
            write(args.out, results)
    fmt = lambda v: "-" if v is None else f"{100 * v:.1f}"
    if "metaqa" in results:
        m = results["metaqa"]
        table = Table(title=f"MetaQA val through ingest triples + ingest questions (graph {m['graph']}; retriever "
                            f"on {m['retriever_questions']} questions; --llm-when {m['llm_when']})")
        for column in ("hop", "n", "answer in subgraph", "strict Hit@1", "Hit@1", "topic linked automatically"):
            table.add_column(column, justify="right")
        for hop, s in m["by_hop"].items():
            table.add_row(str(hop), str(s["questions"]), fmt(s["answer_in_subgraph"]), fmt(s["strict_hit_at_1"]),
                          fmt(s["hit_at_1"]), fmt(s["topic_linked"]))
        console.print(table)
    if "webqsp" in results:
        w = results["webqsp"]
        table = Table(title=f"WebQSP evidence, seeded split ({w['split']}): test part (not the paper's protocol)")
        for column in ("retriever", "n", "answer in subgraph", "median edges", "seconds"):
            table.add_column(column, justify="right")
        for kind in ("static", "learned"):
            s = w[kind]
            table.add_row(kind, str(s["questions"]), fmt(s["answer_in_subgraph"]), f"{s['median_edges']:.0f}",
                          f"{s['seconds']:.0f}")
        console.print(table)
    console.print(f"wrote {args.out}")
    return 0


def write(path: Path, results: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(results, indent=1, default=str))


if __name__ == "__main__":
    sys.exit(main())

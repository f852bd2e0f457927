"""Many questions at once (`gqa ask --questions FILE`): one JSON line per question, scores when gold answers
are given. The output file is written beside its destination and renamed into place when every question has
been asked, so an interrupted run leaves no half-written file where the results belong."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from gretriever_neo4j import metrics
from gretriever_neo4j.errors import GqaError
from gretriever_neo4j.progress import OnProgress, notify
from gretriever_neo4j.qa.questions_file import QuestionLine


def answer_in_subgraph(retrieval, answers: list[str]) -> bool:
    wanted = {metrics.normalize(a) for a in answers}
    sub = retrieval.result.subgraph
    texts = [retrieval.result.candidate.node_texts[i] for i in sub.node_indices]
    return any(metrics.normalize(t) in wanted for t in list(sub.node_keys) + texts)


def row_for(line: QuestionLine, asked=None, error: str | None = None, seconds: float = 0.0) -> dict[str, Any]:
    row: dict[str, Any] = {"line": line.line, "question": line.question, "gold": line.answers}
    if error is not None:
        row.update({"error": error, "answer": None})
    else:
        retrieval, answer = asked.retrieval, asked.answer
        row.update({
            "answer": None if answer is None else answer.text,
            "answer_nodes": [] if answer is None else [node.__dict__ for node in answer.nodes],
            "mode": None if answer is None else answer.mode,
            "confidence": None if answer is None else answer.confidence,
            "unsure": False if answer is None else answer.unsure,
            "sure": False if answer is None else answer.sure,
            "retrieval_id": retrieval.id, "graph": retrieval.graph, "retriever": asked.retriever,
            "held": retrieval.held,
            "models": {} if answer is None else answer.models,
            "citations": None if answer is None or answer.citations is None else {
                "nodes": list(answer.citations.cited_nodes), "edges": [list(e) for e in answer.citations.cited_edges],
                "all_valid": answer.citations.all_valid},
            "timings_ms": {"retrieval": retrieval.timings_ms.get("total", 0.0),
                           "answer": 0.0 if answer is None else answer.seconds * 1000, "total": seconds * 1000},
        })
        if line.answers is not None:
            row["answer_in_subgraph"] = answer_in_subgraph(retrieval, line.answers)
    if line.answers is not None and row.get("answer") is not None:
        f1, _, _ = metrics.f1_precision_recall(row["answer"], line.answers)
        row["scores"] = {"hit_at_1": metrics.hit_at_1(row["answer"], line.answers),
                         "strict_hit_at_1": metrics.strict_hit_at_1(row["answer"], line.answers), "f1": f1}
    elif line.answers is not None:
        row["scores"] = {"hit_at_1": 0.0, "strict_hit_at_1": 0.0, "f1": 0.0}
    return row


def summarize(rows: list[dict[str, Any]]) -> dict[str, Any]:
    scored = [r for r in rows if "scores" in r]
    timed = [r["timings_ms"]["total"] for r in rows if "timings_ms" in r]
    cited = [r["citations"]["all_valid"] for r in rows if r.get("citations")]
    mean = lambda values: float(np.mean(values)) if values else None
    return {
        "questions": len(rows), "errors": sum(1 for r in rows if "error" in r), "scored": len(scored),
        "held_in_memory": sum(1 for r in rows if r.get("held")),
        "hit_at_1": mean([r["scores"]["hit_at_1"] for r in scored]),
        "strict_hit_at_1": mean([r["scores"]["strict_hit_at_1"] for r in scored]),
        "f1": mean([r["scores"]["f1"] for r in scored]),
        "answer_in_subgraph": mean([float(r["answer_in_subgraph"]) for r in scored if "answer_in_subgraph" in r]),
        "citations_all_valid": mean([float(c) for c in cited]),
        "ms_p50": float(np.percentile(timed, 50)) if timed else None,
        "ms_p95": float(np.percentile(timed, 95)) if timed else None,
    }


def ask_many(qa, lines: list[QuestionLine], out: Path | None, *, options: dict,
             on_progress: OnProgress | None = None) -> dict:
    """Ask every line (`options`: `QA.ask`'s keywords); one JSON row per question to `out` (or stdout), written
    as it is answered. Returns `summarize` of the rows."""
    partial = None if out is None else out.with_name(f".{out.name}.partial")
    sink = sys.stdout if partial is None else open(partial, "w", encoding="utf-8")
    rows: list[dict[str, Any]] = []
    try:
        for done, line in enumerate(lines, 1):
            started = time.perf_counter()
            try:
                asked = qa.ask(line.question, **options)
                row = row_for(line, asked, seconds=time.perf_counter() - started)
            except GqaError as error:
                row = row_for(line, error=str(error))
            rows.append(row)
            sink.write(json.dumps(row, default=str) + "\n")
            sink.flush()
            notify(on_progress, "ask", done, len(lines))
        if partial is not None:
            sink.close()
            partial.replace(out)
    finally:
        if partial is not None and not sink.closed:
            sink.close()
            partial.unlink(missing_ok=True)
    return summarize(rows)

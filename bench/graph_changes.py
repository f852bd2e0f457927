"""A graph that changes under a running `gqa serve`: are all answers from a whole graph, and is none a 5xx?

Clients ask in a loop while three changes run through the CLI, one after the other: `gqa ingest triples --sync`
that moves `--change` of the graph's edges to new tails, `gqa drop --yes`, and the graph's own ingest again
(`--ingest`). Written to bench/results/graph_changes.json: replies by phase and status, the answers during the
sync that are neither the answer before it nor the one after it, 200s after the first 404 of the drop, and the
first answer after the re-ingest (the original graph's again), with the command and the machine.

    python bench/graph_changes.py --graph metaqa --ingest "metaqa --source ../shared/data/metaqa" [--preload]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shlex
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

import httpx

from gretriever_neo4j.settings import Neo4jSettings
from gretriever_neo4j.store.graph_store import connected

GQA = [sys.executable, "-m", "gretriever_neo4j"]


def same(a: str | None, b: str | None) -> bool:
    """One answer, whatever the order of its items: the cached and the Neo4j path order equally rated answers
    (a film's tags) differently, and which path answers is not what this measures."""
    return (a is None) == (b is None) and (a is None or set(a.split("|")) == set(b.split("|")))


def ask(http: httpx.Client, url: str, graph: str, question: str) -> dict:
    sent = time.monotonic()
    try:
        response = http.post(f"{url}/api/ask", json={"question": question, "graph": graph, "llm_when": "never"})
        status, answer = response.status_code, (response.json().get("answer") or {}).get("text")
    except httpx.HTTPError as error:
        status, answer = f"{type(error).__name__}", None
    return {"question": question, "sent": sent, "received": time.monotonic(), "status": status, "answer": answer}


def under_load(url: str, graph: str, questions: list[str], clients: int,
               command: list[str]) -> tuple[list, float, float]:
    """Replies of `clients` asking in a loop while `command` runs (and 1 s after); (replies, start, end)."""
    replies, stop = [], threading.Event()

    def client(k: int) -> None:
        with httpx.Client(timeout=120) as http:
            while not stop.is_set():
                replies.append(ask(http, url, graph, questions[k % len(questions)]))
                k += clients

    threads = [threading.Thread(target=client, args=(k,), daemon=True) for k in range(clients)]
    for thread in threads:
        thread.start()
    time.sleep(1)
    started = time.monotonic()
    done = subprocess.run(command, capture_output=True, text=True)
    ended = time.monotonic()
    if done.returncode:
        raise SystemExit(f"{shlex.join(command)} failed: {done.stderr[-2000:]}")
    time.sleep(1)
    stop.set()
    for thread in threads:
        thread.join()
    return replies, started, ended


def answers(url: str, graph: str, questions: list[str]) -> dict[str, str | None]:
    with httpx.Client(timeout=120) as http:
        return {q: ask(http, url, graph, q)["answer"] for q in questions}


def held(url: str, store, graph: str, question: str, timeout: float = 900) -> float:
    """Seconds until the server holds the graph at its current version (a question starts the load)."""
    started, version = time.monotonic(), store.graph_version(graph)
    with httpx.Client(timeout=120) as http:
        while time.monotonic() - started < timeout:
            ask(http, url, graph, question)
            cached = http.get(f"{url}/ready").json().get("graphs_in_memory", {}).get(graph)
            if cached is not None and cached["version"] == version:
                return time.monotonic() - started
            time.sleep(0.5)
    raise SystemExit(f"the server did not cache {graph} at version {version} in {timeout:.0f} s")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def statuses(replies: list[dict]) -> dict[str, int]:
    return {str(k): v for k, v in sorted(Counter(r["status"] for r in replies).items(), key=str)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--graph", required=True)
    parser.add_argument("--ingest", required=True, help="the graph's own `gqa ingest` arguments, for the re-ingest")
    parser.add_argument("--change", type=float, default=0.1, help="share of the edges the sync moves")
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--questions", type=int, default=40)
    parser.add_argument("--preload", action="store_true")
    parser.add_argument("--serve-args", default="", help="more `gqa serve` arguments, e.g. '--llm tiny-random-llama'")
    parser.add_argument("--out", default=str(Path(__file__).parent / "results" / "graph_changes.json"))
    args = parser.parse_args()
    rng = random.Random(0)
    settings = Neo4jSettings.from_env()
    work = Path(tempfile.mkdtemp(prefix="gqa-graph-changes-"))
    with connected(settings) as store:
        if store.graph_info(args.graph) is None:
            subprocess.run([*GQA, "ingest", *shlex.split(args.ingest)], check=True)
        triples = [(r["src"], r["text"], r["dst"]) for r in store.kg_triples(args.graph)]
        moved = set(rng.sample(range(len(triples)), int(args.change * len(triples))))
        synced = [(h, r, f"{t} (moved)" if i in moved else t) for i, (h, r, t) in enumerate(triples)]
        (work / "synced.tsv").write_text("".join(f"{h}\t{r}\t{t}\n" for h, r, t in synced))
        heads = sorted({(triples[i][0], triples[i][1]) for i in moved})
        picked = rng.sample(heads, min(len(heads), args.questions))
        questions = [f"what is the {r.replace('_', ' ')} of [{h}]" for h, r in picked]

        port = free_port()
        url = f"http://127.0.0.1:{port}"
        serve = [*GQA, "serve", "--port", str(port), "--max-queue", str(2 * args.clients),
                 *(["--preload", args.graph] if args.preload else []), *shlex.split(args.serve_args)]
        server = subprocess.Popen(serve, stdout=subprocess.DEVNULL, stderr=open(work / "serve.log", "w"))
        try:
            deadline = time.monotonic() + 300
            while time.monotonic() < deadline:
                try:
                    if httpx.get(f"{url}/health", timeout=1).status_code == 200:
                        break
                except httpx.HTTPError:
                    time.sleep(0.5)
            result: dict = {"load_s": round(held(url, store, args.graph, questions[0]), 1)}
            before = answers(url, args.graph, questions)

            sync = [*GQA, "ingest", "triples", "--source", str(work / "synced.tsv"), "--graph", args.graph,
                    "--sync"]
            replies, started, ended = under_load(url, args.graph, questions, args.clients, sync)
            reload_s = held(url, store, args.graph, questions[0])
            after = answers(url, args.graph, questions)  # from the copy of the new version where one is held
            # While the sync runs, the answer before it or after it, nothing between; once it has completed (and
            # until the copy is reloaded, through Neo4j) the new graph's, whatever the path
            during = [r for r in replies if r["status"] == 200 and r["received"] <= ended]
            mixed = [r for r in during
                     if not (same(r["answer"], before[r["question"]]) or same(r["answer"], after[r["question"]]))]
            later = [r for r in replies if r["status"] == 200 and r["sent"] > ended]
            old_after_end = [r for r in later if same(r["answer"], before[r["question"]])
                             and not same(r["answer"], after[r["question"]])]
            result["sync"] = {"replies": statuses(replies), "seconds": round(ended - started, 1),
                              "answers_moved": sum(not same(before[q], after[q]) for q in questions),
                              "answered_during": len(during),
                              "neither_before_nor_after": len(mixed),
                              "examples": [(r["question"], r["answer"]) for r in mixed[:5]],
                              "answered_after_it_completed": len(later),
                              "old_answers_after_it_completed": len(old_after_end),
                              "reload_s": round(reload_s, 1)}

            drop = [*GQA, "drop", args.graph, "--yes"]
            replies, started, ended = under_load(url, args.graph, questions, args.clients, drop)
            first_404 = min((r["received"] for r in replies if r["status"] == 404), default=None)
            result["drop"] = {"replies": statuses(replies), "seconds": round(ended - started, 1),
                              "answers_other_than_before": sum(
                                  r["status"] == 200 and not same(r["answer"], after[r["question"]]) for r in replies),
                              "200_after_first_404": sum(r["status"] == 200 and r["sent"] > first_404
                                                         for r in replies) if first_404 else 0,
                              "404_before_drop_began": sum(r["status"] == 404 and r["received"] < started
                                                           for r in replies)}

            again = [*GQA, "ingest", *shlex.split(args.ingest)]
            replies, started, ended = under_load(url, args.graph, questions, args.clients, again)
            with httpx.Client(timeout=120) as http:
                nxt = ask(http, url, args.graph, questions[0])
            result["reingest"] = {"replies": statuses(replies), "seconds": round(ended - started, 1),
                                  "next_status": nxt["status"],
                                  "next_is_the_new_graphs": same(nxt["answer"], before[questions[0]]),
                                  "200s_after_it_completed_other_than_the_new_graphs": sum(
                                      r["status"] == 200 and r["sent"] > ended
                                      and not same(r["answer"], before[r["question"]]) for r in replies)}
        finally:
            server.terminate()
            server.wait(timeout=30)
    log = (work / "serve.log").read_text()
    result["server_log"] = {"tracebacks": log.count("Traceback"), "internal_errors": log.count("internal error")}
    result["command"] = shlex.join([Path(sys.executable).name, *sys.argv])
    result["machine"] = {"platform": platform.platform(), "cpus": os.cpu_count(), "python": platform.python_version()}
    result["graph"] = {"name": args.graph, "edges": len(triples), "moved": len(moved), "questions": len(questions),
                       "clients": args.clients, "preload": args.preload}
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()

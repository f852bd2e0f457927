"""A soak of `gqa serve`: mixed ask / retrieve / stream from several clients for a long time, Neo4j restarted once
in the middle. Counts errors (the restart window's 503s apart), follows the server's RSS, and gives p50/p95 per
minute; writes JSON and a PNG plot.

The run uses a Neo4j of its own (the bundled server's jars, a data folder under --home, other ports), so restarting
it disturbs no other work on the machine: the WebQSP sample is ingested there, `gqa serve --preload webqsp` runs
against it, and the clients ask the sample's questions.

    python bench/soak.py [--minutes 30] [--clients 8] [--out bench/results/soak.json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import numpy as np
from _common import REPO, command

SAMPLE = REPO / "gretriever_neo4j" / "samples" / "webqsp_sample.jsonl"
sys.path.insert(0, str(REPO))

from gretriever_neo4j import server as neo4j_server  # noqa: E402


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rss_mib(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


def questions() -> list[str]:
    return [json.loads(line)["question"] for line in SAMPLE.read_text().splitlines() if line.strip()]


class Soak:
    def __init__(self, args):
        self.args = args
        self.layout = neo4j_server.ServerLayout.at(args.home, jar_cache=neo4j_server.default_layout().jar_cache)
        self.bolt, self.http = free_port(), free_port()
        self.events: list[dict] = []  # one per request
        self.lock = threading.Lock()
        self.restart: dict[str, float] = {}
        self.rss: list[tuple[float, float]] = []
        self.stop = threading.Event()

    # -- set-up ----------------------------------------------------------------------------------------
    def start_neo4j(self) -> None:
        neo4j_server.start(self.layout, heap="1g", pagecache="512m", bolt_port=self.bolt, http_port=self.http)

    def env(self) -> dict[str, str]:
        password = self.layout.password_file.read_text().strip()
        return {**os.environ, "NEO4J_URI": f"bolt://127.0.0.1:{self.bolt}", "NEO4J_PASSWORD": password,
                "GQA_SERVER": "off"}

    def ingest(self) -> None:
        done = subprocess.run([sys.executable, "-m", "gretriever_neo4j", "ingest", "webqsp", "--source",
                               str(SAMPLE)], env=self.env(), capture_output=True, text=True, timeout=900)
        if done.returncode != 0:
            raise SystemExit(f"ingest failed: {done.stderr[-2000:]}")

    def serve(self) -> subprocess.Popen:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = open(Path(self.args.home) / "serve.log", "w")
        server = subprocess.Popen([sys.executable, "-m", "gretriever_neo4j", "serve", "--port", str(self.port),
                                   "--preload", "webqsp", "--max-queue", str(self.args.clients)],
                                  env=self.env(), stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{self.url}/ready", timeout=2).status_code == 200:
                    return server
            except httpx.HTTPError:
                pass
            time.sleep(1)
        raise SystemExit("the server did not become ready")

    # -- load ------------------------------------------------------------------------------------------
    def client(self, seed: int, asked: list[str]) -> None:
        rng = random.Random(seed)
        with httpx.Client(timeout=300) as http:
            while not self.stop.is_set():
                question = rng.choice(asked)
                kind = rng.choices(["ask", "retrieve", "stream"], weights=[4, 4, 2])[0]
                body = {"question": question, "graph": "webqsp"}
                began = time.time()
                status, detail = 0, ""
                try:
                    if kind == "stream":
                        with http.stream("POST", f"{self.url}/api/ask/stream", json=body) as response:
                            status = response.status_code
                            for line in response.iter_lines():
                                if line.startswith("event: error"):
                                    status = -1
                                if status == -1 and line.startswith("data:"):
                                    status = json.loads(line[5:]).get("status", 500)
                                    detail = line[5:][:200]
                    else:
                        response = http.post(f"{self.url}/api/{kind}", json=body)
                        status = response.status_code
                        if status != 200:
                            detail = response.text[:200]
                except httpx.HTTPError as error:
                    status, detail = 599, f"{error.__class__.__name__}: {error}"[:200]
                with self.lock:
                    self.events.append({"t": began, "kind": kind, "status": status,
                                        "ms": (time.time() - began) * 1000, "detail": detail})
                if status == 429:
                    time.sleep(0.2)

    def restart_neo4j(self) -> None:
        self.restart["stop"] = time.time()
        neo4j_server.stop(self.layout)
        time.sleep(self.args.down_s)
        self.restart["start"] = time.time()
        self.start_neo4j()
        self.restart["up"] = time.time()

    def run(self) -> dict:
        Path(self.args.home).mkdir(parents=True, exist_ok=True)
        self.start_neo4j()
        try:
            self.ingest()
            server = self.serve()
            try:
                return self.load(server)
            finally:
                server.terminate()
                server.wait(timeout=30)
        finally:
            neo4j_server.stop(self.layout)

    def load(self, server: subprocess.Popen) -> dict:
        asked = questions()
        threads = [threading.Thread(target=self.client, args=(i, asked), daemon=True)
                   for i in range(self.args.clients)]
        began = time.time()
        for thread in threads:
            thread.start()
        total = self.args.minutes * 60
        restarted = False
        while time.time() - began < total:
            self.rss.append((time.time() - began, rss_mib(server.pid)))
            if not restarted and time.time() - began >= total / 2:
                restarted = True
                self.restart_neo4j()
            if server.poll() is not None:
                raise SystemExit("the server died")
            time.sleep(10)
        self.stop.set()
        for thread in threads:
            thread.join(timeout=300)
        self.rss.append((time.time() - began, rss_mib(server.pid)))
        return self.report(began)

    # -- results ---------------------------------------------------------------------------------------
    def report(self, began: float) -> dict:
        window = (self.restart["stop"], self.restart["up"] + self.args.grace_s)
        in_window = lambda e: window[0] <= e["t"] <= window[1] or window[0] <= e["t"] + e["ms"] / 1000 <= window[1]
        errors = [e for e in self.events if e["status"] not in (200, 429)]
        restart_503 = [e for e in errors if e["status"] == 503 and in_window(e)]
        other = [e for e in errors if e not in restart_503]
        minutes = []
        for minute in range(int(self.args.minutes)):
            rows = [e for e in self.events if minute * 60 <= e["t"] - began < (minute + 1) * 60 and e["status"] == 200]
            entry = {"minute": minute + 1, "requests": len(rows)}
            for kind in ("ask", "retrieve", "stream"):
                ms = [e["ms"] for e in rows if e["kind"] == kind]
                entry[kind] = {"n": len(ms), "p50_ms": float(np.percentile(ms, 50)) if ms else None,
                               "p95_ms": float(np.percentile(ms, 95)) if ms else None}
            minutes.append(entry)
        warm = [r for t, r in self.rss if t >= self.args.warm_s]
        rss_start, rss_end = (warm[0], warm[-1]) if warm else (float("nan"), float("nan"))
        return {
            "command": command(),
            "machine": f"{platform.machine()}, {os.cpu_count()} cores, {platform.python_version()}",
            "minutes": self.args.minutes, "clients": self.args.clients,
            "requests": len(self.events), "ok": sum(e["status"] == 200 for e in self.events),
            "busy_429": sum(e["status"] == 429 for e in self.events),
            "restart": {"stop_s": self.restart["stop"] - began, "up_s": self.restart["up"] - began,
                        "grace_s": self.args.grace_s, "errors_503": len(restart_503)},
            "errors_outside_restart": len(other),
            "error_samples": [{k: e[k] for k in ("kind", "status", "detail")} for e in other[:20]],
            "rss_mib": {"start_warm": rss_start, "end": rss_end,
                        "change": (rss_end - rss_start) / rss_start if rss_start else None,
                        "warm_after_s": self.args.warm_s, "series": self.rss},
            "per_minute": minutes,
        }


def plot(result: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (top, bottom) = plt.subplots(2, 1, figsize=(10, 7), sharex=True)
    x = [m["minute"] - 0.5 for m in result["per_minute"]]  # each minute at its middle
    for kind, colour in (("ask", "tab:blue"), ("retrieve", "tab:green"), ("stream", "tab:purple")):
        top.plot(x, [m[kind]["p50_ms"] for m in result["per_minute"]], color=colour, label=f"{kind} p50")
        top.plot(x, [m[kind]["p95_ms"] for m in result["per_minute"]], color=colour, linestyle="--",
                 label=f"{kind} p95")
    restart = result["restart"]
    for axis in (top, bottom):
        axis.axvspan(restart["stop_s"] / 60, (restart["up_s"] + restart["grace_s"]) / 60, color="tab:red",
                     alpha=0.15, label="Neo4j restart" if axis is top else None)
    top.set_yscale("log")
    top.set_ylabel("latency per minute (ms)")
    top.legend(ncol=4, fontsize=8)
    series = result["rss_mib"]["series"]
    bottom.plot([t / 60 for t, _ in series], [r for _, r in series], color="black")
    bottom.set_ylabel("server RSS (MiB)")
    bottom.set_xlabel("minute")
    fig.suptitle(f"gqa serve soak: {result['clients']} clients, {result['requests']:,} requests, "
                 f"{result['errors_outside_restart']} errors outside the restart window")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--minutes", type=float, default=30)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--down-s", type=float, default=10, help="how long Neo4j stays down")
    parser.add_argument("--grace-s", type=float, default=15, help="503s this long after Neo4j is up count as "
                        "the restart's")
    parser.add_argument("--warm-s", type=float, default=120, help="RSS is compared from this point on")
    parser.add_argument("--home", default="/tmp/gqa-soak", help="the soak's own Neo4j data folder")
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "soak.json")
    args = parser.parse_args()
    result = Soak(args).run()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1))
    plot(result, args.out.with_suffix(".png"))
    print(f"{'requests':<28}{result['requests']:>10,}")
    print(f"{'ok / 429':<28}{result['ok']:>10,} / {result['busy_429']:,}")
    print(f"{'503 in the restart window':<28}{result['restart']['errors_503']:>10}")
    print(f"{'errors outside it':<28}{result['errors_outside_restart']:>10}")
    rss = result["rss_mib"]
    print(f"{'RSS warm start / end MiB':<28}{rss['start_warm']:>10.0f} / {rss['end']:.0f} ({rss['change']:+.1%})")
    print("minute  requests  ask p50/p95  retrieve p50/p95  stream p50/p95 (ms)")
    fmt = lambda v: "-" if v is None else f"{v:.0f}"
    for m in result["per_minute"]:
        print(f"{m['minute']:>6}  {m['requests']:>8}  " + "  ".join(
            f"{fmt(m[k]['p50_ms'])}/{fmt(m[k]['p95_ms'])}" for k in ("ask", "retrieve", "stream")))
    print(f"wrote {args.out} and {args.out.with_suffix('.png')}")


if __name__ == "__main__":
    main()

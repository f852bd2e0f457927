"""A general reader (fitted weights and the walk matcher, written by
`python -m train.general_reader matcher --out gretriever_neo4j/reader/general`) against the hand-set weights alone
(`gqa ask --reader rules`), on the invented graphs nobody here has read (sets with `keep_misses: false`), through the
CLI as a user runs it (`fictional_kgs.py --no-ingest`: the graphs must be ingested, e.g. by a plain
`fictional_kgs.py --set NAME` run). Strict Hit@1 per graph and the mean over all, p50 ms; no miss is written down.

    python bench/general_reader.py [--sets eighth,held-out,held-out-3] [--reuse DIR]
        [--out bench/results/general_reader.json]

`--reuse DIR`: combine the `fictional_kgs.py` outputs already in DIR (`bench_<set>_<rules|default>.json`). With no
general reader in the package folder, "default" is the hand-set weights too. The results in
`bench/results/general_reader.json` were measured at commit e48d552, whose package held one (docs/learned-reader.md).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

from _common import REPO, RESULTS, command, machine, write_json

READERS = {"rules": ["--reader", "rules"], "default": []}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sets", default="eighth,held-out,held-out-3")
    parser.add_argument("--reuse", type=Path, default=None)
    parser.add_argument("--out", type=Path, default=RESULTS / "general_reader.json")
    args = parser.parse_args()
    folder = args.reuse or RESULTS / "general_reader_runs"
    folder.mkdir(parents=True, exist_ok=True)
    rows: dict[str, dict] = {}
    for name in args.sets.split(","):
        for reader, extra in READERS.items():
            path = folder / f"bench_{name}_{reader}.json"
            if args.reuse is None:
                subprocess.run([sys.executable, str(REPO / "bench" / "fictional_kgs.py"), "--set", name, "--no-ingest",
                                *extra, "--out", str(path)], check=True)
            for key, result in json.loads(path.read_text())["results"].items():
                graph = key.split("/")[0]
                rows.setdefault(graph, {"set": name})[reader] = {
                    k: result[k] for k in ("questions", "strict_hit_at_1", "hit_at_1", "f1", "answer_in_subgraph",
                                           "ms_p50")}
    mean = {reader: round(sum(r[reader]["strict_hit_at_1"] for r in rows.values()) / len(rows), 4)
            for reader in READERS}
    print(f"{'graph':34} {'rules':>7} {'general':>8}")
    for graph, row in rows.items():
        print(f"{graph:34} {row['rules']['strict_hit_at_1']:7.3f} {row['default']['strict_hit_at_1']:8.3f}")
    print(f"{'mean strict Hit@1':34} {mean['rules']:7.4f} {mean['default']:8.4f}")
    write_json(args.out, {"machine": machine(), "command": command(), "readers": {
        "rules": "gqa ask --reader rules (the hand-set weights alone)",
        "default": "gqa ask (a general reader in gretriever_neo4j/reader/general, where one is)"},
        "graphs": rows, "mean_strict_hit_at_1": mean}, newline=True)
    print(f"written to {args.out}")


if __name__ == "__main__":
    main()

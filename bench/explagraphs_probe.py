"""How far does the graph alone go on ExplaGraphs? G-Retriever's graph encoder with a linear head, no LLM.

Trains `model.probe.GraphProbe` on the 1,659 training graphs, keeps the best validation epoch (553) and scores the
test split (554), for a few settings of the encoder (edge features pooled or not, GNN kind, learning rate). The
best probe's weights are saved for warm-starting G-Retriever (`--save`). Prints a table and writes JSON.

    python bench/explagraphs_probe.py [--threads 1] [--save runs/probe.pt]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))

# name -> (ModelConfig changes, edge_pool, ProbeConfig changes)
SETTINGS = {
    "mean-of-node-texts (no GNN)": ({"use_graph_encoder": False}, False, {}),
    "mean node+edge texts (no GNN)": ({"use_graph_encoder": False}, True, {}),
    "graph-transformer (G-Retriever's)": ({}, False, {}),
    "graph-transformer + edge pool": ({}, True, {}),
    "graph-transformer lr 1e-4": ({}, False, {"lr": 1e-4}),
    "gat": ({"gnn": "gat"}, False, {}),
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--epochs", type=int, default=40)
    parser.add_argument("--settings", default=",".join(SETTINGS), help="comma-separated names from the table")
    parser.add_argument("--save", type=Path, default=REPO / "runs" / "probe.pt",
                        help="the G-Retriever-shaped probe's weights, for --warm-start")
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "explagraphs_probe.json")
    args = parser.parse_args()
    import torch

    torch.set_num_threads(args.threads)
    from explagraphs_data import load_split
    from gretriever_neo4j.model.config import ModelConfig
    from gretriever_neo4j.model.probe import GraphProbe, ProbeConfig, probe_accuracy, train_probe
    from gretriever_neo4j.train.data import LABEL_SETS

    labels = LABEL_SETS["explagraphs"]
    train, val, test = (load_split(s) for s in ("train", "val", "test"))
    results = []
    for name in args.settings.split(","):
        changes, edge_pool, probe_changes = SETTINGS[name]
        config = ModelConfig(**changes)
        torch.manual_seed(0)
        probe = GraphProbe(config, len(labels), edge_pool=edge_pool)
        started = time.perf_counter()
        history = train_probe(probe, train, val, labels, ProbeConfig(epochs=args.epochs, **probe_changes))
        minutes = (time.perf_counter() - started) / 60
        test_acc, test_pred = probe_accuracy(probe, test, labels)
        row = {"setting": name, "model_changes": changes, "edge_pool": edge_pool, "probe": probe_changes,
               "best_epoch": history.best_epoch, "val_accuracy": history.best_val_accuracy,
               "test_accuracy": test_acc, "test_predicted": test_pred,
               "seconds_per_epoch": minutes * 60 / len(history.epochs), "history": history.epochs}
        results.append(row)
        print(f"{name:40s} val {row['val_accuracy']:.3f} test {test_acc:.3f} pred {test_pred} "
              f"best epoch {history.best_epoch} {row['seconds_per_epoch']:.1f}s/epoch", flush=True)
        if name == "graph-transformer (G-Retriever's)" and args.save:
            args.save.parent.mkdir(parents=True, exist_ok=True)
            torch.save({"model_config": config.to_dict(), "edge_pool": edge_pool, "state": probe.state_dict(),
                        "val_accuracy": history.best_val_accuracy, "test_accuracy": test_acc}, args.save)
        _write(args, results)
    print(f"wrote {args.out}")
    return 0


def _write(args, results) -> None:
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"machine": {"platform": platform.platform(), "cpus": os.cpu_count(),
                                                "threads": args.threads},
                                    "command": "python bench/explagraphs_probe.py " + " ".join(sys.argv[1:]),
                                    "gold_test": {"support": 0.588, "counter": 0.412},
                                    "results": results}, indent=2, default=str))


if __name__ == "__main__":
    sys.exit(main())

"""How far does the graph alone go on ExplaGraphs? G-Retriever's graph encoder with a linear head, no LLM.

Trains `model.probe.GraphProbe` on the 1,659 training graphs, keeps the best validation epoch (553) and scores the
test split (554), for a few settings of the encoder (edge features pooled or not, GNN kind, learning rate). The
best probe's weights are saved for warm-starting G-Retriever (`--save`). Prints a table and writes JSON.

    python bench/explagraphs_probe.py [--threads 1] [--save runs/probe.pt]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from _common import REPO, command, machine

# name -> (ModelConfig changes, edge_pool, ProbeConfig changes); "+ arguments" settings also read the MiniLM
# embeddings of argument 1, argument 2 and their product (what the LLM reads besides the graph, as a vector).
SETTINGS = {
    "arguments only (no graph)": ({"use_graph_encoder": False}, False, {"no_graph": True}),
    "arguments only + MLP head": ({"use_graph_encoder": False}, False, {"no_graph": True, "head_hidden": 256}),
    "mean-of-node-texts (no GNN)": ({"use_graph_encoder": False}, False, {}),
    "mean node+edge texts (no GNN)": ({"use_graph_encoder": False}, True, {}),
    "graph-transformer (G-Retriever's)": ({}, False, {}),
    "graph-transformer + edge pool": ({}, True, {}),
    "graph-transformer lr 1e-4": ({}, False, {"lr": 1e-4}),
    "gat": ({"gnn": "gat"}, False, {}),
    "graph-transformer + arguments": ({}, False, {"arguments": True}),
    "graph-transformer + arguments + MLP head": ({}, False, {"arguments": True, "head_hidden": 256}),
    "graph-transformer + edge pool + arguments + MLP head": ({}, True, {"arguments": True, "head_hidden": 256}),
    "graph-transformer + arguments + MLP head + lr 1e-4": ({}, False, {"arguments": True, "head_hidden": 256,
                                                                     "lr": 1e-4}),
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
    from gretriever_neo4j.model.prompts import LABEL_SETS

    labels = LABEL_SETS["explagraphs"]
    train, val, test = (load_split(s) for s in ("train", "val", "test"))
    results = []
    for name in args.settings.split(","):
        changes, edge_pool, probe_changes = SETTINGS[name]
        probe_changes = dict(probe_changes)
        with_arguments = probe_changes.pop("arguments", False) or probe_changes.get("no_graph", False)
        no_graph = probe_changes.pop("no_graph", False)
        head_hidden = probe_changes.pop("head_hidden", 0)
        extra = argument_features(train + val + test) if with_arguments else None
        config = ModelConfig(**changes)
        torch.manual_seed(0)
        probe = GraphProbe(config, len(labels), edge_pool=edge_pool,
                           extra_dim=next(iter(extra.values())).shape[0] if extra else 0, use_graph=not no_graph,
                           head_hidden=head_hidden)
        started = time.perf_counter()
        history = train_probe(probe, train, val, labels, ProbeConfig(epochs=args.epochs, **probe_changes), extra)
        minutes = (time.perf_counter() - started) / 60
        test_acc, test_pred = probe_accuracy(probe, test, labels, extra)
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


def argument_features(samples) -> dict:
    """qid -> [e(argument 1), e(argument 2), e1 * e2] with gqa's embedder (MiniLM, 384-d each), cached in runs/."""
    import torch

    path = REPO / "runs" / "explagraphs-arguments.pt"
    if path.is_file():
        return torch.load(path)
    from gretriever_neo4j.embedding.embedder import Embedder

    def arguments(question: str) -> tuple[str, str]:
        lines = question.split("\n")
        first = next((l for l in lines if l.startswith("Argument 1:")), question)
        second = next((l for l in lines if l.startswith("Argument 2:")), question)
        return first.split(":", 1)[1].strip(), second.split(":", 1)[1].strip()

    pairs = [arguments(s.question) for s in samples]
    embedder = Embedder()
    first = torch.as_tensor(embedder.embed([a for a, _ in pairs]))
    second = torch.as_tensor(embedder.embed([b for _, b in pairs]))
    features = {s.qid: torch.cat([a, b, a * b]).float() for s, a, b in zip(samples, first, second)}
    torch.save(features, path)
    return features


def _write(args, results) -> None:
    """Rows of earlier invocations stay unless this one measured the same setting again."""
    for row in results:
        row.setdefault("command", command())
    earlier = json.loads(args.out.read_text()).get("results", []) if args.out.is_file() else []
    names = {r["setting"] for r in results}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"machine": machine(threads=args.threads),
                                    "gold_test": {"support": 0.588, "counter": 0.412},
                                    "results": [r for r in earlier if r["setting"] not in names] + results},
                                   indent=2, default=str))


if __name__ == "__main__":
    sys.exit(main())

"""ExplaGraphs accuracy of the paper's five configurations with a small LLM on CPU (the full protocol).

Needs ExplaGraphs in Neo4j (`gqa ingest explagraphs --source ../shared/data/explagraphs/train_dev.tsv`). Samples
come from gqa's own retrieval (whole graph, as the paper) and are cached. Each configuration trains on the
training split (1,659 questions), keeps the epoch with the best validation loss (553 questions, early stopping)
and is scored on the test split (554 questions), in a process of its own (so peak RSS is its own), with the
same seed. Answers are constrained to the two labels. Per epoch it records the training minutes, the validation
loss and the share of each first answer token on validation (a collapse onto one class is flagged). Prints a
table and writes JSON.

    python bench/explagraphs.py [--epochs 3] [--lr 2e-4] [--variants g-retriever,lora] [--train-limit N]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
VARIANTS = ("inference-only", "prompt-tuning", "g-retriever", "lora", "g-retriever-lora")
PAPER_LLAMA2_7B = {"inference-only": 0.5650, "prompt-tuning": 0.5763, "g-retriever": 0.8516, "lora": 0.8538,
                   "g-retriever-lora": 0.8705}


def _samples(split: str, limit: int | None):
    from gretriever_neo4j.embedding.embedder import Embedder
    from gretriever_neo4j.retrievers.base import RetrievalContext
    from gretriever_neo4j.retrievers.neo4j import StaticRetriever
    from gretriever_neo4j.settings import Neo4jSettings
    from gretriever_neo4j.store.graph_store import connected
    from gretriever_neo4j.train.data import build_samples, static_settings

    embedder = Embedder()
    with connected(Neo4jSettings.from_env()) as store:
        retriever = StaticRetriever(RetrievalContext(store, embedder))
        return build_samples(store, retriever, "explagraphs", split, limit=limit,
                             settings=static_settings(retriever, "explagraphs"))


def run_variant(args) -> dict:
    import torch

    from gretriever_neo4j.model.config import ModelConfig
    from gretriever_neo4j.model.gretriever import build_model
    from gretriever_neo4j import metrics
    from gretriever_neo4j.model.prompts import LABEL_SETS
    from gretriever_neo4j.train.trainer import TrainConfig, predict, train

    torch.manual_seed(args.seed)
    train_samples = _samples("train", args.train_limit)
    val_samples = _samples("val", args.val_limit)
    test_samples = _samples("test", args.test_limit)
    config = ModelConfig(variant=args.variant, llm=args.llm, max_new_tokens=args.max_new_tokens)
    model = build_model(config, device="cpu")
    result = {"variant": args.variant, "train": len(train_samples), "val": len(val_samples),
              "test": len(test_samples)}
    if config.variant != "inference-only":
        with tempfile.TemporaryDirectory() as folder:
            history = train(model, train_samples, val_samples,
                            TrainConfig(lr=args.lr, epochs=args.epochs, batch_size=args.batch_size,
                                        grad_accum=args.grad_accum, patience=args.patience,
                                        warmup_epochs=min(1.0, args.epochs / 2), seed=args.seed,
                                        balance_labels=args.balance_labels), folder)
            if history.best_checkpoint is not None:
                from gretriever_neo4j.model.checkpoint import restore_weights

                restore_weights(model, history.best_checkpoint)
        train_minutes = [e.train_seconds / 60 for e in history.epochs if e.train_seconds is not None]
        result["minutes_per_epoch"] = sum(train_minutes) / len(train_minutes)
        result["best_epoch"] = history.best_epoch
        result["stop_reason"] = history.stop_reason
        result["epochs"] = [{"train_loss": e.train_loss, "val_loss": e.val_loss, "train_minutes": e.train_seconds / 60,
                             "minutes": e.seconds / 60, "val_predicted": e.val_predicted, "val_gold": e.val_gold,
                             "collapse": e.collapse} for e in history.epochs]
    started = time.perf_counter()
    predictions = predict(model, test_samples, batch_size=8, labels=LABEL_SETS["explagraphs"])
    result["eval_minutes"] = (time.perf_counter() - started) / 60
    result["accuracy"] = metrics.score_explagraphs(predictions, [s.label for s in test_samples])
    counts = Counter(p.strip().lower() for p in predictions)
    result["test_predicted"] = {k: v / len(predictions) for k, v in counts.most_common()}
    result["test_gold"] = {k: v / len(test_samples) for k, v in Counter(s.label for s in test_samples).most_common()}
    result["peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--train-limit", type=int, default=None, help="default: the whole split")
    parser.add_argument("--val-limit", type=int, default=None)
    parser.add_argument("--test-limit", type=int, default=None)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--patience", type=int, default=2)
    parser.add_argument("--lr", type=float, default=2e-4)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--grad-accum", type=int, default=1)
    parser.add_argument("--max-new-tokens", type=int, default=4)
    parser.add_argument("--llm", default="smollm2-135m")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--balance-labels", action="store_true", help="each epoch sees support and counter equally")
    parser.add_argument("--variants", default=",".join(VARIANTS))
    parser.add_argument("--variant", help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "explagraphs.json")
    args = parser.parse_args()
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    if args.variant:
        print(json.dumps(run_variant(args)))
        return 0

    from rich.console import Console
    from rich.table import Table

    console = Console()
    _samples("train", args.train_limit), _samples("val", args.val_limit), _samples("test", args.test_limit)
    results = []
    passthrough = [f"--{name.replace('_', '-')}" if value is True else f"--{name.replace('_', '-')}={value}"
                   for name, value in vars(args).items()
                   if name not in ("variants", "variant", "out") and value is not None and value is not False]
    for variant in args.variants.split(","):
        console.print(f"{variant}…")
        run = subprocess.run([sys.executable, __file__, *passthrough, "--variant", variant], capture_output=True,
                             text=True)
        if run.returncode != 0:
            console.print(f"[red]{variant} failed[/]\n{run.stderr[-3000:]}")
            continue
        results.append(json.loads(run.stdout.strip().splitlines()[-1]))
        console.print(f"{variant}: accuracy {results[-1]['accuracy']:.3f}, predicted {results[-1]['test_predicted']}")
        _write(args, results)
    table = Table(title=f"ExplaGraphs, {args.llm} on CPU ({os.cpu_count()} cores): train {results[0]['train'] if results else '?'}"
                        f" / val {results[0]['val'] if results else '?'} / test {results[0]['test'] if results else '?'}"
                        f" questions, up to {args.epochs} epoch(s), lr {args.lr}, seed {args.seed}")
    for column in ("configuration", "accuracy", "paper (Llama2-7b)", "predicted support", "train min / epoch",
                   "best epoch", "collapse flagged", "eval min", "peak RSS MiB"):
        table.add_column(column, justify="right")
    for r in results:
        flagged = sum(1 for e in r.get("epochs", []) if e["collapse"])
        table.add_row(r["variant"], f"{r['accuracy']:.3f}", f"{PAPER_LLAMA2_7B[r['variant']]:.3f}",
                      f"{r['test_predicted'].get('support', 0.0):.2f}", f"{r.get('minutes_per_epoch', 0):.1f}",
                      str(r.get("best_epoch", "-")), f"{flagged} epochs" if "epochs" in r else "-",
                      f"{r['eval_minutes']:.1f}", f"{r['peak_rss_mib']:.0f}")
    console.print(table)
    console.print(f"wrote {args.out}")
    return 0


def _write(args, results) -> None:
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"machine": {"platform": platform.platform(), "cpus": os.cpu_count()},
                                    "command": "python bench/explagraphs.py " + " ".join(sys.argv[1:]),
                                    "settings": {k: v for k, v in vars(args).items() if k not in ("out", "variant")},
                                    "results": results}, indent=2, default=str))


if __name__ == "__main__":
    sys.exit(main())

"""ExplaGraphs accuracy of the paper's five configurations with a small LLM on CPU.

Needs ExplaGraphs in Neo4j (`gqa ingest explagraphs --source ../shared/data/explagraphs/train_dev.tsv`). Samples
come from gqa's own retrieval (whole graph, as the paper) and are cached. Each configuration trains on the
first `--train-limit` training questions and is scored on the first `--test-limit` test questions, in a process
of its own (so peak RSS is its own), with the same seed. Prints a table and writes JSON.

    python bench/explagraphs.py [--train-limit 200] [--test-limit 200] [--epochs 1] [--lr 1e-4]
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
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
VARIANTS = ("inference-only", "prompt-tuning", "g-retriever", "lora", "g-retriever-lora")
PAPER_LLAMA2_7B = {"inference-only": 0.5650, "prompt-tuning": 0.5763, "g-retriever": 0.8516, "lora": 0.8538,
                   "g-retriever-lora": 0.8705}


def _samples(split: str, limit: int):
    from gretriever_neo4j.embed import Embedder
    from gretriever_neo4j.retriever import Retriever
    from gretriever_neo4j.settings import Neo4jSettings
    from gretriever_neo4j.store import connected
    from gretriever_neo4j.train.data import build_samples, static_settings

    embedder = Embedder()
    with connected(Neo4jSettings.from_env()) as store:
        retriever = Retriever(store, embedder)
        return build_samples(store, retriever, "explagraphs", split, limit=limit,
                             settings=static_settings(retriever, "explagraphs"))


def run_variant(args) -> dict:
    import torch

    from gretriever_neo4j.model.config import ModelConfig
    from gretriever_neo4j.model.gretriever import build_model
    from gretriever_neo4j.train import metrics
    from gretriever_neo4j.train.trainer import TrainConfig, predict, train

    torch.manual_seed(args.seed)
    train_samples = _samples("train", args.train_limit)
    val_samples = _samples("val", args.val_limit)
    test_samples = _samples("test", args.test_limit)
    config = ModelConfig(variant=args.variant, llm=args.llm, max_new_tokens=args.max_new_tokens)
    model = build_model(config, device="cpu")
    result = {"variant": args.variant, "train": len(train_samples), "test": len(test_samples)}
    if config.variant != "inference-only":
        with tempfile.TemporaryDirectory() as folder:
            history = train(model, train_samples, val_samples,
                            TrainConfig(lr=args.lr, epochs=args.epochs, batch_size=args.batch_size, grad_accum=1,
                                        warmup_epochs=min(1.0, args.epochs / 2), seed=args.seed), folder)
            if history.best_checkpoint is not None:
                from gretriever_neo4j.train.checkpoint import restore_weights

                restore_weights(model, history.best_checkpoint)
        result["minutes_per_epoch"] = sum(e.seconds for e in history.epochs) / len(history.epochs) / 60
        result["epochs"] = [{"train_loss": e.train_loss, "val_loss": e.val_loss, "seconds": e.seconds}
                            for e in history.epochs]
    started = time.perf_counter()
    predictions = predict(model, test_samples, batch_size=8)
    result["eval_minutes"] = (time.perf_counter() - started) / 60
    result["accuracy"] = metrics.score_explagraphs(predictions, [s.label for s in test_samples])
    result["examples"] = predictions[:5]
    result["peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--train-limit", type=int, default=200)
    parser.add_argument("--val-limit", type=int, default=50)
    parser.add_argument("--test-limit", type=int, default=200)
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--lr", type=float, default=1e-4)
    parser.add_argument("--batch-size", type=int, default=4)
    parser.add_argument("--max-new-tokens", type=int, default=4)
    parser.add_argument("--llm", default="smollm2-135m")
    parser.add_argument("--seed", type=int, default=0)
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
    passthrough = [f"--{name.replace('_', '-')}={value}" for name, value in vars(args).items()
                   if name not in ("variants", "variant", "out")]
    for variant in args.variants.split(","):
        with console.status(f"{variant}…"):
            run = subprocess.run([sys.executable, __file__, *passthrough, "--variant", variant], capture_output=True,
                                 text=True)
        if run.returncode != 0:
            console.print(f"[red]{variant} failed[/]\n{run.stderr[-3000:]}")
            continue
        results.append(json.loads(run.stdout.strip().splitlines()[-1]))
        console.print(f"{variant}: accuracy {results[-1]['accuracy']:.3f}")
    table = Table(title=f"ExplaGraphs, {args.llm} on CPU ({os.cpu_count()} cores): train {args.train_limit} / "
                        f"test {args.test_limit} questions, {args.epochs} epoch(s), lr {args.lr}, seed {args.seed}")
    for column in ("configuration", "accuracy", "paper (Llama2-7b)", "min / epoch", "eval min", "peak RSS MiB"):
        table.add_column(column, justify="right")
    for r in results:
        table.add_row(r["variant"], f"{r['accuracy']:.3f}", f"{PAPER_LLAMA2_7B[r['variant']]:.3f}",
                      f"{r.get('minutes_per_epoch', 0):.1f}", f"{r['eval_minutes']:.1f}", f"{r['peak_rss_mib']:.0f}")
    console.print(table)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"machine": {"platform": platform.platform(), "cpus": os.cpu_count()},
                                    "settings": {k: v for k, v in vars(args).items() if k not in ("out", "variant")},
                                    "results": results}, indent=2, default=str))
    console.print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

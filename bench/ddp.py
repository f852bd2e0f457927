"""Data-parallel training on this machine: one process with global batch B against N processes (torch DDP, gloo on
CPU, NCCL on CUDA) with batch B/N each, on the same ExplaGraphs training questions (stored in Neo4j by `gqa ingest
explagraphs`) with the default LLM. Reports seconds per optimizer step (the epoch's training time over its steps),
the epoch's mean loss and how far the
trainable weights of the two runs end apart. The CPU threads are split between the processes (2 cores: 2 threads
for one process, 1 each for two), so on one CPU machine DDP can at best match one process: the number measures
DDP's overhead here, not a speed-up, which needs more machines or GPUs.

    python bench/ddp.py [--variants prompt-tuning,g-retriever] [--samples 32] [--batch-size 8] [--nproc 2]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import socket
import sys
import tempfile
import time
from pathlib import Path

from _common import REPO, command


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rank_main(rank: int, world: int, port: int, variant: str, samples_file: str, batch_size: int, threads: int,
              out: str) -> None:
    """One rank: trains one epoch over the shared samples, rank 0 writes what it measured."""
    import torch

    from gretriever_neo4j.model.config import ModelConfig
    from gretriever_neo4j.model.gretriever import build_model
    from gretriever_neo4j.train import trainer
    from gretriever_neo4j.train.distributed import init_from_environment

    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    torch.set_num_threads(threads)
    if world > 1:
        os.environ.update({"RANK": str(rank), "WORLD_SIZE": str(world), "LOCAL_RANK": str(rank),
                           "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(port)})
        init_from_environment()
    samples = torch.load(samples_file, weights_only=False)
    torch.manual_seed(0)
    model = build_model(ModelConfig(variant=variant), device="cpu")
    with tempfile.TemporaryDirectory() as folder:
        started = time.perf_counter()
        history = trainer.train(model, samples, [], trainer.TrainConfig(
            lr=1e-4, min_lr=1e-4, epochs=1, batch_size=batch_size, grad_accum=1, warmup_epochs=0,
            group_by_length=False, threads=threads), folder)
        seconds = time.perf_counter() - started
    if rank == 0:
        epoch = history.epochs[0]
        torch.save({"steps": history.steps, "train_seconds": epoch.train_seconds, "seconds": seconds,
                    "train_loss": epoch.train_loss, "peak_rss_mib": epoch.peak_rss_mib,
                    "weights": {k: v.detach().float().clone() for k, v in model.module_state_dict().items()}},
                   out)
    if world > 1:
        import torch.distributed as dist

        dist.destroy_process_group()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--variants", default="prompt-tuning,g-retriever")
    parser.add_argument("--samples", type=int, default=32)
    parser.add_argument("--batch-size", type=int, default=8, help="the global batch")
    parser.add_argument("--nproc", type=int, default=2)
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "ddp.json")
    args = parser.parse_args()
    if args.batch_size % args.nproc:
        parser.error("--batch-size must be a multiple of --nproc")

    import torch
    import torch.multiprocessing as mp
    from explagraphs_data import load_split

    cores = os.cpu_count() or 1
    results = {"machine": {"platform": platform.platform(), "cpus": cores, "torch": torch.__version__},
               "command": command(), "samples": args.samples,
               "global_batch": args.batch_size, "variants": {}}
    with tempfile.TemporaryDirectory() as folder:
        samples_file = str(Path(folder) / "samples.pt")
        torch.save(load_split("train", args.samples), samples_file)
        for variant in args.variants.split(","):
            runs = {}
            for world in (1, args.nproc):
                out = str(Path(folder) / f"{variant}-{world}.pt")
                threads = max(cores // world, 1)
                call = (world, _port(), variant, samples_file, args.batch_size // world, threads, out)
                if world == 1:
                    rank_main(0, *call)
                else:
                    mp.spawn(rank_main, args=call, nprocs=world, join=True)
                runs[world] = torch.load(out, weights_only=False)
            one, many = runs[1], runs[args.nproc]
            gap = max(float((many["weights"][k] - w).abs().max()) for k, w in one["weights"].items())
            scale = max(float(w.abs().max()) for w in one["weights"].values())
            row = {f"{w}_process": {"steps": r["steps"], "threads_each": max(cores // w, 1),
                                    "batch_each": args.batch_size // w,
                                    "seconds_per_step": r["train_seconds"] / max(r["steps"], 1),
                                    "train_loss": r["train_loss"], "peak_rss_mib_rank0": r["peak_rss_mib"]}
                   for w, r in runs.items()}
            row["step_time_ratio"] = (row[f"{args.nproc}_process"]["seconds_per_step"]
                                      / row["1_process"]["seconds_per_step"])
            row["train_loss_abs_diff"] = abs(many["train_loss"] - one["train_loss"])
            row["weights_max_abs_diff"] = gap
            row["weights_max_abs"] = scale
            results["variants"][variant] = row
            print(variant, json.dumps(row), flush=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=1))

    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"DDP on {cores} CPU cores: 1 process (batch {args.batch_size}) vs {args.nproc} "
                        f"(batch {args.batch_size // args.nproc} each), {args.samples} ExplaGraphs questions")
    for column in ("variant", "steps", "s/step 1 proc", f"s/step {args.nproc} proc", "ratio", "loss 1 / N",
                   "max |Δw|"):
        table.add_column(column, justify="right")
    for variant, row in results["variants"].items():
        a, b = row["1_process"], row[f"{args.nproc}_process"]
        table.add_row(variant, f"{a['steps']} / {b['steps']}", f"{a['seconds_per_step']:.2f}",
                      f"{b['seconds_per_step']:.2f}", f"{row['step_time_ratio']:.2f}",
                      f"{a['train_loss']:.5f} / {b['train_loss']:.5f}", f"{row['weights_max_abs_diff']:.2e}")
    Console(width=140).print(table)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Minutes of one ExplaGraphs training epoch (1,659 questions) on this machine, per configuration, measured on an
otherwise idle machine (the full-protocol run of bench/explagraphs.py shares the cores with other work, so its
minutes per epoch are an upper bound). Trains the configuration for `--samples` training questions (default the
whole split: one full epoch), without validation, and reports the wall time scaled to 1,659 questions.

    python bench/epoch_time.py [--variants g-retriever,lora,prompt-tuning,g-retriever-lora] [--samples 1659]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

from _common import REPO, command, machine
from explagraphs_data import load_split


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--variants", default="g-retriever")
    parser.add_argument("--samples", type=int, default=None)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "epoch_time.json")
    args = parser.parse_args()
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")

    from gretriever_neo4j.model.config import ModelConfig
    from gretriever_neo4j.model.gretriever import build_model
    from gretriever_neo4j.train.trainer import TrainConfig, train

    train_samples = load_split("train", args.samples)
    results = {"machine": machine(), "command": command(), "samples": len(train_samples), "variants": {}}
    for variant in args.variants.split(","):
        model = build_model(ModelConfig(variant=variant), device="cpu")
        with tempfile.TemporaryDirectory() as folder:
            started = time.perf_counter()
            history = train(model, train_samples, [], TrainConfig(lr=1e-4, epochs=1, batch_size=args.batch_size,
                                                                  grad_accum=1, warmup_epochs=0), folder)
            seconds = time.perf_counter() - started
        train_seconds = history.epochs[0].train_seconds
        results["variants"][variant] = {
            "seconds": seconds, "train_seconds": train_seconds,
            "minutes_per_1659": train_seconds / len(train_samples) * 1659 / 60,
            "seconds_per_question": train_seconds / len(train_samples), "peak_rss_mib": history.epochs[0].peak_rss_mib}
        print(variant, json.dumps(results["variants"][variant]), flush=True)
        del model
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())

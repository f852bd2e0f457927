"""Build (once) the frozen LLM's keys and values of every ExplaGraphs question's prompt text.

Files runs/explagraphs/textcache-<split>.pt, used by `bench/explagraphs.py` for the frozen-LLM configurations
with the soft tokens last (`model.text_cache`). Prints the time per question.

    python bench/explagraphs_textcache.py [--threads 1] [--llm-dtype bfloat16]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from _common import REPO


def cache_path(run_dir: Path, split: str, llm_dtype: str) -> Path:
    return run_dir / f"textcache-{split}-{llm_dtype}.pt"


def ensure_caches(model, splits: dict, run_dir: Path, llm_dtype: str, batch_size: int = 16):
    """The merged text cache of `splits` (name -> samples), building and saving what is missing."""
    from gretriever_neo4j.model.text_cache import TextCache, build_text_cache

    merged = None
    for split, samples in splits.items():
        path = cache_path(run_dir, split, llm_dtype)
        cache = TextCache.load(path) if path.is_file() else None
        missing = [s for s in samples if cache is None or s.qid not in cache.entries]
        if missing:
            started = time.perf_counter()
            built = build_text_cache(model, missing, batch_size=batch_size)
            seconds = time.perf_counter() - started
            print(f"text cache {split}: {len(missing)} questions in {seconds / 60:.1f} min "
                  f"({seconds / len(missing):.3f} s per question)", flush=True)
            if cache is None:
                cache = built
            else:
                cache.update(built)
            cache.save(path)
        if merged is None:
            merged = cache
        else:
            merged.update(cache)
    return merged


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--llm-dtype", default="bfloat16")
    parser.add_argument("--run-dir", type=Path, default=REPO / "runs" / "explagraphs")
    args = parser.parse_args()
    import torch

    torch.set_num_threads(args.threads)
    from explagraphs_data import load_split

    from gretriever_neo4j.model.config import ModelConfig
    from gretriever_neo4j.model.gretriever import build_model

    model = build_model(ModelConfig(variant="inference-only", llm_dtype=args.llm_dtype, max_new_tokens=4),
                        device="cpu")
    for split in ("train", "val", "test"):
        ensure_caches(model, {split: load_split(split)}, args.run_dir, args.llm_dtype)
    return 0


if __name__ == "__main__":
    sys.exit(main())

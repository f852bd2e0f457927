"""One walk encoder from several trained ones: the mean of their tuned weights (a "model soup"), saved as one set
of low-rank adapters.

Walk encoders trained apart (another seed, another number of candidate walks) err on different questions; the
mean of what each tuning changed reads walks better than either on graphs none of them was trained on
(docs/learned-reader.md), and costs what one encoder costs, since the adapters are merged into MiniLM at load
either way. The mean of low-rank products is itself one: stacking the adapters' down-projections (A) and their
up-projections (B), each B scaled by its own scaling over the count, gives a rank-(sum of ranks) adapter whose
product is the mean.

    python -m train.walk_encoder_soup FOLDER FOLDER [...] --save OUT [--candidates 16]

`--candidates` is the number of walks `gqa ask` reads with the result (by default the largest of the parts').
"""

from __future__ import annotations

import argparse
from pathlib import Path

from gretriever_neo4j.errors import ConfigError
from gretriever_neo4j.reader.walk_encoder import (
    CONFIG_FILE,
    LAYERS_FILE,
    LORA_DOWN,
    LORA_UP,
    WalkEncoderConfig,
    read_saved,
    write_saved,
)


def soup(parts: list[tuple[WalkEncoderConfig, dict]], candidates: int | None = None,
         sources: list[str] | None = None) -> tuple[WalkEncoderConfig, dict]:
    """(config, tensors) of the adapter whose merged change is the mean of the `parts`' (each a `read_saved`
    pair). The parts must adapt the same base and the same maps with "lora" adapters."""
    import torch

    if len(parts) < 2:
        raise ConfigError("a soup needs two walk encoders or more")
    first = parts[0][0]
    for config, _ in parts:
        if config.adapter != "lora" or config.base != first.base or config.targets != first.targets:
            raise ConfigError("every walk encoder of a soup must be low-rank adapters over the same maps of "
                              f"{first.base}")
    keys = [set(state) for _, state in parts]
    if any(k != keys[0] for k in keys):
        raise ConfigError("the walk encoders of a soup adapt different weights")
    rank = sum(config.rank for config, _ in parts)
    config = WalkEncoderConfig(
        base=first.base, adapter="lora", layers=first.layers, rank=rank, alpha=rank, targets=first.targets,
        candidates=candidates or max(c.candidates for c, _ in parts),
        training={"soup_of": [{"source": s, **c.training} for s, (c, _) in
                              zip(sources or [""] * len(parts), parts)]})
    # merged change = (alpha / rank) B A = B A here; the mean is sum_i (scaling_i / n) B_i A_i
    state = {}
    for key in (k for k in parts[0][1] if k.endswith(LORA_DOWN)):
        path = key[:-len(LORA_DOWN)]
        state[key] = torch.cat([s[key].float() for _, s in parts], dim=0).half().contiguous()
        state[path + LORA_UP] = torch.cat([s[path + LORA_UP].float() * (c.alpha / c.rank / len(parts))
                                           for c, s in parts], dim=1).half().contiguous()
    return config, state


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("parts", type=Path, nargs="+", help="folders of trained walk encoders")
    parser.add_argument("--save", type=Path, required=True, help="the folder for the soup")
    parser.add_argument("--candidates", type=int, default=None, help="walks read per question")
    args = parser.parse_args(argv)
    config, state = soup([read_saved(p) for p in args.parts], args.candidates,
                         [str(p) for p in args.parts])
    write_saved(config, state, args.save)
    size = sum((args.save / name).stat().st_size for name in (CONFIG_FILE, LAYERS_FILE))
    print(f"written {args.save} (rank {config.rank}, {config.candidates} walks, {size / 1e6:.2f} MB)")


if __name__ == "__main__":
    main()

"""Data-parallel training with torch.distributed (DistributedDataParallel), launched by torchrun.

`gqa train --nproc N` re-launches itself under `torch.distributed.run` (torchrun); each process is a rank that
trains a slice of every global batch and DDP averages the gradients, so N processes with batch b take the same
steps as one process with batch N*b (when every slice carries as many label tokens: the loss is a mean over
tokens, and no layer looks across the batch). Backend: NCCL on CUDA, gloo on CPU. The graph encoders' batch norm
is synchronised across ranks on CUDA (SyncBatchNorm); torch has no CPU version, so on CPU each rank normalises
over its own slice, a small departure from the single-process batch. Rank 0 alone writes checkpoints and draws
progress; validation is sharded and its sums all-reduced, so every rank takes the same early-stopping decision.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch


@dataclass(frozen=True)
class World:
    rank: int = 0
    size: int = 1

    @property
    def main(self) -> bool:
        return self.rank == 0

    @property
    def distributed(self) -> bool:
        return self.size > 1


def current_world() -> World:
    import torch.distributed as dist

    if dist.is_available() and dist.is_initialized():
        return World(dist.get_rank(), dist.get_world_size())
    return World()


def init_from_environment() -> World:
    """Join the process group torchrun describes (RANK, WORLD_SIZE, MASTER_ADDR/PORT); a no-op without it."""
    import torch.distributed as dist

    size = int(os.environ.get("WORLD_SIZE", "1"))
    if size <= 1 or not dist.is_available():
        return World()
    if not dist.is_initialized():
        backend = "nccl" if torch.cuda.is_available() else "gloo"
        if backend == "nccl":
            torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", "0")))
        dist.init_process_group(backend=backend)
    return current_world()


def shard(order: Sequence[int], batch_size: int, world: World) -> list[int]:
    """This rank's samples, batch by batch: of global batch i (world.size * batch_size samples of `order`) rank r
    takes the r-th slice. The order is padded by wrapping around (as torch's DistributedSampler pads) so that
    every rank has the same number of batches: a rank without a batch would stall the others' all-reduce."""
    order = list(order)
    if not world.distributed or not order:
        return order
    step = batch_size * world.size
    padded = order + [order[i % len(order)] for i in range((-len(order)) % step)]
    return [i for start in range(0, len(padded), step)
            for i in padded[start + world.rank * batch_size:start + (world.rank + 1) * batch_size]]


def wrap(model: torch.nn.Module, world: World) -> torch.nn.Module:
    """The module to call in training: DDP around the model when distributed (frozen LLM weights take no part;
    parameters a batch may leave unused, such as the empty-graph vector, are allowed)."""
    if not world.distributed:
        return model
    from torch.nn.parallel import DistributedDataParallel

    device = next(model.parameters()).device
    if device.type == "cuda":  # the graph encoders' batch norm sees the global batch (CUDA only in torch)
        model = torch.nn.SyncBatchNorm.convert_sync_batchnorm(model)
    return DistributedDataParallel(model, device_ids=[device.index] if device.type == "cuda" else None,
                                   find_unused_parameters=True)


def mean_across(values: Sequence[float], world: World) -> float:
    """The mean of every rank's values (each rank passes its own)."""
    total = torch.tensor([float(sum(values)), float(len(values))], dtype=torch.float64)
    if world.distributed:
        import torch.distributed as dist

        dist.all_reduce(total)
    return float(total[0] / total[1]) if total[1] else float("nan")


def gather(items: list[Any], world: World) -> list[Any]:
    """Every rank's items, concatenated in rank order."""
    if not world.distributed:
        return list(items)
    import torch.distributed as dist

    parts: list[Any] = [None] * world.size
    dist.all_gather_object(parts, items)
    return [item for part in parts for item in part]


def barrier(world: World) -> None:
    if world.distributed:
        import torch.distributed as dist

        dist.barrier()

"""A rank of the data-parallel test: trains the toy model and (rank 0) writes its losses and weights."""

from __future__ import annotations

import os
from pathlib import Path

import torch


def samples():
    from model_toys import WORDS, random_sample

    # Equal label lengths: the loss is a mean over label tokens, so halves of a batch weigh the same.
    return [random_sample(i, 3 + i % 2, label=WORDS[i % len(WORDS)], question=f"item {i}?") for i in range(8)]


def run(rank: int, world: int, port: int, out: str, batch_size: int, variant: str = "prompt-tuning") -> None:
    from gretriever_neo4j.train.distributed import init_from_environment
    from gretriever_neo4j.train.trainer import TrainConfig, train

    from model_toys import toy_model

    torch.set_num_threads(1)
    if world > 1:
        os.environ.update({"RANK": str(rank), "WORLD_SIZE": str(world), "LOCAL_RANK": str(rank),
                           "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(port)})
        assert init_from_environment().size == world
    model = toy_model(variant, seed=0)
    history = train(model, samples(), samples()[:4],
                    TrainConfig(lr=3e-3, min_lr=1e-3, batch_size=batch_size, grad_accum=1, epochs=2, warmup_epochs=0,
                                patience=5, group_by_length=False), Path(out) / f"ckpt-{world}")
    if rank == 0:
        torch.save({"losses": [e.train_loss for e in history.epochs], "val": [e.val_loss for e in history.epochs],
                    "steps": history.steps, "weights": model.module_state_dict(),
                    "best": str(history.best_checkpoint)}, Path(out) / f"result-{variant}-{world}.pt")
    if world > 1:
        import torch.distributed as dist

        dist.destroy_process_group()

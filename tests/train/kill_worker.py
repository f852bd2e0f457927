"""A training run that SIGKILLs itself in the middle of its second epoch, for the resume test.

    python kill_worker.py CHECKPOINT_DIR KILL_AT

Training reads each sample's graph once per epoch (in `collate`); the KILL_AT-th read ends the process on
the spot, as a kill from outside would, while the epoch is under way (weights changed, nothing saved yet)."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "model"))

from gretriever_neo4j.model.sample import QASample  # noqa: E402

READS = {"count": 0, "kill_at": None}


class KillingSample(QASample):
    def graph(self, dim=None):
        READS["count"] += 1
        if READS["kill_at"] is not None and READS["count"] >= READS["kill_at"]:
            os.kill(os.getpid(), signal.SIGKILL)
        return super().graph(dim)


def samples(cls=QASample):
    from model_toys import random_sample

    return [cls(**random_sample(i, 3, label=("support", "counter")[i % 2], question=f"item {i}?").__dict__)
            for i in range(8)]


def config(**changes):
    from gretriever_neo4j.train.trainer import TrainConfig

    values = dict(lr=1e-2, min_lr=1e-3, batch_size=2, grad_accum=1, epochs=3, warmup_epochs=0, patience=5, seed=3,
                  label_set=("support", "counter"), objective="labels", select_on="accuracy", graph_lr=3e-2)
    values.update(changes)
    return TrainConfig(**values)


if __name__ == "__main__":
    from gretriever_neo4j.train.trainer import train

    from model_toys import toy_model

    torch.set_num_threads(1)
    folder, kill_at = Path(sys.argv[1]), int(sys.argv[2])
    READS["kill_at"] = kill_at
    train(toy_model("g-retriever", seed=3), samples(KillingSample), samples()[:4], config(), folder)
    sys.exit(3)  # not reached: the kill comes first

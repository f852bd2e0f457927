"""The trainer's resumable state: written to checkpoint_dir/last after every epoch, read back by `resume`.

`last/` holds the weights, the optimizer, the schedule position, every random state and the per-epoch history.
The folder is swapped into place atomically (`checkpoint.save_checkpoint`), so a run killed at any point, even
while saving, leaves the previous epoch's state intact; resuming from it replays the interrupted epoch exactly
(batch order depends only on seed and epoch, and the random states are those at the end of the last epoch).
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from ..errors import ConfigError
from ..model.checkpoint import (
    config_differences,
    load_training_state,
    read_checkpoint,
    restore_weights,
    save_checkpoint,
)
from ..model.gretriever import GraphQAModel


@dataclass
class RunState:
    epoch: int = 0
    batch_in_epoch: int = 0  # micro-batches of `epoch` already trained (non-zero only after a max_steps stop)
    steps: int = 0
    best_loss: float = math.inf  # the selection score of the best epoch, lower is better (see TrainConfig.select_on)
    best_epoch: int | None = None


def save_last(model: GraphQAModel, optimizer: torch.optim.Optimizer, path: Path, state: RunState,
              train_config: dict[str, Any], history: list[dict[str, Any]]) -> None:
    training_state = {
        "optimizer": optimizer.state_dict(),
        "epoch": state.epoch,
        "batch_in_epoch": state.batch_in_epoch,
        "steps": state.steps,
        "best_loss": state.best_loss,
        "best_epoch": -1 if state.best_epoch is None else state.best_epoch,
        "torch_rng": torch.get_rng_state(),
        "cuda_rng": torch.cuda.get_rng_state_all() if torch.cuda.is_available() else [],
        "python_rng": random.getstate(),
        "train_config": train_config,
        "history": history,
    }
    save_checkpoint(model, path, epoch=state.epoch, step=state.steps, training_state=training_state)


def resume(model: GraphQAModel, optimizer: torch.optim.Optimizer, path: Path) -> tuple[RunState, list[dict]]:
    """Restore weights, optimizer and random states from `path`; returns the run state and the history records."""
    info = read_checkpoint(path)
    differences = config_differences(info.config, model.config)
    if differences:
        raise ConfigError(f"cannot resume from {path}: it was trained with another model configuration: "
                          f"{differences}")
    saved = load_training_state(path)
    if saved is None:
        raise ConfigError(f"cannot resume from {path}: it holds no training state")
    restore_weights(model, path)
    optimizer.load_state_dict(saved["optimizer"])
    torch.set_rng_state(saved["torch_rng"])
    if saved["cuda_rng"] and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(saved["cuda_rng"])
    random.setstate(_as_python_rng_state(saved["python_rng"]))
    state = RunState(epoch=saved["epoch"], batch_in_epoch=saved["batch_in_epoch"], steps=saved["steps"],
                     best_loss=saved["best_loss"],
                     best_epoch=None if saved["best_epoch"] < 0 else saved["best_epoch"])
    return state, list(saved["history"])


def _as_python_rng_state(state: Any) -> tuple:
    version, internal, gauss = state
    return version, tuple(internal), gauss

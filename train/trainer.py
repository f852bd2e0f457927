"""Training as the reference does it: AdamW on the trainable parameters only, half-cycle cosine learning rate
after a linear warm-up (in epochs), gradient-norm clipping at 0.1, early stopping on the validation loss.

Under `checkpoint_dir` the trainer keeps two checkpoints:
    best/   the model with the lowest validation loss so far (what evaluation and `gqa ask` load)
    last/   the latest state with optimizer, schedule position and random states, for `resume`
Differences from the reference, on purpose: gradients really are accumulated over `grad_accum` micro-batches
(the reference steps every micro-batch), clipping applies to the accumulated gradient, and the learning rate is
set before every optimizer step. With no validation samples, the training loss selects the best epoch.
Batch order is a fixed permutation per (seed, epoch), so a resumed run sees the same batches as an
uninterrupted one.
"""

from __future__ import annotations

import math
import random
import resource
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

import torch
from torch.nn.utils import clip_grad_norm_

from ..errors import ConfigError, InputError, ModelError
from ..model.checkpoint import save_checkpoint
from ..model.gretriever import GraphQAModel
from ..model.label_scoring import class_weights_for
from ..model.sample import QASample
from ..progress import OnProgress, notify
from .curves import write_curves
from .distributed import barrier, current_world, mean_across, shard, wrap

# Re-exported: evaluation and prediction lived here before they got a module of their own.
from .evaluation import (  # noqa: F401
    COLLAPSE_EXCESS,
    COLLAPSE_SHARE,
    Validation,
    _loader,
    collapse_warning,
    evaluate,
    evaluate_loss,
    predict,
    predict_labels,
)
from .resume import RunState as _RunState
from .resume import resume as _resume_state
from .resume import save_last

BEST = "best"
LAST = "last"
CURVES = "curves.png"
HISTORY = "history.json"  # per-epoch records, rewritten after every epoch


@dataclass(frozen=True)
class TrainConfig:
    lr: float = 1e-5
    min_lr: float = 5e-6  # floor of the cosine, as the reference (capped at lr)
    weight_decay: float = 0.05
    betas: tuple[float, float] = (0.9, 0.95)
    batch_size: int = 8
    eval_batch_size: int = 16
    grad_accum: int = 2
    epochs: int = 10
    warmup_epochs: float = 1.0
    patience: int = 2  # epochs without a better validation loss before stopping
    grad_clip: float = 0.1
    seed: int = 0
    max_steps: int | None = None  # hard cap on optimizer steps (counted over resumes); the schedule is unchanged
    num_workers: int = 0
    resume: bool = False  # continue from checkpoint_dir/last when it exists
    group_by_length: bool = True  # batches of similar length: less padding (see `epoch_order`)
    threads: int | None = None  # torch CPU threads while training (default: torch's own choice)
    # Label tasks (ExplaGraphs: support/counter): each epoch draws its samples so that every answer is equally
    # frequent, so the majority answer cannot win the loss by itself (see `balanced_draw`).
    balance_labels: bool = False
    # Label tasks: the answers `label_set` allows. Validation then scores the labels' likelihoods (accuracy and
    # the predicted-label shares every epoch, `evaluation.evaluate`).
    label_set: tuple[str, ...] = ()
    # "lm": next-token cross-entropy over the answer (the reference); "labels": cross-entropy over the label
    # set's likelihoods, i.e. the training loss is the decision evaluation makes (needs label_set).
    objective: str = "lm"
    class_weighted: bool = False  # "labels" objective: weights inverse to the training labels' frequencies
    # Learning rate of the parts outside the LLM (graph encoder, projector, soft prompt); None: `lr`. They start
    # from scratch (or from a probe) while LoRA only nudges a trained LLM, so they can take a much larger one.
    graph_lr: float | None = None
    select_on: str = "loss"  # the best epoch and early stopping: lowest validation "loss" or best "accuracy"

    def __post_init__(self) -> None:
        for name in ("batch_size", "eval_batch_size", "grad_accum", "epochs"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ConfigError(f"field '{name}': must be a positive integer, got {value!r}")
        for name in ("lr", "min_lr", "weight_decay", "warmup_epochs", "grad_clip"):
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or value < 0 or not math.isfinite(value):
                raise ConfigError(f"field '{name}': must be a non-negative number, got {value!r}")
        if self.lr <= 0:
            raise ConfigError(f"field 'lr': must be positive, got {self.lr!r}")
        if self.patience < 0 or self.num_workers < 0:
            raise ConfigError("fields 'patience' and 'num_workers' must not be negative")
        if self.max_steps is not None and (isinstance(self.max_steps, bool) or self.max_steps < 1):
            raise ConfigError(f"field 'max_steps': must be a positive integer or None, got {self.max_steps!r}")
        object.__setattr__(self, "betas", tuple(self.betas))
        object.__setattr__(self, "label_set", tuple(str(label) for label in self.label_set))
        if self.objective not in ("lm", "labels"):
            raise ConfigError(f"field 'objective': must be 'lm' or 'labels', got {self.objective!r}")
        if self.select_on not in ("loss", "accuracy"):
            raise ConfigError(f"field 'select_on': must be 'loss' or 'accuracy', got {self.select_on!r}")
        if (self.objective == "labels" or self.select_on == "accuracy") and len(self.label_set) < 2:
            raise ConfigError("objective 'labels' and select_on 'accuracy' need a label_set of two or more labels")
        if self.graph_lr is not None and not (self.graph_lr > 0 and math.isfinite(self.graph_lr)):
            raise ConfigError(f"field 'graph_lr': must be a positive number or None, got {self.graph_lr!r}")

    def to_dict(self) -> dict[str, Any]:
        values = asdict(self)
        values["betas"] = list(self.betas)
        values["label_set"] = list(self.label_set)
        return values

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> TrainConfig:
        unknown = sorted(set(values) - {f.name for f in fields(cls)})
        if unknown:
            raise ConfigError(f"unknown training config key(s): {', '.join(unknown)}")
        return cls(**values)


@dataclass(frozen=True)
class EpochStats:
    epoch: int
    train_loss: float
    val_loss: float | None
    seconds: float  # training and validation
    peak_rss_mib: float
    steps: int  # optimizer steps taken so far, in all
    lr: float  # learning rate of the last step
    batches: int  # micro-batches trained in this record (fewer than an epoch when cut by max_steps)
    val_predicted: dict[str, float] | None = None  # share of each predicted first answer token on validation
    val_gold: dict[str, float] | None = None  # the same for the gold answers
    collapse: str | None = None  # a warning when the predictions collapsed onto one answer
    train_seconds: float | None = None  # the training part of `seconds`
    val_accuracy: float | None = None  # with a label set: accuracy by label scoring on validation


@dataclass
class TrainHistory:
    epochs: list[EpochStats] = field(default_factory=list)
    curves: Path | None = None  # the loss curves as a PNG beside the checkpoints (`curves.write_curves`)
    best_epoch: int | None = None
    best_loss: float | None = None  # validation loss (training loss without validation samples)
    best_accuracy: float | None = None  # validation accuracy of the best epoch, with a label set
    best_checkpoint: Path | None = None
    last_checkpoint: Path | None = None
    steps: int = 0
    stop_reason: str = ""  # "epochs", "early-stopping", "max-steps"
    resumed_from: Path | None = None


def lr_at(progress_epochs: float, *, lr: float, min_lr: float, warmup_epochs: float, epochs: int) -> float:
    """Linear warm-up to `lr` over `warmup_epochs`, then half a cosine down to `min_lr` at `epochs`."""
    floor = min(min_lr, lr)
    if warmup_epochs > 0 and progress_epochs < warmup_epochs:
        return lr * progress_epochs / warmup_epochs
    span = max(epochs - warmup_epochs, 1e-12)
    fraction = min(max((progress_epochs - warmup_epochs) / span, 0.0), 1.0)
    return floor + (lr - floor) * 0.5 * (1.0 + math.cos(math.pi * fraction))


def epoch_order(sample_count: int, seed: int, epoch: int, lengths: Sequence[int] | None = None,
                batch_size: int = 1, pool_batches: int = 32) -> list[int]:
    """The shuffled sample order of one epoch; depends only on (seed, epoch), so resumes see the same order.

    With `lengths`, samples are grouped by length: the shuffled order is cut into pools of `pool_batches`
    batches, each pool is sorted by length and cut into batches, and the batches are shuffled again. Batches
    then hold samples of similar length (little padding) while every epoch still mixes the data."""
    generator = torch.Generator().manual_seed(seed * 100_003 + epoch)
    order = torch.randperm(sample_count, generator=generator).tolist()
    if lengths is None or batch_size <= 1:
        return order
    pool = batch_size * pool_batches
    batches: list[list[int]] = []
    for start in range(0, sample_count, pool):
        chunk = sorted(order[start:start + pool], key=lambda i: lengths[i])
        batches.extend(chunk[i:i + batch_size] for i in range(0, len(chunk), batch_size))
    full = [b for b in batches if len(b) == batch_size]
    short = [b for b in batches if len(b) < batch_size]  # keep the one short batch last, as without grouping
    shuffled = [full[i] for i in torch.randperm(len(full), generator=generator).tolist()] + short
    return [i for batch in shuffled for i in batch]


def balanced_draw(labels: Sequence[str], seed: int, epoch: int) -> list[int]:
    """As many sample indices as there are samples, drawn so that every label gets an equal share: the
    minority labels' samples repeat, the majority's are subsampled (a different subset each epoch). Depends only
    on (seed, epoch), like `epoch_order`, so resumes and ranks agree."""
    generator = torch.Generator().manual_seed(seed * 100_003 + epoch + 50_021)
    groups: dict[str, list[int]] = {}
    for index, label in enumerate(labels):
        groups.setdefault(label, []).append(index)
    drawn: list[int] = []
    for rank, members in enumerate(groups[label] for label in sorted(groups)):
        quota = len(labels) // len(groups) + (1 if rank < len(labels) % len(groups) else 0)
        repeats = -(-quota // len(members))
        picks = torch.cat([torch.randperm(len(members), generator=generator) for _ in range(repeats)])[:quota]
        drawn.extend(members[p] for p in picks.tolist())
    return drawn


def sample_length(sample: QASample) -> int:
    """A cheap proxy of a sample's token count, for grouping by length."""
    return len(sample.desc) + len(sample.question) + len(sample.label)


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # Linux reports KiB


def train(model: GraphQAModel, train_samples: Sequence[QASample], val_samples: Sequence[QASample],
          config: TrainConfig, checkpoint_dir: str | Path, progress: OnProgress | None = None) -> TrainHistory:
    """Train `model` in place; the best checkpoint is saved under checkpoint_dir/best. See the module docs.

    `progress` is told about every step and epoch (`_Reporter`); the CLI draws bars with the loss and ETA.
    """
    if not train_samples:
        raise InputError("no training samples")
    parameters = model.trainable_parameters()
    if not parameters:
        raise ConfigError(f"variant '{model.config.variant}' has no trainable parameters; nothing to train")
    checkpoint_dir = Path(checkpoint_dir)
    _seed_everything(config.seed)
    previous_threads = torch.get_num_threads()
    if config.threads:
        torch.set_num_threads(config.threads)
    lengths = [sample_length(sample) for sample in train_samples] if config.group_by_length else None
    optimizer = torch.optim.AdamW(parameter_groups(model, config), betas=config.betas)
    history = TrainHistory()
    state = _RunState()
    world = current_world()
    if config.resume and (checkpoint_dir / LAST).is_dir():
        state, records = _resume_state(model, optimizer, checkpoint_dir / LAST)
        history.epochs.extend(EpochStats(**record) for record in records)
        history.resumed_from = checkpoint_dir / LAST
    labels = list(config.label_set) or None
    weights = class_weights_for([s.label for s in train_samples], labels) \
        if labels and config.class_weighted else None
    loss_kwargs = {"choices": labels, "class_weights": weights} if config.objective == "labels" else {}
    engine = wrap(model, world)  # DDP around the model when launched by torchrun, else the model itself
    batches_per_epoch = math.ceil(len(shard(range(len(train_samples)), config.batch_size, world)) / config.batch_size)
    display = _Reporter(progress if world.main else None, total_steps=config.epochs * batches_per_epoch,
                        done=state.epoch * batches_per_epoch + state.batch_in_epoch)
    history.stop_reason = "epochs"
    try:
        while state.epoch < config.epochs:
            if _budget_spent(config, state):
                history.stop_reason = "max-steps"
                break
            started = time.perf_counter()
            if config.balance_labels:
                drawn = balanced_draw([sample.label for sample in train_samples], config.seed, state.epoch)
                positions = epoch_order(len(drawn), config.seed, state.epoch,
                                        [lengths[i] for i in drawn] if lengths else None,
                                        config.batch_size * world.size)
                order = [drawn[p] for p in positions]
            else:
                order = epoch_order(len(train_samples), config.seed, state.epoch, lengths,
                                    config.batch_size * world.size)
            order = shard(order, config.batch_size, world)
            losses, cut_short = _train_epoch(engine, optimizer, parameters, train_samples, order, config, state,
                                             batches_per_epoch, display, loss_kwargs)
            train_loss = mean_across(losses, world)  # this rank's mean when not distributed
            train_seconds = time.perf_counter() - started
            validation = evaluate(model, val_samples, config.eval_batch_size, config.num_workers, world=world,
                                  labels=labels, class_weights=weights) if val_samples else None
            val_loss = validation.loss if validation else None
            selection_loss = val_loss if val_loss is not None else train_loss
            if config.select_on == "accuracy" and validation is not None:
                selection_loss = -validation.accuracy
            record = EpochStats(epoch=state.epoch, train_loss=train_loss, val_loss=val_loss,
                                seconds=time.perf_counter() - started, peak_rss_mib=peak_rss_mib(),
                                steps=state.steps, lr=optimizer.param_groups[0]["lr"], batches=len(losses),
                                val_predicted=validation.predicted_shares if validation else None,
                                val_gold=validation.gold_shares if validation else None,
                                collapse=validation.collapse if validation else None,
                                train_seconds=train_seconds,
                                val_accuracy=validation.accuracy if validation else None)
            history.epochs.append(record)
            if losses and selection_loss < state.best_loss:
                state.best_loss, state.best_epoch = selection_loss, state.epoch
                if world.main:
                    save_checkpoint(model, checkpoint_dir / BEST, epoch=state.epoch, step=state.steps,
                                    metrics={"val_loss": val_loss, "train_loss": train_loss,
                                             "val_accuracy": record.val_accuracy})
            display.epoch_done(record)
            if not cut_short:
                state.epoch, state.batch_in_epoch = state.epoch + 1, 0
            if world.main:
                save_last(model, optimizer, checkpoint_dir / LAST, state, config.to_dict(),
                          [asdict(r) for r in history.epochs])
                _write_history(checkpoint_dir / HISTORY, config, history.epochs)
                history.curves = write_curves(history.epochs, checkpoint_dir / CURVES,
                                              title=f"{model.config.variant}: loss per epoch")
            barrier(world)  # no rank runs ahead of the checkpoints
            if cut_short:
                history.stop_reason = "max-steps"
                break
            if state.best_epoch is not None and state.epoch - 1 - state.best_epoch >= config.patience:
                history.stop_reason = "early-stopping"
                break
    finally:
        display.close()
        torch.set_num_threads(previous_threads)
    history.best_epoch = state.best_epoch
    best = next((r for r in reversed(history.epochs) if r.epoch == state.best_epoch), None)
    history.best_loss = None if best is None else (best.val_loss if best.val_loss is not None else best.train_loss)
    history.best_accuracy = None if best is None else best.val_accuracy
    history.best_checkpoint = checkpoint_dir / BEST if (checkpoint_dir / BEST).is_dir() else None
    history.last_checkpoint = checkpoint_dir / LAST
    history.steps = state.steps
    return history


# --- internals ------------------------------------------------------------------------------------------

def _train_epoch(model: torch.nn.Module, optimizer: torch.optim.Optimizer, parameters: list[torch.nn.Parameter],
                 samples: Sequence[QASample], order: list[int], config: TrainConfig, state: _RunState,
                 batches_per_epoch: int, display: _Reporter, loss_kwargs: dict | None = None
                 ) -> tuple[list[float], bool]:
    """Train the rest of one epoch; returns the micro-batch losses and whether max_steps cut it short. `model`
    is the GraphQAModel or the DDP wrapping it; `order` this rank's samples."""
    model.train()
    optimizer.zero_grad(set_to_none=True)
    start = state.batch_in_epoch
    remaining = order[start * config.batch_size:]
    losses: list[float] = []
    pending = 0
    for offset, batch in enumerate(_loader(samples, remaining, config.batch_size, config.num_workers)):
        index = start + offset
        if _budget_spent(config, state):
            return losses, True
        loss = model(batch, **(loss_kwargs or {}))
        if not torch.isfinite(loss):
            raise ModelError(f"training loss became {float(loss)} at epoch {state.epoch}, batch {index}; "
                             f"try a lower learning rate")
        (loss / config.grad_accum).backward()
        losses.append(float(loss.detach()))
        pending += 1
        state.batch_in_epoch = index + 1
        if pending == config.grad_accum or index + 1 == batches_per_epoch:
            # Complete windows average over grad_accum; a short last window is rescaled to its own size.
            if pending != config.grad_accum:
                for parameter in parameters:
                    if parameter.grad is not None:
                        parameter.grad.mul_(config.grad_accum / pending)
            lr = lr_at(state.epoch + (index + 1) / batches_per_epoch, lr=config.lr, min_lr=config.min_lr,
                       warmup_epochs=config.warmup_epochs, epochs=config.epochs)
            for group in optimizer.param_groups:  # every group follows the schedule, scaled to its own peak
                group["lr"] = lr * group.get("peak_lr", config.lr) / config.lr
            clip_grad_norm_(parameters, config.grad_clip)
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            pending = 0
            state.steps += 1
        display.batch_done(losses[-1], state.epoch)
    return losses, False


def _budget_spent(config: TrainConfig, state: _RunState) -> bool:
    return config.max_steps is not None and state.steps >= config.max_steps


def parameter_groups(model: GraphQAModel, config: TrainConfig) -> list[dict[str, Any]]:
    """AdamW groups: the LLM's trainable parameters (LoRA) at `lr`, everything else at `graph_lr`."""
    llm_side, graph_side = [], []
    for name, parameter in model.named_parameters():
        if parameter.requires_grad:
            (llm_side if name.startswith("llm.") else graph_side).append(parameter)
    groups = []
    for members, peak in ((llm_side, config.lr), (graph_side, config.graph_lr or config.lr)):
        if members:
            groups.append({"params": members, "lr": peak, "peak_lr": peak, "weight_decay": config.weight_decay})
    return groups


def _write_history(path: Path, config: TrainConfig, records: list[EpochStats]) -> None:
    import json

    partial = path.with_suffix(".partial")
    partial.write_text(json.dumps({"train_config": config.to_dict(), "epochs": [asdict(r) for r in records]},
                                  indent=2))
    partial.replace(path)


def _seed_everything(seed: int) -> None:
    random.seed(seed)
    torch.manual_seed(seed)


class _Reporter:
    """Training progress as `Progress` events (rank 0 only): "training" once (steps done, total), "step" per
    batch (the running loss), "epoch" per epoch (its `EpochStats`), "done" at the end. The CLI draws them."""

    def __init__(self, on_progress: OnProgress | None, *, total_steps: int, done: int):
        self.on_progress, self.total, self.done = on_progress, total_steps, done
        self._recent: list[float] = []
        notify(on_progress, "training", done, total_steps)

    def batch_done(self, loss: float, epoch: int) -> None:
        self.done += 1
        self._recent = (self._recent + [loss])[-20:]
        notify(self.on_progress, "step", self.done, self.total, epoch=epoch,
               loss=sum(self._recent) / len(self._recent))

    def epoch_done(self, record: EpochStats) -> None:
        notify(self.on_progress, "epoch", record.epoch + 1, None, record=record)

    def close(self) -> None:
        notify(self.on_progress, "done", self.done, self.total)

"""Training one of the paper's configurations on a stored dataset (`gqa train --config …`).

Samples come from the product's own retrieval (static, or the learned retriever where one is trained) and are
cached; the model is built from its frozen `ModelConfig` (the embedder's name and width filled in here) and trained
with a checkpoint every epoch (`train.trainer`). A per-sample dataset trained without --config gets its generator
registered where `gqa ask` finds it (`register_generator`). The CLI only parses options and shows progress.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path

from ..artifacts.registry import TrainedModels, load_trained
from ..errors import GqaError
from ..model.config import ModelConfig
from ..progress import OnProgress, Progress
from .data import build_samples, static_settings
from .distributed import World, barrier
from .trainer import TrainConfig, TrainHistory


@dataclass(frozen=True)
class ConfigurationRun:
    dataset: str
    model: ModelConfig  # the configuration (variant, GNN, LLM, ablations)
    training: TrainConfig
    out: Path  # checkpoints: OUT/best, OUT/last
    train_split: str = "train"
    val_split: str = "val"
    limit: int | None = None  # first N questions of each split
    retriever: str = "auto"  # as `gqa ask --retriever`
    retriever_checkpoint: Path | None = None
    device: str = "auto"


@dataclass
class ConfigurationResult:
    train_questions: int
    val_questions: int
    trainable_parameters: int
    total_parameters: int
    history: TrainHistory | None = None  # set when training has run (`on_start` sees the result before)


def retriever_for_dataset(store, embedder, dataset: str, kind: str = "auto", checkpoint: Path | None = None):
    """The retriever for a dataset's questions: `kind` as in `gqa ask` (auto: learned where trained); per-sample
    datasets: the static retriever, which searches each sample's graph whole."""
    from ..qa.qa import QA  # (training composes the library; the library never imports training)

    rows = store.questions(dataset, None)
    graph = rows[0]["graph"] if rows else None
    if graph is None or (store.graph_info(graph) or {}).get("kind") != "kg":
        graph = None
    return QA(store, embedder).retriever(graph, kind if graph else "static", checkpoint)


def dataset_samples(store, retriever, dataset: str, split: str, *, limit: int | None = None,
                    on_progress: OnProgress | None = None) -> list:
    """The samples of one split, retrieved once and cached (keyed by the retriever's settings)."""
    checkpoint = getattr(retriever, "checkpoint", None)
    settings = static_settings(retriever, dataset) if checkpoint is None else {
        "retriever": "learned", "checkpoint": str(checkpoint), "mtime": checkpoint.stat().st_mtime}

    def progress(p: Progress) -> None:
        if on_progress is not None:
            on_progress(Progress(p.stage, p.done, p.total, {**p.info, "split": f"{dataset}/{split}"}))

    return build_samples(store, retriever, dataset, split, limit=limit, settings=settings,
                         retrieve=lambda text, graph: retriever.retrieve(text, graph=graph, record=False).result,
                         on_progress=progress)


def train_configuration(open_store: Callable[[], AbstractContextManager], embedder, run: ConfigurationRun, *,
                        world: World, on_progress: OnProgress | None = None, on_training: OnProgress | None = None,
                        on_start: Callable[[ConfigurationResult], None] | None = None) -> ConfigurationResult:
    """Samples, model, training. `open_store()` opens the store for the retrieval phase only (a long training
    holds no connection); with several data-parallel processes, rank 0 retrieves (and caches) first and the others
    read the cache. `on_progress`: retrieving the samples; `on_training`: the trainer's steps and epochs."""
    from ..model.gretriever import build_model
    from .trainer import train

    config = run.model.replace(gnn_in_dim=embedder.dim, embedder=embedder.name)
    if world.distributed and not world.main:
        barrier(world)
    with open_store() as store:
        retriever = retriever_for_dataset(store, embedder, run.dataset, run.retriever, run.retriever_checkpoint)
        train_samples = dataset_samples(store, retriever, run.dataset, run.train_split, limit=run.limit,
                                        on_progress=on_progress)
        try:
            val_samples = dataset_samples(store, retriever, run.dataset, run.val_split, limit=run.limit,
                                          on_progress=on_progress)
        except GqaError:
            val_samples = []  # the training loss selects the best epoch
    if world.distributed and world.main:
        barrier(world)
    model = build_model(config, device=run.device)
    trainable, total = model.parameter_counts()
    result = ConfigurationResult(train_questions=len(train_samples),
                                 val_questions=len(val_samples), trainable_parameters=trainable,
                                 total_parameters=total)
    if on_start is not None:
        on_start(result)
    result.history = train(model, train_samples, val_samples, run.training, run.out, progress=on_training)
    return result


def register_generator(dataset: str, embedder_name: str, best: Path, folder: Path, history: TrainHistory) -> Path:
    """Move the best checkpoint to GQA_HOME/models/<dataset>/generator and record it in the manifest."""
    target = folder / "generator"
    if target.exists():
        shutil.rmtree(target)
    shutil.move(str(best), str(target))
    shutil.rmtree(folder / "generator-run", ignore_errors=True)
    models = load_trained(dataset) or TrainedModels(graph=dataset, dataset=dataset, embedder=embedder_name)
    models.with_part("generator", "generator", {"epochs": len(history.epochs), "best_epoch": history.best_epoch,
                                               "best_loss": history.best_loss}).save()
    return target

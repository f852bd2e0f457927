"""`gqa train | eval | train-retriever`: thin layers over `train.pipeline`, `train.trainer` and the retriever."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer
from rich.table import Table

from gretriever_neo4j.cli.app import app, console, store_session
from gretriever_neo4j.errors import GqaError


@app.command("train-retriever")
def train_retriever_command(
    dataset: Optional[str] = typer.Option(None, "--dataset", "-d", help="the dataset of the training questions "
                                          "(metaqa, webqsp, or a graph's name for `gqa ingest questions`) [default: "
                                          "the one holding --graph's questions]"),
    graph: Optional[str] = typer.Option(None, "--graph", help="the stored KG [default: the graph its questions "
                                        "are asked over]"),
    limit: Optional[int] = typer.Option(None, "--limit", min=1, help="first N training questions"),
    epochs: int = typer.Option(8, "--epochs", min=1),
    max_edges: int = typer.Option(200, "--max-edges", min=1, help="subgraph budget at retrieval time"),
    out: Optional[Path] = typer.Option(None, "--out", "-o", help="default ~/.cache/gqa/retrievers/GRAPH.pt"),
    embedder: Optional[str] = typer.Option(None, "--embedder"),
) -> None:
    """Train the learned retriever alone (question-conditioned triple scorer) on weak labels from a stored KG.
    `gqa train --graph G` trains it together with the reader."""
    from gretriever_neo4j.embedding.embedder import Embedder
    from gretriever_neo4j.train.learned_retriever import train_learned_retriever

    with store_session() as store:
        dataset, graph = resolve_dataset(store, dataset, graph)
    model = Embedder(embedder)

    def progress(p) -> None:
        if p.stage == "epoch":
            console.print(f"epoch {p.done}/{p.total}: loss {p.info['loss']:.4f} ({p.info['seconds']:.0f} s)")
        elif p.stage == "labels" and (p.done == p.total or p.done % 2000 == 0):
            console.print(f"weak labels {p.done:,}/{p.total:,}")

    with store_session() as store:
        trained = train_learned_retriever(store, model, dataset, graph=graph, limit=limit, epochs=epochs,
                                          max_edges=max_edges, out=out, progress=progress)
    console.print(f"trained on {trained.questions:,} questions in {trained.seconds:.0f} s; "
                  f"checkpoint {trained.path}")


def resolve_dataset(store, dataset: Optional[str], graph: Optional[str]) -> tuple[str, Optional[str]]:
    """(dataset, graph) from --dataset and --graph: either may be left out when the other tells it."""
    if dataset is None and graph is None:
        raise GqaError("give --graph NAME (a stored graph with questions) or --dataset NAME")
    if dataset is None:
        held = store.question_datasets(graph)
        if not held:
            raise GqaError(f"no questions are stored for graph {graph!r}: add some with `gqa ingest questions "
                           f"--graph {graph} --source FILE`" if store.graph_info(graph) is not None else
                           f"no stored graph is called {graph!r} (see `gqa stats`)")
        if len(held) > 1:
            raise GqaError(f"graph {graph!r} has questions of several datasets "
                           f"({', '.join(row['dataset'] for row in held)}): choose one with --dataset")
        dataset = held[0]["dataset"]
    return dataset, graph


class _TrainProgress:
    """`gqa train`'s progress: a bar with its rate, elapsed time and ETA for each counted stage (weak labels,
    subgraphs retrieved for the reader, epochs of each model), a line for everything else."""

    def __init__(self):
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self.bars = Progress(TextColumn("  {task.description}"), BarColumn(), MofNCompleteColumn(),
                             TextColumn("{task.fields[note]}"), TimeElapsedColumn(), TimeRemainingColumn(),
                             console=console)
        self.tasks: dict[str, int] = {}
        self.part = "training"

    def __enter__(self) -> _TrainProgress:
        self.bars.start()
        return self

    def __exit__(self, *exc) -> None:
        self.bars.stop()

    def _bar(self, key: str, done: int, total: int, note: str = "") -> None:
        if key not in self.tasks:
            self.tasks[key] = self.bars.add_task(key, total=total, note=note)
        self.bars.update(self.tasks[key], completed=done, total=total, note=note)

    def __call__(self, p) -> None:
        say, stage, info = self.bars.console.print, p.stage, p.info
        if stage == "labels":
            self._bar("weak labels", p.done, p.total)
        elif stage == "retrieve":
            self._bar(f"retrieved {info['split']} subgraphs", p.done, p.total)
        elif stage == "epoch":
            self._bar(f"{self.part} epochs", p.done, p.total, note=f"loss {info['loss']:.4f}")
        elif stage == "stage":
            text = info["text"]
            self.part = ("reader" if text.startswith("reader") else "retriever" if "retriever" in text
                         else "generator" if "generator" in text else self.part)
            say(f"[bold]{text}[/]")
        elif stage == "synthesis":
            say(f"  {info['questions']:,} questions from {info['paths']:,} relation paths "
                f"({info['signatures']:,} relation signatures) in {info['seconds']:.1f} s; most frequent: "
                + ", ".join(f"{k} {v}" for k, v in list(info["paths_per_signature"].items())[:8]))
        elif stage == "reader":
            say("  reader on validation: " + ", ".join(f"{k} {v:.4f}" if isinstance(v, float) else f"{k} {v}"
                                                      for k, v in info.items()))


def _write_graph_curves(models) -> None:
    """The retriever's and the reader's loss per epoch, as a PNG in the graph's models folder."""
    from gretriever_neo4j.train.curves import write_loss_curves

    series = {f"{part} loss": models.details.get(part, {}).get("epoch_losses", [])
              for part in ("retriever", "reader")}
    path = write_loss_curves(series, models.folder / "curves.png", title=f"gqa train --graph {models.graph}")
    if path is not None:
        console.print(f"loss curves: {path}")


@app.command()
def train(
    dataset: Optional[str] = typer.Option(None, "--dataset", "-d", help="explagraphs | scenegraphs | webqsp | "
                                          "metaqa | any stored dataset with questions [default: --graph's]"),
    graph: Optional[str] = typer.Option(None, "--graph", help="a stored graph with questions (`gqa ingest "
                                        "questions`); KG training uses its questions only"),
    variant: Optional[str] = typer.Option(None, "--config", "-c", help="one of the paper's configurations "
                                          "(prompt-tuning | g-retriever | lora | g-retriever-lora), trained into "
                                          "--out; without it, a knowledge graph's retriever, reader (and "
                                          "--generator) are trained into GQA_HOME and used by `gqa ask`"),
    generator: bool = typer.Option(False, "--generator/--no-generator", help="KG: also train a G-Retriever "
                                   "generator for grounded answers (CPU minutes)"),
    reader_questions: int = typer.Option(6000, "--reader-questions", min=1, help="KG: training questions for the "
                                         "reader"),
    generator_questions: int = typer.Option(600, "--generator-questions", min=1),
    gnn: str = typer.Option("graph-transformer", "--gnn", help="graph-transformer | gat | gcn"),
    llm: Optional[str] = typer.Option(None, "--llm", help="HF causal LM id or path [default smollm2-135m]"),
    out: Path = typer.Option(Path("checkpoints/run"), "--out", "-o", help="--config: checkpoint folder (best/, last/)"),
    seed: int = typer.Option(0, "--seed"),
    epochs: int = typer.Option(10, "--epochs", min=1),
    batch_size: int = typer.Option(8, "--batch-size", min=1),
    grad_accum: int = typer.Option(2, "--grad-accum", min=1),
    lr: float = typer.Option(1e-5, "--lr", min=0.0),
    patience: int = typer.Option(2, "--patience", min=1),
    max_steps: Optional[int] = typer.Option(None, "--max-steps", min=1),
    train_split: str = typer.Option("train", "--train-split"),
    val_split: str = typer.Option("val", "--val-split"),
    limit: Optional[int] = typer.Option(None, "--limit", min=1, help="first N questions of each split"),
    gnn_hidden: Optional[int] = typer.Option(None, "--gnn-hidden", min=1),
    gnn_layers: Optional[int] = typer.Option(None, "--gnn-layers", min=1),
    no_graph_encoder: bool = typer.Option(False, "--no-graph-encoder", help="ablation: w/o graph encoder"),
    no_projector: bool = typer.Option(False, "--no-projector", help="ablation: w/o projection layer"),
    no_textualized_graph: bool = typer.Option(False, "--no-textualized-graph", help="ablation: w/o textualized graph"),
    resume: bool = typer.Option(False, "--resume", help="continue from OUT/last"),
    device: str = typer.Option("auto", "--device"),
    embedder: Optional[str] = typer.Option(None, "--embedder"),
    retriever_kind: str = typer.Option("auto", "--retriever", help="--config: auto | static | learned"),
    retriever_checkpoint: Optional[Path] = typer.Option(None, "--retriever-checkpoint"),
    balance_labels: bool = typer.Option(False, "--balance-labels", help="--config: every answer label equally "
                                        "often per epoch (label tasks such as ExplaGraphs)"),
    nproc: int = typer.Option(1, "--nproc", min=1, help="--config: data-parallel processes (torchrun + DDP; one "
                              "per GPU, or CPU processes with gloo); --batch-size is per process"),
    synthesize: str = typer.Option("auto", "--synthesize", help="KG: self-supervised questions made from the graph's "
                                   "relation paths: auto (when it has fewer than --min-real-questions training "
                                   "questions) | always (mixed with the real ones) | never"),
    synthetic_paths: int = typer.Option(4000, "--synthetic-paths", min=1, help="KG: relation paths sampled for "
                                        "self-supervised questions (2 phrasings each)"),
    min_real_questions: int = typer.Option(500, "--min-real-questions", min=0),
    write_questions: Optional[Path] = typer.Option(None, "--write-questions", help="KG: write the self-supervised "
                                                   "questions here (JSON lines that `gqa ingest questions` reads)"),
    cold: bool = typer.Option(False, "--cold", help="KG: train everything again, though the graph is unchanged "
                              "since the last run (by default only the reader adapts to its new questions)"),
    synthetic_reader: bool = typer.Option(False, "--synthetic-reader", help="KG with no questions: also train a "
                                          "reader on the synthesized questions (`gqa ask` keeps the zero-shot reader; "
                                          "use it with --reader)"),
) -> None:
    """Train on a stored graph's questions: everything `gqa ask` uses for a KG (default), or one of the paper's
    configurations (--config)."""
    import os

    from gretriever_neo4j.embedding.embedder import Embedder

    if nproc > 1 and "WORLD_SIZE" not in os.environ:
        if variant is None:
            raise GqaError("--nproc applies to the paper's configurations: give --config")
        raise typer.Exit(_relaunch_distributed(nproc))
    from gretriever_neo4j.train.distributed import init_from_environment

    world = init_from_environment()
    if world.distributed and device == "auto":
        import torch

        device = f"cuda:{os.environ.get('LOCAL_RANK', '0')}" if torch.cuda.is_available() else "cpu"

    with store_session() as store:
        if variant is None and dataset is None and graph is not None and not store.question_datasets(graph):
            if store.graph_info(graph) is None:
                raise GqaError(f"no stored graph is called {graph!r} (see `gqa stats`)")
            dataset = None  # a graph with no questions: trained on questions made from itself
        else:
            dataset, graph = resolve_dataset(store, dataset, graph)
    model_embedder = Embedder(embedder)
    registered = None
    if variant is None:
        with store_session() as store:
            kinds = {(store.graph_info(q["graph"]) or {}).get("kind")
                     for q in (store.questions(dataset, train_split)[:1] if dataset else [])}
        if kinds == {"per-sample"}:
            # One graph per question: the generator is what can be trained; it goes where `gqa ask` finds it.
            from gretriever_neo4j.artifacts.registry import models_dir

            variant, registered = "g-retriever", models_dir(dataset)
            out = registered / "generator-run"
            console.print(f"{dataset} has one graph per question: training the g-retriever generator into "
                          f"{registered}")
    if variant is None:
        from gretriever_neo4j.train.pipeline import GraphTrainingOptions, train_graph

        with store_session() as store:
            options = GraphTrainingOptions(generator=generator, reader_questions=reader_questions,
                                           generator_questions=generator_questions, llm=llm, device=device,
                                           seed=seed, retriever_questions=limit, graph=graph, synthesize=synthesize,
                                           synthetic_paths=synthetic_paths, min_real_questions=min_real_questions,
                                           write_questions=write_questions, synthetic_reader=synthetic_reader,
                                           warm_start=not cold)
            with _TrainProgress() as progress:
                models = train_graph(store, model_embedder, dataset, options, progress=progress)
        console.print(f"[green]trained for graph {models.graph!r}[/]: {models.describe()}")
        _write_graph_curves(models)
        if models.zero_shot_reader_chosen:
            retriever = {"paths": "relation paths", "learned": "the learned retriever"}.get(
                models.chosen_retriever or "", "the retrieval chosen before")
            fewshot = models.fewshot
            adapted = (f", adapted to its {fewshot['questions']} own questions (strict Hit@1 on them "
                       f"{fewshot['before']:.2f} -> {fewshot['after']:.2f}, cross-validated)"
                       if models.lexicon or models.walk_encoder
                       else f" (adapting to its {fewshot['questions']} own questions measured no better)"
                       if fewshot.get("questions") else "")
            console.print(f"`gqa ask --graph {models.graph} \"…\"` now retrieves with {retriever} and answers with "
                          f"the zero-shot reader{adapted}")
        else:
            console.print(f"`gqa ask --graph {models.graph} \"…\"` now uses them")
        return
    from gretriever_neo4j.model.config import ModelConfig
    from gretriever_neo4j.train.configurations import ConfigurationRun, register_generator, train_configuration
    from gretriever_neo4j.train.trainer import TrainConfig

    run = ConfigurationRun(
        dataset=dataset, out=out, train_split=train_split, val_split=val_split, limit=limit, device=device,
        retriever=retriever_kind, retriever_checkpoint=retriever_checkpoint,
        model=ModelConfig(variant=variant, gnn=gnn, **({"llm": llm} if llm else {}),
                          **({"gnn_hidden": gnn_hidden} if gnn_hidden else {}),
                          **({"gnn_layers": gnn_layers} if gnn_layers else {}),
                          use_graph_encoder=not no_graph_encoder, use_projector=not no_projector,
                          use_textualized_graph=not no_textualized_graph),
        training=TrainConfig(lr=lr, batch_size=batch_size, grad_accum=grad_accum, epochs=epochs, patience=patience,
                             seed=seed, max_steps=max_steps, resume=resume, balance_labels=balance_labels))

    def started(result) -> None:
        if world.main:
            console.print(f"{variant}: {result.trainable_parameters:,} trainable of {result.total_parameters:,} "
                          f"parameters; {result.train_questions} train / {result.val_questions} val samples; "
                          f"checkpoints in {out}" + (f"; {world.size} data-parallel processes"
                                                     if world.distributed else ""))
            if not result.val_questions:
                console.print(f"[yellow]no {val_split!r} questions: the training loss selects the best epoch[/]")

    with _SampleBars() as bars:
        result = train_configuration(store_session, model_embedder, run, world=world, on_progress=bars,
                                     on_training=_TrainingBars(), on_start=started)
    if world.main:
        _show_history(result.history, f"gqa train {dataset} {variant}")
        if registered is not None and result.history.best_checkpoint is not None:
            target = register_generator(dataset, model_embedder.name, result.history.best_checkpoint, registered,
                                        result.history)
            console.print(f"[green]registered[/]: `gqa ask` answers {dataset} questions with {target}")


def _show_history(history, title: str) -> None:
    table = Table(title=f"{title} ({history.stop_reason})")
    for column in ("epoch", "train loss", "val loss", "seconds", "peak RSS MiB", "collapse"):
        table.add_column(column, justify="right")
    for e in history.epochs:
        table.add_row(str(e.epoch), f"{e.train_loss:.4f}", "" if e.val_loss is None else f"{e.val_loss:.4f}",
                      f"{e.seconds:.0f}", f"{e.peak_rss_mib:.0f}", "yes" if e.collapse else "")
    console.print(table)
    console.print(f"best checkpoint: {history.best_checkpoint}")
    if history.curves is not None:
        console.print(f"loss curves: {history.curves}")


class _TrainingBars:
    """The trainer's progress (`train.trainer`): one bar over all steps with the running loss and ETA, a line per
    epoch with its losses, validation accuracy and answer shares, and a collapse warning when flagged."""

    def __init__(self):
        self.bars = None

    @staticmethod
    def _make_bars():
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        return Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                        TextColumn("loss {task.fields[loss]}"), TimeElapsedColumn(), TextColumn("ETA"),
                        TimeRemainingColumn(), console=console, transient=False)

    def __call__(self, p) -> None:  # called once per training step: the bar is made once, at "training"
        if p.stage == "training":
            self.bars = self._make_bars()
            self.task = self.bars.add_task("training", total=p.total, completed=p.done, loss="-")
            self.bars.start()
        elif self.bars is None:
            return
        elif p.stage == "step":
            self.bars.update(self.task, completed=p.done, description=f"epoch {p.info['epoch'] + 1}",
                             loss=f"{p.info['loss']:.4f}")
        elif p.stage == "epoch":
            record, say = p.info["record"], self.bars.console.print
            val = "-" if record.val_loss is None else f"{record.val_loss:.4f}"
            say(f"epoch {record.epoch + 1}: train loss {record.train_loss:.4f}, val loss {val}, "
                f"{record.seconds:.1f}s, peak RSS {record.peak_rss_mib:.0f} MiB"
                + ("" if record.val_accuracy is None else f", val accuracy {record.val_accuracy:.3f}"))
            if record.val_predicted:
                shares = ", ".join(f"{token} {share:.0%}" for token, share in list(record.val_predicted.items())[:4])
                say(f"  validation answers start with: {shares}")
            if record.collapse:
                say(f"  [bold yellow]warning:[/] {record.collapse}")
        elif p.stage == "done":
            self.bars.stop()


class _SampleBars:
    """A transient bar per split while its samples are retrieved (`train.data.build_samples`)."""

    def __init__(self):
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

        self.bars = Progress(TextColumn("[bold]retrieving {task.description}"), BarColumn(), MofNCompleteColumn(),
                             TimeRemainingColumn(), console=console, transient=True)
        self.tasks: dict[str, int] = {}

    def __enter__(self) -> _SampleBars:
        self.bars.start()
        return self

    def __exit__(self, *exc) -> None:
        self.bars.stop()

    def __call__(self, p) -> None:
        split = p.info.get("split", p.stage)
        if split not in self.tasks:
            self.tasks[split] = self.bars.add_task(split, total=p.total)
        self.bars.update(self.tasks[split], completed=p.done, total=p.total)


def _relaunch_distributed(nproc: int) -> int:
    """Run this very command again under torchrun with `nproc` processes (without --nproc); its exit code."""
    import subprocess
    import sys

    argv, skip = [], False
    for arg in sys.argv[1:]:
        if skip:
            skip = False
        elif arg == "--nproc":
            skip = True
        elif not arg.startswith("--nproc="):
            argv.append(arg)
    command = [sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc_per_node={nproc}",
               "-m", "gretriever_neo4j", *argv]
    console.print(f"data-parallel training in {nproc} processes: {' '.join(command[1:])}")
    return subprocess.run(command).returncode


@app.command("eval")
def evaluate(
    dataset: str = typer.Option(..., "--dataset", "-d"),
    split: str = typer.Option("test", "--split"),
    checkpoint: Optional[Path] = typer.Option(None, "--checkpoint", help="default: the LLM alone (inference-only)"),
    llm: Optional[str] = typer.Option(None, "--llm"),
    limit: Optional[int] = typer.Option(None, "--limit", min=1),
    batch_size: int = typer.Option(8, "--batch-size", min=1),
    max_new_tokens: Optional[int] = typer.Option(None, "--max-new-tokens", min=1),
    out: Optional[Path] = typer.Option(None, "--out", "-o", help="JSON with every prediction "
                                       "[default eval-DATASET-SPLIT.json]"),
    device: str = typer.Option("auto", "--device"),
    embedder: Optional[str] = typer.Option(None, "--embedder"),
    retriever_kind: str = typer.Option("static", "--retriever", help="static | learned | auto"),
    retriever_checkpoint: Optional[Path] = typer.Option(None, "--retriever-checkpoint"),
) -> None:
    """Score a generator checkpoint (or the LLM alone) on a stored split as the paper does: free text (labels
    for ExplaGraphs), Hit@1, strict Hit@1, F1 or accuracy, and the automated hallucination check. Grounded
    answers are scored by `gqa ask --questions`."""
    import time as _time

    from gretriever_neo4j import metrics
    from gretriever_neo4j.answering.answering import Answering
    from gretriever_neo4j.embedding.embedder import Embedder
    from gretriever_neo4j.model.citations import check_citations, summarize_citations
    from gretriever_neo4j.model.prompts import LABEL_SETS
    from gretriever_neo4j.train.configurations import dataset_samples, retriever_for_dataset
    from gretriever_neo4j.train.trainer import predict

    model_embedder = Embedder(embedder)
    with store_session() as store, _SampleBars() as bars:
        retriever = retriever_for_dataset(store, model_embedder, dataset, retriever_kind, retriever_checkpoint)
        samples = dataset_samples(store, retriever, dataset, split, limit=limit, on_progress=bars)
    with console.status("loading the model…"):
        model = Answering(model_embedder, checkpoint=checkpoint, llm=llm, device=device).generator()
    started = _time.perf_counter()
    with console.status(f"generating {len(samples)} answers…"):
        predictions = predict(model, samples, batch_size=batch_size, max_new_tokens=max_new_tokens,
                              labels=LABEL_SETS.get(dataset))
    seconds = _time.perf_counter() - started
    checks = [check_citations(s.desc, p) for s, p in zip(samples, predictions)]
    citations = summarize_citations(checks)
    scores: dict[str, float] = {}
    if dataset == "explagraphs":
        scores["accuracy"] = metrics.score_explagraphs(predictions, [s.label for s in samples])
    elif dataset == "scenegraphs":
        scores["accuracy"] = metrics.score_scenegraphs(predictions, [s.label for s in samples])
    else:
        qa = metrics.score_open_questions(predictions, [s.answers for s in samples])
        scores.update({k: float(v) for k, v in qa.__dict__.items() if isinstance(v, (int, float))})
    scores.update({"citations_nodes_valid": citations.nodes_valid_fraction,
                   "citations_edges_valid": citations.edges_valid_fraction,
                   "answers_all_citations_valid": citations.all_valid_fraction})
    table = Table(title=f"gqa eval {dataset}/{split} — {model.config.variant} / {model.config.llm} "
                        f"({len(samples)} questions, {seconds:.0f} s)")
    table.add_column("metric")
    table.add_column("value", justify="right")
    for name, value in scores.items():
        table.add_row(name, f"{value:.4f}")
    console.print(table)
    out = out or Path(f"eval-{dataset}-{split}.json")
    out.write_text(json.dumps({
        "dataset": dataset, "split": split, "checkpoint": str(checkpoint) if checkpoint else None,
        "model": model.config.to_dict(), "scores": scores, "seconds": seconds,
        "predictions": [{"qid": s.qid, "prediction": p, "answers": s.answers, "label": s.label,
                         "citations_all_valid": c.all_valid} for s, p, c in zip(samples, predictions, checks)],
    }, indent=1))
    console.print(f"predictions written to {out}")

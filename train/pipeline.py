"""`gqa train --graph G` (or `--dataset D`): train what a stored graph's questions allow, into GQA_HOME (`registry`).

For a knowledge graph with training questions:
1. the **learned retriever** (when questions name their topic entities), on weak labels (`retrieval.learned`);
2. the **reader**, on the subgraphs that retriever returns for training questions (retrieval runs in memory
   over the KG read once from Neo4j: the same algorithm the Neo4j-backed adapter runs), its answer threshold
   calibrated on validation questions;
3. optionally the **generator**: G-Retriever (graph token + evidence text) taught to say the gold answers as
   node names under the grounded prompt, on a sample of training questions (CPU minutes, see `generator_*`).
Each part is saved as soon as it is trained, and the manifest is rewritten after it, so an interrupted run
keeps what it finished. Nothing here knows a relation name or a dataset's format.

A graph with no training questions (or fewer than `min_real_questions`) gets **self-supervised** ones
(`retrieval.synthesize`: relation paths sampled from the graph, phrased from its relation names, the nodes they
reach as answers), mixed with whatever real questions it has; the retriever trains on them exactly as on real
ones. Then the learned retriever and zero-shot relation-path retrieval are measured on held-out questions (answer
in the retrieved subgraph), and the learned one retrieves for this graph from then on only where it leads by a
margin (`details["retrieval_choice"]`, read by `qa.QA`): measured on its own training distribution, it flatters
itself. With fewer real questions than `min_real_questions`, `gqa ask` answers with the zero-shot reader
(`details["reader_choice"]`, read by `answering.Answering`), adapted to the real ones where cross-validation on them
measured that no worse (`train.fewshot`: the graph's lexicon, and the walk encoder tuned on them): a reader
trained on synthesized questions learns their phrasing and reads people's questions worse, so none is trained
unless asked for (`synthetic_reader`) or a generator needs one. A graph unchanged since its last such run
(`details["graph_state"]`) only adapts the reader again (warm).
"""

from __future__ import annotations

import dataclasses
import shutil
import time
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from ..artifacts.registry import TrainedModels, load_trained, models_dir
from ..errors import ConfigError
from ..progress import OnProgress, notify
from .fewshot import EncoderAdaptation

WALK_ENCODER = "walk_encoder"  # the graph's own walk encoder: a folder per training (`artifacts.registry`)


@dataclass(frozen=True)
class GraphTrainingOptions:
    graph: str | None = None
    retriever: bool = True
    retriever_epochs: int = 8
    retriever_questions: int | None = None  # all by default
    max_edges: int = 200  # the learned retriever's subgraph budget
    reader_questions: int = 6000
    reader_val_questions: int = 1000
    reader_epochs: int = 12
    generator: bool = False
    generator_questions: int = 600
    generator_epochs: int = 1
    generator_lr: float = 2e-4
    llm: str | None = None
    device: str = "auto"
    seed: int = 0
    synthesize: str = "auto"  # self-supervised questions: auto (too few real ones) | always | never
    synthetic_paths: int = 4000  # relation paths sampled (2 phrasings each)
    synthetic_retriever_questions: int = 4000  # self-supervised: the learned retriever's share (CPU time)
    synthetic_retriever_epochs: int = 3
    min_real_questions: int = 500
    write_questions: Path | None = None  # where the synthesized questions go (JSON lines, `gqa ingest questions`)
    choice_questions: int = 300  # held-out questions measuring learned vs relation-path retrieval
    synthetic_reader: bool = False  # no real question: also train the reader on synthesized ones (not used by ask)
    warm_start: bool = True  # a graph unchanged since its last training: only the reader adapts to its questions
    encoder_adaptation: EncoderAdaptation = EncoderAdaptation()  # the walk encoder tuned on the graph's questions


# On questions synthesized from the graph, the learned retriever is measured on its own training distribution: it
# must beat relation paths (which the zero-shot reader was built to read) by this much in answer-in-subgraph: a
# small lead there can hide a loss on people's questions.
SYNTHETIC_CHOICE_MARGIN = 0.03


def _sample(rows: list[dict], count: int | None, seed: int) -> list[dict]:
    if count is None or len(rows) <= count:
        return rows
    picks = np.random.default_rng(seed).choice(len(rows), size=count, replace=False)
    return [rows[i] for i in sorted(picks.tolist())]


def train_graph(store, embedder, dataset: str | None, options: GraphTrainingOptions = GraphTrainingOptions(),
                progress: OnProgress | None = None) -> TrainedModels:
    from ..retrieval.kg import KnowledgeGraph

    report = _Reporter(progress)
    if options.synthesize not in ("auto", "always", "never"):
        raise ConfigError(f"synthesize must be auto, always or never, not {options.synthesize!r}")
    graph = options.graph
    train_rows = [q for q in store.questions(dataset, "train") if q["answers"]] if dataset else []
    val_rows = [q for q in store.questions(dataset, "val") if q["answers"]] if dataset else []
    graph = graph or (train_rows[0]["graph"] if train_rows else None)
    if graph is None:
        raise ConfigError(f"no stored questions with answers for dataset {dataset!r}, split 'train': ingest a graph "
                          f"with questions first (a dataset loader, or `gqa ingest questions`), or give --graph to "
                          f"train on questions made from the graph itself")
    train_rows = [q for q in train_rows if q["graph"] == graph]
    val_rows = [q for q in val_rows if q["graph"] == graph]
    info = store.graph_info(graph)
    if info is None:
        raise ConfigError(f"no stored graph is called {graph!r} (see `gqa stats`)")
    if info["kind"] != "kg":
        raise ConfigError(f"graph {graph!r} is a per-sample dataset: train a generator with `gqa train --dataset "
                          f"{dataset or info['dataset']} --config g-retriever`")
    dataset = dataset or info["dataset"]
    self_supervised = options.synthesize == "always" or (
        options.synthesize == "auto" and len(train_rows) < options.min_real_questions)
    if not train_rows and not self_supervised:
        raise ConfigError(f"dataset {dataset!r} has no 'train' questions with answers over graph {graph!r} (and "
                          f"--synthesize never)")
    report("stage", text=f"reading graph {graph!r} from Neo4j")
    started = time.perf_counter()
    kg = KnowledgeGraph.from_store(store, graph)
    report("stage", text=f"graph: {kg.num_nodes:,} nodes, {kg.num_edges:,} edges "
                              f"({time.perf_counter() - started:.0f} s)")
    models = load_trained(graph) or TrainedModels(graph=graph, dataset=dataset, embedder=embedder.name)
    if models.embedder != embedder.name:  # a new embedder invalidates everything trained before
        models = TrainedModels(graph=graph, dataset=dataset, embedder=embedder.name)
    folder = models_dir(graph)
    real_rows = train_rows + val_rows
    few_real = len(train_rows) < options.min_real_questions  # `gqa ask` reads with the zero-shot reader, adapted
    state = {"nodes": kg.num_nodes, "edges": kg.num_edges}
    if (self_supervised and few_real and options.warm_start and not (options.synthetic_reader or options.generator)
            and models.details.get("graph_state") == state
            and models.details.get("synthesis") and models.chosen_retriever is not None
            and (models.retriever or models.chosen_retriever == "paths")):
        # The graph is as it was when its retrieval was trained on questions made from it; what changed is its own
        # questions (feedback): only what reads them is learned again (seconds, not the retriever's minutes).
        report("stage", text="graph unchanged since the last `gqa train`: retrieval kept, the reader adapts to the "
                             "graph's own questions (--cold trains everything again)")
        retriever = (_PathsAsLearned(kg, embedder) if models.chosen_retriever == "paths"
                     else _load_retriever(kg, folder / models.retriever, embedder))
        models = _adapt_reader(kg, retriever, embedder, real_rows, models, folder, options, report)
        models.save()
        return models
    synthesis = None
    real_questions = len(train_rows)
    if self_supervised:
        synthetic_train, synthetic_val, synthesis = _synthesize(kg, graph, options, report)
        train_rows, val_rows = train_rows + synthetic_train, val_rows + synthetic_val

    if synthesis is not None:
        models = _with_details(models, "synthesis", synthesis)
    else:  # trained on real questions: the learned retriever answers, as before any self-supervised run
        models = replace(models, details={k: v for k, v in models.details.items()
                                          if k not in ("synthesis", "retrieval_choice", "reader_choice")})
    retriever = None
    with_topics = [q for q in train_rows if q["topic_entities"]]
    opaque = _has_opaque_nodes(kg)
    if self_supervised:  # template questions are easy to fit: fewer of them, fewer epochs (minutes, not an hour)
        options = replace(options, retriever_epochs=min(options.retriever_epochs, options.synthetic_retriever_epochs),
                          retriever_questions=min(options.retriever_questions or len(with_topics),
                                                  options.synthetic_retriever_questions))
    if options.retriever and with_topics:
        rows = _sample(with_topics, options.retriever_questions, options.seed)
        retriever, details = _train_retriever(kg, rows, embedder, options, folder / "retriever.pt", report,
                                              max_hops=4 if opaque else 3)
        models = models.with_part("retriever", "retriever.pt", details)
        models.save()
    elif models.retriever:
        retriever = _load_retriever(kg, folder / models.retriever, embedder)
    if self_supervised and retriever is not None:
        choice = _choose_retriever(kg, retriever, embedder, val_rows, options, report)
        models = _with_details(models, "retrieval_choice", choice)
        models.save()
        if choice["retriever"] == "paths":
            retriever = _PathsAsLearned(kg, embedder)

    models = _with_details(models, "graph_state", state)
    if few_real:
        models = _adapt_reader(kg, retriever, embedder, real_rows, models, folder, options, report)
        models.save()
    if few_real and not (options.synthetic_reader or options.generator):
        # `gqa ask` would not use it (below): on a graph of 387 edges it was 15 of the 26 minutes
        report("stage", text="reader: not trained (too few real questions: `gqa ask` answers with the zero-shot "
                             "reader; --synthetic-reader trains one on the synthesized questions)")
        models.save()
        return models
    reader_train = _sample(train_rows, options.reader_questions, options.seed)
    reader_val = _sample(val_rows, options.reader_val_questions, options.seed)
    items_train = _reader_inputs(kg, retriever, embedder, reader_train, report, "train")
    items_val = _reader_inputs(kg, retriever, embedder, reader_val, report, "val")
    reader_path, details = _train_reader(items_train, reader_train, items_val, reader_val, embedder, graph, dataset,
                                         options, folder / "reader.pt", report, max_hops=4 if opaque else 3)
    models = models.with_part("reader", reader_path.name, details)
    # Trained with fewer real questions than `min_real_questions`, the reader learns the synthesized questions'
    # phrasing, not how people ask, and reads people's questions worse than the zero-shot reader adapted to the real
    # ones (`_adapt_reader`). So `gqa ask` keeps that one (the trained one stays in the folder: `gqa ask --reader
    # …/reader.pt`).
    if not few_real:
        models = _with_details(models, "reader_choice", {
            "reader": "trained", "real_questions": real_questions, "why": "trained on the graph's own questions"})
    models.save()

    if options.generator:
        details = _train_generator(reader_path, items_train, reader_train, items_val, reader_val, embedder, options,
                                   folder / "generator", report)
        if details is not None:
            models = models.with_part("generator", "generator", details)
            models.save()
    return models


# -- parts ------------------------------------------------------------------------------------------------

def _adapt_reader(kg, retriever, embedder, rows, models: TrainedModels, folder: Path, options: GraphTrainingOptions,
                  report) -> TrainedModels:
    """The zero-shot reader adapted to the graph's own questions (`rows`, real ones: ingested or feedback): its
    lexicon, kept where cross-validation measured it no worse than none, then the walk encoder tuned further on
    them, kept where cross-validation measured it better than the general one (`train.fewshot`)."""
    from ..reader import ZeroShotReader
    from ..reader.learned import general_hop_reader, general_walk_encoder, general_walk_ranker
    from ..reader.lexicon import FILE
    from ..reader.walk_encoder import write_saved
    from .fewshot import answered_questions, fewshot_lexicon, fewshot_walk_encoder

    rows = [q for q in rows if q["answers"]]
    why = ("no real questions: a reader trained on synthesized ones reads their templates, not people's questions"
           if not rows else f"{len(rows)} real questions (fewer than {options.min_real_questions}): the zero-shot "
           f"reader, adapted to them where that measured better")
    choice = {"reader": "zero-shot", "real_questions": len(rows), "trained": False, "why": why}
    for old in folder.glob(f"{WALK_ENCODER}-*"):  # the one the manifest names may be read now: the rest go
        if old.name != models.walk_encoder:
            shutil.rmtree(old, ignore_errors=True)
    models = replace(models, reader=None, lexicon=None, walk_encoder=None)
    if not rows:
        return _with_details(models, "reader_choice", choice)
    report("stage", text=f"reader: adapting to the graph's {len(rows)} own questions")
    items = _reader_inputs(kg, retriever, embedder, rows, report, "own")
    embed = _embed_fn(embedder)
    questions = answered_questions(items, [q["answers"] for q in rows], embed)
    # as `gqa ask` reads: measured against it
    encoder, hops, ranker = general_walk_encoder(), general_hop_reader(), general_walk_ranker()
    fit = fewshot_lexicon(questions, lambda lex: ZeroShotReader(embed, lexicon=lex, walk_encoder=encoder,
                                                                hop_reader=hops, walk_ranker=ranker),
                          seed=options.seed)
    lexicon, details = fit.lexicon, fit.details
    details["feedback_questions"] = sum(1 for q in rows if q.get("source") == "feedback")
    details["trained"] = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    report("stage", text=f"reader: strict Hit@1 on its own questions {details['before']:.3f} zero-shot, "
                         f"{details['after']:.3f} adapted ({details['measured_on']}) -> "
                         + ("adapted" if details["adopted"] else "zero-shot"))
    if details["adopted"]:
        folder.mkdir(parents=True, exist_ok=True)
        lexicon.save(folder / FILE)
        models = models.with_part("lexicon", FILE)
    if encoder is not None:
        report("stage", text=f"reader: tuning the walk encoder on the graph's {len(rows)} own questions")
        saved, tuned = fewshot_walk_encoder(
            questions, lambda lex, enc: ZeroShotReader(embed, lexicon=lex, walk_encoder=enc, hop_reader=hops,
                                                       walk_ranker=ranker),
            encoder,
            options.encoder_adaptation, lexicon_of=fit.learn_on if details["adopted"] else None,
            readings=fit.readings)
        details["walk_encoder"] = tuned
        if tuned.get("before") is not None:
            report("stage", text=f"reader: strict Hit@1 {tuned['before']:.3f} with the general walk encoder, "
                                 f"{tuned['after']:.3f} tuned ({tuned['measured_on']}) -> "
                                 + ("tuned" if tuned["adopted"] else "general"))
        if saved is not None:
            config, state = saved
            config = dataclasses.replace(config, training={"over": "the general walk encoder", **tuned})
            name = f"{WALK_ENCODER}-{time.strftime('%Y%m%d%H%M%S')}"
            write_saved(config, state, folder / name)
            models = models.with_part("walk_encoder", name)
            details["calibration"] = tuned["calibration"]  # the tuned reader's, fitted on its held-out readings
    models = _with_details(models, "fewshot", details)
    return _with_details(models, "reader_choice", choice)


class _Reporter:
    """`report(stage, done, total, **info)`: the pipeline's shorthand for `notify`."""

    def __init__(self, on_progress: OnProgress | None):
        self.on_progress = on_progress

    def __call__(self, stage: str, done: int | None = None, total: int | None = None, **info) -> None:
        notify(self.on_progress, stage, done, total, **info)


def _embed_fn(embedder):
    return lambda texts: np.asarray(embedder.embed(list(texts)), dtype=np.float32)


def _with_details(models: TrainedModels, key: str, value: dict) -> TrainedModels:
    return replace(models, details={**models.details, key: value})


def _has_opaque_nodes(kg, share: float = 0.01) -> bool:
    """Freebase-like graphs (compound nodes with id texts) need a step more per hop."""
    from ..retrieval.texts import is_opaque

    return kg.num_nodes > 0 and sum(is_opaque(t) for t in kg.node_texts) >= share * kg.num_nodes


def _synthesize(kg, graph: str, options: GraphTrainingOptions, report):
    """(train rows, val rows, report) of self-supervised questions, written to `options.write_questions`."""
    import json

    from ..retrieval.synthesize import SynthesisConfig, split_by_path, synthesize, to_rows

    report("stage", text=f"self-supervised questions: sampling {options.synthetic_paths:,} relation paths")
    synthesis = synthesize(kg, SynthesisConfig(questions=options.synthetic_paths, seed=options.seed,
                                               max_hops=3, max_steps=5 if _has_opaque_nodes(kg) else 3))
    train, val = split_by_path(synthesis.questions, 0.1, options.seed)
    summary = synthesis.report()
    report("synthesis", **summary)
    if options.write_questions is not None:
        path = Path(options.write_questions)
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("w", encoding="utf-8") as out:
            for row in to_rows(train, "train") + to_rows(val, "val"):
                out.write(json.dumps(row, ensure_ascii=False) + "\n")
        report("stage", text=f"wrote {len(synthesis.questions):,} questions to {path} (`gqa ingest questions "
                                  f"--graph {graph} --source {path}` reads them)")
    rows = lambda questions, split: [{"qid": q.qid, "text": q.text, "answers": list(q.answers),
                                      "topic_entities": [q.topic], "graph": graph, "split": split} for q in questions]
    return rows(train, "train"), rows(val, "val"), {
        **{k: v for k, v in summary.items() if k != "paths_per_signature"},
        "paths_per_signature": dict(list(summary["paths_per_signature"].items())[:200])}


class _PathsAsLearned:
    """Relation-path retrieval where `_reader_inputs` expects a learned retriever (`retrieve(text, vector)`)."""

    def __init__(self, kg, embedder):
        from ..retrieval.relation_paths import PathRetriever
        from ..retrievers.paths import named_by_words

        self.paths = PathRetriever(kg, _embed_fn(embedder), relation_naming=named_by_words)  # as `gqa ask` has it

    def retrieve(self, text, vector):
        return self.paths.retrieve(text, vector)


def _choose_retriever(kg, retriever, embedder, val_rows, options: GraphTrainingOptions, report) -> dict:
    """Answer in subgraph of the learned retriever and of relation paths on held-out (synthesized) questions: the
    learned one retrieves for this graph where it leads by `SYNTHETIC_CHOICE_MARGIN`, else relation paths."""
    from ..retrieval.learned import answer_hit
    from ..retrieval.linking import strip_topic_markers

    rows = _sample([q for q in val_rows if q["answers"]], options.choice_questions, options.seed)
    if not rows:
        return {"retriever": "learned", "questions": 0}
    texts = [strip_topic_markers(q["text"]) for q in rows]
    vectors = _embed_fn(embedder)(texts)
    paths = _PathsAsLearned(kg, embedder)
    scores = {}
    for name, candidate in (("learned", retriever), ("paths", paths)):
        started = time.perf_counter()
        hits = [answer_hit(candidate.retrieve(t, v), q["answers"]) for t, v, q in zip(texts, vectors, rows)]
        scores[name] = {"answer_in_subgraph": float(np.mean(hits)),
                        "ms_per_question": (time.perf_counter() - started) * 1000 / len(rows)}
    margin = SYNTHETIC_CHOICE_MARGIN
    best = "learned" if scores["learned"]["answer_in_subgraph"] > scores["paths"]["answer_in_subgraph"] + margin \
        else "paths"
    choice = {"retriever": best, "questions": len(rows), "margin": margin, **scores}
    report("stage", text=f"retrieval on {len(rows)} held-out questions: answer in subgraph learned "
                              f"{scores['learned']['answer_in_subgraph']:.3f}, relation paths "
                              f"{scores['paths']['answer_in_subgraph']:.3f} -> {best}")
    return choice


def _train_retriever(kg, rows, embedder, options, path: Path, report, max_hops: int = 3):
    from ..retrieval.learned import (
        LearnedRetriever,
        RetrieverConfig,
        TrainingQuestion,
        save_checkpoint,
        train_retriever,
    )
    from ..retrieval.linking import InMemoryLinking, MentionPrior, strip_topic_markers

    report("stage", text=f"learned retriever: {len(rows):,} questions")
    config = RetrieverConfig(epochs=options.retriever_epochs, max_edges=options.max_edges, max_hops=max_hops)
    training = [TrainingQuestion(strip_topic_markers(q["text"]), q["topic_entities"], q["answers"]) for q in rows]
    model, history = train_retriever(kg, training, embedder, config, progress=report.on_progress)
    prior = MentionPrior.fit([(q["text"], q["topic_entities"]) for q in rows], InMemoryLinking(kg), None)
    save_checkpoint(path, model, config, embedder.name, prior)
    retriever = LearnedRetriever(model, config, kg, embedder_name=embedder.name, prior=prior, embed=_embed_fn(embedder))
    return retriever, {"questions": len(rows), "seconds": history.labelling_seconds + history.training_seconds,
                       "epoch_losses": history.epoch_losses}


def _load_retriever(kg, path: Path, embedder):
    from ..retrieval.learned import LearnedRetriever

    return LearnedRetriever.from_checkpoint(path, kg, embed=_embed_fn(embedder))


def _reader_inputs(kg, retriever, embedder, rows, report, label: str):
    """Retrieve every question (in memory) and prepare the reader's input; learned retrieval's seeds are the
    anchors' hints, as at answer time."""
    from ..reader import reader_input
    from ..retrieval.in_memory import retrieve as static_retrieve
    from ..retrieval.linking import strip_topic_markers
    from ..retrieval.params import params_for

    texts = [strip_topic_markers(q["text"]) for q in rows]
    vectors = _embed_fn(embedder)(texts) if texts else np.zeros((0, embedder.dim), np.float32)
    whole = None
    items = []
    started = time.perf_counter()
    for i, (text, vector) in enumerate(zip(texts, vectors)):
        if retriever is not None:
            result = retriever.retrieve(text, vector)
            hints = result.seed_keys
        else:
            whole = whole if whole is not None else kg.to_whole_candidate_graph()
            result = static_retrieve(whole, vector, params_for(None, "kg"))
            hints = ()
        items.append(reader_input(text, result, vector, hints))
        if (i + 1) % 1000 == 0 or i + 1 == len(texts):
            report("retrieve", i + 1, len(texts), split=label, seconds=time.perf_counter() - started)
    return items


def _train_reader(items_train, rows_train, items_val, rows_val, embedder, graph, dataset, options, path: Path, report,
                  max_hops: int = 3):
    from ..reader.model import ReaderConfig, save_reader
    from ..reader.training import build_examples, train_reader

    config = ReaderConfig(epochs=options.reader_epochs, seed=options.seed, max_hops=max_hops)
    embed = _embed_fn(embedder)
    train_set = build_examples(items_train, [q["answers"] for q in rows_train], embed, config)
    val_set = build_examples(items_val, [q["answers"] for q in rows_val], embed, config,
                             nodes=train_set.nodes, relations=train_set.relations) if items_val else None
    report("stage", text=f"reader: {len(train_set.examples):,} train / "
                              f"{len(val_set.examples) if val_set else 0:,} val questions")
    module, history = train_reader(train_set, val_set, config, progress=report.on_progress)
    save_reader(path, module, config, embedder=embedder.name, graph=graph, dataset=dataset,
                threshold=history.threshold, history=history.to_dict())
    report("reader", **history.validation)
    return path, history.to_dict()


def _train_generator(reader_path, items_train, rows_train, items_val, rows_val, embedder, options, folder: Path,
                     report):
    from ..answering.grounded import evidence, generator_label
    from ..model.config import DEFAULT_LLM, ModelConfig
    from ..model.gretriever import build_model
    from ..reader import TrainedReader, read
    from .trainer import TrainConfig, train

    reader = TrainedReader(reader_path)
    embed = _embed_fn(embedder)

    def samples(items, rows, count):
        out = []
        for item, row in list(zip(items, rows))[:count]:
            vectors = embed([item.masked, item.question])
            reading = read(reader, item, vectors[0], vectors[1])
            ev = evidence(reading)
            label = generator_label(reading, ev, row["answers"])
            if label is not None:
                out.append(ev.sample(item.view, qid=row["qid"], question=item.question, label=label,
                                     answers=row["answers"]))
        return out

    train_samples = samples(items_train, rows_train, options.generator_questions)
    val_samples = samples(items_val, rows_val, max(options.generator_questions // 5, 1))
    if not train_samples:
        report("stage", text="generator: no training question has its answer in the evidence; skipped")
        return None
    report("stage", text=f"generator: {len(train_samples)} train / {len(val_samples)} val questions")
    config = ModelConfig(variant="g-retriever", llm=options.llm or DEFAULT_LLM, gnn_in_dim=embedder.dim,
                         embedder=embedder.name, answer_format="grounded")
    model = build_model(config, device=options.device)
    history = train(model, train_samples, val_samples,
                    TrainConfig(lr=options.generator_lr, epochs=options.generator_epochs, batch_size=8, grad_accum=1,
                                warmup_epochs=min(1.0, options.generator_epochs / 2), seed=options.seed),
                    folder.parent / "generator-run", progress=None)
    if history.best_checkpoint is None:
        return None
    import shutil

    if folder.exists():
        shutil.rmtree(folder)
    history.best_checkpoint.rename(folder)
    shutil.rmtree(folder.parent / "generator-run", ignore_errors=True)
    return {"questions": len(train_samples), "epochs": [e.__dict__ for e in history.epochs]}

"""Answering a retrieved subgraph: one entry point (`Answering.answer`) for every kind of question.

- Knowledge-graph questions (and questions over user graphs) get **grounded** answers: nodes of the subgraph,
  chosen by the reader and said by a trie-constrained LLM (`grounded`). The reader and generator trained for the
  graph by `gqa train` are used when they exist (`registry`); otherwise the zero-shot reader and the LLM alone.
- Classification datasets (ExplaGraphs) get one of their labels, by label-constrained decoding.
- `mode="free-text"` is the paper's set-up: the generator writes whatever it writes, and an inference-only LLM
  is asked to cite its evidence by node ids; citations are then judged by the rules of `model.citations`.

`Answering` keeps what it loaded (embedder, readers, generators) so that `gqa ask --questions`, `gqa chat` and
the service load each model once.
"""

# Model code (torch, transformers) is imported inside the methods that generate: a question the reader answers
# alone never pays for loading it.
from __future__ import annotations

import dataclasses
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gretriever_neo4j.artifacts.registry import check_embedder, load_trained
from gretriever_neo4j.errors import ConfigError
from gretriever_neo4j.model.citations import CITATION_INSTRUCTION, CitationCheck, answer_text, check_citations
from gretriever_neo4j.reader import TrainedReader, ZeroShotReader
from gretriever_neo4j.reader.confidence import CALIBRATION, Calibration
from gretriever_neo4j.reader.evidence import answer_evidence
from gretriever_neo4j.retrievers.base import Retrieval

MODES = ("auto", "grounded", "free-text")


@dataclass
class AnswerNode:
    id: int  # node id in the retrieved subgraph's textualization
    key: str
    text: str
    probability: float | None  # the reader's
    walk: str  # how it relates to what the question names, e.g. "starred_actors> <directed_by"
    # why it is an answer: chains from the named entities, {"text", "nodes", "edges"} (`reader.evidence`)
    evidence_paths: list[dict] = field(default_factory=list)


@dataclass
class Answer:
    text: str  # the answer: node names '|'-separated (grounded), a label, or free text
    raw: str  # what the LLM generated ("" when no LLM spoke)
    citations: CitationCheck | None
    model: str  # the models that answered, in words
    seconds: float
    mode: str = "free-text"  # grounded | label | free-text
    nodes: list[AnswerNode] = field(default_factory=list)
    models: dict[str, str] = field(default_factory=dict)  # part -> what it was (reader, generator)
    timings_ms: dict[str, float] = field(default_factory=dict)
    anchors: list[int] = field(default_factory=list)  # grounded: the nodes the question names (subgraph ids)
    # grounded: the reader's probability that the answer shown is right (calibrated: `reader.confidence`), and
    # whether that is too low to trust (`unsure`) or high enough to call it sure (`sure`); None / False / False
    # where no reader answered
    confidence: float | None = None
    unsure: bool = False
    sure: bool = False

    def citations_summary(self) -> str:
        check = self.citations
        if check is None:
            return ""
        nodes = ", ".join(check.cited_nodes) or "none"
        edges = ", ".join(f"{a}-{b}" for a, b in check.cited_edges) or "none"
        verdict = "all valid" if check.all_valid else (
            f"invalid: {', '.join(list(check.invalid_nodes) + [f'{a}-{b}' for a, b in check.invalid_edges])}")
        return (f"cites nodes {nodes}; edges {edges} ({check.mode}) — {verdict}; "
                f"nodes valid {check.nodes_valid_fraction:.0%}, edges valid {check.edges_valid_fraction:.0%}")

    def to_dict(self) -> dict:
        check = self.citations
        return {
            "text": self.text, "raw": self.raw, "mode": self.mode, "model": self.model, "models": dict(self.models),
            "seconds": self.seconds, "timings_ms": dict(self.timings_ms),
            "nodes": [node.__dict__ for node in self.nodes], "anchors": list(self.anchors),
            "confidence": self.confidence, "unsure": self.unsure, "sure": self.sure,
            "citations": None if check is None else {
                "mode": check.mode, "nodes": list(check.cited_nodes), "edges": [list(e) for e in check.cited_edges],
                "invalid_nodes": list(check.invalid_nodes), "invalid_edges": [list(e) for e in check.invalid_edges],
                "nodes_valid": check.nodes_valid_fraction, "edges_valid": check.edges_valid_fraction,
                "all_valid": check.all_valid},
        }


class Answering:
    """Answers retrievals; loads each model once.

    `checkpoint`: a `gqa train --config …` checkpoint used as the generator; `llm`: the LLM of the inference-only
    generator (default SmolLM2); `use_llm=False`: grounded answers from the reader alone; `reader`: a reader
    checkpoint overriding the graph's trained one, "zero-shot" (the zero-shot reader with the graph's or the general
    weights, as with no trained reader) or "rules" (the zero-shot reader with its hand-set weights alone)."""

    def __init__(self, embedder, *, mode: str = "auto", checkpoint: str | Path | None = None, llm: str | None = None,
                 device: str = "auto", use_llm: bool = True, reader: str | Path | None = None,
                 llm_when: str = "auto"):
        if mode not in MODES:
            raise ConfigError(f"answer mode must be one of {', '.join(MODES)}, not {mode!r}")
        self.embedder = embedder
        self.mode = mode
        self.checkpoint = str(checkpoint) if checkpoint else None
        self.llm = llm
        self.device = device
        self.use_llm = use_llm
        self.llm_when = llm_when if use_llm else "never"
        self.reader_path = str(reader) if reader else None
        self._generators: dict[tuple, Any] = {}
        self._readers: dict[str, Any] = {}
        # One LLM generation at a time: a CPU-bound LLM gains nothing from company, while readers (milliseconds)
        # need not wait behind it.
        self.llm_lock = threading.Lock()
        # Models are loaded on first use by whichever request needs them: one loads, the others wait for it.
        self._load_lock = threading.RLock()

    def variant(self, *, mode: str | None = None, llm_when: str | None = None) -> Answering:
        """The same answering with another mode or LLM policy, sharing the models already loaded."""
        mode = mode or self.mode
        llm_when = llm_when or self.llm_when
        if (mode, llm_when) == (self.mode, self.llm_when):
            return self
        key = (mode, llm_when)
        with self._load_lock:
            return self._variant(key)

    def _variant(self, key: tuple[str, str]) -> Answering:
        mode, llm_when = key
        variants = self.__dict__.setdefault("_variants", {})
        if key not in variants:
            other = Answering(self.embedder, mode=mode, checkpoint=self.checkpoint, llm=self.llm, device=self.device,
                              llm_when=llm_when)
            other.reader_path = self.reader_path
            other._generators, other._readers = self._generators, self._readers
            other.llm_lock, other._load_lock = self.llm_lock, self._load_lock
            variants[key] = other
        return variants[key]

    # -- models -----------------------------------------------------------------------------------------
    def generator(self, trained: str | None = None):
        """The explicit checkpoint, else the graph's trained generator, else the LLM alone (inference-only)."""
        with self._load_lock:
            return self._generator(self.checkpoint or trained)

    def _generator(self, checkpoint: str | None):
        key = (checkpoint, self.llm, self.device)
        if key not in self._generators:
            if checkpoint:
                from gretriever_neo4j.model.checkpoint import load_checkpoint

                self._generators[key] = load_checkpoint(Path(checkpoint), llm=self.llm, device=self.device,
                                                        embedder_dim=self.embedder.dim)
            else:
                from gretriever_neo4j.model.config import DEFAULT_LLM, ModelConfig
                from gretriever_neo4j.model.gretriever import build_model

                self._generators[key] = build_model(ModelConfig(variant="inference-only", llm=self.llm or DEFAULT_LLM,
                                                                gnn_in_dim=self.embedder.dim), device=self.device)
        return self._generators[key]

    def reader(self, graph: str):
        """The graph's reader, loaded on first use and kept (one per graph, shared by the variants) until the
        graph's models change on disk: a `gqa train` run while this process serves rewrites its manifest, whose
        stamp is checked on each call (one stat, `artifacts.freshness`); the reader is then loaded anew, and the
        generators loaded from the graph's models folder are let go, to be loaded anew when next asked for."""
        with self._load_lock:
            return self._reader(graph)

    def _reader(self, graph: str):
        from gretriever_neo4j.artifacts.freshness import manifest_stamp
        from gretriever_neo4j.artifacts.registry import models_dir

        stamp_key, stamp = (graph, "models stamp"), manifest_stamp(graph)  # kept beside the reader, in `_readers`
        if graph in self._readers and self._readers.get(stamp_key) != stamp:
            del self._readers[graph]
            folder = models_dir(graph)
            for key in [key for key in self._generators if key[0] and Path(key[0]).is_relative_to(folder)]:
                del self._generators[key]
        if graph not in self._readers:
            path = self.reader_path
            trained = load_trained(graph) if path in (None, "zero-shot") else None
            if path is None and trained is not None and trained.reader and not trained.zero_shot_reader_chosen:
                check_embedder(trained, self.embedder.name)
                path = str(trained.path("reader"))
            if path == "rules":
                self._readers[graph] = ZeroShotReader(self.embedder.embed)
            elif path in (None, "zero-shot"):
                self._readers[graph] = self._zero_shot(trained)
            else:
                reader = TrainedReader(path)
                if reader.info.embedder != self.embedder.name:
                    raise ConfigError(f"reader {path} was trained on '{reader.info.embedder}' vectors, not "
                                      f"'{self.embedder.name}'")
                if reader.info.graph not in (None, graph):
                    raise ConfigError(f"reader {path} was trained for graph {reader.info.graph!r}, not {graph!r}")
                self._readers[graph] = reader
            self._readers[stamp_key] = stamp
        return self._readers[graph]

    def _zero_shot(self, trained) -> ZeroShotReader:
        """The reader of a graph with no trained reader: its walk signatures scored by the weights in the graph's
        models where they are, else by general ones where the package holds them (`reader.learned`; none ships
        today), else by the hand-set ones; with the walk encoder that ships (`reader.walk_encoder`) or the graph's
        own, the hop reader and the walk ranker that ship (`reader.hop_reading`, `reader.walk_ranker`), and with
        the graph's lexicon, where `gqa train`
        learned them from its own questions."""
        from gretriever_neo4j.reader.learned import (
            general_hop_reader,
            general_matcher,
            general_walk_encoder,
            general_walk_ranker,
            general_weights,
        )
        from gretriever_neo4j.reader.signature_weights import ZERO_SHOT, SignatureWeights

        lexicon = None
        if trained is not None and trained.lexicon:
            from gretriever_neo4j.reader.lexicon import GraphLexicon

            check_embedder(trained, self.embedder.name)  # its remembered questions are compared in these vectors
            lexicon = GraphLexicon.load(trained.path("lexicon"))
        if trained is not None and trained.signature_weights:
            weights, name = SignatureWeights.load(trained.path("signature_weights")), "the graph's weights"
        else:
            weights, name = general_weights(), "general weights"
        if lexicon is not None:
            name = (f"{name if weights != ZERO_SHOT else 'hand-set weights'}, adapted to {lexicon.questions} "
                    f"questions of the graph")
        fitted = ((trained.details.get("fewshot") or {}).get("calibration") if trained is not None else None)
        calibration = Calibration.from_dict(fitted) if fitted else None  # fitted on the graph's own questions
        encoder = general_walk_encoder()  # its own copy of MiniLM: it reads texts, whatever the embedder
        tuned = None  # what the reader's name says of a walk encoder tuned further on the graph's own questions
        if trained is not None and trained.walk_encoder:
            from gretriever_neo4j.reader.walk_encoder import WalkEncoder

            encoder = WalkEncoder.load(trained.path("walk_encoder"), onnx=trained.path("walk_encoder"))
            tuned = f"walk encoder tuned on {encoder.config.training.get('questions')} questions of the graph"
        if weights == ZERO_SHOT and lexicon is None:  # no general weights ship: the hand-set ones
            return ZeroShotReader(self.embedder.embed, calibration=calibration, walk_encoder=encoder,
                                  hop_reader=general_hop_reader(), walk_ranker=general_walk_ranker(),
                                  weights_name=tuned)
        if tuned is not None:
            name += f", {tuned}"
        matcher = general_matcher()  # it reads the vectors of the embedder it was trained on, no other's
        if weights.matcher and (matcher is None or matcher.config.embedder != self.embedder.name):
            matcher, weights = None, dataclasses.replace(weights, matcher=0.0)
        return ZeroShotReader(self.embedder.embed, weights=weights, weights_name=name, matcher=matcher,
                              lexicon=lexicon, calibration=calibration, walk_encoder=encoder,
                              hop_reader=general_hop_reader(), walk_ranker=general_walk_ranker())

    def _paper_checkpoint(self) -> bool:
        """An explicit checkpoint of one of the paper's configurations answers as it was trained: free text."""
        if not self.checkpoint:
            return False
        from gretriever_neo4j.model.checkpoint import read_checkpoint

        return read_checkpoint(Path(self.checkpoint)).config.answer_format == "paper"

    # -- answering ------------------------------------------------------------------------------------
    def answer(self, retrieval: Retrieval, *, history: list[tuple[str, str]] | None = None, streamer=None,
               cancel=None) -> Answer:
        """`streamer` (a `transformers` streamer) receives the LLM's tokens as they come, when an LLM speaks;
        setting `cancel` (a `threading.Event`) stops its generation early (a client went away)."""
        from gretriever_neo4j.model.prompts import LABEL_SETS

        stream = {"streamer": streamer, "cancel": cancel}
        if self.mode == "free-text" or retrieval.dataset == "scenegraphs":
            return self._free_text(retrieval, history, **stream)
        if retrieval.dataset in LABEL_SETS:
            return self._label(retrieval, LABEL_SETS[retrieval.dataset], history, **stream)
        if self._paper_checkpoint():
            return self._free_text(retrieval, history, **stream)
        return self._grounded(retrieval, history, **stream)

    def _grounded(self, retrieval: Retrieval, history, streamer=None, cancel=None) -> Answer:
        from gretriever_neo4j.answering.grounded import GroundedAnswerer

        started = time.perf_counter()
        trained = load_trained(retrieval.graph)
        trained_generator = str(trained.path("generator")) if trained and trained.generator else None
        reader = self.reader(retrieval.graph)
        llm_when = self.llm_when
        if llm_when == "auto" and not trained_generator:
            # The untrained LLM does not improve the reader on the questions the reader is unsure of, trained or
            # zero-shot, and costs time there. The LLM speaks by default where it was trained for the graph;
            # `--llm-when always` asks it anyway.
            llm_when = "never"
        answerer = GroundedAnswerer(reader, self.embedder.embed, lambda: self.generator(trained_generator),
                                    llm_when=llm_when, llm_lock=self.llm_lock)
        question = _with_history(retrieval.question, history)
        # The reader's anchors are the linker's seeds. Relation-path retrieval's zero-shot linker keeps one entity
        # where a question may name two ("who played X in Y"), so nodes the question names are anchors too there.
        # Anchors by name alone, without the seeds, would read "what type of cancer did eva peron have" from Cancer.
        hints = retrieval.result.seed_keys if retrieval.retriever in ("learned", "paths") else ()
        result = answerer.answer(question, retrieval.result, hints=hints, also_named=retrieval.retriever == "paths",
                                 qid=retrieval.id, streamer=streamer, cancel=cancel)
        view, reading = result.reading.view, result.reading
        text = result.text()
        checked = check_citations(retrieval.text, f"{text}\n{result.citation_line()}")
        models = {"reader": reader.name}
        if answerer.generator is not None:
            config = answerer.generator.config
            models["generator"] = f"{config.variant} / {config.llm} (constrained)"
        elif llm_when != self.llm_when:
            models["generator"] = "not asked: the reader answers alone (--llm-when always asks the LLM)"
        elif self.llm_when != "never":
            models["generator"] = "not asked: the reader was sure (--llm-when always asks it)"
        confidence = _confidence(reading, result.nodes)
        return Answer(text=text, raw=result.raw, citations=checked, model="; ".join(models.values()),
                      seconds=time.perf_counter() - started, mode="grounded", models=models,
                      timings_ms=result.timings_ms, anchors=list(reading.anchors), confidence=confidence,
                      unsure=confidence is not None and confidence < CALIBRATION.unsure_below,
                      sure=confidence is not None and confidence >= CALIBRATION.sure_at,
                      nodes=[AnswerNode(id=n, key=view.node_keys[n], text=view.node_texts[n],
                                        probability=float(reading.probabilities[n]), walk=reading.signature_of(n),
                                        evidence_paths=_evidence(reading, n))
                             for n in result.nodes])

    def _label(self, retrieval: Retrieval, labels, history, streamer=None, cancel=None) -> Answer:
        from gretriever_neo4j.model.prompts import sample_from_retrieval

        started = time.perf_counter()
        # Per-sample datasets keep their trained generator under the dataset's name (one graph per question).
        trained = (load_trained(retrieval.graph) or load_trained(retrieval.dataset)) if self.checkpoint is None \
            else None
        generator = self.generator(str(trained.path("generator")) if trained and trained.generator else None)
        sample = sample_from_retrieval(retrieval.result, qid=retrieval.id, dataset=retrieval.dataset,
                                       question=_with_history(retrieval.question, history), answers=[])
        with self.llm_lock:
            raw = _generate_one(generator, sample, labels=labels, streamer=streamer, cancel=cancel)
        return Answer(text=raw, raw=raw, citations=None, model=f"{generator.config.variant} / {generator.config.llm}",
                      seconds=time.perf_counter() - started, mode="label",
                      models={"generator": f"{generator.config.variant} / {generator.config.llm} (labels)"})

    def _free_text(self, retrieval: Retrieval, history, streamer=None, cancel=None) -> Answer:
        from gretriever_neo4j.model.prompts import sample_from_retrieval
        from gretriever_neo4j.model.sample import format_question

        started = time.perf_counter()
        model = self.generator()
        question = _with_history(retrieval.question, history)
        sample = sample_from_retrieval(retrieval.result, qid=retrieval.id, dataset=retrieval.dataset,
                                       question=question, answers=[])
        if model.config.variant == "inference-only" and retrieval.dataset != "explagraphs":
            sample.question = format_question(f"{question}\n{CITATION_INSTRUCTION}")
        with self.llm_lock:
            raw = _generate_one(model, sample, streamer=streamer, cancel=cancel)
        return Answer(text=answer_text(raw).strip(), raw=raw, citations=check_citations(sample.desc, raw),
                      model=f"{model.config.variant} / {model.config.llm}", seconds=time.perf_counter() - started,
                      mode="free-text", models={"generator": f"{model.config.variant} / {model.config.llm}"})


def _confidence(reading, nodes: list[int]) -> float | None:
    """The probability that the first answer shown is right: the zero-shot reader's calibrated one where it shows
    its own first answer (`reader.confidence`), else the reader's probability of that node."""
    if not nodes:
        return None
    if reading.confidence is not None and reading.answers and nodes[0] == reading.answers[0]:
        return round(float(reading.confidence), 4)
    return round(float(reading.probabilities[nodes[0]]), 4) if len(reading.probabilities) > nodes[0] else None


def _evidence(reading, node: int) -> list[dict]:

    view = reading.view
    relation_of = [view.relation_texts[int(r)] for r in view.relation]
    paths = answer_evidence(view.src, view.dst, reading.anchors, node, reading.evidence_for([node]))
    return [path.to_dict(view.node_texts, relation_of, view.src, view.dst) for path in paths]


def _generate_one(model, sample, *, labels=None, streamer=None, cancel=None) -> str:
    """One sample's answer text: free, or exactly one of `labels` (constrained decoding)."""
    from gretriever_neo4j.model.constrained import TrieConstraint, item_token_ids, separator_ids
    from gretriever_neo4j.model.sample import collate

    constraints = None
    if labels:
        constraints = [TrieConstraint(item_token_ids(model.tokenizer, list(labels)), separator_ids(model.tokenizer),
                                      model.stop_token_ids(), max_items=1)]
    if streamer is not None and hasattr(streamer, "bind"):
        streamer.bind(model.tokenizer)
    was_training = model.training
    model.eval()
    try:
        ids = model.generate_ids(collate([sample]), constraints=constraints, streamer=streamer, cancel=cancel)[0]
    finally:
        model.train(was_training)
    return model.tokenizer.decode(ids, skip_special_tokens=True).strip()


def _with_history(question: str, history: list[tuple[str, str]] | None) -> str:
    if not history:
        return question
    turns = "\n".join(f"Earlier question: {q}\nEarlier answer: {a}" for q, a in history)
    return f"{turns}\n{question}"


def answer_question(retrieval: Retrieval, *, checkpoint: str | Path | None = None, llm: str | None = None,
                    device: str = "auto", history: list[tuple[str, str]] | None = None, embedder=None,
                    mode: str = "auto", use_llm: bool = True) -> Answer:
    """One answer with freshly loaded models (prefer an `Answering` for several)."""
    if embedder is None:
        from gretriever_neo4j.embedding.embedder import Embedder

        embedder = Embedder()
    return Answering(embedder, mode=mode, checkpoint=checkpoint, llm=llm, device=device,
                     use_llm=use_llm).answer(retrieval, history=history)

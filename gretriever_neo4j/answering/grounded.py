"""Grounded answers: the answer to a knowledge-graph question is a set of nodes of the retrieved subgraph.

1. The reader (trained for the graph, or zero-shot) ranks the subgraph's nodes and proposes an answer set with
   the walks that justify each answer (`reader`).
2. The LLM reads the *evidence* (the walks to the reader's best candidates, as the paper's CSV, plus the graph
   token when the generator is a G-Retriever) and the question, and says the answer as node names,
   '|'-separated, under trie-constrained decoding: it cannot name anything else. The reader's log-odds bias
   each choice (`model.constrained`), so the LLM decides only where the reader is unsure.
3. The answer cites its nodes and the edges of their walks; the citations are checked against the retrieved
   subgraph like any other answer's (`model.citations`).

Without an LLM (`use_llm=False`) the reader's set is the answer. Entities the question names are never answers
of the zero-shot reader; a trained reader learns from the graph's questions when they are.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from gretriever_neo4j.model.sample import QASample
from gretriever_neo4j.reader import ReaderInput, Reading, read, reader_input
from gretriever_neo4j.reader.confidence import log_odds as probability_log_odds
from gretriever_neo4j.reader.paths import SubgraphView
from gretriever_neo4j.retrieval.textualize import graph_csv

GROUNDED_INSTRUCTION = "Answer with node names from the graph, separated by |."
PROMPT_CANDIDATES = 8  # reader candidates whose walks the LLM reads
PROMPT_EDGES = 48
MAX_ITEMS = 10  # names the LLM may list; the reader's further answers are appended after them
# An untrained LLM deciding among a zero-shot reader's candidates reads a short prompt: the few candidates the
# reader could not decide between and their walks: prompt length dominates its CPU time, several times shorter at
# this size than at `PROMPT_CANDIDATES` and `PROMPT_EDGES`.
QUICK_CANDIDATES, QUICK_EDGES = 4, 12
READER_WEIGHT = 1.0  # how strongly the reader's log-odds steer the constrained LLM (logit units per unit)


def grounded_prompt(question: str) -> str:
    return f"Question: {question}\n{GROUNDED_INSTRUCTION}\nAnswer: "


@dataclass(frozen=True)
class Evidence:
    """A small subgraph of the reading's view for the LLM: `nodes` and `edges` in view ids; `candidates` are the
    nodes it may answer with (reader order)."""

    nodes: list[int]
    edges: list[int]
    candidates: list[int]

    def text(self, view: SubgraphView) -> str:
        local = {n: i for i, n in enumerate(self.nodes)}
        return graph_csv([view.node_texts[n] for n in self.nodes],
                         [(local[int(view.src[e])], view.relation_texts[int(view.relation[e])], local[int(view.dst[e])])
                          for e in self.edges])

    def sample(self, view: SubgraphView, *, qid: str, question: str, label: str = "",
               answers: Sequence[str] = ()) -> QASample:
        import torch

        local = {n: i for i, n in enumerate(self.nodes)}
        dim = view.dim
        return QASample(
            qid=qid, question=grounded_prompt(question), desc=self.text(view), label=label, answers=list(answers),
            x=torch.from_numpy(view.node_vectors[self.nodes].copy()) if self.nodes else torch.zeros(0, dim),
            edge_index=torch.tensor([[local[int(view.src[e])] for e in self.edges],
                                     [local[int(view.dst[e])] for e in self.edges]], dtype=torch.long).reshape(2, -1),
            edge_attr=(torch.from_numpy(view.relation_vectors[view.relation[self.edges]].copy()) if self.edges
                       else torch.zeros(0, dim)))


def evidence(reading: Reading, candidates: int = PROMPT_CANDIDATES, max_edges: int = PROMPT_EDGES) -> Evidence:
    anchors = set(reading.anchors)
    chosen = [n for n in reading.ranked if n not in anchors][:candidates] or reading.ranked[:candidates]
    edges = reading.evidence_for(chosen, max_edges=max_edges)
    view = reading.view
    nodes = list(dict.fromkeys(reading.anchors + chosen + [int(x) for e in edges
                                                           for x in (view.src[e], view.dst[e])]))
    return Evidence(nodes=nodes, edges=edges, candidates=chosen)


def generator_label(reading: Reading, ev: Evidence, gold: Sequence[str]) -> str | None:
    """The training target of a grounded generator: the gold answers among the prompt's nodes, in the reader's
    order, '|'-separated (None when none is there)."""
    wanted = {g.strip().lower() for g in gold}
    view = reading.view
    names = [view.node_texts[n] for n in ev.nodes if n not in reading.anchors
             and (view.node_texts[n].strip().lower() in wanted or view.node_keys[n].strip().lower() in wanted)]
    order = {n: i for i, n in enumerate(reading.ranked)}
    ranked = sorted(dict.fromkeys(names), key=lambda name: min(order.get(n, 1 << 30) for n in ev.nodes
                                                                if view.node_texts[n] == name))
    return "|".join(ranked[:MAX_ITEMS]) if ranked else None


@dataclass
class GroundedResult:
    nodes: list[int]  # answer nodes (view ids = ids of the retrieved subgraph's textualization), best first
    raw: str  # what the LLM generated ("" when the reader answered alone)
    reading: Reading
    evidence_edges: list[int]
    timings_ms: dict[str, float]
    generator: str | None  # the LLM that chose the names, if any

    def text(self) -> str:
        return "|".join(self.reading.view.node_texts[n] for n in self.nodes)

    def citation_line(self) -> str:
        view = self.reading.view
        edges = ", ".join(f"{int(view.src[e])}-{int(view.dst[e])}" for e in self.evidence_edges)
        return f"Evidence: nodes {', '.join(str(n) for n in self.nodes)}" + (f"; edges {edges}" if edges else "")


LLM_WHEN = ("auto", "always", "never")
SURE_LOW, SURE_HIGH = 0.1, 0.9  # a reader probability outside (low, high) is a decision already made


def reader_is_sure(reading: Reading, candidates: int = PROMPT_CANDIDATES) -> bool:
    """Whether the reader has decided everything the LLM could: its best candidates are all clearly in or
    clearly out of the answer, and at least one is in."""
    anchors = set(reading.anchors)
    top = [float(reading.probabilities[n]) for n in reading.ranked if n not in anchors][:candidates]
    if not top or top[0] < reading.threshold:
        return False
    return all(p <= SURE_LOW or p >= max(SURE_HIGH, reading.threshold) for p in top)


class GroundedAnswerer:
    """reader (+ constrained LLM) over a retrieval result; `embed(texts) -> (n, d)` is the graph's embedder.

    `generator` is a zero-argument function returning the LLM (a `GraphQAModel`), called only when the LLM is
    asked. `llm_when`: "always" lets the LLM say every answer; "auto" asks it only when the reader is unsure
    (`reader_is_sure`), since otherwise it could only repeat the reader's set; "never" is the reader alone."""

    def __init__(self, reader, embed: Callable[[list[str]], np.ndarray], generator: Callable | None = None, *,
                 reader_weight: float = READER_WEIGHT, max_items: int = MAX_ITEMS, llm_when: str = "auto",
                 llm_lock=None):
        from gretriever_neo4j.errors import ConfigError

        if llm_when not in LLM_WHEN:
            raise ConfigError(f"llm_when must be one of {', '.join(LLM_WHEN)}, not {llm_when!r}")
        self.reader = reader
        self.embed = embed
        self.generator_factory = generator if llm_when != "never" else None
        self.generator = None
        self.reader_weight = reader_weight
        self.max_items = max_items
        self.llm_when = llm_when
        self.llm_lock = llm_lock or contextlib.nullcontext()

    def answer(self, question: str, result, *, hints: Sequence[str] = (), also_named: bool = False, qid: str = "q",
               streamer=None, cancel=None) -> GroundedResult:
        timings: dict[str, float] = {}
        started = time.perf_counter()
        full = self.embed([question])[0]
        item: ReaderInput = reader_input(question, result, full, hints, also_named)
        masked = self.embed([item.masked])[0]
        reading = read(self.reader, item, masked, full)
        timings["reader"] = (time.perf_counter() - started) * 1000
        nodes, raw, spoke = list(reading.answers), "", False
        if (self.generator_factory is not None and reading.ranked
                and (self.llm_when == "always" or not reader_is_sure(reading))):
            started = time.perf_counter()
            with self.llm_lock:
                self.generator = self.generator or self.generator_factory()
                nodes, raw = self._generate(reading, item.question, qid, streamer, cancel)
            timings["generate"] = (time.perf_counter() - started) * 1000
            spoke = True
        return GroundedResult(nodes=nodes, raw=raw, reading=reading, evidence_edges=reading.evidence_for(nodes, 32),
                              timings_ms=timings, generator=self.generator.config.llm if spoke else None)

    def _generate(self, reading: Reading, question: str, qid: str, streamer=None, cancel=None
                  ) -> tuple[list[int], str]:
        from gretriever_neo4j.model.constrained import TrieConstraint, item_token_ids, separator_ids
        from gretriever_neo4j.model.sample import collate

        view = reading.view
        quick = getattr(getattr(self.generator, "config", None), "variant", None) == "inference-only"
        ev = evidence(reading, QUICK_CANDIDATES, QUICK_EDGES) if quick else evidence(reading)
        anchors = set(reading.anchors)
        trained_anchor = any(reading.probabilities[a] >= reading.threshold for a in anchors) \
            if len(reading.probabilities) else False
        options, seen = [], set()
        order = {n: i for i, n in enumerate(reading.ranked)}
        for n in sorted(ev.nodes, key=lambda n: order.get(n, 1 << 30)):
            name = view.node_texts[n].replace("|", "/").strip()
            if not name or name.lower() in seen or (n in anchors and not trained_anchor):
                continue
            seen.add(name.lower())
            options.append((n, name))
        if not options:
            return list(reading.answers), ""
        tokenizer = self.generator.tokenizer
        # the reader's evidence in logit units: a sure answer (p near 1) outweighs the LLM's preference, a doubtful
        # one (p near the threshold) leaves the choice to it
        log_odds = probability_log_odds(reading.probabilities)
        constraint = TrieConstraint(item_token_ids(tokenizer, [name for _, name in options]), separator_ids(tokenizer),
                                    self.generator.stop_token_ids(),
                                    potentials=[float(log_odds[n]) for n, _ in options], weight=self.reader_weight,
                                    stop_potential=float(probability_log_odds(reading.threshold)),
                                    max_items=self.max_items, must_say_above_stop=True)
        sample = ev.sample(view, qid=qid, question=question)
        if streamer is not None and hasattr(streamer, "bind"):
            streamer.bind(tokenizer)
        ids = self.generator.generate_ids(collate([sample]), max_new_tokens=12 * min(self.max_items, len(options)),
                                          constraints=[constraint], streamer=streamer, cancel=cancel)[0]
        said = [options[i][0] for i in constraint.decode_items(ids)]
        if len(said) >= self.max_items:
            said += [n for n in reading.answers if n not in said]
        raw = tokenizer.decode(ids, skip_special_tokens=True)
        return (said or list(reading.answers)), raw


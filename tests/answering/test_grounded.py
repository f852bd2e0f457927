"""Grounded answers without an LLM: when the reader counts as sure, what evidence the LLM would read, and the
reader's answer set as the answer (`answering.grounded`), over a toy KG with a fake embedder."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from gretriever_neo4j.answering.grounded import (
    SURE_HIGH,
    SURE_LOW,
    GroundedAnswerer,
    evidence,
    grounded_prompt,
    reader_is_sure,
)
from gretriever_neo4j.errors import ConfigError
from gretriever_neo4j.reader import ZeroShotReader

from fakes import FakeEmbedder, toy_kg, whole_graph

QUESTION = "what did Benjamin Franklin invent?"


@pytest.fixture(scope="module")
def embedder():
    return FakeEmbedder()


@pytest.fixture(scope="module")
def result(embedder):
    return whole_graph(toy_kg(embedder))


@pytest.fixture(scope="module")
def answered(embedder, result):
    return GroundedAnswerer(ZeroShotReader(embedder.embed), embedder.embed, None).answer(QUESTION, result)


def _reading(probabilities, anchors=(), threshold=0.5):
    """Only what `reader_is_sure` reads: ranked by probability, anchors last."""
    p = np.asarray(probabilities, dtype=float)
    order = sorted(range(len(p)), key=lambda n: (n in anchors, -p[n]))
    return SimpleNamespace(anchors=list(anchors), probabilities=p, ranked=order, threshold=threshold)


@pytest.mark.parametrize("probabilities, anchors, threshold, sure", [
    ([0.97, 0.95, 0.02, 0.0], (), 0.5, True),  # two clearly in, the rest clearly out
    ([0.97, 0.5, 0.02], (), 0.5, False),  # one candidate undecided
    ([0.3, 0.05, 0.0], (), 0.5, False),  # nothing is in: the LLM may still find the answer
    ([0.97, 0.5, 0.0], (1,), 0.5, True),  # an anchor's probability does not count
    ([0.5], (0,), 0.5, False),  # only anchors: no candidate at all
    ([0.95, 0.0], (), 0.97, False),  # the best is below a high threshold
    ([0.99, 0.95, 0.0], (), 0.97, False),  # in (SURE_HIGH, threshold): not clearly in
    ([SURE_HIGH, SURE_LOW], (), 0.5, True),  # the bounds themselves are decisions
])
def test_reader_is_sure_only_when_every_top_candidate_is_clearly_in_or_out(probabilities, anchors, threshold, sure):
    assert reader_is_sure(_reading(probabilities, anchors, threshold)) is sure


def test_reader_is_sure_looks_at_the_top_candidates_only():
    undecided_last = _reading([0.99, 0.98, 0.97, 0.5], threshold=0.5)
    assert reader_is_sure(undecided_last, candidates=3) and not reader_is_sure(undecided_last, candidates=4)


def test_the_zero_shot_reader_answers_from_the_anchor_along_the_asked_relation(answered):
    reading = answered.reading
    texts = reading.view.node_texts
    assert [texts[a] for a in reading.anchors] == ["Benjamin Franklin"]
    assert set(answered.text().split("|")) == {"Bifocals", "Lightning rod"}  # not Boston, not Edison's invention
    assert answered.raw == "" and answered.generator is None
    assert set(answered.timings_ms) == {"reader"}
    assert reader_is_sure(reading)


def test_citation_line_names_the_answers_and_the_edges_of_their_walks(answered):
    view = answered.reading.view
    edges = {(int(view.src[e]), int(view.dst[e])) for e in answered.evidence_edges}
    anchor = answered.reading.anchors[0]
    assert edges == {(anchor, n) for n in answered.nodes}
    line = answered.citation_line()
    assert line.startswith(f"Evidence: nodes {', '.join(map(str, answered.nodes))}; edges ")
    assert all(f"{a}-{b}" in line for a, b in edges)


def test_evidence_keeps_anchors_first_then_candidates_in_reader_order(answered):
    reading = answered.reading
    ev = evidence(reading)
    assert ev.candidates == [n for n in reading.ranked if n not in reading.anchors]
    assert ev.nodes[:len(reading.anchors)] == reading.anchors
    assert len(ev.nodes) == len(set(ev.nodes))
    view = reading.view
    for e in ev.edges:  # every edge's endpoints are in the evidence
        assert int(view.src[e]) in ev.nodes and int(view.dst[e]) in ev.nodes
    text = ev.text(view)
    assert text.startswith("node_id,node_attr\n0,Benjamin Franklin\n") and "invented" in text


def test_evidence_is_bounded(answered):
    reading = answered.reading
    small = evidence(reading, candidates=1, max_edges=1)
    assert small.candidates == reading.ranked[:1] and len(small.edges) == 1
    assert set(small.nodes) == set(reading.anchors) | set(small.candidates)


def test_evidence_sample_is_the_prompt_and_the_small_graph(answered):
    reading = answered.reading
    ev = evidence(reading)
    sample = ev.sample(reading.view, qid="q1", question=QUESTION)
    assert sample.question == grounded_prompt(QUESTION) and sample.desc == ev.text(reading.view)
    assert tuple(sample.x.shape) == (len(ev.nodes), reading.view.dim)
    assert tuple(sample.edge_index.shape) == (2, len(ev.edges)) and sample.edge_attr.shape[0] == len(ev.edges)
    assert int(sample.edge_index.max()) < len(ev.nodes)  # local ids


class Unsure(ZeroShotReader):
    """The zero-shot reader's answers, with every probability that was not 0 made 0.5: undecided."""

    def read(self, *args, **kwargs):
        reading = super().read(*args, **kwargs)
        reading.probabilities = np.where(reading.probabilities > 0, 0.5, 0.0)
        return reading


def test_no_generator_means_the_reader_answers_even_when_it_is_unsure(embedder, result):
    """`generator=None`: nothing to ask, whatever `llm_when` says."""
    answerer = GroundedAnswerer(Unsure(embedder.embed), embedder.embed, None, llm_when="always")
    answered = answerer.answer(QUESTION, result)
    assert not reader_is_sure(answered.reading)
    assert answered.nodes == answered.reading.answers and answered.generator is None and answerer.generator is None


class _Asked(Exception):
    pass


def _llm():
    raise _Asked


def test_the_llm_is_asked_only_as_llm_when_says(embedder, result):
    reader = ZeroShotReader(embedder.embed)
    for never_asked in ("never", "auto"):  # auto: the zero-shot reader is sure of the toy's answer
        answered = GroundedAnswerer(reader, embedder.embed, _llm, llm_when=never_asked).answer(QUESTION, result)
        assert answered.generator is None
    with pytest.raises(_Asked):
        GroundedAnswerer(reader, embedder.embed, _llm, llm_when="always").answer(QUESTION, result)
    with pytest.raises(_Asked):  # auto, and the reader is unsure
        GroundedAnswerer(Unsure(embedder.embed), embedder.embed, _llm, llm_when="auto").answer(QUESTION, result)
    answered = GroundedAnswerer(Unsure(embedder.embed), embedder.embed, _llm, llm_when="never").answer(QUESTION,
                                                                                                    result)
    assert answered.generator is None


def test_an_unknown_llm_policy_is_refused(embedder):
    with pytest.raises(ConfigError, match="llm_when"):
        GroundedAnswerer(ZeroShotReader(embedder.embed), embedder.embed, None, llm_when="sometimes")

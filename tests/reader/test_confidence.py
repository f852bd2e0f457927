"""The zero-shot reader's confidence: the softmax mass of the walks reaching its first answer, calibrated."""

from __future__ import annotations

import pytest

from gretriever_neo4j.errors import ConfigError
from gretriever_neo4j.reader import ZeroShotReader
from gretriever_neo4j.reader.confidence import CALIBRATION, Calibration, answer_support, calibrated

from toy_kg import view_of

TRIPLES = [("Ann", "spouse", "Bob"), ("Ann", "born in", "Oslo"), ("Bob", "born in", "Rome"),
           ("Ann", "works as", "Pilot"), ("Bob", "works as", "Baker"), ("Cid", "child of", "Ann")]


def test_calibrated_is_monotone_and_keeps_none():
    assert calibrated(None) is None
    values = [calibrated(s) for s in (0.0, 0.2, 0.5, 0.8, 1.0)]
    assert values == sorted(values) and all(0 < v < 1 for v in values)
    with pytest.raises(ConfigError):
        Calibration.from_dict({"slope": 1.0, "bogus": 2})


def test_a_reading_says_how_sure_it_is(embedder):
    view = view_of(TRIPLES, embedder)
    ann = view.node_texts.index("Ann")

    def reading(question: str):
        masked = question.replace("Ann", "X")
        return ZeroShotReader(embedder.embed).read(question, view, [ann], embedder.embed([masked])[0],
                                                   embedder.embed([question])[0])

    clear = reading("where was Ann born?")
    assert [view.node_texts[n] for n in clear.answers] == ["Oslo"]
    support = answer_support(clear)
    assert 0 < support <= 1 and clear.confidence == pytest.approx(calibrated(support))
    vague = reading("what about Ann?")
    assert vague.confidence is not None and vague.confidence < clear.confidence
    assert CALIBRATION.unsure_below > 0


def test_refit_on_a_graphs_own_questions_moves_the_intercept_towards_how_often_it_is_right():
    general = Calibration()
    always_right = general.refit([0.3] * 40, [True] * 40)
    always_wrong = general.refit([0.3] * 40, [False] * 40)
    assert always_wrong.intercept < general.intercept < always_right.intercept
    assert calibrated(0.3, always_wrong) < calibrated(0.3, general) < calibrated(0.3, always_right)
    assert always_right.slope == general.slope and always_right.temperature == general.temperature
    # a few questions move it less than many: the general intercept weighs `prior_questions`
    assert general.refit([0.3] * 2, [True] * 2).intercept < always_right.intercept
    assert general.refit([], []).intercept == pytest.approx(general.intercept)

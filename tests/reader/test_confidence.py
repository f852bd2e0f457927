"""The zero-shot reader's confidence: the softmax mass of the walks reaching its first answer, calibrated."""

from __future__ import annotations

import pytest

from gretriever_neo4j.errors import ConfigError
from gretriever_neo4j.reader import ZeroShotReader
from gretriever_neo4j.reader.confidence import (
    CALIBRATION,
    GENERAL_FILE,
    AnswerEvidence,
    Calibration,
    answer_evidence,
    calibrated,
)
from gretriever_neo4j.reader.signature_weights import FEATURES

from toy_kg import view_of

TRIPLES = [("Ann", "spouse", "Bob"), ("Ann", "born in", "Oslo"), ("Bob", "born in", "Rome"),
           ("Ann", "works as", "Pilot"), ("Bob", "works as", "Baker"), ("Cid", "child of", "Ann")]


def test_calibrated_is_monotone_and_keeps_none():
    assert calibrated(None) is None
    values = [calibrated(s) for s in (0.0, 0.2, 0.5, 0.8, 1.0)]
    assert values == sorted(values) and all(0 < v < 1 for v in values)
    with pytest.raises(ConfigError):
        Calibration.from_dict({"slope": 1.0, "bogus": 2})


def test_sure_and_unsure_marks_are_ordered_and_saved_with_the_fit(tmp_path):
    assert 0 < CALIBRATION.unsure_below <= CALIBRATION.sure_at < 1
    with pytest.raises(ConfigError, match="sure_at"):
        Calibration(unsure_below=0.6, sure_at=0.5)
    with pytest.raises(ConfigError, match="sure_at"):
        Calibration(sure_at=1.0)
    Calibration(sure_at=0.9).save(tmp_path / "c.json")
    assert Calibration.load(tmp_path / "c.json").sure_at == 0.9


def test_a_reading_says_how_sure_it_is(embedder):
    view = view_of(TRIPLES, embedder)
    ann = view.node_texts.index("Ann")

    def reading(question: str):
        masked = question.replace("Ann", "X")
        return ZeroShotReader(embedder.embed).read(question, view, [ann], embedder.embed([masked])[0],
                                                   embedder.embed([question])[0])

    clear = reading("where was Ann born?")
    assert [view.node_texts[n] for n in clear.answers] == ["Oslo"]
    evidence = answer_evidence(clear)
    assert 0 < evidence.support <= 1 and len(evidence.walk) == len(FEATURES)
    assert clear.confidence == pytest.approx(calibrated(evidence))
    vague = reading("what about Ann?")
    assert vague.confidence is not None and vague.confidence < clear.confidence
    assert CALIBRATION.unsure_below > 0


def test_refit_on_a_graphs_own_questions_moves_the_intercept_towards_how_often_it_is_right():
    general = Calibration()
    seen = AnswerEvidence(0.3)
    always_right = general.refit([seen] * 40, [True] * 40)
    always_wrong = general.refit([seen] * 40, [False] * 40)
    assert always_wrong.intercept < general.intercept < always_right.intercept
    assert calibrated(0.3, always_wrong) < calibrated(0.3, general) < calibrated(0.3, always_right)
    assert always_right.slope == general.slope and always_right.temperature == general.temperature
    # a few questions move it less than many: the general intercept weighs `prior_questions`
    assert general.refit([seen] * 2, [True] * 2).intercept < always_right.intercept
    assert general.refit([], []).intercept == pytest.approx(general.intercept)


def test_the_general_calibration_ships_with_the_package_and_weighs_the_best_walks_features():
    assert GENERAL_FILE.exists()
    general = Calibration.load(GENERAL_FILE)
    assert general == CALIBRATION and general.features and set(general.features) <= set(FEATURES)
    assert len(general.weights) == len(general.means) == len(general.scales) == len(general.features)


def test_a_walk_feature_with_a_weight_moves_the_probability_and_round_trips(tmp_path):
    named = Calibration(features=("explained",), weights=(1.0,), means=(0.5,), scales=(0.25,))
    well, badly = [0.0] * len(FEATURES), [0.0] * len(FEATURES)
    well[list(FEATURES).index("explained")], badly[list(FEATURES).index("explained")] = 1.0, 0.0
    assert calibrated(AnswerEvidence(0.6, tuple(well)), named) > calibrated(AnswerEvidence(0.6, tuple(badly)), named)
    # a bare support reads the walk's features at their means
    assert calibrated(0.6, named) == pytest.approx(calibrated(0.6, Calibration()))
    named.save(tmp_path / "c.json")
    assert Calibration.load(tmp_path / "c.json") == named
    assert Calibration.from_dict(named.to_dict()) == named
    with pytest.raises(ConfigError, match="unknown walk features"):
        Calibration(features=("no such",), weights=(1.0,), means=(0.0,), scales=(1.0,))
    with pytest.raises(ConfigError, match="as long as"):
        Calibration(features=("explained",), weights=(), means=(0.0,), scales=(1.0,))


def test_what_chose_the_answer_has_its_own_weight_and_older_fits_load_without_one(tmp_path):
    join = Calibration(joined=2.0, narrowed=-1.0)
    walked, joined_answer = AnswerEvidence(0.2), AnswerEvidence(0.2, (), "joined")
    assert calibrated(joined_answer, join) > calibrated(walked, join)
    assert calibrated(AnswerEvidence(0.2, (), "narrowed"), join) < calibrated(walked, join)
    assert calibrated(joined_answer, Calibration()) == pytest.approx(calibrated(walked, Calibration()))
    join.save(tmp_path / "c.json")
    assert Calibration.load(tmp_path / "c.json") == join
    older = {k: v for k, v in join.to_dict().items() if k not in ("joined", "narrowed")}
    assert Calibration.from_dict(older).joined == 0.0

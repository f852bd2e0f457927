"""The walk ranker as the reader reads it: its settings checked, its opinion added to the linear score of the
shortlisted walks only, the reader following it, and the ranker that ships (its fit and saved form:
tests/train/test_walk_ranker_fit.py)."""

from __future__ import annotations

import numpy as np
import pytest
from restaurant_kg import RESTAURANTS

from gretriever_neo4j.errors import ConfigError
from gretriever_neo4j.reader import ZeroShotReader
from gretriever_neo4j.reader.coverage import SignatureTable
from gretriever_neo4j.reader.learned import GENERAL, general_walk_ranker
from gretriever_neo4j.reader.signature_weights import FEATURES, ZERO_SHOT
from gretriever_neo4j.reader.walk_ranker import MODEL_FILE, RankerSettings, ranked, ranker_inputs

from toy_kg import view_of

HOPS_COLUMN = list(FEATURES).index("extra_hops")
EVERY = dict(features=tuple(FEATURES), base=tuple(ZERO_SHOT.vector()))


class _Longer:
    """A ranker that likes longer walks: its score is 10 x the named hops beyond the first."""

    def __init__(self, weight: float = 1.0):
        self.settings = RankerSettings(weight=weight, **EVERY)

    def scores(self, features):
        return 10.0 * features[:, HOPS_COLUMN]


@pytest.mark.parametrize("bad", [dict(weight=0.0), dict(weight=float("nan")), dict(leaves=0), dict(trees=2.5),
                                 dict(grades=True), dict(features=("explained",), base=())])
def test_settings_out_of_range_are_refused(bad):
    with pytest.raises(ConfigError):
        RankerSettings(**bad)


def test_the_trees_read_the_chosen_features_the_linear_score_and_its_distance_below_the_best():
    features = np.arange(12, dtype=float).reshape(3, 4)
    inputs = ranker_inputs(features, np.asarray([3, 1]), np.asarray([1.0, -1.0]))
    assert inputs.tolist() == [[3, 1, 2, 0], [7, 5, 2, 0], [11, 9, 2, 0]]
    assert ranker_inputs(features, np.asarray([0]), np.asarray([2.0])).tolist() == [[0, 0, -16], [4, 8, -8],
                                                                                     [8, 16, 0]]


def test_the_trees_read_each_named_features_distance_below_the_questions_best_after_the_scores():
    features = np.asarray([[0.2, 5.0, 1.0], [0.9, 3.0, 1.0], [0.5, 4.0, 1.0]])
    inputs = ranker_inputs(features, np.asarray([2]), np.asarray([1.0]), np.asarray([0, 1]))
    assert np.allclose(inputs[:, 3:], [[-0.7, 0.0], [0.0, -2.0], [-0.4, -1.0]])
    assert inputs[:, :3].tolist() == ranker_inputs(features, np.asarray([2]), np.asarray([1.0])).tolist()
    assert ranker_inputs(features[:0], np.asarray([2]), np.asarray([1.0]), np.asarray([0, 1])).shape == (0, 5)


def test_its_opinion_moves_only_shortlisted_walks_and_the_best_keeps_its_score():
    features = np.zeros((3, len(FEATURES)))
    features[:, HOPS_COLUMN] = [0, 1, 2]
    table = SignatureTable(used=np.asarray([4, 5, 6]), features=features, shortlisted=np.asarray([True, True, False]))
    scores = np.asarray([-np.inf, 0, 0, 0, 1.0, 0.5, -9.0])
    out = ranked(_Longer(weight=0.5), table, scores)
    assert out[4] == pytest.approx(1.0 - 0.5 * 10) and out[5] == pytest.approx(0.5)  # walk 5 is the ranker's best
    assert out[6] == -9.0 and np.isneginf(out[0]) and scores[4] == 1.0  # not shortlisted, the input kept
    empty = SignatureTable(used=np.asarray([1]), features=features[:1], shortlisted=np.asarray([False]))
    assert ranked(_Longer(), empty, scores) is scores


def test_the_reader_takes_the_walk_the_ranker_prefers(embedder):
    view = view_of(RESTAURANTS, embedder)
    question, anchor = "Anna Pike trained at a restaurant: which street is it on?", view.node_texts.index("Anna Pike")
    vectors = embedder.embed(["X trained at a restaurant: which street is it on?"])[0], embedder.embed([question])[0]

    def answers(ranker):
        reading = ZeroShotReader(embedder.embed, walk_ranker=ranker).read(question, view, [anchor], *vectors)
        return sorted(view.node_texts[n] for n in reading.answers)

    assert answers(None) == ["Red Lantern"]
    assert answers(_Longer()) == ["Mill Lane"]


def test_the_ranker_that_ships_loads_from_the_package_and_reads_every_feature():
    ranker = general_walk_ranker()
    assert ranker is not None and (GENERAL / MODEL_FILE).stat().st_size < 3_000_000
    assert set(ranker.settings.features) <= set(FEATURES) and ranker.settings.training["graphs"] >= 30
    assert "tuned_reading" in ranker.settings.below_best
    features = np.zeros((3, len(FEATURES)))
    features[:, list(FEATURES).index("tuned_reading")] = [0.2, 0.9, 0.5]
    scores = ranker.scores(features)
    assert scores.shape == (3,) and np.isfinite(scores).all()

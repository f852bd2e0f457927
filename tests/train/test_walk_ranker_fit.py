"""The walk ranker's fit (`train.walk_ranker`): trees that learn an interaction of features no linear score finds,
the measure leaving each graph out or on test files, and the saved form read back or refused."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

from gretriever_neo4j.errors import ConfigError
from gretriever_neo4j.reader.learned import QuestionWalks
from gretriever_neo4j.reader.signature_weights import FEATURES
from gretriever_neo4j.reader.walk_ranker import CONFIG_FILE, MODEL_FILE, RankerSettings, WalkRanker
from gretriever_neo4j.train.walk_ranker import BELOW_BEST, choices, fit, main, measure

SMALL = RankerSettings(trees=40, leaves=4, min_in_leaf=5, learning_rate=0.2)


def _toy_questions(count: int, seed: int) -> list[QuestionWalks]:
    """Questions of four walks where the answering one is the only walk with both `explained` above 0.5 and
    `extra_hops` 1: an interaction no linear score finds (`explained` alone favours a decoy)."""
    rng = np.random.default_rng(seed)
    explained, hops = list(FEATURES).index("explained"), list(FEATURES).index("extra_hops")
    out = []
    for q in range(count):
        features = np.zeros((4, len(FEATURES)))
        features[:, explained] = rng.uniform(0, 0.45, 4)
        features[:, hops] = rng.integers(0, 2, 4) * 2  # 0 or 2 extra hops
        right = int(rng.integers(4))
        decoy = (right + 1) % 4
        features[right, explained], features[right, hops] = rng.uniform(0.55, 0.7), 1
        features[decoy, explained], features[decoy, hops] = rng.uniform(0.75, 0.9), 0
        f1 = np.zeros(4)
        f1[right] = 1.0
        out.append(QuestionWalks(features, f1, f"g{q % 3}"))
    return out


def test_fitted_trees_learn_what_the_linear_score_misses_and_are_read_back_as_they_score(tmp_path):
    ranker = fit(_toy_questions(120, 0), SMALL)
    assert ranker.settings.features == tuple(FEATURES) and len(ranker.settings.base) == len(FEATURES)
    held = _toy_questions(60, 1)
    hits = choices(ranker, held, [1.0])
    assert hits[0.0] < 10 and hits[1.0] >= 55, hits  # the decoy wins alone, the ranker finds the answer
    ranker.save(tmp_path)
    again = WalkRanker.load(tmp_path)
    assert again.settings == ranker.settings
    assert np.allclose(again.scores(held[0].features), ranker.scores(held[0].features))


def _relative_questions(count: int, seed: int) -> list[QuestionWalks]:
    """Questions of five walks where the answering one reads best on `tuned_reading` within its question, while
    that feature's level moves from question to question far more than it differs within one, and a loud
    `explained` that means nothing drowns it in the linear score."""
    rng = np.random.default_rng(seed)
    tuned, explained = list(FEATURES).index("tuned_reading"), list(FEATURES).index("explained")
    out = []
    for q in range(count):
        features = np.zeros((5, len(FEATURES)))
        features[:, tuned] = rng.uniform(0, 3) + rng.uniform(0, 0.3, 5)
        features[:, explained] = rng.uniform(0, 3, 5)
        f1 = (features[:, tuned] == features[:, tuned].max()).astype(float)
        out.append(QuestionWalks(features, f1, f"g{q % 3}"))
    return out


def test_the_distance_below_the_questions_best_finds_what_a_walks_own_value_cannot(tmp_path):
    alone, relative = (fit(_relative_questions(300, 0), dataclasses.replace(SMALL, below_best=below))
                       for below in ((), ("tuned_reading",)))
    held = _relative_questions(100, 1)
    assert choices(alone, held, [1.0])[1.0] < 75 <= 95 <= choices(relative, held, [1.0])[1.0]
    relative.save(tmp_path)
    again = WalkRanker.load(tmp_path)
    assert again.settings.below_best == ("tuned_reading",)
    assert np.allclose(again.scores(held[0].features), relative.scores(held[0].features))
    config = json.loads((tmp_path / CONFIG_FILE).read_text())
    (tmp_path / CONFIG_FILE).write_text(json.dumps({**config, "below_best": []}))
    with pytest.raises(ConfigError, match="inputs"):  # trees that read a distance, settings that do not name it
        WalkRanker.load(tmp_path)


def test_a_broken_or_foreign_ranker_is_refused(tmp_path):
    ranker = fit(_toy_questions(30, 0), RankerSettings(trees=3, leaves=2, min_in_leaf=5))
    ranker.save(tmp_path)
    config = json.loads((tmp_path / CONFIG_FILE).read_text())
    (tmp_path / CONFIG_FILE).write_text(json.dumps({**config, "features": ["explained", "no such feature"],
                                                    "base": [1.0, 1.0]}))
    with pytest.raises(ConfigError, match="no such feature"):
        WalkRanker.load(tmp_path)
    (tmp_path / CONFIG_FILE).write_text(json.dumps({**config, "features": ["explained"], "base": [1.0]}))
    with pytest.raises(ConfigError, match="inputs"):
        WalkRanker.load(tmp_path)
    (tmp_path / CONFIG_FILE).write_text(json.dumps(config))
    (tmp_path / MODEL_FILE).write_text("not trees")
    with pytest.raises(ConfigError, match="walk ranker"):
        WalkRanker.load(tmp_path)


def test_the_measure_leaves_each_graph_out_or_reads_test_files_and_counts_graphs_moved():
    result = measure(_toy_questions(150, 0), None, [1.0], SMALL)
    assert sorted(result["graphs"]) == ["g0", "g1", "g2"]
    assert result["mean"]["1.0"] > 0.9 > 0.2 > result["mean"]["0.0"]
    assert result["more_than_two_questions"]["1.0"] == {"won": 3, "lost": 0}
    tested = measure(_toy_questions(90, 0), _toy_questions(30, 5), [0.5], SMALL)
    assert sum(r["questions"] for r in tested["graphs"].values()) == 30


def test_the_command_writes_trees_that_the_reader_loads(tmp_path):
    data = tmp_path / "g.npz"
    questions = _toy_questions(60, 0)
    np.savez(data, features=np.vstack([q.features for q in questions]),
             f1=np.concatenate([q.f1 for q in questions]),
             question=np.repeat(np.arange(len(questions)), 4), shortlisted=np.ones(4 * len(questions), bool),
             graph=np.asarray("g"))
    main([str(data), "--save", str(tmp_path / "ranker"), "--weight", "0.5", "--out", str(tmp_path / "r.json")])
    ranker = WalkRanker.load(tmp_path / "ranker")
    assert ranker.settings.weight == 0.5 and ranker.settings.training["questions"] == 60
    assert json.loads((tmp_path / "r.json").read_text())["graphs"] == 1
    assert ranker.settings.below_best == BELOW_BEST
    with pytest.raises(SystemExit):
        main([str(data), "--below-best", "tuned_reading,no such feature"])
    with pytest.raises(ValueError, match="no question"):
        fit([QuestionWalks(np.zeros((2, len(FEATURES))), np.zeros(2), "g")])

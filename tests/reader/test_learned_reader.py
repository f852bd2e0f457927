"""The learned reader (reader/learned.py, signature_weights.py, walk_matcher.py): walk features with weights from a
config, weights fitted on questions, the walk matcher, and the general reader that ships in the package."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from gretriever_neo4j.errors import ConfigError
from gretriever_neo4j.reader import ZeroShotReader
from gretriever_neo4j.reader.coverage import coverage_features, coverage_scores, scores_of
from gretriever_neo4j.reader.learned import (
    FitConfig,
    QuestionWalks,
    end_node_f1,
    fit_weights,
    signature_hit,
    walk_ends,
)
from gretriever_neo4j.reader.signature_weights import FEATURES, ZERO_SHOT, SignatureWeights
from gretriever_neo4j.reader.text_vectors import TextVectors
from gretriever_neo4j.reader.walk_matcher import MatcherConfig, MatcherQuestion, WalkMatcher, train_matcher, unit
from gretriever_neo4j.retrieval.relation_paths import BACKWARD, FORWARD

from fakes import FakeEmbedder
from toy_kg import view_of

RELATIONS = ["directed_by", "starred_actors", "in_language", "release_year"]


def test_weights_round_trip_and_refuse_what_they_do_not_know(tmp_path):
    weights = dataclasses.replace(ZERO_SHOT, matcher=0.5, reading=0.7)
    weights.save(tmp_path / "w.json")
    assert SignatureWeights.load(tmp_path / "w.json") == weights
    assert SignatureWeights.from_vector(weights.vector()) == weights
    assert list(SignatureWeights().vector()) == [getattr(ZERO_SHOT, name) for name in FEATURES]
    with pytest.raises(ConfigError, match="unknown signature weights"):
        SignatureWeights.from_dict({"explained": 1.0, "loudness": 2.0})
    with pytest.raises(ConfigError, match="finite"):
        SignatureWeights(explained=float("nan"))
    with pytest.raises(ConfigError, match="temperature"):
        SignatureWeights(temperature=0.0)
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(ConfigError, match="cannot read"):
        SignatureWeights.load(tmp_path / "bad.json")


def test_a_signature_scores_its_features_times_the_weights():
    vectors = TextVectors(FakeEmbedder().embed)
    question = "who directed X"
    q = FakeEmbedder().embed([question])[0]
    signatures = [((0, FORWARD),), ((1, FORWARD),), ((1, FORWARD), (1, BACKWARD)), ()]
    table = coverage_features(question, q, signatures, RELATIONS, vectors)
    assert table.features.shape == (3, len(FEATURES)) and list(table.used) == [0, 1, 2]
    scores = coverage_scores(question, q, signatures, RELATIONS, vectors)
    assert np.allclose(scores[:3], table.features @ ZERO_SHOT.vector()) and scores[3] == -np.inf
    assert table.features[2, list(FEATURES).index("trip_unasked")] == 1.0  # a round trip nothing asks for
    assert table.features[0, list(FEATURES).index("one_hop")] == 1.0
    # other weights, other order: all the weight on the round trip puts it first
    trips = SignatureWeights.from_vector(np.eye(len(FEATURES))[list(FEATURES).index("trip_unasked")])
    assert int(np.argmax(scores_of(table, trips, len(signatures)))) == 2
    assert int(np.argmax(scores)) != 2


def _toy_questions(rng, count: int, graph: str) -> list[QuestionWalks]:
    """Walks with two features: the first says nothing, the answering walk is the one highest on the second."""
    out = []
    for _ in range(count):
        features = np.zeros((4, len(FEATURES)))
        features[:, 0] = rng.normal(size=4)
        features[:, 1] = rng.normal(size=4)
        f1 = np.zeros(4)
        f1[int(np.argmax(features[:, 1]))] = 1.0
        out.append(QuestionWalks(features, f1, graph))
    return out


def test_fitted_weights_learn_which_feature_picks_the_answering_walk():
    rng = np.random.default_rng(0)
    prior = SignatureWeights.from_vector(np.eye(len(FEATURES))[0])  # all on the feature that says nothing
    train, test = _toy_questions(rng, 200, "a") + _toy_questions(rng, 50, "b"), _toy_questions(rng, 100, "c")
    fitted = fit_weights(train, FitConfig(l2=1e-4), prior=prior)
    assert signature_hit(test, prior) < 0.5 < 0.9 < signature_hit(test, fitted)
    assert fitted.temperature == prior.temperature and fitted.shortlist == prior.shortlist
    with pytest.raises(Exception, match="no question"):
        fit_weights([QuestionWalks(np.zeros((2, len(FEATURES))), np.zeros(2), "a")])


def test_end_node_f1_and_ends_of_toy_walks():
    embedder = FakeEmbedder()
    view = view_of([("Film A", "directed_by", "Ann"), ("Film A", "starred_actors", "Bob"),
                    ("Film A", "starred_actors", "Cid"), ("Film B", "starred_actors", "Bob")], embedder)
    question = "who acted in Film A"
    reading = ZeroShotReader(embedder.embed).read(question, view, [0], embedder.embed(["who acted in X"])[0],
                                                  embedder.embed([question])[0])
    gold = np.asarray([t in ("Bob", "Cid") for t in view.node_texts])
    f1 = end_node_f1(reading, gold)
    by_text = {" ".join(view.relation_texts[r] for r, _ in sig): f for sig, f in zip(reading.walks.signatures, f1)}
    assert by_text["starred_actors"] == 1.0 and by_text["directed_by"] == 0.0
    ends = walk_ends(reading.walks, view, reading.anchors, range(len(reading.walks.signatures)))
    starred = next(s for s, sig in enumerate(reading.walks.signatures)
                   if len(sig) == 1 and view.relation_texts[sig[0][0]] == "starred_actors")
    assert sorted(view.node_texts[n] for n in ends[starred]) == ["Bob", "Cid"]
    assert all(0 not in nodes for nodes in ends)  # the anchor is never what a walk reaches


def _matcher_questions(rng, count: int, dim: int = 16) -> list[MatcherQuestion]:
    """The answering walk's vector is the question's, the others are random."""
    out = []
    for _ in range(count):
        question = unit(rng.normal(size=dim))
        walks = unit(rng.normal(size=(5, dim)))
        answer = int(rng.integers(5))
        walks[answer] = question
        f1 = np.zeros(5)
        f1[answer] = 1.0
        out.append(MatcherQuestion(question, walks, unit(rng.normal(size=(5, dim))), f1, "toy"))
    return out


def test_the_walk_matcher_learns_round_trips_and_adapts(tmp_path):
    rng = np.random.default_rng(1)
    config = MatcherConfig(dim=16, hidden=16, epochs=30, questions_per_step=32, dropout=0.0)
    matcher = train_matcher(_matcher_questions(rng, 300), config)
    test = _matcher_questions(rng, 100)
    hit = np.mean([q.f1[int(np.argmax(matcher.score(q.question, q.walks, q.ends)))] > 0 for q in test])
    assert hit > 0.8
    loaded = WalkMatcher.load(matcher.save(tmp_path / "m"))
    assert np.allclose(loaded.score(test[0].question, test[0].walks, test[0].ends),
                       matcher.score(test[0].question, test[0].walks, test[0].ends))
    assert loaded.config == config
    adapted = train_matcher(test[:10], dataclasses.replace(config, epochs=1), start=matcher)
    assert adapted.module is not matcher.module
    (tmp_path / "m" / "matcher.json").write_text('{"depth": 3}')
    with pytest.raises(ConfigError, match="unknown matcher settings"):
        WalkMatcher.load(tmp_path / "m")


def test_a_general_reader_in_the_package_folder_loads_offline(tmp_path, monkeypatch):
    """None ships today (it measured no better than the hand-set weights); one written where the package keeps it
    is what a plain `gqa ask` reads, with no network."""
    from gretriever_neo4j.reader import learned

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(learned, "GENERAL", tmp_path / "general")
    learned.general_weights.cache_clear()
    learned.general_matcher.cache_clear()
    try:
        assert learned.general_weights() == ZERO_SHOT and learned.general_matcher() is None
        rng = np.random.default_rng(2)
        matcher = train_matcher(_matcher_questions(rng, 20, dim=384), MatcherConfig(epochs=1, questions_per_step=8))
        matcher.save(tmp_path / "general")
        dataclasses.replace(ZERO_SHOT, matcher=0.02).save(tmp_path / "general" / learned.WEIGHTS_FILE)
        learned.general_weights.cache_clear()
        learned.general_matcher.cache_clear()
        weights, loaded = learned.general_weights(), learned.general_matcher()
        assert weights.matcher == 0.02 and loaded is not None and loaded.config.dim == 384
        scores = loaded.score(unit(rng.normal(size=384)), unit(rng.normal(size=(3, 384))),
                              unit(rng.normal(size=(3, 384))))
        assert scores.shape == (3,) and np.isfinite(scores).all()
    finally:
        learned.general_weights.cache_clear()
        learned.general_matcher.cache_clear()

"""`train.calibration.fit`: the general calibration's logistic fit over the walk support and the best walk's
features."""

from __future__ import annotations

import json

import numpy as np

from gretriever_neo4j.metrics import expected_calibration_error as ece
from gretriever_neo4j.reader.confidence import AnswerEvidence, Calibration, calibrated
from gretriever_neo4j.reader.signature_weights import FEATURES
from gretriever_neo4j.train.calibration import SURE_MARK_MIN, evidence, fit, main, sure_marks


def test_the_fit_weighs_a_feature_that_tells_right_from_wrong_and_is_calibrated_on_its_data():
    rng = np.random.default_rng(0)
    n = 600
    support = rng.uniform(0.2, 1.0, n)
    walk = np.zeros((n, len(FEATURES)))
    column = list(FEATURES).index("explained")
    walk[:, column] = rng.uniform(0.0, 1.0, n)
    truth = 1 / (1 + np.exp(-(3.0 * (support - 0.6) + 4.0 * (walk[:, column] - 0.5))))
    right = rng.uniform(size=n) < truth
    calibration = fit(support, walk, right, l2=0.01)
    assert calibration.features == ("explained",)  # the features that never vary are left out
    assert calibration.slope > 0 and calibration.weights[0] > 0
    p = np.array([calibrated(AnswerEvidence(s, tuple(w)), calibration) for s, w in zip(support, walk)])
    assert ece(p, right.astype(float)) < 0.06
    assert ece(np.ones(n), right.astype(float)) > 0.3


def test_the_fit_weighs_an_answer_a_join_chose_where_such_answers_are_right_more_often_than_their_support_says():
    rng = np.random.default_rng(3)
    n = 800
    support = rng.uniform(0.05, 1.0, n)
    walk = np.zeros((n, len(FEATURES)))
    chosen = np.where(rng.uniform(size=n) < 0.25, "joined", "walks")
    right = rng.uniform(size=n) < np.where(chosen == "joined", 0.9, support)
    calibration = fit(support, walk, right, chosen=chosen)
    assert calibration.joined > 1.0 and calibration.narrowed == 0.0  # nothing was narrowed: no weight
    p = np.array([calibrated(e, calibration) for e in evidence(support, walk, chosen)])
    assert ece(p, right.astype(float)) < 0.06
    joins = chosen == "joined"
    assert abs(p[joins].mean() - right[joins].mean()) < 0.05
    without = fit(support, walk, right)  # reads joined answers by their support alone: far too unsure of them
    assert right[joins].mean() - np.mean([calibrated(AnswerEvidence(s), without) for s in support[joins]]) > 0.15
    # keeping the walk-feature weights of a fit refits only the slope, the intercept and the choices
    kept = fit(support, walk, right, chosen=chosen, base=calibration, keep_walk_weights=True)
    assert kept.features == calibration.features and kept.weights == calibration.weights and kept.joined > 1.0


def _collected(path, graph: str, rng, n: int = 200) -> None:
    support = rng.uniform(0.2, 1.0, n)
    walk = np.zeros((n, len(FEATURES)))
    walk[:, list(FEATURES).index("explained")] = rng.uniform(0.0, 1.0, n)
    right = rng.uniform(size=n) < support
    np.savez_compressed(path, support=support, walk=walk, right=right, graph=graph)


def test_files_given_with_also_are_fitted_on_but_never_left_out(tmp_path, capsys):
    rng = np.random.default_rng(1)
    for graph in ("g-one", "g-two", "g-extra"):
        _collected(tmp_path / f"{graph}.npz", graph, rng)
    out, alone = tmp_path / "with.json", tmp_path / "alone.json"
    main(["fit", str(tmp_path / "g-one.npz"), str(tmp_path / "g-two.npz"), "--also", str(tmp_path / "g-extra.npz"),
          "--out", str(out)])
    printed = capsys.readouterr().out
    assert "g-one" in printed and "g-two" in printed and "g-extra" not in printed
    assert "of 3 files" in printed
    main(["fit", *(str(tmp_path / f"{g}.npz") for g in ("g-one", "g-two", "g-extra")), "--out", str(alone)])
    assert Calibration.load(out) == Calibration.load(alone)  # the written fit is over every file either way


def test_sure_marks_say_how_many_answers_each_mark_marks_how_many_of_them_are_right_and_the_worst_graph():
    p = np.array([0.99] * 30 + [0.92] * 30 + [0.5] * 40)
    right = np.array([True] * 30 + [True] * 20 + [False] * 10 + [False] * 40)
    graph = np.array(["a"] * 15 + ["b"] * 15 + ["a"] * 30 + ["b"] * 40)  # "a" holds every answer at 0.92
    marks = sure_marks(p, right, graph, [0.9, 0.95, 0.999])
    assert marks[0.9] == {"share": 0.6, "right": 50 / 60, "worst_graph": 35 / 45}  # "b": 15 marked, too few
    assert marks[0.95] == {"share": 0.3, "right": 1.0, "worst_graph": None}  # 15 each: no graph has enough
    assert marks[0.999] == {"share": 0.0, "right": None, "worst_graph": None}
    assert SURE_MARK_MIN == 20


def test_fit_writes_the_sure_mark_it_is_given_and_prints_each_mark_measured(tmp_path, capsys):
    rng = np.random.default_rng(4)
    for graph in ("g-one", "g-two"):
        _collected(tmp_path / f"{graph}.npz", graph, rng)
    out = tmp_path / "fit.json"
    main(["fit", str(tmp_path / "g-one.npz"), str(tmp_path / "g-two.npz"), "--out", str(out),
          "--marks", "0.8,0.95", "--sure-at", "0.95"])
    printed = capsys.readouterr().out
    assert "sure at 0.800:" in printed and "sure at 0.950:" in printed and "sure at 0.900:" not in printed
    assert Calibration.load(out).sure_at == 0.95


def test_measure_scores_a_written_fit_on_files_it_was_not_fitted_on(tmp_path, capsys):
    rng = np.random.default_rng(2)
    for graph in ("g-fit", "g-new"):
        _collected(tmp_path / f"{graph}.npz", graph, rng)
    written, out = tmp_path / "fit.json", tmp_path / "measured.json"
    main(["fit", str(tmp_path / "g-fit.npz"), "--out", str(written)])
    main(["measure", str(tmp_path / "g-new.npz"), "--calibration", str(written), "--out", str(out)])
    assert "g-new" in capsys.readouterr().out
    result = json.loads(out.read_text())
    assert result["command"].startswith("python -m train.calibration measure") and result["calibration"] == str(written)
    new = np.load(tmp_path / "g-new.npz")
    p = np.array([calibrated(AnswerEvidence(s, tuple(w)), Calibration.load(written))
                  for s, w in zip(new["support"], new["walk"])])
    assert result["pooled"]["ece"] == round(ece(p, new["right"]), 4) == result["per_graph"]["g-new"]["ece"]
    assert result["pooled"]["answered"] == 200 and result["pooled"]["strict_hit1"] == round(new["right"].mean(), 4)
    sure = p >= Calibration.load(written).sure_at
    assert result["pooled"]["sure_right"] == round(new["right"][sure].mean(), 4) and sure.any()


def test_collect_reads_with_the_hop_reader_walk_encoder_and_walk_ranker_it_is_given(monkeypatch):
    """A fit's graphs must be read by models that never saw them: `collect --hop-reader`, `--walk-encoder` and
    `--walk-ranker` are what reads, not the shipped ones."""
    import gretriever_neo4j.train.general_reader as general_reader
    from gretriever_neo4j.reader.learned import GENERAL, HOP_READER, general_hop_reader, general_walk_ranker
    from gretriever_neo4j.train.calibration import collect

    used = {}

    def read_questions(graph, questions, walk_encoder=None, hop_reader=None, walk_ranker=None):
        used.update(walk_encoder=walk_encoder, hop_reader=hop_reader, walk_ranker=walk_ranker)
        return iter(())

    monkeypatch.setattr(general_reader, "read_questions", read_questions)
    shipped, ranker = general_hop_reader(), general_walk_ranker()
    data = collect("g", [("who?", ["x"])], walk_encoder=GENERAL, hop_reader=GENERAL / HOP_READER,
                   walk_ranker=GENERAL)
    assert len(data["right"]) == 0
    assert used["hop_reader"] is not shipped and used["hop_reader"].config == shipped.config
    assert used["walk_encoder"].config == type(used["walk_encoder"]).load(GENERAL).config
    assert used["walk_ranker"] is not ranker and used["walk_ranker"].settings == ranker.settings
    collect("g", [("who?", ["x"])])
    assert used["hop_reader"] is shipped and used["walk_ranker"] is ranker

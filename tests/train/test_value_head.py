"""The value head's training: questions masked and labelled from a set's files, the logistic fit, and the measure
over collect files that says what `gqa ask` would gain."""

from __future__ import annotations

import json

import numpy as np

from gretriever_neo4j.reader.signature_weights import FEATURES
from train.value_head import fit, labelled_questions, masked, measure


def test_the_longest_node_name_the_question_holds_is_masked_in_any_case():
    names = ["Blue Door Cafe", "Blue Door"]
    assert masked("when did blue door cafe open?", names) == "when did X open?"
    assert masked("who runs Blue Door", names) == "who runs X"
    assert masked("who runs it", names) == "who runs it"


def test_questions_are_labelled_by_whether_every_answer_is_a_number_or_date(tmp_path):
    folder = tmp_path / "mine" / "cafes"
    folder.mkdir(parents=True)
    (tmp_path / "sets.json").write_text(json.dumps({"mine": {"graphs": ["cafes"]}}))
    (folder / "triples.tsv").write_text("Blue Door\topened\t1998\nBlue Door\trun by\tHarbor Foods\n")
    (folder / "questions.tsv").write_text("question\tanswers\nwhen did Blue Door open\t1998\n"
                                          "who runs blue door\tHarbor Foods\nno answer here\t\n")
    texts, labels, graphs = labelled_questions(tmp_path, ["mine"])
    assert texts == ["when did X open", "who runs X"]
    assert labels.tolist() == [True, False] and graphs == ["cafes", "cafes"]


def test_the_fit_separates_what_a_direction_separates():
    rng = np.random.default_rng(0)
    vectors = rng.normal(size=(200, 5))
    labels = vectors[:, 0] > 0.5
    weight, bias = fit(vectors, labels, l2=0.1)
    predicted = (vectors @ weight + bias) > 0
    assert (predicted == labels).mean() > 0.97 and weight[0] > abs(weight[1:]).max()


def test_the_measure_counts_a_walk_choice_the_feature_changes(tmp_path):
    features = np.zeros((4, len(FEATURES)))
    features[:, list(FEATURES).index("explained")] = [1.0, 0.9, 1.0, 0.9]  # the first walk of each wins alone
    np.savez(tmp_path / "g.npz", features=features, f1=np.array([0.0, 1.0, 1.0, 0.0]),
             question=np.array([0, 0, 1, 1]), shortlisted=np.ones(4, dtype=bool), graph=np.asarray("g"),
             walk_text=np.array(["a", "b", "c", "d"]), masked=np.array(["which company runs X"] * 2 + ["when"] * 2),
             end_names=np.array(["1998", "Harbor Foods", "Harbor Foods", "1998"]))
    result = measure([tmp_path / "g.npz"], lambda text: 0.01 if "company" in text else 0.5, [1.0])
    assert result["graphs"]["g"] == {"0.0": 0.5, "1.0": 1.0}
    assert result["won"] == {"1.0": 1} and result["lost"] == {"1.0": 0}

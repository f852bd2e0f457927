import pytest

from gretriever_neo4j.errors import InputError
from gretriever_neo4j.metrics import (
    answer_accuracy,
    contains_label,
    f1_precision_recall,
    hit_at_1,
    normalize,
    prediction_items,
    score_explagraphs,
    score_open_questions,
    score_scenegraphs,
    stance_accuracy,
    strict_hit_at_1,
)


def test_normalisation_as_the_reference():
    assert normalize("The Eiffel-Tower, in  Paris!") == "eiffeltower in paris"
    assert normalize("An apple a day") == "apple day"
    assert normalize("<pad> yes") == "pad yes"  # the reference's <pad> removal never fires


def test_prediction_items_split_at_bars_and_newlines():
    assert prediction_items("a|b\nc") == ["a", "b", "c"]


@pytest.mark.parametrize("prediction, answers, expected", [
    ("paris|lyon", ["Lyon"], 1.0),
    ("London", ["Paris"], 0.0),
    ("The capital is Paris.", ["paris"], 1.0),
    ("Parisian food", ["paris"], 1.0),  # substring match, as the reference
    ("jaxon|bieber", ["Jaxon Bieber"], 1.0),  # items are re-joined with spaces before matching
    ("", ["x"], 0.0),
])
def test_hit_at_1(prediction, answers, expected):
    assert hit_at_1(prediction, answers) == expected


def test_f1_precision_recall():
    assert f1_precision_recall("paris|lyon|nice", ["Paris", "Lyon"]) == pytest.approx((0.8, 2 / 3, 1.0))
    assert f1_precision_recall("paris and lyon", ["paris", "lyon"]) == pytest.approx((4 / 3, 2.0, 1.0))
    assert f1_precision_recall("rome", ["paris"]) == (0.0, 0.0, 0.0)
    assert answer_accuracy("paris|rome", ["paris", "lyon"]) == 0.5


@pytest.mark.parametrize("prediction, answers, expected", [
    ("Paris|Lyon", ["paris"], 1.0),
    ("Lyon|Paris", ["paris"], 0.0),
    ("The Paris", ["paris"], 1.0),
    ("paris is it", ["paris"], 0.0),
    ("\n|Paris", ["paris"], 1.0),
    ("", ["paris"], 0.0),
])
def test_strict_hit_at_1(prediction, answers, expected):
    assert strict_hit_at_1(prediction, answers) == expected


@pytest.mark.parametrize("prediction, label, expected", [
    ("Support. Though one could counter", "support", 1.0),
    ("counter", "counter", 1.0),
    ("They COUNTER each other", "counter", 0.0),  # upper case is not among the reference's patterns
    ("Counter, not support", "support", 0.0),
    ("", "support", 0.0),
])
def test_stance_accuracy(prediction, label, expected):
    assert stance_accuracy(prediction, label) == expected


def test_scene_graph_label_containment_is_case_sensitive():
    assert contains_label("a red car", "red") == 1.0
    assert contains_label("Red", "red") == 0.0


def test_aggregates():
    scores = score_open_questions(["paris|lyon", "rome", "Nice"], [["paris"], ["milan"], ["nice", "cannes"]])
    assert scores.count == 3
    assert scores.hit_at_1 == pytest.approx(2 / 3)
    assert scores.strict_hit_at_1 == pytest.approx(2 / 3)
    assert scores.recall == pytest.approx((1 + 0 + 0.5) / 3)
    assert scores.as_percentages()["hit_at_1"] == pytest.approx(200 / 3)
    assert score_explagraphs(["support", "counter", "x"], ["support", "support", "counter"]) == pytest.approx(1 / 3)
    assert score_scenegraphs(["left", "on the right"], ["left", "right"]) == 1.0
    with pytest.raises(InputError):
        score_open_questions(["a"], [])


def test_expected_calibration_error_is_zero_when_confidence_matches_how_often_answers_are_right():
    from gretriever_neo4j.metrics import expected_calibration_error

    assert expected_calibration_error([0.75] * 4, [1, 1, 1, 0]) == pytest.approx(0.0)
    assert expected_calibration_error([1.0] * 4, [1, 1, 1, 0]) == pytest.approx(0.25)
    # two bins of two answers each: 0.5 * |0.9 - 0.5| + 0.5 * |0.1 - 0.0|
    assert expected_calibration_error([0.9, 0.9, 0.1, 0.1], [1, 0, 0, 0]) == pytest.approx(0.25)
    with pytest.raises(InputError):
        expected_calibration_error([0.5], [1, 0])

"""Evaluation metrics, computed the way G-Retriever's src/utils/evaluate.py computes them.

Open questions (WebQSP, MetaQA): the prediction is split into items at '|' and newlines; the items joined by
spaces form the prediction text. A gold answer "matches" when its normalised form is a substring of the
normalised prediction text (normalisation: lower-case, drop punctuation, drop the articles a/an/the, squeeze
whitespace).
- Hit@1 (the paper's headline metric): 1 when any gold answer matches.
- accuracy: the fraction of gold answers that match.
- F1: precision = matched gold answers / number of predicted items, recall = matched / number of gold
  answers (as the reference counts them, precision can exceed 1 when one item holds several answers).
- strict Hit@1 (ours, stricter): the first predicted item, normalised, equals a normalised gold answer.
ExplaGraphs: the first of 'support'/'Support'/'counter'/'Counter' found in the prediction, lower-cased, equals
the label. SceneGraphs: the label occurs in the prediction verbatim.
Confidence: expected calibration error (ECE) over equal-width bins, of the probability shown beside an answer
against whether it was right.
"""

from __future__ import annotations

import re
import string
from collections.abc import Sequence
from dataclasses import dataclass

from gretriever_neo4j.errors import InputError

_PUNCTUATION = frozenset(string.punctuation)
_ARTICLES = re.compile(r"\b(a|an|the)\b")
_STANCE = re.compile(r"support|Support|Counter|counter")


def normalize(text: str) -> str:
    """Lower-case, punctuation and articles removed, whitespace squeezed (the reference's normalisation).

    The reference also tries to remove '<pad>', but only after punctuation is gone, so it never matches and
    'pad' stays; we keep that behaviour so that scores are comparable.
    """
    text = "".join(ch for ch in text.lower() if ch not in _PUNCTUATION)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def prediction_items(prediction: str) -> list[str]:
    """The predicted answers: the output split at '|' and newlines, as the reference splits it."""
    return prediction.replace("|", "\n").split("\n")


def answer_matches(prediction_text: str, answer: str) -> bool:
    return normalize(answer) in normalize(prediction_text)


def hit_at_1(prediction: str, answers: Sequence[str]) -> float:
    text = " ".join(prediction_items(prediction))
    return 1.0 if any(answer_matches(text, a) for a in answers) else 0.0


def answer_accuracy(prediction: str, answers: Sequence[str]) -> float:
    if not answers:
        return 0.0
    text = " ".join(prediction_items(prediction))
    return sum(answer_matches(text, a) for a in answers) / len(answers)


def f1_precision_recall(prediction: str, answers: Sequence[str]) -> tuple[float, float, float]:
    items = prediction_items(prediction)
    if not items or not answers:
        return 0.0, 0.0, 0.0
    text = " ".join(items)
    matched = sum(answer_matches(text, a) for a in answers)
    precision, recall = matched / len(items), matched / len(answers)
    if precision + recall == 0:
        return 0.0, precision, recall
    return 2 * precision * recall / (precision + recall), precision, recall


def strict_hit_at_1(prediction: str, answers: Sequence[str]) -> float:
    first = next((item for item in prediction_items(prediction) if item.strip()), "")
    gold = {normalize(a) for a in answers}
    return 1.0 if first.strip() and normalize(first) in gold else 0.0


def stance_accuracy(prediction: str, label: str) -> float:
    """ExplaGraphs: the first stance word in the output decides."""
    found = _STANCE.findall(prediction.strip())
    return 1.0 if found and found[0].lower() == label else 0.0


def contains_label(prediction: str, label: str) -> float:
    """SceneGraphs (GQA): the label appears in the output, case-sensitively."""
    return 1.0 if label in prediction else 0.0


@dataclass(frozen=True)
class QAScores:
    count: int
    hit_at_1: float
    strict_hit_at_1: float
    f1: float
    precision: float
    recall: float
    accuracy: float

    def as_percentages(self) -> dict[str, float]:
        return {k: 100.0 * getattr(self, k) for k in
                ("hit_at_1", "strict_hit_at_1", "f1", "precision", "recall", "accuracy")}


def score_open_questions(predictions: Sequence[str], answers: Sequence[Sequence[str]]) -> QAScores:
    """Means over questions (fractions in [0, 1]; precision may exceed 1, see the module docs)."""
    _check_lengths(predictions, answers)
    rows = [(hit_at_1(p, a), strict_hit_at_1(p, a), *f1_precision_recall(p, a), answer_accuracy(p, a))
            for p, a in zip(predictions, answers)]
    count = len(rows)
    mean = [sum(column) / count if count else 0.0 for column in zip(*rows)] if rows else [0.0] * 6
    return QAScores(count=count, hit_at_1=mean[0], strict_hit_at_1=mean[1], f1=mean[2], precision=mean[3],
                    recall=mean[4], accuracy=mean[5])


def score_explagraphs(predictions: Sequence[str], labels: Sequence[str]) -> float:
    _check_lengths(predictions, labels)
    return sum(stance_accuracy(p, l) for p, l in zip(predictions, labels)) / len(labels) if labels else 0.0


def score_scenegraphs(predictions: Sequence[str], labels: Sequence[str]) -> float:
    _check_lengths(predictions, labels)
    return sum(contains_label(p, l) for p, l in zip(predictions, labels)) / len(labels) if labels else 0.0


def expected_calibration_error(confidences: Sequence[float], right: Sequence[float], bins: int = 10) -> float:
    """ECE: over `bins` equal-width bins of confidence, the share of answers in each times how far their mean
    confidence is from the share of them that is right."""
    import numpy as np

    p, y = np.asarray(confidences, dtype=np.float64), np.asarray(right, dtype=np.float64)
    _check_lengths(p, y)
    edges = np.minimum((p * bins).astype(int), bins - 1)
    return float(sum((edges == b).mean() * abs(p[edges == b].mean() - y[edges == b].mean())
                     for b in range(bins) if (edges == b).any()))


def _check_lengths(predictions: Sequence, references: Sequence) -> None:
    if len(predictions) != len(references):
        raise InputError(f"{len(predictions)} predictions for {len(references)} references", field="predictions")

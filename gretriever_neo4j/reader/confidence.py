"""How sure the zero-shot reader is of its answer: the probability that the first answer it shows is right.

The reader answers with the end nodes of its best walk signature, and every node it ranks used to show p = 1.00,
right or wrong. Here the scores of the walks it shortlisted become a softmax (`temperature`); the share of that mass
on walks that reach the first answer (several walks may) is the answer's raw support, and a logistic fit
(`slope`, `intercept` on its log-odds) turns that into a probability. The fit was made on answered questions of
invented graphs (docs/feedback.md says which, and what it measured); `gqa train` fits the intercept again on a
graph's own answered questions where it has some (`Calibration.refit`). An answer below `unsure_below` is shown as
unsure, and offered for feedback first.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from gretriever_neo4j.settings import from_known_fields


@dataclass(frozen=True)
class Calibration:
    temperature: float = 0.05  # score units per e-fold of a walk's softmax mass
    slope: float = 0.27  # logistic fit on the log-odds of the first answer's walk mass
    intercept: float = -0.57
    unsure_below: float = 0.5  # an answer less likely right than this is shown as unsure
    prior_questions: float = 2.0  # `refit`: how many questions' worth the general intercept weighs

    @classmethod
    def from_dict(cls, data: dict) -> Calibration:
        return from_known_fields(cls, data, "calibration")

    def refit(self, supports: Sequence[float], right: Sequence[bool]) -> Calibration:
        """This calibration with its intercept fitted again on a graph's own answered questions (their answers'
        `answer_support` and whether each was right), pulled towards this one's by `prior_questions`: graphs differ
        most in how often the reader is right at all, which the intercept says."""
        x = np.asarray([self.slope * _log_odds(s) for s in supports], dtype=np.float64)
        y = np.asarray(right, dtype=np.float64)
        b = self.intercept
        for _ in range(25):  # Newton's method on the penalized log loss (one parameter)
            p = 1.0 / (1.0 + np.exp(-(x + b)))
            b -= (float(np.sum(p - y)) + self.prior_questions * (b - self.intercept)) / (
                float(np.sum(p * (1 - p))) + self.prior_questions)
        return replace(self, intercept=round(b, 4))


CALIBRATION = Calibration()


def answer_support(reading) -> float | None:
    """The softmax mass (`Calibration.temperature`) of the shortlisted walks of a zero-shot `reading` that reach
    its first answer, or None where it has no answer or no scored walk."""
    table, scores = reading.signature_table, reading.signature_scores
    if not reading.answers or table is None or scores is None or not len(table.used):
        return None
    used = table.used[table.shortlisted]
    finite = used[np.isfinite(scores[used])]
    if not len(finite):
        return None
    z = (scores[finite] - scores[finite].max()) / CALIBRATION.temperature
    mass = np.exp(z)
    walks = reading.walks
    reaching = np.zeros(len(walks.signatures), dtype=bool)
    reaching[walks.pair_sig[walks.pair_node == reading.answers[0]]] = True
    return float(mass[reaching[finite]].sum() / mass.sum())


def _log_odds(support: float) -> float:
    p = min(max(support, 1e-4), 1 - 1e-4)
    return math.log(p / (1 - p))


def calibrated(support: float | None, calibration: Calibration = CALIBRATION) -> float | None:
    """The probability that the first answer is right, from its walk support (`answer_support`)."""
    if support is None:
        return None
    return 1.0 / (1.0 + math.exp(-(calibration.slope * _log_odds(support) + calibration.intercept)))

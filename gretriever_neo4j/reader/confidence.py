"""How sure the zero-shot reader is of its answer: the probability that the first answer it shows is right.

The reader answers with the end nodes of its best walk signature, and every node it ranks used to show p = 1.00,
right or wrong. Here two kinds of evidence make that probability (`AnswerEvidence`):
- the scores of the walks it shortlisted become a softmax (`temperature`); the share of that mass on walks that
  reach the first answer (several walks may) is the answer's support;
- the named features of the best walk (`signature_weights.FEATURES`: how well the words name it, its hops, round
  trips, value kind...), which say how the reader came to prefer it;
- what chose the answer (`Reading.chosen_by`): the walks alone, a constraint the question names (`narrowed`), or a
  node linked to two anchors (`joined`). An answer a join chose is often reached by walks rated below the best, so
  its support alone would call it unlikely however often such answers are right.
A logistic fit turns them into a probability: `slope` on the support's log-odds, `weights` on the standardized
features, `narrowed` and `joined` where they chose the answer, `intercept`. The general fit ships as data
(`calibration.json`, written by `train.calibration` on answered questions of invented graphs; docs/feedback.md says
which and what it measured). `gqa train` fits the intercept again on a graph's own answered questions where it
has some (`Calibration.refit`). An answer below `unsure_below` is shown as unsure, and offered for feedback first;
one at `sure_at` or above is shown as sure, a mark chosen so that the answers it marks are right about 95% of the
time on graphs the fit was not made on (docs/feedback.md); between the two only the probability is shown.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, fields, replace
from functools import cached_property
from pathlib import Path

import numpy as np

from gretriever_neo4j.settings import from_known_fields

GENERAL_FILE = Path(__file__).with_name("calibration.json")


@dataclass(frozen=True)
class AnswerEvidence:
    """What a reading says for its first answer: the softmax mass of the shortlisted walks that reach it
    (`support`), the named features of the best walk (`walk`, in `signature_weights.FEATURES` order) and what chose
    it (`chosen_by`)."""

    support: float
    walk: tuple[float, ...] = ()
    chosen_by: str = "walks"  # `Reading.chosen_by`


@dataclass(frozen=True)
class Calibration:
    temperature: float = 0.05  # score units per e-fold of a walk's softmax mass
    slope: float = 0.27  # logistic weight of the log-odds of the first answer's walk mass
    intercept: float = -0.57
    features: tuple[str, ...] = ()  # the best walk's features it weighs (names from `signature_weights.FEATURES`)
    weights: tuple[float, ...] = ()  # their logistic weights, on features standardized by `means` and `scales`
    means: tuple[float, ...] = ()
    scales: tuple[float, ...] = ()
    narrowed: float = 0.0  # logistic weight of an answer a constraint the question names chose
    joined: float = 0.0  # logistic weight of an answer a node linked to two anchors chose
    unsure_below: float = 0.5  # an answer less likely right than this is shown as unsure
    sure_at: float = 0.9  # an answer this likely right or more is shown as sure
    prior_questions: float = 2.0  # `refit`: how many questions' worth the general intercept weighs

    def __post_init__(self):
        from gretriever_neo4j.errors import ConfigError
        from gretriever_neo4j.reader.signature_weights import FEATURES

        for name in ("features", "weights", "means", "scales"):
            object.__setattr__(self, name, tuple(getattr(self, name)))
        if not len(self.features) == len(self.weights) == len(self.means) == len(self.scales):
            raise ConfigError("calibration: features, weights, means and scales must be as long as each other")
        if not 0.0 < self.unsure_below <= self.sure_at < 1.0:
            raise ConfigError(f"calibration: need 0 < unsure_below <= sure_at < 1, got {self.unsure_below} and "
                              f"{self.sure_at}")
        unknown = [f for f in self.features if f not in FEATURES]
        if unknown:
            raise ConfigError(f"calibration: unknown walk features {unknown}")

    @cached_property
    def _columns(self) -> list[int]:
        """The columns of `features` in a walk's feature row."""
        from gretriever_neo4j.reader.signature_weights import FEATURES

        return [list(FEATURES).index(f) for f in self.features]

    @classmethod
    def from_dict(cls, data: dict) -> Calibration:
        return from_known_fields(cls, data, "calibration")

    def to_dict(self) -> dict:
        return {f.name: (list(v) if isinstance(v := getattr(self, f.name), tuple) else v) for f in fields(self)}

    def logit(self, evidence: AnswerEvidence, with_intercept: bool = True) -> float:
        """The log-odds that the first answer is right."""
        out = self.slope * float(log_odds(evidence.support)) + (self.intercept if with_intercept else 0.0)
        out += {"narrowed": self.narrowed, "joined": self.joined}.get(evidence.chosen_by, 0.0)
        if self._columns and len(evidence.walk):
            walk = np.asarray(evidence.walk, dtype=np.float64)[self._columns]
            out += float(np.dot(self.weights, (walk - np.asarray(self.means)) / np.asarray(self.scales)))
        return out

    def refit(self, evidence: Sequence[AnswerEvidence], right: Sequence[bool]) -> Calibration:
        """This calibration with its intercept fitted again on a graph's own answered questions (their answers'
        `answer_evidence` and whether each was right), pulled towards this one's by `prior_questions`: graphs differ
        most in how often the reader is right at all, which the intercept says."""
        x = np.asarray([self.logit(e, with_intercept=False) for e in evidence], dtype=np.float64)
        y = np.asarray(right, dtype=np.float64)
        b = self.intercept
        for _ in range(25):  # Newton's method on the penalized log loss (one parameter)
            p = 1.0 / (1.0 + np.exp(-(x + b)))
            b -= (float(np.sum(p - y)) + self.prior_questions * (b - self.intercept)) / (
                float(np.sum(p * (1 - p))) + self.prior_questions)
        return replace(self, intercept=round(b, 4))

    def save(self, path: Path) -> None:
        path.write_text(json.dumps(self.to_dict(), indent=1) + "\n", encoding="utf-8")

    @classmethod
    def load(cls, path: Path) -> Calibration:
        return cls.from_dict(json.loads(path.read_text(encoding="utf-8")))


CALIBRATION = Calibration.load(GENERAL_FILE) if GENERAL_FILE.exists() else Calibration()


def answer_evidence(reading, calibration: Calibration = CALIBRATION) -> AnswerEvidence | None:
    """The evidence of a zero-shot `reading` for its first answer: the softmax mass (`calibration.temperature`) of
    its shortlisted walks that reach it, the features of its best-scored walk and what chose it; None where it has
    no answer or no scored walk."""
    table, scores = reading.signature_table, reading.signature_scores
    if not reading.answers or table is None or scores is None or not len(table.used):
        return None
    ids = np.flatnonzero(table.shortlisted & np.isfinite(scores[table.used]))
    if not len(ids):
        return None
    used = table.used[ids]
    z = (scores[used] - scores[used].max()) / calibration.temperature
    mass = np.exp(z)
    walks = reading.walks
    reaching = np.zeros(len(walks.signatures), dtype=bool)
    reaching[walks.pair_sig[walks.pair_node == reading.answers[0]]] = True
    best = ids[int(np.argmax(scores[used]))]
    return AnswerEvidence(float(mass[reaching[used]].sum() / mass.sum()),
                          tuple(float(v) for v in table.features[best]), reading.chosen_by)


def log_odds(probabilities, floor: float = 1e-4) -> np.ndarray:
    """The log-odds of probabilities (an array, or one), kept `floor` off 0 and 1."""
    p = np.clip(np.asarray(probabilities, dtype=np.float64), floor, 1.0 - floor)
    return np.log(p / (1.0 - p))


def calibrated(evidence: AnswerEvidence | float | None, calibration: Calibration = CALIBRATION) -> float | None:
    """The probability that the first answer is right, from its `answer_evidence` (a bare support: the walk's
    features taken at their means)."""
    if evidence is None:
        return None
    if not isinstance(evidence, AnswerEvidence):
        evidence = AnswerEvidence(float(evidence))
    return 1.0 / (1.0 + math.exp(-calibration.logit(evidence)))

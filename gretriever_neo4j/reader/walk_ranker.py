"""The walk ranker: gradient-boosted trees that rank a question's shortlisted walks from their named features.

The reader's score of a walk is linear: `features . weights` (`signature_weights`). A linear score cannot say that
one signal matters only where another is weak (the tuned reading where no word names the last step, the hop
reading where two walks name the same relations), and a refit of the linear weights across graphs gained under
half a point. The ranker is LightGBM's LambdaRank over the same features and the linear score itself, trained
across many read graphs (`train.walk_ranker`) on how well each walk's end nodes answer (F1, in `grades` steps).
It reads nothing of a graph's words beyond the features, so it carries to graphs it never saw.

A tree splits on a feature's value, which says how a walk reads alone; whether it reads best among the question's
walks is another matter (a similarity of 0.6 wins one question and loses the next). So the trees also read, for the
learned features named in `below_best`, each walk's distance below the question's best walk on it.

The reader adds `weight` times the ranker's score, less the question's best, to each shortlisted walk's linear
score. The best walk by the ranker keeps its linear score and the others fall behind it by what the ranker says,
so the probabilities and the calibration keep the linear score's units.

The trees (`MODEL_FILE`, LightGBM's text format) and their settings (`CONFIG_FILE`) are kept side by side; the
general ranker ships in `reader/general/`.
"""

from __future__ import annotations

import dataclasses
import json
import math
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from gretriever_neo4j.errors import ConfigError
from gretriever_neo4j.settings import from_known_fields

MODEL_FILE = "walk_ranker.txt"
CONFIG_FILE = "walk_ranker.json"


@dataclass(frozen=True)
class RankerSettings:
    """How the ranker is trained and read. `weight`: score units per unit of the ranker's score where the reader
    adds it; `leaves`, `trees`, `learning_rate`, `min_in_leaf`: the trees (LightGBM's `num_leaves`,
    `n_estimators`, `learning_rate`, `min_data_in_leaf`); `grades`: a walk's relevance is round(grades x F1 of
    its end nodes); `truncation`: LambdaRank's truncation level; `features`: the named features the trees read,
    in order (`signature_weights.FEATURES` when trained); `base`: the linear weights whose score of those features
    the trees read as two more inputs (the score and its distance below the question's best); `below_best`: the
    features (of `FEATURES`) whose distance below the question's best walk the trees read after those (none in a
    ranker saved before they did); `training`: how it was trained (a record)."""

    weight: float = 1.0
    leaves: int = 31
    trees: int = 300
    learning_rate: float = 0.05
    min_in_leaf: int = 50
    grades: int = 4
    truncation: int = 5
    features: tuple[str, ...] = ()
    base: tuple[float, ...] = ()
    below_best: tuple[str, ...] = ()
    training: dict[str, Any] = dataclasses.field(default_factory=dict)

    def __post_init__(self) -> None:
        for name in ("weight", "learning_rate"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not (
                    math.isfinite(value) and value > 0):
                raise ConfigError(f"walk ranker: {name} must be a positive number, got {value!r}")
        for name in ("leaves", "trees", "min_in_leaf", "grades", "truncation"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ConfigError(f"walk ranker: {name} must be a positive whole number, got {value!r}")
        if len(self.base) != len(self.features):
            raise ConfigError(f"walk ranker: {len(self.features)} features but {len(self.base)} base weights")
        object.__setattr__(self, "features", tuple(self.features))
        object.__setattr__(self, "below_best", tuple(self.below_best))
        object.__setattr__(self, "base", tuple(float(b) for b in self.base))

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RankerSettings:
        return from_known_fields(cls, data, "walk ranker config")


def feature_columns(names) -> np.ndarray:
    """The columns of `signature_weights.FEATURES` rows that `names` read, in order."""
    from gretriever_neo4j.reader.signature_weights import FEATURES

    return np.asarray([list(FEATURES).index(f) for f in names], dtype=int)


def ranker_inputs(features: np.ndarray, columns: np.ndarray, base: np.ndarray,
                  below: np.ndarray | None = None) -> np.ndarray:
    """(W, K + 2 + B) the trees' inputs for one question's walks: the `columns` of its feature rows (W, F), their
    score under `base` and that score's distance below the question's best, then the distance below the question's
    best of each of the `below` columns (none by default); a distance is the walk's value less the best, <= 0."""
    chosen = features[:, columns]
    linear = chosen @ base
    relative = features[:, below if below is not None else np.zeros(0, int)]
    best = (lambda values: values.max(0) if len(values) else 0.0)  # noqa: E731
    return np.c_[chosen, linear, linear - best(linear), relative - best(relative)]


class WalkRanker:
    """The trees and their settings. Thread-safe: LightGBM's prediction is guarded by one lock."""

    def __init__(self, booster, settings: RankerSettings):
        from gretriever_neo4j.reader.signature_weights import FEATURES

        unknown = [f for f in settings.features + settings.below_best if f not in FEATURES]
        if unknown or not settings.features:
            raise ConfigError(f"walk ranker: features this gqa does not compute: {unknown or 'none named'}")
        if booster.num_feature() != len(settings.features) + 2 + len(settings.below_best):
            raise ConfigError(f"walk ranker: the trees read {booster.num_feature()} inputs, the settings name "
                              f"{len(settings.features)} features, 2 scores and {len(settings.below_best)} "
                              "distances below the best")
        self.booster, self.settings = booster, settings
        self.columns, self.below = feature_columns(settings.features), feature_columns(settings.below_best)
        self.base = np.asarray(settings.base, dtype=np.float64)
        self._lock = threading.Lock()

    @classmethod
    def load(cls, folder: Path) -> WalkRanker:
        import lightgbm

        folder = Path(folder)
        try:
            settings = RankerSettings.from_dict(json.loads((folder / CONFIG_FILE).read_text(encoding="utf-8")))
            booster = lightgbm.Booster(model_file=str(folder / MODEL_FILE))
        except (OSError, ValueError, lightgbm.basic.LightGBMError) as error:
            raise ConfigError(f"walk ranker in {folder}: {error}") from error
        return cls(booster, settings)

    def save(self, folder: Path) -> None:
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        self.booster.save_model(str(folder / MODEL_FILE))
        (folder / CONFIG_FILE).write_text(json.dumps(self.settings.to_dict(), indent=1) + "\n", encoding="utf-8")

    def scores(self, features: np.ndarray) -> np.ndarray:
        """(W,) the ranker's scores of one question's walks from their feature rows (W, F)."""
        if not len(features):
            return np.zeros(0)
        inputs = ranker_inputs(features, self.columns, self.base, self.below)
        with self._lock:
            return np.asarray(self.booster.predict(inputs, num_threads=1), dtype=np.float64)


def ranked(ranker: WalkRanker, table, scores: np.ndarray) -> np.ndarray:
    """`scores` (per signature, `coverage.scores_of`) with the ranker's opinion of the shortlisted walks of
    `table` added: `weight` x (its score - its best score)."""
    rows = np.flatnonzero(table.shortlisted)
    if not len(rows):
        return scores
    opinion = ranker.scores(table.features[rows])
    out = scores.copy()
    out[table.used[rows]] += ranker.settings.weight * (opinion - opinion.max())
    return out


__all__ = ["CONFIG_FILE", "MODEL_FILE", "RankerSettings", "WalkRanker", "feature_columns", "ranked",
           "ranker_inputs"]

"""The weights that turn a walk signature's named features into its score, as one frozen config.

`reader.coverage` computes, for each signature a question's anchors reach, the signals the zero-shot reader reads
(how well the question's words name its relations, hops, direction and voice, the kind of value it ends on, round
trips, the which-noun, ...): one row of `FEATURES` per signature. A signature's score is that row times these
weights. `SignatureWeights()` holds the hand-set values the zero-shot rules were written with; a learned reader
(`reader.learned`) holds weights fitted on questions across many graphs, and a graph's own (`gqa train --graph`)
fitted further on that graph's questions. Saved as JSON beside what they configure (`to_dict` / `from_dict`).
"""

from __future__ import annotations

import dataclasses
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from gretriever_neo4j.errors import ConfigError
from gretriever_neo4j.settings import from_known_fields

# What each feature of a signature measures (the weights below name them in the same order).
FEATURES: dict[str, str] = {
    "explained": "mean over the words that name relations of their best similarity to one of the walk's relations",
    "precision": "the least, over the walk's relations, of how well one word names it (capped)",
    "extra_hops": "named hops beyond the first",
    "extra_hops_unexplained": "named hops beyond the first where no word names any relation",
    "inverse_steps": "steps along a relation named by its inverse role, the wrong way",
    "against_voice": "the last step against the side the question's verb or role asks for",
    "who_backward": "a 'who' question whose last step points back at X along a relation that names no head",
    "value_mismatch": "a who/where question answered by numbers or dates only, or 'who' by places or common nouns",
    "when_mismatch": "a 'when' question whose walk ends on no number or date where some walk does",
    "where_mismatch": "a 'where' question whose walk ends on no place where some walk does",
    "no_place": "a 'which city' question whose walk ends on no place, by a relation far from the noun",
    "most_specific": "the most specific place of a record, for a 'where' question naming no kind of place",
    "starts_at_kind": "a last step leaving the thing a 'what N' question asks for (Freebase `type.property`)",
    "head_kind": "similarity of the walk's end nodes to the noun a 'which N' question opens with",
    "not_owned": "a walk whose first hop is no relation the possessed noun ('X's children') names",
    "kin": "as many hops along family relations as the question's family words ask for",
    "kind_named": "most end nodes hold the which-noun in their names ('which lab': '... Lab')",
    "category": "a walk ending on a categorical step, for a question asking for a kind",
    "class_step": "one step to X's class, for a question asking what X is",
    "trip_asked": "a round trip (out and back along one relation) where the question asks what is shared",
    "trip_unasked": "a round trip where the question asks nothing shared",
    "through_trip": "a walk on from the others a round trip reaches, along a relation no word names",
    "same_as_trip": "a round trip for 'the same N as X'",
    "reading": "similarity of the question to the walk read as a question (shortlisted walks only)",
    "one_hop": "the walk takes one named hop",
    "last_named": "similarity of the question to the last relation's name (humanized)",
    "first_named": "similarity of the question to the first relation's name (humanized)",
    "end_question": "similarity of the whole question to the mean vector of the walk's end nodes",
    "end_count": "log(1 + the number of end nodes)",
    "matcher": "the walk matcher's score of the question and the walk read together (`reader.walk_matcher`)",
    "remembered": "similarity of the question to an answered question of the graph that meant this walk "
                  "(`reader.lexicon`; 0 below `LexiconSettings.remember_above`)",
    "tuned_reading": "similarity of the question to the walk read as a question under the walk encoder tuned across "
                     "graphs (`reader.walk_encoder`; its few best walks by the other features only)",
    "hop_reading": "log of the probability that the question asks the walk's hop count (1, 2, 3 or more), under "
                   "the hop reader trained across graphs (`reader.hop_reading`)",
    "value_reading": "log of the probability that the question asks for a number or date where the walk ends on "
                     "numbers or dates only, of the probability that it does not otherwise (the hop reader's value "
                     "head, `reader.hop_reading`)",
}


@dataclass(frozen=True)
class SignatureWeights:
    """One weight per feature of `FEATURES` (the hand-set zero-shot values by default; features added for the
    learned reader weigh nothing unless fitted). `temperature`: score units per e-fold of an answer's probability
    relative to the best walk's. `shortlist`: the walks, best by everything but `reading`, that are read as
    questions; the rest score below all of them."""

    explained: float = 1.0
    precision: float = 1.0
    extra_hops: float = -0.05
    extra_hops_unexplained: float = -0.45
    inverse_steps: float = -0.3
    against_voice: float = -0.3
    who_backward: float = -0.1
    value_mismatch: float = -0.3
    when_mismatch: float = -0.6
    where_mismatch: float = -0.15
    no_place: float = -0.15
    most_specific: float = 0.3
    starts_at_kind: float = -0.3
    head_kind: float = 0.5
    not_owned: float = -0.15
    kin: float = 0.2
    kind_named: float = 0.2
    category: float = 0.3
    class_step: float = 0.3
    trip_asked: float = 0.15
    trip_unasked: float = -0.15
    through_trip: float = -0.3
    same_as_trip: float = 0.15
    reading: float = 1.0
    one_hop: float = 0.0
    last_named: float = 0.0
    first_named: float = 0.0
    end_question: float = 0.0
    end_count: float = 0.0
    matcher: float = 0.0
    remembered: float = 2.0
    tuned_reading: float = 4.0
    hop_reading: float = 0.15
    value_reading: float = 0.2
    temperature: float = 0.05
    shortlist: int = 24

    def __post_init__(self) -> None:
        for name in FEATURES:
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value):
                raise ConfigError(f"signature weight {name} must be a finite number, got {value!r}")
        if not (self.temperature > 0 and math.isfinite(self.temperature)):
            raise ConfigError(f"temperature must be a positive number, got {self.temperature!r}")
        if isinstance(self.shortlist, bool) or not isinstance(self.shortlist, int) or self.shortlist < 0:
            raise ConfigError(f"shortlist must be an integer >= 0, got {self.shortlist!r}")

    def vector(self) -> np.ndarray:
        """The weights in `FEATURES` order."""
        return np.asarray([getattr(self, name) for name in FEATURES], dtype=np.float64)

    @classmethod
    def from_vector(cls, values: np.ndarray, **others: Any) -> SignatureWeights:
        return cls(**{name: float(v) for name, v in zip(FEATURES, np.asarray(values).tolist())}, **others)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SignatureWeights:
        return from_known_fields(cls, data, "signature weights")

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_dict(), indent=1) + "\n")

    @classmethod
    def load(cls, path: str | Path) -> SignatureWeights:
        try:
            data = json.loads(Path(path).read_text())
        except (OSError, ValueError) as error:
            raise ConfigError(f"cannot read signature weights {path}: {error}") from error
        return cls.from_dict(data)


ZERO_SHOT = SignatureWeights()

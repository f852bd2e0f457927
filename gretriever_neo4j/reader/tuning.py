"""The zero-shot reader's tuned numbers other than its walk features' weights, in one frozen config.

A walk's score is its features times `SignatureWeights` (`signature_weights.py`, fitted or hand-set). The numbers
here are the features' own thresholds (when a word counts as naming a relation, how near a which-noun must be to the
last relation, what counts as a place), and the weights of the order in which answers the walks rate alike are
listed. Each was set by hand on graphs that had been read; the modules that compute with them explain what each one
decides, and `TUNING` is the one place they are defined. The ablation of `train.general_reader` measures what each
weight of `SignatureWeights` is worth; these are not fitted.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ReaderTuning:
    # which nodes answer: those the best walk signature reaches at this probability
    answer_threshold: float = 0.999

    # how a question's words name relations (`coverage`, `wording`)
    word_names: float = 0.2  # a word names a relation when this much nearer to it than to the mean relation
    lexical: float = 0.8  # the similarity a shared stem or word family counts as
    mention_cap: float = 0.3  # a relation named this clearly (above the word's mean) is named: better earns nothing
    named_similarity: float = 0.4  # a word names a relation when this similar to it ...
    named_margin: float = 0.05  # ... and this much more similar to it than to any other relation
    head_names: float = 0.65  # a which-noun names the relation a walk ends on from this similarity ("which club" /
    # `league` 0.56 does not; "which language" / `languages spoken` 0.78 does)
    stem: int = 4  # letters two words share at their start (or a long word holds) to share a stem

    # what kind of thing a walk ends on (`coverage`, `walk_shapes`)
    venue_similarity: float = 0.22  # a relation this near a place noun ("city") ends on places (`born in` 0.39;
    # `served at` 0.17 is a venue's)
    place_similarity: float = 0.5  # a relation this near "place" / "location" has places for values
    # (`hometown`, `located in` 0.54-0.70; `spouse`, `genre` 0.25-0.38)

    # records and second names (`parallel`, `constraints`)
    record_kind_overlap: float = 0.5  # of the relations around two sets of records, shared: records of one kind
    join_margin: float = 3.0  # how far below the best walk the best node linked to two anchors may score and answer
    min_letters: int = 3  # a word of the question that can name a constraint ("kirk"), not "in", "on"

    # the order of answers the walks rate alike (`ZeroShotReader`): the question's order in time, then the
    # which-noun, then words of the question an answer's name says, then ties to the anchor, then connectedness
    in_time_first: float = 10.0
    kind_first: float = 1.0
    name_says: float = 2.0  # per word of the question (not the anchor's, no function word) an answer's name holds
    salient_first: float = 1.0  # per way (a relation of an edge, or a node between) the answer is tied to the anchor
    connected_first: float = 0.05  # times log(1 + the answer's degree in the subgraph)


TUNING = ReaderTuning()

__all__ = ["TUNING", "ReaderTuning"]

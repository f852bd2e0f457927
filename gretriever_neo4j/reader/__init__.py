"""The reader: which nodes of a retrieved subgraph answer the question, ranked, with the walks that justify them.

Two readers share one protocol, `Reader` (`read(...) -> Reading`):
- `TrainedReader` (a checkpoint of `reader.model`, trained by `gqa train` on a graph's questions);
- `ZeroShotReader` (nothing trained): a walk scores by the mean similarity of its relation texts to the
  question with its anchors masked, so "what did X invent" follows `inventions`; the best walk's end nodes
  are the answer, and the entities the question names are never answers.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from gretriever_neo4j.reader.constraints import answer_only, answers_at, chosen_among, joined, narrowed, sexed
from gretriever_neo4j.reader.features import build_example
from gretriever_neo4j.reader.model import answer_set, load_reader, predict_logits, sigmoid
from gretriever_neo4j.reader.parallel import merged_scores, parallel_into_records
from gretriever_neo4j.reader.paths import (
    SubgraphView,
    Walks,
    evidence_edges,
    find_anchors,
    named_nodes,
    signature_text,
    walks,
)
from gretriever_neo4j.reader.tuning import TUNING
from gretriever_neo4j.retrieval.linking import STOP_WORDS, analyzer_tokens, mask_question, strip_topic_markers
from gretriever_neo4j.retrieval.naming import offered_names

ZERO_SHOT_THRESHOLD = TUNING.answer_threshold  # answers: the nodes the best walk signature reaches
# Answers the walks rate alike are ordered by their similarity to the question plus this times log(1 + their
# degree in the retrieved subgraph): the one more of the evidence touches first ("FC Barcelona" before "FC
# Barcelona B", "English Language" before "British Sign Language"), which the first answer of a list is read as.
CONNECTED_FIRST = TUNING.connected_first
# Before both: the order in time the question asks for ("the last time", "first", "in 2012"; `reader.ordering`)
# where every answer's name says a year, and the similarity to the noun a "which"/"what" question opens with ("what
# *college* did Einstein go to": the universities before his Gymnasium), rather than to the whole question, which
# is mostly the anchor's name. Where some answer's name says no year ("Super Bowl XLIII"), no order in time applies:
# its time is unknown (`ordering.time_order`).
IN_TIME_FIRST = TUNING.in_time_first
KIND_FIRST = TUNING.kind_first
# Then, per word of the question (not the anchor's, no function word) an answer's name holds, this: "where did X
# attend *high school*" is Carmel High School before the Graduate School of Business, "where did X go to *college*"
# Berklee College of Music before his high schools.
NAME_SAYS = TUNING.name_says
# Per way (a relation of an edge, or a node between) the answer is tied to the anchor by: the answer more of the
# graph's facts tie to X first (a player's present team holds his salary records too, a country's official language
# is also spoken there). It can put a more famous former spouse first too.
SALIENT_FIRST = TUNING.salient_first


@dataclass
class Reading:
    """A reader's answer over one subgraph, in the subgraph's local node ids."""

    anchors: list[int]
    probabilities: np.ndarray  # (N,) per node
    answers: list[int]  # the answer set, best first
    ranked: list[int]  # every candidate node, best first (anchors last)
    best_pair: dict[int, int]  # node -> the (node, signature) pair of its best walk
    walks: Walks
    view: SubgraphView
    model: str
    threshold: float
    evidence: dict[int, list[int]] = field(default_factory=dict)  # answer -> edges of its walks (local ids)
    signature_table: Any = None  # the zero-shot reader's `coverage.SignatureTable` of `walks.signatures`
    signature_scores: np.ndarray | None = None  # the zero-shot reader's score of each of `walks.signatures`
    masked: str | None = None  # the question as the zero-shot reader read it (anchor masked, words spelled out)
    confidence: float | None = None  # the probability the answer is right (`reader.confidence`), where known
    chosen_by: str = "walks"  # what chose the answer: "walks", "narrowed" (a constraint) or "joined" (two anchors)

    def signature_of(self, node: int) -> str:
        pair = self.best_pair.get(node)
        if pair is None:
            return ""
        return signature_text(self.view, self.walks.signatures[int(self.walks.pair_sig[pair])])

    def evidence_for(self, nodes: Sequence[int], max_edges: int = 64) -> list[int]:
        pairs = [self.best_pair[n] for n in nodes if n in self.best_pair]
        return evidence_edges(self.walks, pairs, max_edges=max_edges)

    def log_probabilities(self) -> np.ndarray:
        return np.log(np.clip(self.probabilities, 1e-6, 1.0))


def _best_pairs(walks: Walks, pair_scores: np.ndarray) -> dict[int, int]:
    """node -> index of its best-scoring pair (ties: the earlier, i.e. shorter, walk)."""
    best: dict[int, int] = {}
    order = np.lexsort((np.arange(walks.num_pairs), -pair_scores))
    for pair in order.tolist():
        best.setdefault(int(walks.pair_node[pair]), pair)
    return best


def _finish(view: SubgraphView, walks_: Walks, anchors: list[int], probabilities: np.ndarray, tiebreak: np.ndarray,
            best_pair: dict[int, int], threshold: float, model: str, exclude: set[int]) -> Reading:
    """Rank (probability, then tiebreak, then id), drop excluded nodes from the answer unless nothing else
    is left, and attach the evidence walks of the answers."""
    n = view.num_nodes
    order = np.lexsort((np.arange(n), -tiebreak, -probabilities)).tolist() if n else []
    ranked = [i for i in order if i not in exclude] + [i for i in order if i in exclude]
    candidates = [i for i in ranked if i not in exclude] or ranked
    chosen_probs = probabilities.copy()
    mask = np.zeros(n, bool)
    mask[candidates] = True
    chosen_probs[~mask] = -1.0
    answers = [i for i in ranked if mask[i] and chosen_probs[i] >= threshold] or candidates[:1]
    answers = distinct_by_text(view.node_texts, answers)
    reading = Reading(anchors=anchors, probabilities=probabilities, answers=answers, ranked=ranked,
                      best_pair=best_pair, walks=walks_, view=view, model=model, threshold=threshold)
    reading.evidence = {a: reading.evidence_for([a], max_edges=16) for a in answers}
    return reading


def distinct_by_text(texts: Sequence[str], nodes: Sequence[int]) -> list[int]:
    """`nodes` without those whose text repeats an earlier one's up to case and spacing: a KG may hold the tag
    "kevin smith" and the person "Kevin Smith", and a person asking wants the name once."""
    seen: set[str] = set()
    kept = []
    for node in nodes:
        name = " ".join(texts[node].split()).casefold()
        if name not in seen:
            seen.add(name)
            kept.append(node)
    return kept


def _similarities(view: SubgraphView, vector: np.ndarray | None, rows: np.ndarray) -> np.ndarray:
    if vector is None or rows.size == 0:
        return np.zeros(len(rows))
    vector = np.asarray(vector, np.float32).reshape(-1)
    norms = np.linalg.norm(rows, axis=1) * max(float(np.linalg.norm(vector)), 1e-12)
    return (rows @ vector) / np.maximum(norms, 1e-12)


@runtime_checkable
class Reader(Protocol):
    """Reads a retrieved subgraph: scores every node as an answer, from the walks that reach it from the anchors
    (the nodes the question names). `question_vector`: the question with its anchors masked; `question_full`:
    the question as asked."""

    def read(self, question: str, view: SubgraphView, anchors: Sequence[int], question_vector: np.ndarray | None,
             question_full: np.ndarray | None = None) -> Reading: ...


def _ending_all_in(found: Walks, node_mask: np.ndarray) -> set[int]:
    """The walk signatures all of whose end nodes are in `node_mask` (a signature that ends nowhere counts)."""
    ending = np.ones(len(found.signatures), dtype=bool)
    if found.num_pairs:
        np.logical_and.at(ending, found.pair_sig, node_mask[found.pair_node])
    return set(np.flatnonzero(ending).tolist())


def _ending_mostly_in(found: Walks, node_mask: np.ndarray, share: float = 0.5) -> set[int]:
    """The walk signatures at least `share` of whose end nodes are in `node_mask`."""
    if not found.num_pairs:
        return set()
    total = np.bincount(found.pair_sig, minlength=len(found.signatures))
    inside = np.bincount(found.pair_sig, weights=node_mask[found.pair_node].astype(np.float64),
                         minlength=len(found.signatures))
    return set(np.flatnonzero((total > 0) & (inside >= share * total)).tolist())


def _mean_end_vectors(view: SubgraphView, found: Walks) -> np.ndarray | None:
    """(S, d): per walk signature, the mean unit vector of the nodes it ends on."""
    if view.dim == 0 or not found.num_pairs:
        return None
    units = view.node_vectors / np.maximum(np.linalg.norm(view.node_vectors, axis=1, keepdims=True), 1e-12)
    order = np.argsort(found.pair_sig, kind="stable")  # pairs grouped by signature: one reduceat, not add.at
    signatures, starts = np.unique(found.pair_sig[order], return_index=True)
    means = np.zeros((len(found.signatures), view.dim), np.float32)
    sums = np.add.reduceat(units[found.pair_node[order]], starts, axis=0)
    means[signatures] = sums / np.diff(np.append(starts, len(order)))[:, None]
    return means


class ZeroShotReader:
    """Nothing trained: walks from the anchors score as relation-path retrieval scores paths
    (`relation_paths.signature_scores`: relations the question talks about add, others and extra hops cost), the
    best signature's end nodes are the answer; anchors, the entities the question names and nodes whose text is
    an opaque id (Freebase CVTs: ways through) are never answers."""

    name = "zero-shot reader"
    zero_shot = True

    def __init__(self, embed: Callable[[list[str]], np.ndarray] | None = None, max_hops: int = 4,
                 scoring: str = "coverage", weights=None, weights_name: str | None = None, matcher=None,
                 lexicon=None, calibration=None, walk_encoder=None, hop_reader=None, walk_ranker=None):
        """`embed` (the graph's embedder) embeds humanized relation texts (once per text); without it the stored
        relation vectors are compared with the question as they are. `max_hops`: steps of a walk, opaque
        nodes included. `scoring`: "coverage" (`reader.coverage`; needs `embed`) or "steps" (the sum of step
        similarities that relation-path retrieval uses). `weights`: the `SignatureWeights` that score a walk's
        coverage features (the hand-set zero-shot ones by default), `weights_name` what they are, for the
        reader's name ("general weights"); `matcher` a `walk_matcher.WalkMatcher` whose score is the walk feature
        `matcher` (used where its weight is not 0); `lexicon` the graph's learned word-relation pairs
        (`reader.lexicon`); `calibration` what turns a walk's support into the answer's confidence
        (`reader.confidence`; the general one by default); `walk_encoder` a `walk_encoder.WalkEncoder` whose
        similarity is the walk feature `tuned_reading` (none: that feature is 0, the hand-set reader);
        `hop_reader` a `hop_reading.HopReader` whose reading of the hops asked is the walk feature `hop_reading`
        and, where it has a value head, of a number or date asked `value_reading` (none: 0); `walk_ranker` a
        `walk_ranker.WalkRanker` whose opinion of the shortlisted walks is added to their linear score (none: the
        linear score alone)."""
        from gretriever_neo4j.reader.signature_weights import ZERO_SHOT
        from gretriever_neo4j.reader.text_vectors import TextVectors
        from gretriever_neo4j.retrieval.relation_vectors import RelationTexts

        if scoring not in ("coverage", "steps"):
            raise ValueError(f"scoring must be 'coverage' or 'steps', got {scoring!r}")
        self.embed = embed
        self.max_hops = max_hops
        self.relations = RelationTexts.shared(embed) if embed is not None else None
        self.scoring = scoring if embed is not None else "steps"
        self.texts = TextVectors(embed) if embed is not None else None
        self.weights = weights if weights is not None else ZERO_SHOT
        self.matcher = matcher
        self.walk_encoder = walk_encoder
        self.hop_reader = hop_reader
        self.walk_ranker = walk_ranker
        self.lexicon = lexicon
        self.calibration = calibration
        if weights_name:
            self.name = f"{self.name} ({weights_name})"

    def read(self, question: str, view: SubgraphView, anchors: Sequence[int], question_vector: np.ndarray | None,
             question_full: np.ndarray | None = None) -> Reading:
        from gretriever_neo4j.retrieval.relation_paths import PathConfig, asks_for_a_category, signature_scores
        from gretriever_neo4j.retrieval.texts import is_a_common_noun, is_a_value, is_opaque

        config = PathConfig()
        anchors = list(anchors)
        offered = offered_names(question, view.node_texts)
        if set(anchors) - set(offered):  # "is X male or female": the answer is one of them, X what it is about
            anchors = [a for a in anchors if a not in offered]
        found = walks(view, anchors, self.max_hops) if anchors else walks(view, [], 1)
        opaque = np.asarray([is_opaque(t) for t in view.node_texts], dtype=bool)
        # a step (relation, direction) leads to opaque nodes when most edges of that relation do so
        lands_opaque = set()
        for r in range(len(view.relation_texts)):
            mask = view.relation == r
            if mask.any():
                if opaque[view.dst[mask]].mean() > 0.5:
                    lands_opaque.add((r, 0))
                if opaque[view.src[mask]].mean() > 0.5:
                    lands_opaque.add((r, 1))
        value = np.asarray([is_a_value(t) for t in view.node_texts], dtype=bool)
        unnamed = value | np.asarray([is_a_common_noun(t) for t in view.node_texts], dtype=bool)
        parallel = table = None
        # Masked by the first (best linked) anchor only: a KG may also hold a node named like the relation
        # ("director", a tag), and masking it would hide the very word the question asks with.
        text = strip_topic_markers(question)
        anchor_masked = mask_question(text, [view.node_texts[anchors[0]]]) if anchors else text
        if self.scoring == "coverage":
            from gretriever_neo4j.reader.coverage import coverage_features, scores_of
            from gretriever_neo4j.reader.kinship import spell_out_kinship
            from gretriever_neo4j.reader.walk_shapes import place_relations
            from gretriever_neo4j.reader.wording import (
                asks_for_a_place,
                happens_in,
                located_relations,
                plain_words,
                untitled,
                wh_head,
            )
            from gretriever_neo4j.retrieval.naming import holds_word

            masked = untitled(plain_words(spell_out_kinship(anchor_masked, view.relation_texts)))
            place = np.zeros(view.num_nodes, dtype=bool)
            if view.num_edges:
                place[view.dst[place_relations(view.relation_texts, self.texts)[view.relation]]] = True
            tokens = analyzer_tokens(masked)
            head = wh_head(tokens)
            contained = np.zeros(view.num_nodes, dtype=bool)  # what a relation of containment or of "in" points at
            if view.num_edges and asks_for_a_place(tokens, head):  # only "which city …" reads it
                into = located_relations(view.relation_texts)
                into |= np.asarray([happens_in(t) for t in view.relation_texts], dtype=bool)
                contained[view.dst[into[view.relation]]] = True
            kind_named = np.zeros(view.num_nodes, dtype=bool)
            if head is not None:
                # "what kind of music", "what form of government": `Rock music`, a kind of it, not `Government of X`
                last = asks_for_a_category(masked) or (head >= 2 and tokens[head - 1] == "of")
                kind_named = np.asarray([holds_word(t, tokens[head], last) for t in view.node_texts], dtype=bool)
            masked_unit = self.texts([masked])[0]
            remembered = (self.lexicon.remembered(masked_unit, found.signatures, view.relation_texts, self.texts)
                          if self.lexicon is not None else None)
            value_ends = _ending_all_in(found, value)
            table = coverage_features(masked, masked_unit, found.signatures, view.relation_texts,
                                      self.texts, weights=self.weights, ways_through=lands_opaque,
                                      categorical=view.categorical,
                                      value_ends=value_ends,
                                      unnamed_ends=_ending_all_in(found, unnamed),
                                      place_ends=_ending_all_in(found, place),
                                      kind_named_ends=(_ending_mostly_in(found, kind_named) if kind_named.any()
                                                       else set()),
                                      end_vectors=_mean_end_vectors(view, found),
                                      container_ends=(_ending_mostly_in(found, contained | place)
                                                      if contained.any() else set()),
                                      end_counts=np.bincount(found.pair_sig, minlength=len(found.signatures)),
                                      lexicon=self.lexicon, remembered=remembered)
            if self.matcher is not None and self.weights.matcher != 0:
                from gretriever_neo4j.reader.learned import matcher_scores
                from gretriever_neo4j.reader.signature_weights import FEATURES

                rows = np.flatnonzero(table.shortlisted)
                table.features[rows, list(FEATURES).index("matcher")] = matcher_scores(
                    self.matcher, self.texts([masked])[0], self.texts, found, view, anchors, table.used[rows])
            if self.walk_encoder is not None and self.weights.tuned_reading != 0:
                from gretriever_neo4j.reader.walk_encoder import add_tuned_reading

                add_tuned_reading(self.walk_encoder, table, self.weights, masked, found.signatures,
                                  view.relation_texts)
            if self.hop_reader is not None and self.weights.hop_reading != 0:
                from gretriever_neo4j.reader.hop_reading import add_hop_reading

                add_hop_reading(self.hop_reader, table, masked)
            if self.hop_reader is not None and self.weights.value_reading != 0:
                from gretriever_neo4j.reader.hop_reading import add_value_reading

                add_value_reading(self.hop_reader, table, masked, value_ends)
            sig_scores = scores_of(table, self.weights, len(found.signatures))
            if self.walk_ranker is not None:
                from gretriever_neo4j.reader.walk_ranker import ranked

                sig_scores = ranked(self.walk_ranker, table, sig_scores)
            parallel = parallel_into_records(view, opaque)
            sig_scores = merged_scores(sig_scores, found.signatures, view.relation_texts, masked, lands_opaque,
                                       parallel)
        else:
            relation_vectors = view.relation_vectors
            if self.relations is not None and view.relation_texts:
                relation_vectors = self.relations.vectors(view.relation_texts)
            relation_similarity = _similarities(view, question_vector, relation_vectors)
            baseline = ((float(np.mean(relation_similarity)) if len(relation_similarity) else 0.0)
                        + config.baseline_margin)
            sig_scores = signature_scores(found.signatures, relation_similarity, lands_opaque, baseline, config)
        pair_scores = sig_scores[found.pair_sig] if found.num_pairs else np.zeros(0)
        exclude = (set(anchors) | (set(named_nodes(question, view.node_texts)) - set(offered))
                   | set(np.flatnonzero(opaque).tolist()))
        node_scores = np.full(view.num_nodes, -np.inf)
        if found.num_pairs:
            np.maximum.at(node_scores, found.pair_node, pair_scores)
        node_scores[list(exclude)] = -np.inf
        node_similarity = _similarities(view, question_full if question_full is not None else question_vector,
                                        view.node_vectors)
        if np.isfinite(node_scores).any():
            top = node_scores[np.isfinite(node_scores)].max()
            probabilities = np.where(np.isfinite(node_scores),
                                     np.exp(np.minimum(node_scores - top, 0.0) / self.weights.temperature), 0.0)
        else:  # no walk leaves the anchors: fall back on similarity alone
            probabilities = np.zeros(view.num_nodes)
        if anchors:
            probabilities = sexed(anchor_masked, view, found, pair_scores, node_scores, probabilities, exclude,
                                  ZERO_SHOT_THRESHOLD)
        walked = probabilities
        # a choice the question offers decides alone, as a constraint; else a constraint narrows, then a join
        constrained = chosen_among(offered, node_scores, walked, ZERO_SHOT_THRESHOLD)
        if constrained is walked:
            constrained = narrowed(question, view, anchors, walked, exclude, opaque, ~opaque & ~unnamed,
                                   ZERO_SHOT_THRESHOLD)
            probabilities = joined(view, anchors, node_scores, constrained, opaque, ZERO_SHOT_THRESHOLD)
        else:
            probabilities = constrained
        chosen_by = ("joined" if probabilities is not constrained else "narrowed" if constrained is not walked
                     else "walks")
        if self.scoring == "coverage" and anchors:
            probabilities = self._anchor_of_the_kind_asked(text, view, anchors[0], probabilities, exclude)
        # The answer is the end nodes of the best walk signature (probability 1); the rest only inform the LLM.
        degree = np.bincount(np.concatenate([view.src, view.dst]).astype(np.int64), minlength=view.num_nodes)
        tiebreak = node_similarity + CONNECTED_FIRST * np.log1p(degree)
        tiebreak = tiebreak + self._ordered_as_asked(question, masked if self.scoring == "coverage" else None, view,
                                                     probabilities, exclude)
        tiebreak = tiebreak + SALIENT_FIRST * _ways_from_anchors(found, view, parallel)
        reading = _finish(view, found, anchors, probabilities, tiebreak, _best_pairs(found, pair_scores),
                          threshold=ZERO_SHOT_THRESHOLD, model=self.name, exclude=exclude)
        reading.signature_table, reading.signature_scores = table, sig_scores
        reading.chosen_by = chosen_by
        reading.masked = masked if self.scoring == "coverage" else None
        if table is not None:
            from gretriever_neo4j.reader.confidence import CALIBRATION, answer_evidence, calibrated

            calibration = self.calibration or CALIBRATION
            reading.confidence = calibrated(answer_evidence(reading, calibration), calibration)
        return reading

    @staticmethod
    def _anchor_of_the_kind_asked(question: str, view: SubgraphView, anchor: int, probabilities: np.ndarray,
                                  exclude: set[int]) -> np.ndarray:
        """"what language do most italians speak", linked to `Italian Language`: the question asks for a thing of
        the kind its opening noun says, and other words named the anchor, whose name says that kind too; where
        none of the answers the walks reach is of that kind (they reach Italy, Argentina), the anchor is the
        answer. (`exclude` loses the anchor then.)"""
        from gretriever_neo4j.reader.wording import wh_head
        from gretriever_neo4j.retrieval.naming import holds_word

        tokens = analyzer_tokens(question)
        head = wh_head(tokens)
        # the kind ends the name ("Italian Language"; the film `Year One` is no year)
        if head is None or not holds_word(view.node_texts[anchor], tokens[head], last=True):
            return probabilities
        others = [t for t in analyzer_tokens(view.node_texts[anchor]) if t not in STOP_WORDS and t != tokens[head]]
        if all(t in tokens[max(head - 1, 0):head + 2] for t in others):
            return probabilities  # "what basketball player …" linked to `Basketball player`: the kind asked itself
        if any(holds_word(view.node_texts[a], tokens[head])
               for a in answers_at(probabilities, ZERO_SHOT_THRESHOLD, exclude)):
            return probabilities
        exclude.discard(anchor)
        return answer_only(probabilities, [anchor], ZERO_SHOT_THRESHOLD)

    def _ordered_as_asked(self, question: str, masked: str | None, view: SubgraphView, probabilities: np.ndarray,
                          exclude: set[int]) -> np.ndarray:
        """What moves an answer ahead of those the walks rate alike (`reader.ordering`): the order in time the
        question asks for, then the similarity to the noun a "which"/"what" question opens with."""
        from gretriever_neo4j.reader.ordering import time_order
        from gretriever_neo4j.reader.wording import wh_head
        from gretriever_neo4j.retrieval.linking import analyzer_tokens

        out = np.zeros(view.num_nodes)
        answers = answers_at(probabilities, ZERO_SHOT_THRESHOLD, exclude)
        if len(answers) < 2:
            return out
        timed = time_order(analyzer_tokens(strip_topic_markers(question)), view.node_texts, answers)
        if timed is not None:
            out += IN_TIME_FIRST * timed
        if masked is not None and self.texts is not None:
            tokens = analyzer_tokens(masked)
            head = wh_head(tokens)
            if head is not None:
                out += KIND_FIRST * _similarities(view, self.texts([tokens[head]])[0], view.node_vectors)
            # (not the which-noun: "what kind of *language*" is said by Basque Language and Corsican Language alike,
            # and its kind is the similarity above)
            out += NAME_SAYS * _words_held([t for i, t in enumerate(tokens) if i != head], view.node_texts, answers)
        return out


def _ways_from_anchors(found: Walks, view: SubgraphView, parallel: Sequence[int] | None = None) -> np.ndarray:
    """Per node, how many facts tie it to the anchors: one per relation of its edges with them (Modern Standard
    Arabic is Egypt's official language and a language spoken there), plus one per node between (a record, a child)
    it is two steps away through, however many relations tie that node (RoG keeps Newton's schooling as his
    `people.person.education` and the record's `education.education.student`, but also Billy Elliot's portrayal and
    film, one node, on one performance). Relations that say one fact under two names (`parallel`) are one way."""
    out = np.zeros(view.num_nodes)
    if not found.num_pairs:
        return out
    same = np.asarray(parallel if parallel is not None else range(len(view.relation_texts)), dtype=np.int64)
    anchors = np.isin(np.arange(view.num_nodes), found.anchors)
    touching = anchors[view.src] ^ anchors[view.dst]
    other = np.where(anchors[view.src], view.dst, view.src)[touching]
    for node, _ in {(int(n), int(r)) for n, r in zip(other.tolist(), same[view.relation[touching]].tolist())}:
        out[node] += 1.0
    if len(found.links) > 1:
        to_pair, from_pair, _ = found.links[1]
        ends = found.pair_node[to_pair]
        middles = found.pair_node[from_pair]
        for end in np.unique(np.stack([ends, middles], axis=1), axis=0)[:, 0].tolist():
            out[end] += 1.0
    return out


def _words_held(tokens: Sequence[str], texts: Sequence[str], answers: Sequence[int]) -> np.ndarray:
    """Per node, how many of the (masked) question's content words the answers' names hold (`holds_word`); zero
    where every answer holds as many."""
    from gretriever_neo4j.retrieval.naming import holds_word

    words = {t for t in tokens if len(t) >= 3 and t not in STOP_WORDS}  # (the placeholder X is one letter)
    out = np.zeros(len(texts))
    for a in answers:
        out[a] = sum(holds_word(texts[a], w) for w in words)
    if len({out[a] for a in answers}) < 2:
        return np.zeros(len(texts))
    return out


class TrainedReader:
    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.module, self.info = load_reader(self.path)
        self.name = f"reader {self.path.name}"

    @property
    def threshold(self) -> float:
        return self.info.threshold

    def read(self, question: str, view: SubgraphView, anchors: Sequence[int], question_vector: np.ndarray,
             question_full: np.ndarray | None = None) -> Reading:
        full = question_full if question_full is not None else question_vector
        anchors = list(anchors)
        found = walks(view, anchors, self.info.config.max_hops) if anchors else walks(view, [], 1)
        if view.num_nodes == 0:
            return _finish(view, found, anchors, np.zeros(0), np.zeros(0), {}, self.threshold, self.name, set())
        example = build_example(question, view, found, anchors, question_vector, full, self.info.config.max_hops)
        (node_logits, sig_logits), = predict_logits(self.module, [example], view.node_vectors, view.relation_vectors)
        probabilities = sigmoid(node_logits)
        pair_scores = sig_logits[found.pair_sig] if found.num_pairs else np.zeros(0)
        from gretriever_neo4j.retrieval.texts import is_opaque

        opaque = {i for i, text in enumerate(view.node_texts) if is_opaque(text)}  # ways through, never answers
        return _finish(view, found, anchors, probabilities, np.zeros(view.num_nodes), _best_pairs(found, pair_scores),
                       threshold=self.threshold, model=self.name, exclude=opaque)


@dataclass(frozen=True)
class ReaderInput:
    """What a reader reads for one question: the subgraph, its anchors and the two question texts."""

    question: str  # as asked (topic markers stripped)
    view: SubgraphView
    anchors: list[int]
    masked: str  # the question with what it says of its anchors replaced by "X"


def reader_input(question: str, result, question_full: np.ndarray | None, hints: Sequence[str] = (),
                 also_named: bool = False) -> ReaderInput:
    """Anchors and the masked question for a retrieval result (`hints`: node keys a linker already chose;
    `also_named`: see `find_anchors`)."""
    text = strip_topic_markers(question)
    view = SubgraphView.from_result(result)
    anchors = find_anchors(text, view, question_full, hints, also_named)
    return ReaderInput(question=text, view=view, anchors=anchors,
                       masked=mask_question(text, [view.node_texts[a] for a in anchors]))


def read(reader, item: ReaderInput, masked_vector: np.ndarray, full_vector: np.ndarray) -> Reading:
    return reader.read(item.question, item.view, item.anchors, masked_vector, full_vector)


__all__ = ["Reading", "ReaderInput", "SubgraphView", "TrainedReader", "ZeroShotReader",
           "answer_set", "find_anchors", "parallel_into_records",
           "read", "reader_input", "walks"]

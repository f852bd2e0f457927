"""Zero-shot scores of relation signatures by how well they *cover* the question, for a reader with nothing trained.

Summing per-step similarities (`relation_paths.signature_scores`) cannot tell how many hops a question means: every
extra step must beat a baseline, so "who directed the films X acted in" stops at the films, and a path that repeats
a relation ("films that share actors with X": `starred_actors> <starred_actors`) never wins. Here a signature scores

    coverage   the mean, over the question's words that name a relation (`WORD_NAMES`; all words when none does),
               of the best similarity to one of its relations: a path that leaves "directed" unexplained loses;
  + precision  the least, over its relations, of how well a word or word pair names it, each word naming one
               relation at most, less that word's mean similarity to all relations ("films" names none), capped
               at `MENTION_CAP` (`least_named`);
  + reading    the similarity of the question to the signature read as a question (`signature_question`): which
               relation is asked for, which is the way;

then the other features of `signature_weights.FEATURES`, each explained where it is computed below: hops, the
kind of answer a "who"/"where"/"when"/"which N" question asks for, categories, what is shared. A signature's score
is its features times a `SignatureWeights` (the hand-set zero-shot values, or weights fitted on questions:
`reader.learned`); the thresholds of the features themselves are `tuning.ReaderTuning`'s.
Similarities are MiniLM's, raised to `LEXICAL` where a question word and a word of a relation's own name share a
stem or a word family (`wording`): the embedder rates "screenwriter" / `written by` barely above unrelated pairs.

Input: the question with its anchors masked, the signatures (relation id, direction steps), the relations' texts
and a `TextVectors` over an `embed(texts) -> (n, d)` callable. Output: one score per signature (`coverage_scores`).
Reading is computed for the `SignatureWeights.shortlist` best by the other features only, cached by text.
Everything is a pure function of texts; what the question's words say by themselves (stems, roles, the which-noun)
is `wording`'s.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from gretriever_neo4j.reader.kinship import is_kin, kin_steps
from gretriever_neo4j.reader.lexicon import GraphLexicon
from gretriever_neo4j.reader.sides import (
    agents_named,
    inverse_named,
    names_its_head,
    role_directions,
    voice_directions,
)
from gretriever_neo4j.reader.signature_weights import FEATURES, ZERO_SHOT, SignatureWeights
from gretriever_neo4j.reader.text_vectors import TextVectors
from gretriever_neo4j.reader.tuning import TUNING
from gretriever_neo4j.reader.walk_shapes import (
    most_specific_place,
    round_trips,
    signature_question,
    starts_at_kind,
    through_trip,
)
from gretriever_neo4j.reader.wording import (
    IDENTITY_WORD,
    ORIGIN_WORD,
    TIME_WORDS,
    WHERE,
    WHO,
    Step,
    anchor_sides,
    asks_class,
    asks_for_a_place,
    asks_for_a_time,
    asks_identity,
    asks_origin,
    class_relations,
    content_words,
    head_word_index,
    located_relations,
    modifies,
    own_name,
    possessed_word,
    same_stems,
    stem_match,
    wh_head,
    word_family,
    word_grams,
)
from gretriever_neo4j.retrieval.linking import analyzer_tokens
from gretriever_neo4j.retrieval.relation_paths import FORWARD, asks_for_a_category, asks_what_is_shared
from gretriever_neo4j.retrieval.texts import humanize_relation

# Feature `extra_hops`: per named hop beyond the first: a longer path must explain more of the question to win
# Feature `who_backward`: "who …" asks for a relation's value (a forward last step), not for what points at X
# ... unless the relation's name says its head is the one it names ("who wrote X" is `<author of`: `names_its_head`)
# Feature `value_mismatch`: a "who"/"where" question answered by numbers or dates only (or "who" by places), a "when"
# one
# Feature `when_mismatch`: ... by no number or date, where some walk ends on them: a time is all a "when" question
# asks for
# Feature `where_mismatch`: a "where" question answered by no place, where some walk ends on places: "where did X go to
# school" is answered by a school, which no relation's name says is a place: so it costs less than `VALUE_COST`
# A "which N" question's walk most of whose end nodes say N in their names ("which lab": `Quillon Language Lab`, "which
# department offers X": `Department of Mirror Linguistics`, not the faculty it is part of) gains this: the name says
# what the thing is, where invented names carry no meaning an embedder knows. Where it asks for a category, the
# noun must end the names ("what kind of music": `Rock music`; "what type of government": not `Government of Canada`).
# Feature `kind_named`.
# A "which N" question gains this times the mean similarity of a walk's end nodes to N: "which country was X born
# in" is nearer "United States of America" than "Gary". Invented names carry no meaning but their words ("Tarsen Cup
# League"), which `NAME_KIND` reads.
# Feature `head_kind`.
# The noun a "which …" question opens with is the kind of thing asked for; it names the relation the walk ends on
# only where it is that relation's own word or near it ("which language" / `languages spoken` 0.78, "which movies"
# / `film` 0.81), not where MiniLM finds it merely related ("which club" / `league` 0.56, "which band" / `genre`
# 0.49, "which albums" / `record label` 0.52): there it would take a walk one hop past the answer.
HEAD_NAMES = TUNING.head_names
# A walk out and back along one relation (`directed_by> <directed_by`: the other films of X's director) answers what
# X *shares* with others: it earns this where the question says something is shared (a sharing word, "same", "also",
# "other", or the relation named twice: `named_twice`) and costs as much otherwise. "The same N as X" (`SAME_AS`)
# earns twice as much, and there a "who" question's backward last step costs nothing: the others are of X's kind.
# Feature `trip_asked / trip_unasked / same_as_trip`.
# A round trip the question does not ask for, and a walk on from those others (`genre> <genre instruments_played>`,
# "what type of music did X play"; `gender> <gender played_by>`, "who plays X"): an evidence graph holds such ways
# where X has no edge of its own, and what they reach is the others', never X's.
# Not where a word names the relation of the trip (MetaQA's "who starred movies for the writer of X": `written_by>
# <written_by starred_actors>`, "writer" naming `written_by` at 0.44; `genre` at 0.08 for "type of music").
# Feature `through_trip`.
SAME_AS = re.compile(r"\bsame(?: \w+){1,3} as\b")  # "the same team as X"
# A signature ending on a categorical step (values few and shared by many, counted over the whole graph:
# `relation_paths.categorical_steps`), for a question that asks for a category ("what kind of film is X"). A small
# graph has too few edges for any relation to count as categorical; there a category is a word in lower case.
# Feature `category`.
# Feature `class_step`: a step to X's class, for a question that asks what X is (`wording.asks_class`)
# When a word names a relation, and how clearly (`ReaderTuning`)
WORD_NAMES = TUNING.word_names
LEXICAL = TUNING.lexical
MENTION_CAP = TUNING.mention_cap
NAMED_SIMILARITY = TUNING.named_similarity
NAMED_MARGIN = TUNING.named_margin
# A question whose family words ask for several family hops ("parents of parents", spelled out from "grandparents":
# `kinship.spell_out_kinship`) gains this for a walk of that many steps along the relations they name: the same
# words name the one-hop walk as well.
# Feature `kin`.
# A walk whose first hop is no relation the noun X owns names ("where were X's *children* born", "who did X's
# *children* marry": not X's spouse's children) costs this: the question asks about that thing, not about X.
# Feature `not_owned`.
# A "which N" question whose N is a kind of place ("which city is X served in", "in which town is X buried") costs
# CONTAINER_COST for a walk that ends on no place (nothing a relation of containment, `located in`, `containedby`, or
# of "in", `born in`, points at) by a relation whose name is far from N (`VENUE_SIMILARITY`), where some walk ends on
# places: a restaurant or a churchyard is located somewhere, it is no city. The walk one step of containment
# further counts that step as named, where no word names it. MiniLM, "city": `served at` 0.17, `is buried at` 0.20,
# `chef of` 0.21; `capital of` 0.37, `born in` 0.39, `twinned with` 0.30.
VENUE_SIMILARITY = TUNING.venue_similarity
# Feature `no_place`.
# "where is X based", "where is the headquarters of X": of the places one record holds (an address: its city, state and
# country), the most specific answers a "where" question that names no kind of place: the walk to the one whose
# relation names the smallest kind of place (`PLACE_SCALE`) gains this: Samsung's `citytown` Suwon, not South Korea,
# which MiniLM rates nearer "based".
# Feature `most_specific`.
# A walk on from what a "what N" question asks for: Freebase names a relation `domain.type.property`, the type
# being what the relation starts from, so a last step along `book.book.genre` leaves the books "what books did X
# write" asks for for their genres (MiniLM rates "Fiction" nearer "books" than "Mockingjay"). The walk costs this
# where the noun is a word of the type and not of the property.
# Feature `starts_at_kind`.
# Per hop beyond the first when no word of the question names any relation ("what does X appear in"), unless it asks
# what is shared; "who is X" alone asks for X's profession where X has one (`wording.asks_identity`).
# Feature `extra_hops_unexplained`.
# Feature `inverse_steps / against_voice`: a step along a relation named by its inverse role, the wrong way; a last
# step against the verb
BARRED = -1.0  # what a word that may not name a relation says of it in `gram_named`




def least_named(gram_named: np.ndarray, gram_words: Sequence[set[int]], ids: Sequence[int],
                skip_barred: bool = False) -> float:
    """How well the question names the worst named of relations `ids` when each word names one relation at most:
    relations take, best named first, the best word or word pair whose words no other relation took — or each a
    word of its own, where every one of them then names its relation clearly (`WORD_NAMES`): "spouse born" names
    `born in` a little better than "born" does, and would leave `married to` without "spouse"."""
    singles = [g for g, words in enumerate(gram_words) if len(words) == 1]
    with_pairs = _least_named_greedy(gram_named, gram_words, ids, skip_barred)
    if len(singles) == len(gram_words):
        return with_pairs
    alone = _least_named_greedy(gram_named[singles], [gram_words[g] for g in singles], ids, skip_barred)
    return max(with_pairs, alone) if alone >= WORD_NAMES else with_pairs


def _least_named_greedy(gram_named: np.ndarray, gram_words: Sequence[set[int]], ids: Sequence[int],
                        skip_barred: bool = False) -> float:
    taken: set[int] = set()
    least = np.inf
    for r in sorted(ids, key=lambda r: -float(gram_named[:, r].max())):
        best = -np.inf
        for g in np.argsort(-gram_named[:, r]).tolist():
            if not (gram_words[g] & taken) and not (skip_barred and gram_named[g, r] <= BARRED):
                best = float(gram_named[g, r])
                taken |= gram_words[g]
                break
        least = min(least, best if np.isfinite(best) else 0.0)
    return float(least)


def named_twice(words: Sequence[str], word_relation: np.ndarray, humanized: Sequence[str],
                vectors: TextVectors, naming: np.ndarray | None = None, sides: Sequence[int] | None = None,
                head: int | None = None) -> set[int]:
    """Relations two of the question's words name, each on its own ("directed" and "director" both name
    `directed by`); two words that name different words of one relation ("release", "years" of `release year`)
    are one mention, unless both name a relation (`naming`), one before the anchor and one a noun right after it
    (`anchor_sides`): in "the films starred by X actors" the actors of X are one mention of `starred actors`,
    the films they starred in another (not so "what years were the movies starring X released"). The noun a "which"
    question asks for (`head`) and a verb of its stem are one mention: "which carriers carry X" asks who carries X."""
    if len(words) < 2 or word_relation.shape[1] == 0:
        return set()
    best = word_relation.argmax(axis=1)
    ranked = np.sort(word_relation, axis=1)
    gap = ranked[:, -1] - (ranked[:, -2] if word_relation.shape[1] > 1 else 0.0)
    twice = set()
    for relation in set(best.tolist()):
        chosen = np.flatnonzero((best == relation) & (word_relation[:, relation] >= NAMED_SIMILARITY)
                                & (gap >= NAMED_MARGIN))
        if head is not None and head in chosen and any(stem_match(words[head], words[i]) for i in chosen if i != head):
            chosen = chosen[chosen != head]
        if len(chosen) < 2 or len({word_family(words[i]) for i in chosen}) < 2:  # "describing what X is about": once
            continue
        parts = content_words(humanized[relation]) or [humanized[relation]]
        nearest = (vectors([words[i] for i in chosen]) @ vectors(parts).T).argmax(axis=1)
        if np.bincount(nearest).max() >= 2:
            twice.add(relation)
        elif naming is not None and sides is not None:
            around = {sides[i] for i in chosen if naming[i]}
            if {-1, 1} <= around:
                twice.add(relation)
    return twice


def naming_matrix(grams: Sequence[str], relation_texts: Sequence[str], vectors: TextVectors,
                  kept: frozenset[str] = frozenset(), lexicon: GraphLexicon | None = None) -> np.ndarray:
    """(G, R) how well each gram names each relation: the similarity of the two (the relation humanized), raised to
    `LEXICAL` where they share a stem, and to the strength of a pair the graph's `lexicon` learned."""
    if not len(grams) or not len(relation_texts):
        return np.zeros((len(grams), len(relation_texts)), np.float32)
    relations = vectors([humanize_relation(t) for t in relation_texts])
    out = np.maximum(vectors(list(grams)) @ relations.T, LEXICAL * same_stems(grams, relation_texts, kept))
    if lexicon is not None and len(lexicon):
        out = np.maximum(out, lexicon.naming(grams, relation_texts))
    return out


@dataclass(frozen=True)
class SignatureTable:
    """The named features (`signature_weights.FEATURES`) of the signatures that have a step (`used`, ids into
    the signatures given), and which of them were read as questions (`shortlisted`; the others' `reading` is 0)."""

    used: np.ndarray  # (U,) signature ids
    features: np.ndarray  # (U, F)
    shortlisted: np.ndarray  # (U,) bool


def coverage_scores(masked_question: str, question_vector: np.ndarray | None, signatures: Sequence[Sequence[Step]],
                    relation_texts: Sequence[str], vectors: TextVectors, shortlist: int | None = None,
                    weights: SignatureWeights = ZERO_SHOT, **ends) -> np.ndarray:
    """One score per signature: its features (`coverage_features`) times `weights`; signatures outside the
    shortlist score below every shortlisted one, the empty signature -inf."""
    table = coverage_features(masked_question, question_vector, signatures, relation_texts, vectors,
                              weights=weights, shortlist=shortlist, **ends)
    return scores_of(table, weights, len(signatures))


def scores_of(table: SignatureTable, weights: SignatureWeights, count: int) -> np.ndarray:
    """The scores of `count` signatures from their table (see `coverage_scores`)."""
    out = np.full(count, -np.inf)
    if len(table.used):
        scores = table.features @ weights.vector()
        out[table.used] = np.where(table.shortlisted, scores, scores - 10.0)
    return out


def coverage_features(masked_question: str, question_vector: np.ndarray | None,
                      signatures: Sequence[Sequence[Step]], relation_texts: Sequence[str], vectors: TextVectors,
                      weights: SignatureWeights = ZERO_SHOT, shortlist: int | None = None,
                      ways_through: set[Step] = frozenset(),
                      categorical: set[Step] = frozenset(), value_ends: set[int] = frozenset(),
                      unnamed_ends: set[int] = frozenset(), place_ends: set[int] = frozenset(),
                      end_vectors: np.ndarray | None = None, kind_named_ends: set[int] = frozenset(),
                      container_ends: set[int] = frozenset(), end_counts: np.ndarray | None = None,
                      lexicon: GraphLexicon | None = None, remembered: np.ndarray | None = None
                      ) -> SignatureTable:
    """Scores of `signatures` (relation ids index `relation_texts`) for the question with its anchors masked
    (see the module docstring), as named features (`signature_weights.FEATURES`; steps in `ways_through` lead
    to opaque nodes: not hops); `value_ends`: the signatures whose end nodes are all numbers or dates;
    `unnamed_ends`: those whose end nodes are all numbers, dates or lower-case common nouns; `place_ends`: those
    whose end nodes are all places (`place_relations`); `end_vectors`: (S, d) per signature, the mean of its end
    nodes' unit vectors (the kind of thing a "which N" question asks for is near N: `HEAD_KIND`); `kind_named_ends`:
    the signatures most of whose end nodes have N among their names' words (`NAME_KIND`); `container_ends`: those
    most of whose end nodes a relation of containment points at (`CONTAINER_COST`); `lexicon`: the graph's
    learned word-relation pairs (`naming_matrix`); `remembered`: (S,) per signature, the feature of that name
    (`GraphLexicon.remembered`). The empty
    signature, and signatures outside the shortlist, score lower than every shortlisted one (-inf for the empty
    one)."""
    shortlist = weights.shortlist if shortlist is None else shortlist
    used = [s for s, signature in enumerate(signatures) if signature]
    if not used:
        return SignatureTable(np.zeros(0, np.int64), np.zeros((0, len(FEATURES))), np.zeros(0, bool))
    tokens = analyzer_tokens(masked_question)
    opening = set(tokens[:3] + tokens[-1:])  # "who wrote X", "X was written by whom"
    asks_who = bool(WHO & opening)
    head = wh_head(tokens)
    asks_where = bool(WHERE & opening)
    kept = frozenset({ORIGIN_WORD}) if asks_origin(masked_question, signatures, relation_texts) else frozenset()
    words = ([IDENTITY_WORD] if asks_identity(masked_question, signatures, relation_texts)
             else content_words(masked_question, kept) or ["thing"])
    asks_for_a_name = asks_who or asks_where
    asks_when = asks_for_a_time(tokens, head)
    asks_a_place = asks_for_a_place(tokens, head)
    # the which-noun's similarity to each relation's own name
    head_to_own = (vectors([own_name(t) for t in relation_texts]) @ vectors([tokens[head]])[0] if head is not None
                   else None)
    located = located_relations(relation_texts) if asks_a_place and container_ends else None
    # a relation whose name is near the noun ("capital of", "born in", "twinned with" for "city") may end on one
    # though nothing is located in it; "served at", "buried at", "chef of" end on venues
    venue = head_to_own < VENUE_SIMILARITY if located is not None else None

    def no_place(signature_id: int | None) -> bool:
        return (signature_id is not None and len(signatures[signature_id]) > 0 and signature_id not in container_ends
                and bool(venue[int(signatures[signature_id][-1][0])]))
    # a walk's last step of containment counts as named only where the walk before it ends on no place
    index = ({tuple(map(tuple, signature)): s for s, signature in enumerate(signatures)}
             if located is not None else {})
    kin = kin_steps(words)
    kin_named = same_stems([w for w in words if is_kin(w)], relation_texts).any(axis=0) if kin else None
    grams = word_grams(words)
    humanized = [humanize_relation(t) for t in relation_texts]
    heads_named = [names_its_head(t) for t in relation_texts] if asks_who else []
    inverse = inverse_named(words, relation_texts)
    # the side of the verb or role the question asks for, at the walk's last step (`wording.voice_directions`,
    # `role_directions`): "which creatures feed on X" is `<Eats`, not on to what else they eat
    voiced = {**role_directions(tokens, relation_texts), **voice_directions(tokens, relation_texts)}
    sided = {**voiced, **inverse}  # what a "who" question's last step back may follow; a round trip: `inverse` only
    relations = vectors(humanized)
    gram_relation = naming_matrix(grams, relation_texts, vectors, kept, lexicon)  # (G, R)
    word_relation = gram_relation[:len(words)]  # the grams start with the words themselves
    head_word = head_word_index(tokens, words, head)
    if head_word is not None:
        # "which quests": a quest is no `quest giver` (the noun only says which givers); the row mean names nothing
        modified = [r for r, text in enumerate(relation_texts) if modifies(words[head_word], text)]
        if modified:
            word_relation[head_word, modified] = word_relation[head_word].mean()
    # How well the question names each relation, beyond what its words say of every relation: "films" is as
    # near `starred actors` as `directed by` (MiniLM 0.54, 0.52) and names neither.
    gram_named = gram_relation - gram_relation.mean(axis=1, keepdims=True)  # (G, R)
    gram_words = [{i} for i in range(len(words))] + [{i, i + 1} for i in range(len(words) - 1)]
    named_by: dict[tuple[int, ...], float] = {}
    centered = word_relation - word_relation.mean(axis=1, keepdims=True)
    naming = centered.max(axis=1) >= WORD_NAMES
    category = asks_for_a_category(masked_question)
    # "what is X", "what kind of creature is X": a relation to X's class (`IsA`, `instance of`, `notable types`)
    classes = class_relations(relation_texts) if asks_class(masked_question) else None
    # "what kind of music is on X": the noun says what the answer is near (`kind`), not which relation it names
    typed_head = None if category else head_word
    if typed_head is not None:
        # Too far from every relation, by its whole name or its own ("which movies" / `film.performance.film`: 0.55
        # and 0.81), the head noun is a kind of thing only (`HEAD_NAMES`).
        if np.maximum(word_relation[head_word], head_to_own).max() < HEAD_NAMES:
            naming[head_word] = False
            gram_named[head_word] = BARRED
    covered = word_relation[naming] if naming.any() else word_relation
    sharing = asks_what_is_shared(masked_question)
    # "who plays in the same team as X": the others who share X's team, said outright; a walk that stops at the
    # team answers nothing asked
    same_as = sharing and bool(SAME_AS.search(" ".join(tokens)))
    unexplained_hops = False
    if not naming.any() and not sharing:
        # Nothing names a relation ("which movies can be described by X", "what does X appear in"): the question
        # is as long as its way to the answer, one hop; a second hop would be explained by nothing.
        unexplained_hops = True
    sides = anchor_sides(masked_question)
    # "where were X's children born": what X owns is the first thing the walk goes through
    owned = possessed_word(tokens, words)
    # (not a time: "X's date of birth" is one relation, and "date" is nearer `married` than `born on`)
    owned_relations = (set(np.flatnonzero(centered[owned] >= WORD_NAMES).tolist())
                       if owned is not None and naming[owned] and owned != head_word
                       and words[owned] not in TIME_WORDS else set())
    twice = named_twice(words, word_relation, humanized, vectors, naming, sides if len(sides) == len(words) else None,
                        head_word)
    # The noun a "which …" question opens with says what kind of thing the answer is: it names, if anything, the
    # relation the walk ends on ("which *city* was X born in" is not `born in> <location city`).
    kind = ((end_vectors @ vectors([tokens[head]])[0])
            if end_vectors is not None and len(end_vectors) and head_word is not None else np.zeros(len(signatures)))
    head_row = int(naming[:typed_head].sum()) if typed_head is not None and naming[typed_head] else None
    head_grams = [g for g, members in enumerate(gram_words) if typed_head in members] if typed_head is not None else []
    agents = agents_named(tokens[head], relation_texts) if typed_head is not None else set()
    most_specific = (most_specific_place(signatures, ways_through, relation_texts) if asks_where and head is None
                     else set())
    typed_named: dict[int, np.ndarray] = {}  # the naming matrix with the head noun naming only that relation
    features = np.zeros((len(used), len(FEATURES)))
    column = {name: k for k, name in enumerate(FEATURES)}
    question_unit = None
    if question_vector is not None:
        question_unit = np.asarray(question_vector, dtype=np.float32).reshape(-1)
        question_unit = question_unit / max(float(np.linalg.norm(question_unit)), 1e-12)
    named_at_all = gram_named.max(axis=0)  # (R,) how well the best word or pair names each relation
    for i, s in enumerate(used):
        ids = sorted({int(r) for r, _ in signatures[s]})
        hops = sum(1 for step in signatures[s] if tuple(step) not in ways_through)
        last_relation, last_direction = signatures[s][-1]
        last = int(last_relation)
        # The relation the head noun may name: the last, where the walk ends on what it names: its tail forward,
        # its head backward where the noun is the one who does what the relation says ("which players are in X":
        # `<plays for`; not "which country is X in": `<located in`, the things located in X)
        if int(last_relation) in inverse:  # "which students did X supervise": `<advisor`, not `advisor>`
            typed = int(last_relation) if last_direction == inverse[int(last_relation)] else -1
        else:
            typed = int(last_relation) if last_direction == FORWARD or int(last_relation) in agents else -1
        # The end nodes' names say the kind asked for ("which lab": `… Lab`): the noun names the last step, which no
        # other word need name ("which lab does X's advisor work in": `hasAdvisor> memberOf>`).
        kind_named = head_word is not None and s in kind_named_ends
        # "which city is X served in": a walk that ends on places by a relation of containment says the place
        # asked for, though no word names `located in`
        contained_last = (asks_a_place and s in container_ends and bool(located[int(last_relation)])
                          and named_at_all[int(last_relation)] < WORD_NAMES
                          and no_place(index.get(tuple(map(tuple, signatures[s][:-1])))))
        # "where has X curated exhibitions": the step out of an exhibition (an opaque record: a way through) to where
        # it took place is the "where" the question asks; no word need name it
        asked_last = (len(signatures[s]) > 1 and tuple(signatures[s][-2]) in ways_through
                      and (((asks_where or asks_a_place) and s in place_ends) or (asks_when and s in value_ends)))
        dropped_last = (kind_named or contained_last or asked_last) and len(ids) > 1
        named_ids = [r for r in ids if r != int(last_relation)] if dropped_last else ids
        # A record (an exhibition, a loan, Freebase's CVT) holds one fact spelled in two edges, into it and out of
        # it: the question names the fact by one of them ("who loaned out X": `<loaned work lent by>`). Only a walk
        # through one record: from record to record, each fact must be named.
        records = [(int(a[0]), int(b[0])) for a, b in zip(signatures[s], signatures[s][1:])
                   if tuple(a) in ways_through]
        if len(records) == 1 and records[0][0] != records[0][1]:
            spelled = min(records[0], key=lambda r: float(named_at_all[r]))
            if set(named_ids) - {spelled}:
                named_ids = [r for r in named_ids if r != spelled]
        # the last step, left out of `named_ids` because the end nodes' names say it, used up the which-noun: the
        # one step before it, which the noun may not name, is then named by no word ("which league is X in":
        # `athlete plays for team> team plays in league>`), not by the noun at -1; two or more such steps are a
        # walk nothing asks for (a football graph's `capt> prev_club> div>` to some league); and the noun must be
        # a word of the last step's name too ("which books are in X" is not `<is part of the series won the award>`
        # to awards named "Book Award")
        used_up = (kind_named and dropped_last and len(named_ids) == 1
                   and any(stem_match(tokens[head], w) for w in content_words(own_name(relation_texts[last]))))
        key = (tuple(named_ids), typed if head_grams else -1, used_up)
        if key not in named_by:
            if head_grams and typed not in typed_named:
                typed_named[typed] = gram_named.copy()
                typed_named[typed][np.ix_(head_grams, [r for r in range(gram_named.shape[1]) if r != typed])] = BARRED
            named_by[key] = least_named(typed_named[typed] if head_grams else gram_named, gram_words, named_ids,
                                        skip_barred=used_up)
        precision = min(named_by[key], MENTION_CAP)
        explained = covered[:, ids].max(axis=1)
        if head_row is not None:
            explained[head_row] = covered[head_row, typed] if typed >= 0 else covered[head_row].mean()
        f = features[i]
        f[column["explained"]] = explained.mean()
        f[column["precision"]] = precision
        f[column["extra_hops"]] = max(hops - 1, 0)
        f[column["extra_hops_unexplained"]] = max(hops - 1, 0) if unexplained_hops else 0.0
        f[column["one_hop"]] = float(hops == 1)
        if question_unit is not None:
            f[column["last_named"]] = float(relations[last] @ question_unit)
            f[column["first_named"]] = float(relations[int(signatures[s][0][0])] @ question_unit)
            if end_vectors is not None and len(end_vectors):
                f[column["end_question"]] = float(end_vectors[s] @ question_unit)
        if end_counts is not None:
            f[column["end_count"]] = float(np.log1p(end_counts[s]))
        if remembered is not None:
            f[column["remembered"]] = float(remembered[s])
        trips = round_trips(signatures[s])
        if inverse and not trips:
            f[column["inverse_steps"]] = sum(1 for r, d in signatures[s] if int(r) in inverse and d != inverse[int(r)])
        if voiced.get(int(last_relation), last_direction) != last_direction and not sharing:
            f[column["against_voice"]] = 1.0
        if (asks_who and last_direction != FORWARD and not heads_named[int(last_relation)]
                and (inverse if trips else sided).get(int(last_relation)) != last_direction
                and not (same_as and trips)):
            f[column["who_backward"]] = 1.0
        if ((asks_for_a_name or asks_a_place) and s in value_ends) or (asks_who and (s in unnamed_ends
                                                                                 or s in place_ends)):
            f[column["value_mismatch"]] = 1.0
        if asks_when and value_ends and s not in value_ends:
            f[column["when_mismatch"]] = 1.0
        if asks_where and place_ends and s not in place_ends:
            f[column["where_mismatch"]] = 1.0
        if located is not None and no_place(s):
            f[column["no_place"]] = 1.0
        if s in most_specific:
            f[column["most_specific"]] = 1.0
        if (typed_head is not None and len(signatures[s]) > 1 and last_direction == FORWARD
                and starts_at_kind(relation_texts[last], tokens[head])):
            f[column["starts_at_kind"]] = 1.0
        f[column["head_kind"]] = kind[s]
        if owned_relations:
            through = next((int(r) for r, d in signatures[s] if (int(r), int(d)) not in ways_through),
                           int(signatures[s][0][0]))
            if through not in owned_relations:
                f[column["not_owned"]] = 1.0
        if kin and sum(1 for r, _ in signatures[s] if kin_named[int(r)]) == kin:
            f[column["kin"]] = 1.0
        if kind_named:
            f[column["kind_named"]] = 1.0
        if category and (tuple(signatures[s][-1]) in categorical if categorical
                         else s in unnamed_ends and s not in value_ends):
            f[column["category"]] = 1.0
        if (classes is not None and len(signatures[s]) == 1 and last_direction == FORWARD
                and classes[int(last_relation)]):
            f[column["class_step"]] = 1.0
        if trips:
            f[column["trip_asked" if sharing or trips & twice else "trip_unasked"]] = 1.0
            if (not (sharing or trips & twice) and through_trip(signatures[s])
                    and any(named_at_all[t] < WORD_NAMES for t in trips)):
                # on from the others who share X's genre to what they play: nothing asked for those others; a trip
                # along a relation a word names is the question's way ("who starred movies for the *writer* of X")
                f[column["through_trip"]] = 1.0
            if same_as:
                f[column["same_as_trip"]] = 1.0
    vector = weights.vector()
    first = features @ vector  # everything but `reading`, which is 0 so far
    order = np.argsort(-first, kind="stable")
    shortlisted = np.zeros(len(used), dtype=bool)
    if question_unit is None:
        shortlisted[order[:shortlist]] = True
        return SignatureTable(np.asarray(used, np.int64), features, shortlisted)
    short = order[:shortlist]
    shortlisted[short] = True
    texts = [signature_question(relation_texts, signatures[used[i]]) for i in short.tolist()]
    features[short, column["reading"]] = vectors(texts) @ question_unit
    return SignatureTable(np.asarray(used, np.int64), features, shortlisted)

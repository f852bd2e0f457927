"""What a walk signature is, whatever the question: the kinds of place its relations end on, its round trips, and
how it reads as a question. `reader.coverage` turns these into features of the question and the walk.

A signature is a sequence of steps (relation id, direction) from the anchor; relation ids index the relation texts
given with it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from gretriever_neo4j.language import WORDS
from gretriever_neo4j.reader.sides import names_its_head, without_copula
from gretriever_neo4j.reader.text_vectors import TextVectors
from gretriever_neo4j.reader.tuning import TUNING
from gretriever_neo4j.reader.wording import Step, own_name
from gretriever_neo4j.retrieval.relation_paths import FORWARD
from gretriever_neo4j.retrieval.texts import humanize_relation

# Kinds of place from the smallest: an address's `citytown` is more specific than its `state province region`.
PLACE_SCALE = WORDS.place_scale
PLACE_PROTOTYPES = WORDS.place_prototypes  # what a relation whose values are places is near
PLACE_SIMILARITY = TUNING.place_similarity  # a relation this near a prototype has places for values


def place_rank(relation_text: str) -> int | None:
    """Where on `PLACE_SCALE` the smallest kind of place a relation's own name says lies ("citytown": 0), or None."""
    words = own_name(relation_text).lower().split()
    return next((rank for rank, kinds in enumerate(PLACE_SCALE) if any(k in w for w in words for k in kinds)), None)


def most_specific_place(signatures: Sequence[Sequence[Step]], ways_through: set[Step],
                        relation_texts: Sequence[str]) -> set[int]:
    """Of the signatures that step out of one record (a step in `ways_through` before their last) along relations
    whose names say a kind of place (`PLACE_SCALE`), the one that says the smallest (`SPECIFIC_PLACE`), where the
    record holds two such places or more."""
    groups: dict[tuple, list[tuple[int, int]]] = {}
    for s, signature in enumerate(signatures):
        if len(signature) > 1 and tuple(signature[-2]) in ways_through and signature[-1][1] == FORWARD:
            rank = place_rank(relation_texts[int(signature[-1][0])])
            if rank is not None:
                groups.setdefault(tuple(map(tuple, signature[:-1])), []).append((rank, s))
    out = set()
    for members in groups.values():
        ranks = sorted(rank for rank, _ in members)
        if len(ranks) > 1 and ranks[0] < ranks[1]:
            out.add(min(members)[1])
    return out


def starts_at_kind(relation_text: str, noun: str) -> bool:
    """Whether a Freebase-style name `domain.type.property` says the relation starts from things of the kind
    `noun` says (a word of its type, by lemma) and not that it ends on them (no word of its property)."""
    from gretriever_neo4j.retrieval.naming import word_lemmas

    parts = relation_text.split(".")
    if len(parts) < 3:
        return False
    wanted = word_lemmas(noun)  # the word itself among them

    def says(words: str) -> bool:
        return any(word_lemmas(w) & wanted for w in re.split(r"[_\s]+", words.lower()) if w)
    return says(parts[-2]) and not says(parts[-1])


def place_relations(relation_texts: Sequence[str], vectors: TextVectors) -> np.ndarray:
    """(R,) bool: relations whose tails are places (`hometown`, `birth place`, `located in`), by their own name
    (the part after a Freebase name's last dot) against `PLACE_PROTOTYPES`. With no types in a user's graph, a
    node is a place when such an edge points at it: so a "who" question is not answered by X's hometown."""
    if not relation_texts:
        return np.zeros(0, dtype=bool)
    names = [own_name(t) for t in relation_texts]
    return (vectors(names) @ vectors(list(PLACE_PROTOTYPES)).T).max(axis=1) >= PLACE_SIMILARITY


def round_trips(signature: Sequence[Step]) -> set[int]:
    """Relations the signature goes out and back along in two consecutive steps."""
    return {int(a[0]) for a, b in zip(signature, signature[1:]) if a[0] == b[0] and a[1] != b[1]}


def through_trip(signature: Sequence[Step]) -> bool:
    """Whether the signature goes on after a round trip (`genre> <genre instruments_played>`: what the others of
    X's genre play), other than along the relation it went out and back on (`siblings> <siblings siblings>`)."""
    return any(a[0] == b[0] and a[1] != b[1] and any(c[0] != a[0] for c in signature[i + 2:])
               for i, (a, b) in enumerate(zip(signature, signature[1:])))


def signature_question(relation_texts: Sequence[str], signature: Sequence[Step]) -> str:
    """The signature read as a question from the anchor X outwards: forward steps are "the R of …", backward
    ones "the things R …" ("the things directed by X"); a relation that names its head (`names_its_head`) reads
    "the author of X" backward and "the thing X is author of" forward, "the one who works for X" backward and
    "the thing X works for" forward."""
    inner = "X"
    for relation, direction in signature:
        words = humanize_relation(relation_texts[relation])
        if not names_its_head(relation_texts[relation]):
            inner = f"the {words} of {inner}" if direction == FORWARD else f"the things {words} {inner}"
            continue
        copula, core = without_copula(words.split())  # `is a sequel to`: the head is "a sequel to" the tail
        words = " ".join(core)
        if words.lower().endswith(" of"):  # `author of`, `is a student of`: the head is the author, the student
            inner = f"the thing {inner} is {words}" if direction == FORWARD else f"the {words} {inner}"
        else:  # `works for`, `is a sequel to`: the head works for the tail, is a sequel to it
            verb = f"is {words}" if copula else words
            inner = f"the thing {inner} {verb}" if direction == FORWARD else f"the one who {verb} {inner}"
    return f"what is {inner}"

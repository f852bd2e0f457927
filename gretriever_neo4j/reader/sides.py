"""Which side of a relation a question asks for, for the zero-shot reader (`coverage`): relations whose text names
their head ("author of", "works for", "is a sequel to": `names_its_head`), roles that come in pairs and name a relation
backwards ("students" / `doctoral advisor`: `inverse_named`), the verb a question asks about and whether its agent or
what it is done to is the answer ("what eats X", "what does X eat": `voice_directions`), and a role said before or
after X ("the sequel to X", "which book is X a sequel to": `role_directions`). An active relation (`Eats`, `wrote`)
has its agent at the head, a passive one (`was written by`, `lent by`) at the tail. Pure functions of texts: a
dictionary (lemminflect) but no embedder.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import NamedTuple

from gretriever_neo4j.language import WORDS
from gretriever_neo4j.reader.wording import (
    ARTICLES,
    FUNCTION_WORDS,
    PLACEHOLDER,
    PREPOSITIONS,
    content_words,
    inverse_roles,
    stem_match,
)
from gretriever_neo4j.retrieval.naming import word_lemmas
from gretriever_neo4j.retrieval.relation_paths import BACKWARD, FORWARD
from gretriever_neo4j.retrieval.texts import humanize_relation, own_name

COPULAS = WORDS.copulas
RELATIVES = WORDS.relatives
REQUESTS = WORDS.requests
WH_WORDS = WORDS.wh_pronouns
AUXILIARIES = WORDS.auxiliaries
HEAD, TAIL = 0, 1
CONVERSE_VERBS = WORDS.converse_verbs  # a family's verbs that say its relation from the other end ("employ")


@lru_cache(maxsize=65_536)
def names_its_head(relation_text: str) -> bool:
    """Whether a relation's text names the node its edges start from: "author of", "parent of" (the head is the
    author, the parent), "works for", "lives in" (a verb and its preposition: the head does it). "directed by",
    "starred actors", "has genre", "in language" name the tail."""
    from lemminflect import getAllLemmas

    words = humanize_relation(relation_text).lower().split()
    copula, core = without_copula(words)
    if not words:
        return False
    if words[-1] == "of" and len(words) > 1:
        return True
    if copula:  # a role and its preposition, "is a sequel to", "is home to"; not a verb's, "is buried at"
        return len(core) > 1 and core[-1] in PREPOSITIONS and not _verb_form(core[-2])
    # a verb as written, and its preposition, inside a longer name: NELL's `athlete plays for team`, `stadium
    # located in city`; a verb as written alone
    if any(_verb_form(w) and not _past_participle(w) and after in PREPOSITIONS for w, after in zip(words, words[1:])):
        return True  # not a participle: Freebase's `film character portrayed in films` is the character
    if len(words) == 1 and _verb_at(words, 0):  # `wrote`, `published`, `Eats`: the head does it
        return True
    return (len(words) == 2 and words[1] in PREPOSITIONS and "VERB" in getAllLemmas(words[0])
            and "AUX" not in getAllLemmas(words[0]))


def without_copula(words: Sequence[str]) -> tuple[bool, list[str]]:
    """A relation's words without the copula and article it may open with ("is a sequel to" -> "sequel to", "was
    written by" -> "written by"), and whether there was one: the copula says nothing of the relation, and the
    article after it is that of a role ("the head is a sequel to the tail")."""
    words = list(words)
    if len(words) < 2 or words[0].lower() not in COPULAS:
        return False, words
    words = words[1:]
    return True, words[1:] if len(words) > 1 and words[0].lower() in ARTICLES else words


def inverse_named(words: Sequence[str], relation_texts: Sequence[str]) -> dict[int, int]:
    """Relations a question word names by the inverse of the role the relation's own name says ("students" /
    `doctoral advisor`), with the direction a step along each must take to reach that word's side: backward where
    the name says the tail's role (`doctoral advisor`, `parents`), forward where it says the head's (`parent of`)."""
    lemmas = [word_lemmas(w) for w in words]
    out = {}
    for r, text in enumerate(relation_texts):
        own = [word_lemmas(part) for part in content_words(own_name(text))]
        if any(inverse_roles(q, o) for q in lemmas for o in own):
            out[r] = FORWARD if names_its_head(text) else BACKWARD
    return out


def _verb(token: str) -> bool:
    from lemminflect import getAllLemmas

    lemmas = getAllLemmas(token)
    return "VERB" in lemmas and "AUX" not in lemmas and token not in FUNCTION_WORDS


def _verb_form(word: str) -> bool:
    """A verb as written in a relation's name: "eats", "wrote", "plays", "located"; not "coach" or "work", which
    are nouns there as well."""
    from lemminflect import getAllLemmas

    lemmas = getAllLemmas(word)
    return "VERB" in lemmas and ("NOUN" not in lemmas or word not in lemmas["VERB"])


def _noun_here(word: str, previous: str) -> bool:
    """A word that may be a noun or a verb, read as a noun after an article, an adjective, a preposition or a
    possessive: "the official *colors* of X"; "which creatures *feed* on X" is a verb."""
    from lemminflect import getAllLemmas

    return "NOUN" in getAllLemmas(word) and (previous in ARTICLES or previous in PREPOSITIONS or previous in
                                             {"of", "s"} or "ADJ" in getAllLemmas(previous))


def _verb_at(words: Sequence[str], i: int) -> bool:
    """Whether a relation name's i-th word is its verb: `Eats`, `wrote`, `athlete plays for team`, `lent by`; not
    `has tags` or `colors` (a word that may be a noun, with no preposition after it), nor MetaQA's `starred actors`
    (a participle before its noun)."""
    from lemminflect import getAllLemmas

    after = words[i + 1] if i + 1 < len(words) else None
    prepositional = after in PREPOSITIONS or after == "by"
    if not _verb_form(words[i]) or ("NOUN" in getAllLemmas(words[i]) and not prepositional):
        return False
    return not (i == 0 and after is not None and not prepositional)


def _past_participle(word: str) -> bool:
    """"spoken", "used", "coached", "born": a verb's past participle (also its past tense, "played")."""
    from lemminflect import getAllLemmas, getInflection

    return any(word in getInflection(lemma, "VBN") for lemma in getAllLemmas(word).get("VERB", ()))


def _agent_noun(word: str) -> bool:
    """A noun for the one who does something: "players" (play), "owner", "publisher"; not "father"."""
    from lemminflect import getAllLemmas

    for lemma in getAllLemmas(word).get("NOUN", ()):
        if len(lemma) > 4 and lemma.endswith(("er", "or")):
            if any("VERB" in getAllLemmas(stem) for stem in (lemma[:-2], lemma[:-2] + "e", lemma[:-1])):
                return True
    return False


class AskedRole(NamedTuple):
    verb: str
    subject_asked: bool
    passive: bool
    # the verb takes its object straight, with no preposition between ("what does X serve", "who employs X", "what
    # can I make with X"), not "who invested in X", "what did X play for"
    transitive: bool


def asked_role(tokens: Sequence[str]) -> AskedRole | None:
    """The verb a question asks about, whether the answer is its subject, whether the question says it in the
    passive, and whether it takes its object with no preposition between (`AskedRole`): "what *eats* X", "which
    creatures feed on X", "who plays for X" ask for the subject (True, active);
    "what does X *eat*" for the object (False, active); "which athletes were *born* in X" for the subject of a
    passive (True, True); "who was X *written* by" for what is not its subject (False, True). None where the question
    has no such verb around X (or is not a "who"/"what"/"which" question). A noun of the doer next to X ("X's
    players", "the publisher of X") asks for the subject of the active verb."""
    if PLACEHOLDER not in tokens:
        return None
    x = tokens.index(PLACEHOLDER)
    # "X's players", "the owner of X": a noun for the one who does it
    tokens = list(tokens)
    for i, token in enumerate(tokens):
        owned = tokens[max(i - 2, 0):i] == [PLACEHOLDER, "s"] or (i and tokens[i - 1] == PLACEHOLDER)
        # the noun asked for: nothing but a question's or a request's words before it ("who is the publisher of
        # X", "name X's players"), not "the actors in the movies written by the writer of X"
        asked = set(tokens[:i]) <= WH_WORDS | AUXILIARIES | ARTICLES | REQUESTS | {PLACEHOLDER, "s"}
        if asked and _agent_noun(token) and (owned or tokens[i + 1:i + 2] == ["of"]
                                             and PLACEHOLDER in tokens[i + 2:i + 4]):
            return AskedRole(token, True, False, False)
    wh = next((i for i, t in enumerate(tokens[:x]) if t in WH_WORDS), None)
    if wh is None:
        return None
    before = tokens[wh + 1:x]
    aux = next((i for i, t in enumerate(before) if t in AUXILIARIES), None)
    # the question's own verb comes before any article: in "who is the director that directed X", "who are the
    # actors in the movies written by X", "what is the currency used in X" the verb is in a noun's clause
    verbs = [i for i, t in enumerate(before) if _verb(t) and (aux is None or i > aux)
             and not _noun_here(t, before[i - 1] if i else tokens[wh])
             and not (ARTICLES | RELATIVES) & set(before[:i])]
    if verbs:  # "what eats X", "which athletes are coached by X"
        v = verbs[0]
        # "what language is spoken in X", "which films can be described by X": a copula and a participle
        passive = aux is not None and bool(COPULAS & set(before[aux:v])) and (_past_participle(before[v])
                                                                              or before[v + 1:v + 2] == ["by"])
        # "what kind of language do they speak in X": the verb has a subject of its own, the answer is its object
        own_subject = (aux is not None and before[aux] not in COPULAS
                       and any(t not in AUXILIARIES for t in before[aux + 1:v]))
        transitive = own_subject or v == len(before) - 1
        return AskedRole(before[v], not own_subject, passive, transitive)
    if aux is None:
        return None
    after = [t for t in tokens[x + 1:] if t != PLACEHOLDER]
    if after[:1] == ["s"]:  # "what is X's father": a noun of X's, no verb
        return None
    verb = next((i for i, t in enumerate(after) if _verb(t)), None)
    if verb is None:  # "what does X eat", "who was X written by": X is the subject
        return None
    passive = (before[aux] in COPULAS and _past_participle(after[verb])) or after[verb + 1:verb + 2] == ["by"]
    transitive = after[verb + 1:verb + 2] == [] or after[verb + 1] not in PREPOSITIONS
    return AskedRole(after[verb], False, passive, transitive)


def _relation_voice(words: Sequence[str], i: int, asked: AskedRole) -> tuple[bool, int] | None:
    """Whether a relation says its verb (the i-th word) in the passive, and which end of an edge is that verb's
    subject: `Eats`, `wrote`, `athlete plays for team` active with the head as subject; `was written by`, `lent by`,
    `born in` (a participle only) passive with the head as subject; Freebase's `languages spoken`, `works written`
    (a participle after its noun, at the end) passive with the tail as subject. A form that is past tense too
    before a preposition (`invested in`, `served in`) is said as the question says it, where the question's verb
    takes a preposition too ("who invested in X"); where it takes its object straight ("what does X serve", "what
    can I make with X") the relation's form is its participle (`served at`, `made with`: the dish is served)
    None for a participle before "to" (`lent to`): the tail is who received it."""
    from lemminflect import getAllLemmas, getInflection

    word, after = words[i], (words[i + 1] if i + 1 < len(words) else None)
    if "by" in words[i + 1:]:
        return True, HEAD
    if not _past_participle(word):
        return False, HEAD
    if after is None:
        return (True, TAIL) if i > 0 else (False, HEAD)
    if after == "to":
        return None
    if after in PREPOSITIONS:
        past_tense = any(word in getInflection(lemma, "VBD") for lemma in getAllLemmas(word).get("VERB", ()))
        return (asked.passive or asked.transitive, HEAD) if past_tense else (True, HEAD)
    return False, HEAD


def voice_directions(tokens: Sequence[str], relation_texts: Sequence[str]) -> dict[int, int]:
    """Relations named by the verb a question asks about (`asked_role`), with the direction a step along each must
    take from X to reach the end asked for (`_relation_voice`). Said alike (both active or both passive), the
    question's subject is the relation's; said otherwise ("who wrote X" over `was written by`), the question's
    subject is the relation's other end. "What eats X" is `<Eats`, "what does X eat" `Eats>`; "who wrote X"
    `<wrote` or `was written by>`; "which countries speak X" `<languages spoken`. Relations that read the same both
    ways (`married`, `borders`) have no direction."""
    from gretriever_neo4j.reader.kinship import BOTH_WAYS

    role = asked_role(tokens)
    if role is None:
        return {}
    verb, subject_asked, asked_passive = role.verb, role.subject_asked, role.passive

    def said(word: str) -> bool:
        # the verb or one of its family ("feed on" / `Eats`), not one that says it from the other end ("which
        # company employs X" over `works for`)
        if (word_lemmas(verb) | word_lemmas(word)) & CONVERSE_VERBS:
            return bool(word_lemmas(verb) & word_lemmas(word))
        return stem_match(verb, word) or bool(word_lemmas(verb) & word_lemmas(word))

    out = {}
    for r, text in enumerate(relation_texts):
        words = own_name(text).lower().split()
        if any(word_lemmas(w) & BOTH_WAYS for w in words):
            continue
        # the relation's word must be a verb there (`_verb_at`): `team coach` is the team's coach
        named = next((i for i, w in enumerate(words) if _verb_at(words, i) and said(w)), None)
        if named is None:
            continue
        voice = _relation_voice(words, named, role)
        if voice is None:
            out[r] = BACKWARD  # `lent to`: from the thing lent, neither who lent it nor what was lent
            continue
        passive, subject = voice
        end = subject if subject_asked == (passive == asked_passive) else 1 - subject
        out[r] = BACKWARD if end == HEAD else FORWARD
    return out


def role_directions(tokens: Sequence[str], relation_texts: Sequence[str]) -> dict[int, int]:
    """Relations that name their head by a role and its preposition (`is a sequel to`, `is the translator of`), with
    the direction the question asks them in: "the sequel to X" has X at the tail (backward), "which book is X a
    sequel to" at the head (forward)."""
    tokens = list(tokens)
    if PLACEHOLDER not in tokens:
        return {}
    x = tokens.index(PLACEHOLDER)
    out = {}
    for r, text in enumerate(relation_texts):
        _, core = without_copula(humanize_relation(text).lower().split())
        if (len(core) < 2 or core[-1] not in PREPOSITIONS | {"of"} or not core[-2].isalpha()
                or core[-2] in FUNCTION_WORDS or _verb_form(core[-2])):  # a role: "sequel", "translator"
            continue
        if not names_its_head(text):
            continue
        role, preposition = word_lemmas(core[-2]), core[-1]
        said = [i for i, t in enumerate(tokens[:-1]) if word_lemmas(t) & role and tokens[i + 1] == preposition]
        if said:
            out[r] = BACKWARD if said[0] < x else FORWARD
    return out


def agents_named(noun: str, relation_texts: Sequence[str]) -> set[int]:
    """Relations whose text names its head with a verb (`names_its_head`: "plays for", "author of", NELL's `athlete
    plays for team`) of which `noun` is the doer ("players", "authors"): their heads are what the noun asks for."""
    lemmas = word_lemmas(noun)
    return {r for r, text in enumerate(relation_texts)
            if names_its_head(text) and any(lemmas & word_lemmas(w) and (i == 0 or _verb_form(w))
                                            for i, w in enumerate(own_name(text).lower().split()))}

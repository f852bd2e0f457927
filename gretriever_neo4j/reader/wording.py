"""How the question's words name relations, for the zero-shot reader (`coverage`): which words can name one
(`content_words`), which noun a "which"/"what" question asks for (`wh_head`), where a word and a relation's own name
share a stem, a small family of words or a pair of roles (`same_stems`), idioms said plainly (`plain_words`), and the
question forms that ask for X's origin or identity (`asks_origin`, `asks_identity`). Which side of a relation a
question asks for is `sides`. Pure functions of texts: a dictionary (lemminflect) but no embedder.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

import numpy as np

from gretriever_neo4j.language import WORDS
from gretriever_neo4j.reader.tuning import TUNING
from gretriever_neo4j.retrieval.linking import STOP_WORDS, analyzer_tokens
from gretriever_neo4j.retrieval.naming import asked_kind, common_prefix, word_lemmas
from gretriever_neo4j.retrieval.relation_paths import CATEGORY_WORDS, FORWARD
from gretriever_neo4j.retrieval.texts import ABBREVIATIONS, own_name, spelled_out

Step = tuple[int, int]
PLACEHOLDER = "x"  # what `mask_question` puts where the question names its anchors
WHO = WORDS.who
WHERE = WORDS.where
WHEN = WORDS.when
TIME_WORDS = WORDS.time_words
PREPOSITIONS = WORDS.prepositions
STEM = TUNING.stem  # letters two words share at their start (or a long word holds) to share a stem
# Words that name one kind of relation without sharing a stem, where the embedder does not see it ("describe" /
# `has tags`, "parents" / `is the mother of`)
WORD_FAMILIES = WORDS.families
ROLE_WORD = WORDS.role_word  # what a relation named by a verb and "as" (`worked as`) says its head is
# Roles that come in pairs: a question may ask for one side of a relation named by the other ("who were X's doctoral
# students" over `doctoral advisor`). Such a word names the relation backwards: the answer is the node on the other
# side of the edge from the role the relation names (the head where its text names its head, "parent of"; else the
# tail).
INVERSE_ROLES = WORDS.inverse_roles
ORIGIN_WORD = WORDS.origin_word  # a function word that names a relation in a "where … from" question (`asks_origin`)
ORIGIN_VERBS = WORDS.origin_where_words
COMING = WORDS.coming
IDENTITY_WORD = WORDS.identity_word  # what "who is X" asks, where X has a profession or occupation (`asks_identity`)
IDENTITY_WHAT = WORDS.identity_what  # "what did X do (for a living)", "what was X known for"
# What contains places names `located in` (not one another: a state is no country), and a city does not
CONTAINERS = WORDS.containers
LOCATED = WORDS.located
PLACE_KINDS = WORDS.place_kinds  # the nouns of "which N" that ask for a place
FUNCTION_WORDS = STOP_WORDS - WORDS.naming_function_words  # "about" names something: what a thing is about


def content_words(masked_question: str, keep: frozenset[str] = frozenset()) -> list[str]:
    """The question's words that can name a relation: not function words (`FUNCTION_WORDS`) unless in `keep`, not
    the anchors' placeholder."""
    return [w for w in analyzer_tokens(masked_question)
            if (w not in FUNCTION_WORDS or w in keep) and w != PLACEHOLDER]


def asks_origin(masked_question: str, signatures: Sequence[Sequence[Step]], relation_texts: Sequence[str]) -> bool:
    """"where is X from", "where did X come from": a "where" question that says nothing but "from" (and "come",
    "originally") asks for X's origin, where X has one a step away (a place of birth, an origin, a hometown:
    `WORD_FAMILIES`); so does "from" after a verb of coming anywhere ("which characters come from X"), where some
    walk has such a relation, and X is what they come from. Not "where did X graduate from" (its school), nor where X
    is a language or a people with no origin of its own ("where did the Flemish come from" is no member's
    birthplace)."""
    tokens = analyzer_tokens(masked_question)
    if ORIGIN_WORD not in tokens:
        return False
    if WHERE & set(tokens[:3]):
        return set(content_words(masked_question)) <= ORIGIN_VERBS and _names_a_step(ORIGIN_WORD, signatures,
                                                                                      relation_texts)
    # "which characters come from X": a verb of coming, its "from" and X, the origin (not "what country does X come
    # from", which asks for X's country)
    if not any(word_lemmas(a) & COMING and b == ORIGIN_WORD and c == PLACEHOLDER
               for a, b, c in zip(tokens, tokens[1:], tokens[2:])):
        return False
    named = same_stems([ORIGIN_WORD], relation_texts, frozenset({ORIGIN_WORD}))[0]
    return any(named[int(r)] for signature in signatures for r, _ in signature)


def asks_identity(masked_question: str, signatures: Sequence[Sequence[Step]], relation_texts: Sequence[str]) -> bool:
    """"who is X", "who was X": a question of nothing but "who" and X asks what X is, which for someone with a
    profession or occupation a step away is that ("who is Angelina Jolie": an actress, not "Female"); so do
    "what was X", "what did X do (for a living)", "what was X known for" (`IDENTITY_WHAT`)."""
    tokens = analyzer_tokens(masked_question)
    if not (tokens[:1] and PLACEHOLDER in tokens):
        return False
    said = set(content_words(masked_question))
    if not ((tokens[0] in WHO and not said) or (tokens[0] == "what" and said <= IDENTITY_WHAT)):
        return False
    return _names_a_step(IDENTITY_WORD, signatures, relation_texts)


# What a relation to a thing's class is named by: `IsA`, `instance of`, `rdf:type`, `subclass of`, Freebase's
# `notable types`; a copula and an article alone (`is a`) say it too
CLASS_WORDS = WORDS.class_names
CLASS_QUESTION = re.compile(r"^what (?:(?:kind|type|sort|category|class)s? of \w+ )?(?:is|are|was|were) "
                            r"(?:(?:a|an|the) )?x(?: (?:exactly|really|actually))?$")


def asks_class(masked_question: str) -> bool:
    """"what is X", "what is a X exactly", "what kind of creature is X", "what type of thing was X": the question
    asks what X is, its class, and says nothing else."""
    return bool(CLASS_QUESTION.match(" ".join(analyzer_tokens(masked_question))))


def class_relations(relation_texts: Sequence[str]) -> np.ndarray:
    """(R,) bool: relations from a thing to its class (`CLASS_WORDS`; `is a`, `is an`)."""
    out = np.zeros(len(relation_texts), dtype=bool)
    for r, text in enumerate(relation_texts):
        words = own_name(text).lower().split()
        while len(words) > 1 and words[-1] == "of":  # `instance of`, `subclass of`; not `classes taught`
            words = words[:-1]
        out[r] = bool(words) and (bool(word_lemmas(words[-1]) & CLASS_WORDS) or words[-1] in CLASS_WORDS
                                  or words in (["is", "a"], ["is", "an"]))
    return out


def _names_a_step(word: str, signatures: Sequence[Sequence[Step]], relation_texts: Sequence[str]) -> bool:
    """Whether `word` names (`same_stems`) the relation of some one-step forward signature: the anchor has such a
    relation itself."""
    named = same_stems([word], relation_texts, frozenset({word}))[0]
    return any(len(signature) == 1 and signature[0][1] == FORWARD and named[int(signature[0][0])]
               for signature in signatures)


def anchor_sides(masked_question: str) -> list[int]:
    """For each of `content_words`: -1 if it stands before the anchors' first placeholder, +1 right after a
    placeholder and only a noun ("X actors": the actors of X; lemminflect's parts of speech), 0 otherwise."""
    from lemminflect import getAllLemmas

    sides, side, previous = [], -1, None
    for token in analyzer_tokens(masked_question):
        if token == PLACEHOLDER:
            side = 0
        elif token not in FUNCTION_WORDS:
            owned = previous == PLACEHOLDER and set(getAllLemmas(token)) == {"NOUN"}
            sides.append(1 if owned else side)
        previous = token
    return sides


def wh_head(tokens: Sequence[str]) -> int | None:
    """The index of the noun a "which"/"what" question opens with ("which *city* was X born in", "in what *year*
    …", "what type of *music* did X play": `naming.asked_kind`): the kind of thing asked for, or None."""
    head = asked_kind(tokens)
    return None if head is None or tokens[head] in FUNCTION_WORDS or tokens[head] == PLACEHOLDER else head


def possessed_word(tokens: Sequence[str], words: Sequence[str]) -> int | None:
    """The index among the content `words` of the noun right after "X's" ("where were X's *children* born"), or
    None."""
    for i, token in enumerate(tokens[:-2]):
        if token == PLACEHOLDER and tokens[i + 1] == "s" and tokens[i + 2] not in FUNCTION_WORDS:
            index = sum(1 for t in tokens[:i + 2] if t not in FUNCTION_WORDS and t != PLACEHOLDER)
            return index if index < len(words) and words[index] == tokens[i + 2] else None
    return None


def word_grams(words: Sequence[str]) -> list[str]:
    """Words and adjacent pairs ("release year", "acted by" read better as pairs than word by word)."""
    return list(words) + [f"{a} {b}" for a, b in zip(words, words[1:])]


def same_stems(texts: Sequence[str], relations: Sequence[str], keep: frozenset[str] = frozenset()) -> np.ndarray:
    """(T, R) 1 where a word of the text and a word of the relation share a stem ("director" and "directed",
    "screenwriter" and "written"): the embedder rates such pairs low (MiniLM: "screenwriter" / "written by"
    barely above "screenwriter" / "in language"), and a shared stem is the surest sign that a word names a
    relation. Only the relation's own name counts, not the domain and type a Freebase name starts with
    ("location.location.containedby": "located" names every location relation), and "what type of …" asks
    for a category, it does not name `notable types`."""
    out = np.zeros((len(texts), len(relations)), np.float32)
    relation_words = [_own_words(r) for r in relations]
    for t, text in enumerate(texts):
        for word in content_words(text, keep):
            if word in CATEGORY_WORDS:
                continue
            for r, parts in enumerate(relation_words):
                if any(stem_match(word, part) for part in parts):
                    out[t, r] = 1.0
    return out


@lru_cache(maxsize=65_536)
def _own_words(relation_text: str) -> tuple[str, ...]:
    """The words of a relation's own name that can name it, and `ROLE_WORD` for a verb and "as"."""
    from lemminflect import getAllLemmas

    words = own_name(relation_text).lower().split()
    role = len(words) == 2 and words[1] == "as" and "VERB" in getAllLemmas(words[0])
    return tuple(content_words(" ".join(words)) + ([ROLE_WORD] if role else []))


def asks_for_a_time(tokens: Sequence[str], head: int | None) -> bool:
    """"when …", "what year …", "what is X's date of birth", "X's birthday" (a time word right after X), and "the
    publication date of X" (a time word of something)."""
    if WHEN & set(tokens[:3] + tokens[-1:]) or (head is not None and tokens[head] in TIME_WORDS):
        return True
    if any(t in TIME_WORDS and after == "of" for t, after in zip(tokens, tokens[1:])):  # "the publication date of X"
        return True
    return any(t == PLACEHOLDER and (rest[:1] and rest[0] in TIME_WORDS or rest[:2] and rest[0] == "s"
                                     and rest[1:2] and rest[1] in TIME_WORDS)
               for i, t in enumerate(tokens) for rest in [tokens[i + 1:i + 3]])


# Idioms whose words name nothing the embedder sees, said plainly ("laid to rest": buried)
IDIOMS = WORDS.idioms
# A question may use a column header's abbreviation itself ("what is X's dob")
ABBREVIATED = re.compile(r"\b(?:" + "|".join(sorted(ABBREVIATIONS, key=len, reverse=True)) + r")\b", re.IGNORECASE)


# What may stand before a title said with X's name ("who were *king* X's children", "where did *the band* X form")
ARTICLES = WORDS.articles
TITLE_OPENERS = ARTICLES | WORDS.auxiliary_openers
# Nouns before X that say what is asked of X's name, not what X is: "where does the *name* X come from"
NAME_NOUNS = WORDS.name_nouns


def untitled(masked_question: str) -> str:
    """The question without a title or kind said right before X ("who were king X children", "where did the band X
    form", "where is the city X"): it says what X is, not what is asked, and it would name a relation ("king" /
    `royalty.monarch.kingdom`: the kingdom of X's children). Only a singular noun (not an adjective: "the capital X")
    right after an auxiliary or after one and an article ("who plays X" keeps its verb)."""
    from lemminflect import getAllLemmas

    words = masked_question.split()
    at = next((i for i, w in enumerate(words) if w == PLACEHOLDER.upper()), None)
    if at is None or at < 2:
        return masked_question
    title, before = words[at - 1].lower(), words[at - 2].lower()
    # the subject after an auxiliary ("did the band X form"), not a clause's noun ("the hometown of the band X
    # plays in": the band X is in)
    if before in ARTICLES and (at < 3 or words[at - 3].lower() not in WORDS.auxiliary_openers):
        return masked_question
    lemmas = getAllLemmas(title)
    # a plural is the noun of a clause about X ("the movies X has been in"); after "what", "which", "kind of" the
    # noun is the one asked for ("what language X speaks", "what kind of guitar X plays")
    if (not title.isalpha() or title in FUNCTION_WORDS | NAME_NOUNS or "NOUN" not in lemmas or "ADJ" in lemmas
            or lemmas["NOUN"][0] != title or before not in TITLE_OPENERS):
        return masked_question
    return " ".join(words[:at - 1] + words[at:])


def plain_words(masked_question: str) -> str:
    """The question with its `IDIOMS` said plainly and its abbreviations spelled out as a relation's are ("X's dob":
    `texts.ABBREVIATIONS`)."""
    for pattern, plain in IDIOMS:
        masked_question = pattern.sub(plain, masked_question)
    return ABBREVIATED.sub(lambda m: spelled_out(m.group(0), set()), masked_question)


def stem_match(a: str, b: str) -> bool:
    if a == b:  # "what art did X do" / `art forms`: a word too short for a stem is still the relation's word
        return True
    lemmas_a, lemmas_b = word_lemmas(a), word_lemmas(b)
    if any(lemmas_a & family and lemmas_b & family for family in WORD_FAMILIES):  # "describe" / `has tags`
        return True
    if inverse_roles(lemmas_a, lemmas_b):  # "students" / `doctoral advisor`, "sons" / `is the father of`
        return True
    if len(a) < STEM or len(b) < STEM:
        return False
    if lemmas_a & lemmas_b:  # "wrote" / `written`, "spoken" / "speak": no shared prefix
        return True
    if (lemmas_a & CONTAINERS and lemmas_b & LOCATED) or (lemmas_a & LOCATED and lemmas_b & CONTAINERS):
        return True
    # A stem is most of the shorter word ("director" / `directed`, "home" / `home ground`), not any four letters
    # ("companies" does not name `competes with`); a compound holds a whole lemma
    # ("screenwriter" / `written by`: write).
    common = common_prefix(a, b)
    return (common >= max(STEM, min(len(a), len(b)) - 2)
            or any(len(lemma) >= STEM and lemma in b for lemma in lemmas_a if len(b) > len(lemma))
            or any(len(lemma) >= STEM and lemma in a for lemma in lemmas_b if len(a) > len(lemma)))


def inverse_roles(lemmas_a: frozenset[str], lemmas_b: frozenset[str]) -> bool:
    return any((lemmas_a & one and lemmas_b & other) or (lemmas_a & other and lemmas_b & one)
               for one, other in INVERSE_ROLES)


@lru_cache(maxsize=65_536)
def modifies(noun: str, relation_text: str) -> bool:
    """Whether `noun` is only the modifier in a relation named by a compound noun (`questGiver`, `album content
    type`): it stands before the name's last word, a noun that is not it. Names with "of" ("place of birth") put
    their head first and are not compounds."""
    from lemminflect import getAllLemmas

    parts = content_words(own_name(relation_text).lower())
    if len(parts) < 2 or "of" in own_name(relation_text).lower().split():
        return False
    last = parts[-1]
    lemmas = getAllLemmas(last)  # "giver" is in no dictionary: a noun still
    return ((not lemmas or "NOUN" in lemmas) and not stem_match(noun, last)
            and any(stem_match(noun, part) for part in parts[:-1]))


def asks_for_a_place(tokens: Sequence[str], head: int | None) -> bool:
    """"which city …", "in which country …": the which-noun (`wh_head`) is a kind of place (`PLACE_KINDS`)."""
    return head is not None and bool(word_lemmas(tokens[head]) & PLACE_KINDS)


def located_relations(relation_texts: Sequence[str]) -> np.ndarray:
    """(R,) bool: relations of containment, named like `located in`, Freebase's `containedby`, `contains`, or by a
    noun for what contains places (`country`: `CONTAINERS`)."""
    return same_stems(["located"], relation_texts)[0].astype(bool)


@lru_cache(maxsize=65_536)
def happens_in(relation_text: str) -> bool:
    """A relation named by a verb and "in" (`born in`, `lives in`, `is located in`): what it points at is a place
    something is, or happens, in: a town, a country (`at` points at a venue: `served at`, `buried at`)."""
    from lemminflect import getAllLemmas

    words = own_name(relation_text).lower().split()
    return len(words) >= 2 and words[-1] == "in" and "VERB" in getAllLemmas(words[-2])


def word_family(word: str) -> str | int:
    """The `WORD_FAMILIES` index a word belongs to, else the word itself."""
    lemmas = word_lemmas(word)
    return next((i for i, family in enumerate(WORD_FAMILIES) if lemmas & family), word)


def head_word_index(tokens: Sequence[str], words: Sequence[str], head: int | None) -> int | None:
    """`wh_head`'s `head` as an index into the question's content words."""
    if head is None or tokens[head] in CATEGORY_WORDS:
        return None
    index = sum(1 for t in tokens[:head] if t not in FUNCTION_WORDS and t != PLACEHOLDER)
    return index if index < len(words) and words[index] == tokens[head] else None



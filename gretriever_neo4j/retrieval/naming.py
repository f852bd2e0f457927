"""Words and names: how linking and the zero-shot reader decide that a word of a question is a name's word, or
names a relation.

Lemmas come from lemminflect's English dictionary ("spoken" -> speak, "countries" -> country, "wrote" -> write):
a question's "speak" is `languages_spoken`'s word though no prefix is shared, and MiniLM rates such pairs barely
above unrelated ones.
"""

from __future__ import annotations

import functools
import os
import re
import unicodedata
from collections.abc import Iterable, Sequence

from gretriever_neo4j.language import WORDS
from gretriever_neo4j.retrieval.texts import own_name
from gretriever_neo4j.retrieval.tuning import LINKING

STOP_WORDS = WORDS.stop  # function words that never name an entity on their own

_WORD = re.compile(r"[^\W_]+", re.UNICODE)


def analyzer_tokens(text: str) -> tuple[str, ...]:
    """Lower-cased letter/digit runs: close to what Lucene's standard analyzer indexes, and the unit in which
    names and mentions are compared."""
    return tuple(match.group(0).lower() for match in _WORD.finditer(text))


# Words that names abbreviate ("St. Paul") and questions write either way: compared in the short form (`title_form`)
NAME_ABBREVIATIONS = WORDS.name_abbreviations
_EXPANSIONS = {short: long_ for long_, short in NAME_ABBREVIATIONS.items()}


def title_form(tokens: tuple[str, ...]) -> tuple[str, ...]:
    """Analyzer tokens with "saint", "mount", "fort" abbreviated: `Saint Paul` and "st paul" compare equal."""
    return tuple(NAME_ABBREVIATIONS.get(t, t) for t in tokens)


def other_spelling(tokens: tuple[str, ...]) -> str | None:
    """The mention with its abbreviations written out and its written-out words abbreviated ("st paul" -> "saint
    paul"), to look up by name as well; None where it has neither."""
    if not any(t in _EXPANSIONS or t in NAME_ABBREVIATIONS for t in tokens):
        return None
    return " ".join(_EXPANSIONS.get(t) or NAME_ABBREVIATIONS.get(t) or t for t in tokens)


def same_word(a: str, b: str) -> bool:
    """Equal, or one a prefix of the other with at least 4 letters ("jamaica" / "jamaican")."""
    if a == b:
        return True
    short, long_ = (a, b) if len(a) <= len(b) else (b, a)
    return len(short) >= 4 and long_.startswith(short)


SUFFIX = LINKING.derived_suffix


def says_word(word: str, name_word: str) -> bool:
    """Whether a question's word says a word of a name: the same word, a short form of it ("shaq" / `Shaquille`,
    4 letters or more), or a form derived from it by a suffix of at most `SUFFIX` letters ("jamaican" / `Jamaica`);
    not a longer word that merely starts with it ("vicksburg" does not say `Vick`: "the battle of vicksburg" had
    linked `Michael Vick`)."""
    if word == name_word:
        return True
    if len(word) < len(name_word):
        return len(word) >= 4 and name_word.startswith(word)
    return len(name_word) >= 4 and len(word) - len(name_word) <= SUFFIX and word.startswith(name_word)


def holds_word(name: str, word: str, last: bool = False) -> bool:
    """Whether the name is of one thing of the kind `word` says: one of its words is `word` in the singular, beside
    other content words ("Quillon Language Lab" holds "labs", "Department of Mirror Linguistics" "department";
    "Plantation Row" does not hold "plant", nor the groups "Nordic countries" "country", nor `Celebrity` itself);
    `last`: as its last word, a kind of that thing ("Rock music", "Pop art"; not "Government of Canada")."""
    tokens = analyzer_tokens(name)
    if sum(t not in STOP_WORDS for t in tokens) < 2 or name.islower():  # a tag ("hammer film productions") names none
        return False
    wanted = _singular_forms(word)
    return tokens[-1] in wanted if last else any(t in wanted for t in tokens)


@functools.lru_cache(maxsize=4096)
def _singular_forms(word: str) -> frozenset[str]:
    """The word's singular forms ("labs" -> lab; "cities" -> city), not the plural itself: asked once per node."""
    from lemminflect import getAllLemmas

    singular = word[:-1] if word.endswith("s") and not word.endswith("ss") else word
    return frozenset({singular, *getAllLemmas(word).get("NOUN", ())} - ({word} if singular != word else set()))


def relation_name_words(relation_texts: Iterable[str]) -> frozenset[str]:
    """The words of relations' own names (Freebase's `location.country.languages_spoken` gives "languages",
    "spoken": its domain and type are classes, not what the relation says)."""
    words: set[str] = set()
    for text in relation_texts:
        words.update(t for t in analyzer_tokens(own_name(text)) if t not in STOP_WORDS)
    return frozenset(words)


@functools.lru_cache(maxsize=65536)
def names_a_relation(tokens: tuple[str, ...], relation_words: frozenset[str]) -> bool:
    """The mention's word shares a lemma ("speak" / `spoken`, "countries" / `country`) or most of its stem
    ("director" / `directed`; "seattle" does not name `seats`) with a word of a relation's name; a mention of
    several words must share a lemma word by word ("official language"; "dolly parton" does not name `dolls`,
    `part of`). Cached: linking asks it of the same mentions when ordering, keeping and guessing."""
    content = [t for t in tokens if t not in STOP_WORDS]
    if not content or not relation_words:
        return False
    if len(content) == 1:
        return any(_shares_stem(content[0], w) for w in relation_words)
    return all(any(word_lemmas(t) & word_lemmas(w) for w in relation_words) for t in content)


@functools.lru_cache(maxsize=65536)
def word_lemmas(word: str) -> frozenset[str]:
    """The word, its English lemmas under every part of speech ("spoken" -> speak, "countries" -> country,
    "wrote" -> write; lemminflect's dictionary) and, for an agent noun or an action noun, its verb ("writers"
    -> write, "director" -> direct, "inventions" -> invent)."""
    from lemminflect import getAllLemmas

    lemmas = {word, *(lemma for found in getAllLemmas(word).values() for lemma in found)}
    for lemma in list(lemmas):
        if len(lemma) > 5 and lemma.endswith(("er", "or")):
            lemmas.update({lemma[:-2], lemma[:-2] + "e", lemma[:-1]})
        if len(lemma) > 6 and lemma.endswith("ion"):  # "inventions" -> invent, "creation" -> create
            lemmas.update({lemma[:-3], lemma[:-3] + "e"})
    return frozenset(lemmas)


def common_prefix(a: str, b: str) -> int:
    """How many letters two words share at their start."""
    return len(os.path.commonprefix([a, b]))


def _shares_stem(word: str, other: str) -> bool:
    if word == other or word_lemmas(word) & word_lemmas(other):
        return True
    common = common_prefix(word, other)
    return common >= 4 and common >= len(word) - 2 and common >= len(other) - 3


def initials(text: str) -> str:
    """The first letters of a name's content words ("National Rifle Association" -> "nra", "United States of
    America" -> "usa"); "" for a name of fewer than two content words."""
    content = [t for t in analyzer_tokens(fold_accents(text)) if t not in STOP_WORDS]
    return "".join(t[0] for t in content) if len(content) >= 2 else ""


_ACRONYM = re.compile(r"[a-z]{2,6}")


def is_a_noun(word: str) -> bool:
    """The dictionary knows the word as a noun ("panda", "football"; not "tupac", "picasso")."""
    from lemminflect import getAllLemmas

    return "NOUN" in getAllLemmas(word)


def may_be_acronym(word: str) -> bool:
    """A short word in no dictionary ("nra", "uk", "nafta"; not "us", "cars"): it may stand for a longer name."""
    from lemminflect import getAllLemmas

    return bool(_ACRONYM.fullmatch(word)) and word not in STOP_WORDS and not getAllLemmas(word)


WH_DETERMINERS = WORDS.wh_determiners
QUESTION_WORDS = WORDS.question_words
_KIND_WORDS = WORDS.kind_nouns


# Verbs that follow the noun a "which …" question asks for: "which *lab* does X work in" makes "lab" (in no
# dictionary) that noun.
AUXILIARIES = WORDS.auxiliary_openers


def asked_kind(tokens: Sequence[str]) -> int | None:
    """The position of the common noun a "what"/"which" question asks for ("what *guitar* does …", "what type of
    *cancer* did …", "in which *city* …", "which *lab* does …"), or None: a word in the dictionary as a noun right
    after the determiner (after "kind of" / "type of" when said), or a word in no dictionary there that an
    auxiliary follows, among the question's first three words (anywhere, where none of those is a question word)."""
    from lemminflect import getAllLemmas

    # A question that opens with none says its "which N" later ("X is a version of which dish", "the films by X were
    # released in which years"); one that opens with "who"/"where" has a relative "which" later, not the asked kind.
    opening = tokens[:3] if QUESTION_WORDS & set(tokens[:3]) else tokens
    for i, token in enumerate(opening):
        if token not in WH_DETERMINERS:
            continue
        j = i + 1
        if j + 1 < len(tokens) and tokens[j] in _KIND_WORDS and tokens[j + 1] == "of":
            j += 2
        if j < len(tokens) and tokens[j] not in STOP_WORDS and (
                is_a_noun(tokens[j]) or (j + 1 < len(tokens) and tokens[j + 1] in AUXILIARIES
                                         and not getAllLemmas(tokens[j]))):
            return j
        return None
    return None


def fold_accents(text: str) -> str:
    """"Agüero" -> "Aguero": questions are typed without the accents names are stored with."""
    return "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))


def name_overlap(name: str, question_words: Sequence[str]) -> float:
    """The share of a name's content words that the question says (accents folded, "saint" as "st"; the same word,
    a shared lemma, or a short or derived form: `says_word`): "romney" says `Mitt Romney` half, "carpathian
    mountain" says `Carpathian Mountains` whole, "saint george day" `St George's Day` whole (a possessive's "s" is
    no word). An initial stays a word of the name that no question word says ("copernicus" is not the "C." of
    `Robert C. Nicholas`)."""
    words = [fold_accents(w) for w in title_form(tuple(question_words))]
    content = [fold_accents(t) for t in title_form(analyzer_tokens(name)) if t not in STOP_WORDS and t != "s"]
    if not content:
        return 0.0
    return sum(any(says_word(w, t) or word_lemmas(t) & word_lemmas(w) for w in words) for t in content) / len(content)


def is_kin(word: str) -> bool:
    """Whether the word is a family word ("parents", "married", "wife"): a step along a relation it names is a
    family step."""
    return bool(word_lemmas(word) & WORDS.kin)


def is_family_relation(relation_text: str) -> bool:
    """Whether a word of the relation's own name is a family word (`people.person.parents`, `child`, `spouse`)."""
    return any(is_kin(w) for w in own_name(relation_text).lower().split())


def says_sex(relation_text: str) -> bool:
    """Whether the relation says a person's sex (`gender`, `sex`, `people.person.gender`)."""
    return bool(set(own_name(relation_text).lower().split()) & WORDS.sex_relations)


def family_steps(word: str) -> str | None:
    """The sex a family word asks of the person at each of its steps, nearest X first ("M", "F", "-" for either:
    "grandfather" -> "-M", "great-grandmother" -> "--F", "daughters" -> "F"); None for a word that is no family
    word."""
    word = re.sub(r"'s?$", "", word)
    greats = 0
    while word.startswith("great"):
        word, greats = word.removeprefix("great-").removeprefix("great"), greats + 1
    steps = WORDS.sexed_steps
    found = steps.get(word)
    if found is None:
        found = next((steps[lemma] for lemma in word_lemmas(word) if lemma in steps), None)
    if found is None or (greats and not found.startswith("-")):
        return None
    return "-" * greats + found


def asks_a_sex(question: str) -> bool:
    """Whether the question says a family word of one sex ("dad", "daughters", "paternal grandmother")."""
    return any(set(family_steps(w) or "") & {"M", "F"} for w in re.findall(r"[\w'-]+", question.lower()))


def offered_names(question: str, names: Sequence[str], longest: int = 3) -> list[int]:
    """The names the question offers as a choice: names of at most `longest` words in a list that ends in "or"
    ("is X male or female", "a red or a white grape", "a mammal, bird, reptile or amphibian": the names before the
    last one each followed by a comma, an article before any name allowed), where two or more of its names are
    among `names`, or one of a list of three or more. The answer is one of them, so they are neither what the
    question is about nor left out of the answers. Indices into `names`."""
    from gretriever_neo4j.retrieval.linking import STOP_WORDS, strip_topic_markers

    articles = WORDS.articles
    words = re.findall(r"\w+|,", strip_topic_markers(question).lower())
    if "or" not in words:
        return []
    spans: dict[tuple[int, int], list[int]] = {}
    for i, text in enumerate(names):
        tokens = re.findall(r"\w+", text.lower())
        if not tokens or len(tokens) > longest or all(t in STOP_WORDS for t in tokens):
            continue
        n = len(tokens)
        for start in range(len(words) - n + 1):
            if words[start:start + n] == tokens:
                spans.setdefault((start, start + n), []).append(i)

    def after_article(at: int) -> int:
        return at + 1 if at < len(words) and words[at] in articles else at

    def named_before(end: int) -> tuple[int, int] | None:
        return min((span for span in spans if span[1] == end), default=None)  # the longest name ending there

    out: set[int] = set()
    for k, word in enumerate(words):
        if word != "or" or k == 0:
            continue
        start = after_article(k + 1)
        items = [max((span for span in spans if span[0] == start), key=lambda span: span[1],
                     default=(start, start + 1))]
        end = k
        while end > 0 and words[end - 1] not in (",", "or"):  # an item: a name, or else one word
            item = named_before(end) or (end - 1, end)
            items.append(item)
            begin = item[0] - (item[0] > 0 and words[item[0] - 1] in articles)
            if begin == 0 or words[begin - 1] != ",":
                break
            end = begin - 1
        named = [span for span in items if span in spans]
        if len(named) >= 2 or (named and len(items) >= 3):  # "husband or wife" and a node "Wife" is no choice
            out.update(i for span in named for i in spans[span])
    return sorted(out)

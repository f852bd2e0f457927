import pytest

from gretriever_neo4j.retrieval.naming import (
    asked_kind,
    holds_word,
    initials,
    may_be_acronym,
    name_overlap,
    names_a_relation,
    offered_names,
    other_spelling,
    relation_name_words,
    says_word,
    title_form,
    word_lemmas,
)


def test_relation_name_words_take_the_relations_own_name():
    words = relation_name_words(["location.country.languages_spoken", "directed_by", "people.person.place_of_birth"])
    assert words == {"languages", "spoken", "directed", "place", "birth"}  # not "location", "country", "person"


@pytest.mark.parametrize("mention, named", [
    (("language",), True), (("countries",), False), (("director",), True), (("directors",), True),
    (("place", "of", "birth"), True),
    (("greece",), False), (("place", "greece"), False), (("seattle",), False), (("of",), False)])
def test_names_a_relation_needs_every_content_word_to_share_most_of_a_stem(mention, named):
    words = relation_name_words(["location.country.languages_spoken", "directed_by", "place_of_birth", "seats"])
    assert names_a_relation(mention, words) is named


def test_name_overlap_folds_accents_and_shares_lemmas():
    assert name_overlap("Sergio Agüero", ["team", "aguero", "play"]) == 0.5
    assert name_overlap("Carpathian Mountains", ["carpathian", "mountain", "range"]) == 1.0
    assert name_overlap("Jamaica", ["jamaican", "people"]) == 1.0  # a prefix of 4 letters or more
    assert name_overlap("The", ["the"]) == 0.0
    assert name_overlap("St George's Day", ["saint", "george", "day", "celebrated"]) == 1.0  # "s" is no word
    assert name_overlap("Michael Vick", ["battle", "vicksburg"]) == 0.0


def test_a_question_word_says_a_short_or_derived_form_of_a_name_word_not_a_longer_word():
    assert says_word("shaq", "shaquille") and says_word("jamaican", "jamaica") and says_word("japanese", "japan")
    assert not says_word("vicksburg", "vick") and not says_word("ben", "benjamin")


def test_word_lemmas_know_irregular_forms_and_agent_nouns():
    assert "speak" in word_lemmas("spoken")
    assert "write" in word_lemmas("wrote") and "write" in word_lemmas("writers")
    assert "direct" in word_lemmas("director")
    assert "invent" in word_lemmas("inventions") and "create" in word_lemmas("creation")
    assert word_lemmas("seattle") == {"seattle"}


@pytest.mark.parametrize("name, expected", [
    ("National Rifle Association", "nra"), ("United States of America", "usa"), ("Ku Klux Klan", "kkk"),
    ("North American Free Trade Agreement", "nafta"), ("Perón, Eva", "pe"), ("Madonna", ""), ("The Who", ""),
])
def test_initials_are_the_first_letters_of_the_content_words(name, expected):
    assert initials(name) == expected


@pytest.mark.parametrize("word, expected", [
    ("nra", True), ("uk", True), ("nafta", True), ("us", False), ("cars", False), ("the", False), ("a", False),
    ("ww2", False), ("government", False),
])
def test_a_short_word_in_no_dictionary_may_be_an_acronym(word, expected):
    assert may_be_acronym(word) is expected


@pytest.mark.parametrize("question, expected", [
    ("what guitar does corey taylor play", "guitar"),
    ("what kind of cancer did carl wilson have", "cancer"),
    ("in which city was she born", "city"),
    ("who plays the guitar", None),
    ("what did einstein discover", None),  # "did" is no noun
    ("which lab does she work in", "lab"),  # in no dictionary, but a verb follows it
    ("which tupac album is best", None),  # a name: no verb follows it
    ("crab chowder is a version of which dish", "dish"),  # said later, where no question word opens it
    ("the films by x were released in which years", "years"),
    ("who directed the films which x wrote", None),  # "who" opens it: a later "which" is a relative
])
def test_asked_kind_is_the_noun_a_what_or_which_question_asks_for(question, expected):
    tokens = question.split()
    found = asked_kind(tokens)
    assert (None if found is None else tokens[found]) == expected


def test_saint_mount_and_fort_compare_abbreviated():
    assert title_form(("saint", "paul")) == title_form(("st", "paul")) == ("st", "paul")
    assert title_form(("mount", "everest")) == ("mt", "everest")
    assert title_form(("paul", "street")) == ("paul", "street")  # only the three words names abbreviate
    assert other_spelling(("st", "lucy")) == "saint lucy"
    assert other_spelling(("fort", "worth")) == "ft worth"
    assert other_spelling(("tom", "hanks")) is None


def test_a_name_holds_a_word_in_its_singular_or_plural():
    assert holds_word("Quillon Language Lab", "labs") and holds_word("Department of Mirror Linguistics", "department")
    assert holds_word("Saltreach City", "cities")
    assert not holds_word("Plantation Row", "plant") and not holds_word("Harthmere", "city")


NAMES = ["Male", "Female", "High", "Elementary", "Mammal", "Reptile", "Red", "White", "Yannick Marrent", "Wife"]


@pytest.mark.parametrize("question, offered", [
    ("is Yannick Marrent male or female", ["Male", "Female"]),
    ("is Oriette a red or a white grape", ["Red", "White"]),
    ("is copperwick preparatory an elementary, middle or high school", ["High", "Elementary"]),
    ("is the bear a mammal, bird, reptile or amphibian", ["Mammal", "Reptile"]),
    ("is it a bird, a reptile or an amphibian", ["Reptile"]),  # one name of three alternatives
    ("who is Yannick Marrent's husband or wife", []),  # two alternatives, one a name: no choice
    ("which province, territory or district is it in", []),
    ("is Yannick Marrent male", []),
    ("male or", []),
])
def test_the_names_a_question_offers_as_a_choice_end_in_or(question, offered):
    assert [NAMES[i] for i in offered_names(question, NAMES)] == sorted(offered, key=NAMES.index)

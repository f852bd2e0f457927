"""Which side of a relation a question asks for (reader/sides.py): relations that name their head, the verb a question
asks about and whether its agent is the answer, a role said before or after X. Pure functions of texts, no embedder."""

from __future__ import annotations

from gretriever_neo4j.reader.sides import asked_role, names_its_head, role_directions, voice_directions, without_copula
from gretriever_neo4j.retrieval.naming import analyzer_tokens
from gretriever_neo4j.retrieval.relation_paths import BACKWARD, FORWARD


def test_a_copula_and_its_article_say_nothing_of_a_relation():
    assert without_copula("is a sequel to".split()) == (True, ["sequel", "to"])
    assert without_copula("was written by".split()) == (True, ["written", "by"])
    assert without_copula("wrote".split()) == (False, ["wrote"])
    # "the head is a sequel to the tail", "is home to": a role, and the head is named; not a verb's "is buried at"
    assert names_its_head("is a sequel to") and names_its_head("is home to")
    assert not names_its_head("was written by") and not names_its_head("is buried at")
    # a verb as written and its preposition, inside a longer name; a verb in the third person alone
    assert names_its_head("athleteplaysforteam") and names_its_head("Eats") and names_its_head("published")
    assert not names_its_head("teamcoach") and not names_its_head("directed_by") and not names_its_head("has_genre")


def test_the_verb_a_question_asks_about_and_which_side_of_it():
    def role(question):
        return asked_role(analyzer_tokens(question))

    assert role("what eats X") == ('eats', True, False, True)
    assert role("which creatures feed on X") == ('feed', True, False, False)
    assert role("what does X eat") == ('eat', False, False, True)
    assert role("which athletes are coached by X") == ('coached', True, True, False)
    assert role("who was X written by") == ('written', False, True, True)
    assert role("name X's players") == ('players', True, False, False)
    assert role("who is the publisher of X") == ('publisher', True, False, False)
    assert role("what is X's father") is None and role("where was X born") is None
    # a copula and a participle: the passive
    assert role("what language is spoken in X") == ('spoken', True, True, False)
    assert role("what city was X born in") == ('born', False, True, False)
    # a verb in a noun's clause is not the question's
    assert role("what is the currency used in X") is None
    assert role("who is the director that directed X") is None
    assert role("who are the actors in the movies written by the writer of X") is None
    assert role("which films can be described by X") == ('described', True, True, False)
    assert role("which countries speak X") == ('speak', True, False, True)
    # a noun, not a verb; a verb with a subject of its own
    assert role("what are the official colors of X") is None
    assert role("what kind of language do they speak in X") == ('speak', False, False, True)


def test_an_active_relation_has_its_agent_at_the_head_a_passive_one_at_the_tail():
    relations = ["Eats", "wrote", "was written by", "lent by", "lent to", "team coach", "married to"]

    def directions(question):
        return {relations[r]: d for r, d in voice_directions(analyzer_tokens(question), relations).items()}

    assert directions("what eats X") == {"Eats": BACKWARD}
    assert directions("what does X eat") == {"Eats": FORWARD}
    assert directions("who wrote X") == {"wrote": BACKWARD, "was written by": FORWARD}
    assert directions("what did X write") == {"wrote": FORWARD, "was written by": BACKWARD}
    # from a loan record: the museum that lent it is the tail of `lent by`, not of `lent to`
    assert directions("which museum lent X") == {"lent by": FORWARD, "lent to": BACKWARD}
    # a noun there (the team's coach) and a relation that reads the same both ways have no direction
    assert directions("who coached X") == {} and directions("who married X") == {}
    # `has tags`: a noun
    assert voice_directions(analyzer_tokens("which films can be described by X"), ["has_tags"]) == {}


def test_a_role_before_x_asks_for_its_head_after_x_for_its_tail():
    relations = ["is a sequel to", "is the translator of", "was written by"]

    def directions(question):
        return {relations[r]: d for r, d in role_directions(analyzer_tokens(question), relations).items()}

    assert directions("what is the sequel to X") == {"is a sequel to": BACKWARD}
    assert directions("which book is X a sequel to") == {"is a sequel to": FORWARD}
    assert directions("who is the translator of X") == {"is the translator of": BACKWARD}
    assert directions("who wrote X") == {}


def test_a_participle_and_a_place_is_what_the_head_undergoes_a_participle_alone_what_it_does():
    relations = ["location.country.languages_spoken", "language.human_language.countries_spoken_in",
                 "location.country.currency_used", "athletebornincity"]

    def directions(question):
        return {relations[r].split(".")[-1]: d for r, d in voice_directions(analyzer_tokens(question),
                                                                             relations).items()}

    # from German: the countries that speak it
    assert directions("which countries speak X officially") == {"languages_spoken": BACKWARD,
                                                                 "countries_spoken_in": FORWARD}
    # from a country: the languages spoken there
    assert directions("what language is spoken in X") == {"languages_spoken": FORWARD,
                                                           "countries_spoken_in": BACKWARD}
    assert directions("which athletes were born in X") == {"athletebornincity": BACKWARD}


def test_a_past_tense_before_a_preposition_is_said_as_the_question_says_it():
    """`invested in`, `served in`, `made-with`: active or passive as the question has it; `born in` is a participle
    only, passive."""
    relations = ["invested in", "served in", "made-with", "born in"]

    def directions(question):
        return {relations[r]: d for r, d in voice_directions(analyzer_tokens(question), relations).items()}

    assert directions("who invested in X") == {"invested in": BACKWARD}
    assert directions("which regiment did X serve in") == {"served in": FORWARD}
    assert directions("what is X made with") == {"made-with": FORWARD}
    assert directions("what city was X born in") == {"born in": FORWARD}
    assert directions("who was born in X") == {"born in": BACKWARD}


def test_a_past_tense_before_a_preposition_is_a_participle_where_the_question_takes_its_object_straight():
    """The kitchen graph's `served-at`, `sold-at`, `made-with`: the dish is served at a restaurant, made with an
    ingredient; "what does X serve" asks for what is served, not for where X is served."""
    relations = ["served-at", "sold-at", "made-with", "invested in"]

    def directions(question):
        return {relations[r]: d for r, d in voice_directions(analyzer_tokens(question), relations).items()}

    assert asked_role(analyzer_tokens("what does X serve")).transitive
    assert not asked_role(analyzer_tokens("which regiment did X serve in")).transitive
    assert directions("what does X serve") == {"served-at": BACKWARD}
    assert directions("what does X sell") == {"sold-at": BACKWARD}
    assert directions("what can I make with X") == {"made-with": BACKWARD}
    assert directions("who invested in X") == {"invested in": BACKWARD}


def test_voice_follows_a_verbs_family_but_not_a_verb_that_says_it_from_the_other_end():
    """"Feed on" is said as `Eats` is; "employs" is in the family of `works for` (it names the relation) but says it
    from the other side: the relation's own verb gives no direction for it."""
    assert voice_directions(analyzer_tokens("which creatures feed on X"), ["Eats"]) == {0: BACKWARD}
    assert voice_directions(analyzer_tokens("which company employs X"), ["works for"]) == {}
    assert voice_directions(analyzer_tokens("who works for X"), ["works for"]) == {0: BACKWARD}

"""How the question's words name relations (reader/wording.py): content words, the which-noun, shared stems, word
families, inverse roles, relations that name their head. Pure functions of texts, no embedder."""

from __future__ import annotations

from gretriever_neo4j.reader.sides import (
    inverse_named,
    names_its_head,
)
from gretriever_neo4j.reader.wording import (
    asks_for_a_time,
    asks_origin,
    content_words,
    plain_words,
    possessed_word,
    same_stems,
    wh_head,
    word_grams,
)
from gretriever_neo4j.retrieval.naming import analyzer_tokens
from gretriever_neo4j.retrieval.relation_paths import BACKWARD, FORWARD


def test_words_the_question_can_name_relations_with():
    assert content_words("who directed the films X acted in") == ["directed", "films", "acted"]
    assert word_grams(["release", "year", "films"]) == ["release", "year", "films", "release year", "year films"]


def test_words_that_share_a_stem_with_a_relations_own_name_name_it():
    relations = ["written_by", "directed_by", "location.location.area", "common.topic.notable_types",
                 "location.location.containedby"]
    found = same_stems(["screenwriter", "director", "located", "type", "release"], relations)
    assert found.tolist() == [[1, 0, 0, 0, 0], [0, 1, 0, 0, 0],
                              [0, 0, 0, 0, 1],  # the domain and type of a Freebase name do not count; its own
                              # name does ("located" / `containedby`: one family, `WORD_FAMILIES`)
                              [0, 0, 0, 0, 0],  # "what type of …" asks for a category
                              [0, 0, 0, 0, 0]]


def test_a_stem_is_most_of_a_word_not_any_four_letters_it_starts_with():
    """"companies" does not name `competes with` (they share "comp"), which had taken "which companies did X found"
    one hop past the answer, to its competitors; stems, compounds and a short word that is the relation's own word
    still name it."""
    relations = ["competes with", "founded by", "directed_by", "written_by", "home_ground", "art_forms",
                 "location.location.containedby", "location.location.contains", "headquartered in"]
    words = ["companies", "founder", "director", "screenwriter", "home", "art", "continent", "based"]
    assert same_stems(words, relations).tolist() == [[0, 0, 0, 0, 0, 0, 0, 0, 0],
                                                    [0, 1, 0, 0, 0, 0, 0, 0, 0],
                                                    [0, 0, 1, 0, 0, 0, 0, 0, 0],
                                                    [0, 0, 0, 1, 0, 0, 0, 0, 0],  # a compound holds "write"
                                                    [0, 0, 0, 0, 1, 0, 0, 0, 0],
                                                    [0, 0, 0, 0, 0, 1, 0, 0, 0],  # three letters, the same word
                                                    [0, 0, 0, 0, 0, 0, 1, 1, 0],  # a container / what contains
                                                    [0, 0, 0, 0, 0, 0, 0, 0, 1]]  # where a company is "based"


def test_border_names_freebase_adjoins():
    """MiniLM rates "border" far from Freebase's `adjoin_s` ("what countries border Argentina" had gone to the
    countries of its form of government)."""
    relations = ["location.location.adjoin_s", "location.adjoining_relationship.adjoins", "location.location.contains"]
    assert same_stems(["border", "borders", "neighbours"], relations).tolist() == [[1, 1, 0], [1, 1, 0], [1, 1, 0]]


def test_words_of_work_name_a_relation_of_work():
    relations = ["works for", "married to", "employer"]
    found = same_stems(["employs", "colleagues", "employer", "spouse"], relations)
    assert found.tolist() == [[1, 0, 1], [1, 0, 1], [1, 0, 1], [0, 1, 0]]  # a spouse is whom one is married to


def test_a_relation_text_says_whether_it_names_its_head():
    assert names_its_head("author of") and names_its_head("memberOf") and names_its_head("works for")
    assert names_its_head("organization.organization_member.member_of")
    for text in ("directed_by", "starred_actors", "has_genre", "in_language", "people.person.place_of_birth", "of"):
        assert not names_its_head(text), text


def test_the_noun_a_which_question_opens_with():
    assert wh_head(analyzer_tokens("in which city was X born")) == 2
    assert wh_head(analyzer_tokens("what is the capital of X")) is None
    assert wh_head(analyzer_tokens("who directed X")) is None
    assert wh_head(analyzer_tokens("what type of music did X play")) == 3  # the kind of thing: music


def test_a_role_word_names_the_relation_of_its_inverse_role():
    # "X's doctoral students" are those whose doctoral advisor is X; "X's children" those whose parents include X
    assert inverse_named(["doctoral", "students"], ["doctoral advisor", "employer"]) == {0: BACKWARD}
    assert inverse_named(["children"], ["people.person.parents"]) == {0: BACKWARD}
    assert inverse_named(["children"], ["parent of"]) == {0: FORWARD}  # the head is the parent
    assert inverse_named(["advisor"], ["doctoral advisor"]) == {}  # the relation's own role


def test_a_time_is_asked_by_when_a_time_noun_or_a_time_word_x_owns():
    for question in ("when was x born", "what year was x founded", "what is x's date of birth", "x birthday"):
        tokens = analyzer_tokens(question)
        assert asks_for_a_time(tokens, wh_head(tokens)), question
    tokens = analyzer_tokens("who was x's father")
    assert not asks_for_a_time(tokens, wh_head(tokens))


def test_what_x_owns_is_the_word_after_its_possessive():
    question = "where were x's children born"
    words = content_words(question)
    assert words[possessed_word(analyzer_tokens(question), words)] == "children"
    assert possessed_word(analyzer_tokens("who is x married to"), content_words("who is x married to")) is None


def test_idioms_are_said_plainly():
    assert plain_words("where was x laid to rest") == "where was x buried"
    assert plain_words("where does x take place") == "where does x located"
    assert plain_words("what is the job of the dad of X's other half") == "what is the job of the father of X's spouse"
    assert plain_words("X's mums and hubby") == "X's mothers and husband"
    assert plain_words("madame damon") == "madame damon"  # family words as people say them; whole words only
    # a column header's abbreviation, where the question uses it; words stay words ("pop", "cap")
    assert plain_words("tell me X's dob") == "tell me X's date of birth"
    assert plain_words("who is X's mgr") == "who is X's manager"
    assert plain_words("what is the pop of X") == "what is the pop of X"


def test_family_words_and_occupations_name_their_relations():
    relations = ["is the father of", "married", "worked as", "works for", "invented-by"]
    found = same_stems(["parents", "sons", "wife", "occupation", "created"], relations)
    assert found.tolist() == [[1, 0, 0, 0, 0],
                              [1, 0, 0, 0, 0],  # three letters, but a word of the family
                              [0, 1, 0, 0, 0],
                              [0, 0, 1, 0, 0],  # a verb and "as": what its head is
                              [0, 0, 0, 0, 1]]


def test_coming_from_asks_for_an_origin_wherever_it_is_said():
    relations = ["schema:birthPlace", "lore:ruledBy"]
    born_back, ruled = ((0, BACKWARD),), ((1, FORWARD),)
    assert asks_origin("which characters come from x", [born_back, ruled], relations)
    assert asks_origin("where is x from", [((0, FORWARD),)], relations)
    assert not asks_origin("which characters come from x", [ruled], relations)  # no origin to name
    assert not asks_origin("which characters live far from x", [born_back, ruled], relations)


def test_a_noun_before_the_last_noun_of_a_relations_name_only_modifies_it():
    from gretriever_neo4j.reader.wording import modifies

    assert modifies("quest", "lore:questGiver") and modifies("album", "music.album.album_content_type")
    assert not modifies("giver", "lore:questGiver")  # its own word
    assert not modifies("language", "location.country.languages_spoken")  # "spoken" is no noun
    assert not modifies("place", "place of birth") and not modifies("city", "location city")


def test_a_verb_and_in_point_at_a_place():
    from gretriever_neo4j.reader.wording import happens_in

    assert happens_in("was born in") and happens_in("livesIn") and happens_in("is located in")
    assert not happens_in("in_language") and not happens_in("served-at") and not happens_in("is buried at")


def test_who_makes_taught_and_before_name_their_relations_without_a_shared_stem():
    relations = ["developed_by_org", "prev_club", "is a student of", "treats"]
    assert same_stems(["who makes X"], relations).tolist() == [[1, 0, 0, 0]]
    assert same_stems(["where did X play before"], relations).tolist() == [[0, 1, 0, 0]]
    assert same_stems(["who taught X"], relations).tolist() == [[0, 0, 1, 0]]
    from gretriever_neo4j.reader.sides import inverse_named

    assert inverse_named(["taught"], relations) == {2: FORWARD}  # the teacher: the tail of `is a student of`


def test_idioms_say_what_they_ask():
    assert plain_words("what can a x do") == "what is a x capable of"
    assert plain_words("What is the x like?") == "what are the properties of the x"
    assert plain_words("what goes into the x") == "what is the x made of"
    assert plain_words("what does x like") == "what does x like"
    assert asks_for_a_time(analyzer_tokens("what is the publication date of x"), None)



def test_a_title_said_before_x_is_not_a_word_of_the_question():
    from gretriever_neo4j.reader.wording import untitled

    assert untitled("who were king X children") == "who were X children"
    assert untitled("where did the band X form") == "where did the X form"
    assert untitled("what films did director X make") == "what films did X make"
    # a verb, the noun asked for, an adjective: kept
    assert untitled("who plays X") == "who plays X"
    assert untitled("what language X speaks") == "what language X speaks"
    assert untitled("what is the capital X") == "what is the capital X"
    assert untitled("which movies star X") == "which movies star X"
    # a noun of a clause about X, not X's title: the band X plays in
    assert untitled("what is the hometown of the band X plays in") == "what is the hometown of the band X plays in"
    assert untitled("what are all the movies X has been in") == "what are all the movies X has been in"


def test_what_x_is_asks_for_its_class_by_a_relation_named_so():
    from gretriever_neo4j.reader.wording import asks_class, class_relations

    assert asks_class("what kind of creature is a X") and asks_class("what is a X exactly") and asks_class("what is X")
    assert not asks_class("what is X famous for") and not asks_class("who is X")
    assert not asks_class("what type of music did X play")
    assert class_relations(["IsA", "instance of", "common.topic.notable_types", "rdf:type", "is a kind of"]).all()
    assert not class_relations(["classes taught", "Eats", "has genre", "people.person.profession"]).any()


def test_what_there_is_to_do_or_see_in_a_place_is_its_attractions():
    assert plain_words("what is there to see in X australia") == (
        "what is there to see tourist attractions in X australia")
    assert plain_words("what to do with my kids in X") == "what to do tourist attractions with my kids in X"
    assert plain_words("what should i do today in X") == "what should i do tourist attractions today in X"
    # what X did, or what someone did in X, is no visit
    assert plain_words("what did X do in 1999") == "what did X do in 1999"
    assert plain_words("what did the romans do in X") == "what did the romans do in X"
    assert plain_words("what kind of money do they use in X") == "what kind of money do they use in X"
    assert plain_words("what could we see in X") == "what could we see tourist attractions in X"

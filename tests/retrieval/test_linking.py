"""Hybrid seed linking without a database: mentions, Lucene escaping, RRF, exact-name preference, the prior."""

import numpy as np
import pytest

from gretriever_neo4j.errors import InputError
from gretriever_neo4j.retrieval.kg import KnowledgeGraph
from gretriever_neo4j.retrieval.linking import (
    InMemoryLinking,
    MentionPrior,
    analyzer_tokens,
    candidate_mentions,
    escape_lucene,
    link_seeds,
    mask_mentions,
    mask_question,
    phrase_query,
    rrf,
    strip_topic_markers,
)


def test_strip_topic_markers():
    assert strip_topic_markers("who directed [Tom Hanks] movies") == "who directed Tom Hanks movies"
    assert strip_topic_markers("[A] and  [B]?") == "A and B?"
    assert strip_topic_markers("no markers") == "no markers"


def test_mask_mentions_replaces_whole_names_case_insensitively():
    assert mask_mentions("who directed [The Matrix]", ["The Matrix"]) == "who directed X"
    assert mask_mentions("films like the matrix and Matrix Reloaded", ["The Matrix", "Matrix Reloaded"]) == (
        "films like X and X")
    assert mask_mentions("who wrote Up (2009)?", ["Up (2009)"]) == "who wrote X?"
    assert mask_mentions("a cupboard", ["up"]) == "a cupboard"  # whole words only
    assert mask_mentions("no names", []) == "no names"


def test_candidate_mentions_drop_stop_word_only_ngrams():
    mentions = candidate_mentions("who directed the Matrix", max_n=4)
    assert [m.text for m in mentions] == [
        "who directed the Matrix", "who directed the", "directed the Matrix", "who directed", "directed the",
        "the Matrix", "directed", "Matrix"]
    assert mentions[-1].tokens == ("matrix",) and (mentions[-1].start, mentions[-1].end) == (3, 4)
    assert candidate_mentions("what is it", max_n=3) == []
    with pytest.raises(InputError, match="max_n"):
        candidate_mentions("x", max_n=0)


def test_candidate_mentions_keep_the_first_span_of_a_repeated_token_sequence():
    mentions = candidate_mentions("Up, up and away", max_n=1)
    assert [(m.text, m.start) for m in mentions] == [("Up,", 0), ("away", 3)]


def test_analyzer_tokens_ignore_case_and_punctuation():
    assert analyzer_tokens("Monsters, Inc.") == ("monsters", "inc")
    assert analyzer_tokens("AC/DC: Live!") == ("ac", "dc", "live")
    assert analyzer_tokens("Amélie") == ("amélie",)


@pytest.mark.parametrize("raw, escaped", [
    ('say "hi"', 'say \\"hi\\"'),
    ("a~b*c?d", "a\\~b\\*c\\?d"),
    ("key: value", "key\\: value"),
    ("back\\slash and/or", "back\\\\slash and\\/or"),
    ("(x) [y] {z}", "\\(x\\) \\[y\\] \\{z\\}"),
    ("+1 -2 !3 ^4", "\\+1 \\-2 \\!3 \\^4"),
    ("rock && roll || jazz", "rock \\&\\& roll \\|\\| jazz"),
    ("Tom AND Jerry OR NOT", "Tom and Jerry or not"),
    ("ANDROID ORBIT NOTION", "ANDROID ORBIT NOTION"),
])
def test_escape_lucene(raw, escaped):
    assert escape_lucene(raw) == escaped


def test_phrase_query_plain_and_fuzzy():
    assert phrase_query("Tom  Hanks") == '"Tom Hanks"'
    assert phrase_query('Say "Anything..."') == '"Say \\"Anything...\\""'
    assert phrase_query("Tom Hanks", fuzzy=True) == '("Tom Hanks"^2 OR (tom AND hanks~1))'
    assert phrase_query("NOT Guilty", fuzzy=True) == '("not Guilty"^2 OR (not AND guilty~1))'
    with pytest.raises(InputError, match="mention"):
        phrase_query("?!")


def test_rrf_scores_and_deterministic_ties():
    fused = rrf([["a", "b", "c"], ["b", "a", "d"]], k=60)
    assert [key for key, _ in fused] == ["a", "b", "c", "d"]  # a and b tie at 1/61 + 1/62: key order
    assert fused[0][1] == pytest.approx(1 / 61 + 1 / 62)
    assert fused[2][1] == pytest.approx(1 / 63)
    assert rrf([["x", "x", "y"]]) == [("x", pytest.approx(1 / 61)), ("y", pytest.approx(1 / 62))]
    assert rrf([]) == []


def _kg_with_vectors(names: list[str], seed: int = 0) -> KnowledgeGraph:
    rng = np.random.default_rng(seed)
    triples = [(name, "related", names[0]) for name in names[1:]]
    kg = KnowledgeGraph.from_triples(triples, nodes=names)
    vectors = rng.standard_normal((kg.num_nodes, 8)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return kg.with_embeddings(vectors, np.ones((1, 8), np.float32))


NAMES = ["Tom Hanks", "Hanks", "Tom", "Tom Hanks Collection", "director", "The Matrix", "the matrix",
         "Matrix Reloaded", "Cast Away"]


def test_in_memory_phrase_hits_rank_shorter_names_first():
    linking = InMemoryLinking(_kg_with_vectors(NAMES))
    hits = linking.mention_hits(["tom hanks", "matrix", "nothing here", "tom"], None, 10)
    assert [h.key for h in hits[0]] == ["Tom Hanks", "Tom Hanks Collection"]
    assert [h.key for h in hits[1]] == ["Matrix Reloaded", "The Matrix", "the matrix"]  # equal scores: by key
    assert hits[2] == []
    assert [h.key for h in hits[3]] == ["Tom", "Tom Hanks", "Tom Hanks Collection"]
    assert hits[3][0].score > hits[3][1].score > hits[3][2].score
    assert [h.key for h in linking.mention_hits(["tom"], None, 1)[0]] == ["Tom"]


def test_exact_full_name_matches_come_first_and_swallow_inner_matches():
    kg = _kg_with_vectors(NAMES)
    result = link_seeds("which movies did [Tom Hanks] star in", None, InMemoryLinking(kg), None, k=3)
    assert result.exact == ["Tom Hanks"]  # "Tom" and "Hanks" lie inside the longer match
    assert result.seeds[0] == "Tom Hanks"
    assert len(result.seeds) == 3


def test_a_name_said_without_its_generational_suffix_is_an_exact_match():
    kg = _kg_with_vectors(["Martin Luther King, Jr.", "Assassination", "Memphis", "Henry II", "Henry"])
    result = link_seeds("what town was martin luther king assassinated in", None, InMemoryLinking(kg), None, k=2)
    assert result.exact[0] == "Martin Luther King, Jr."
    # a regnal number is part of the name: "henry" is `Henry`, not `Henry II`
    assert link_seeds("who was henry", None, InMemoryLinking(kg), None, k=2).exact == ["Henry"]


def test_exact_matches_prefer_exact_case_then_longer_mentions():
    kg = _kg_with_vectors(NAMES)
    result = link_seeds("who is the director of the matrix", None, InMemoryLinking(kg), None, k=5)
    # "the matrix" (2 words) beats "director" (1 word); exact case "the matrix" beats "The Matrix".
    assert result.exact == ["the matrix", "The Matrix", "director"]
    assert result.exact_mentions == ["the matrix", "the matrix", "director"]


def test_vector_hits_are_fused_by_rrf():
    kg = _kg_with_vectors(NAMES)
    cast_away = kg.node_embeddings[kg.key_to_index["Cast Away"]]
    result = link_seeds("an unrelated question", cast_away, InMemoryLinking(kg), None, k=2, vector_k=3)
    assert result.exact == []
    assert result.seeds[0] == "Cast Away"  # only the vector ranking has hits
    assert result.fused[0] == ("Cast Away", pytest.approx(1 / 61))


def test_mention_prior_demotes_template_words():
    kg = _kg_with_vectors(NAMES)
    linking = InMemoryLinking(kg)
    training = [("who is the director of Cast Away", ["Cast Away"]),
                ("the director of Tom Hanks Collection", ["Tom Hanks Collection"]),
                ("who is the director of Hanks", ["Hanks"])]
    prior = MentionPrior.fit(training, linking, None)
    assert prior.counts[("director",)] == (0, 3)
    assert prior.counts[("cast", "away")] == (1, 1)
    assert prior.probability(("director",)) == pytest.approx(0.5 / 4)
    assert prior.probability(("never", "seen")) == 0.5
    without = link_seeds("director of Tom", None, linking, None, k=2)
    with_prior = link_seeds("director of Tom", None, linking, None, k=2, prior=prior)
    assert without.exact[0] == "director"  # same length: the higher fulltext score wins
    assert with_prior.exact == ["Tom", "director"]
    assert with_prior.exact_probabilities == [0.5, pytest.approx(0.125)]
    assert with_prior.preferred(1, min_ratio=0.5) == ["Tom"]
    assert with_prior.preferred(1) == ["Tom", "director"]
    assert without.preferred(1, min_ratio=0.5) == ["director", "Tom"]  # no prior: nothing to compare
    assert MentionPrior.from_dict(prior.to_dict()).counts == prior.counts


def _kg(triples: list[tuple[str, str, str]]) -> KnowledgeGraph:
    kg = KnowledgeGraph.from_triples(triples)
    return kg.with_embeddings(np.ones((kg.num_nodes, 4), np.float32), np.ones((len(kg.relation_texts), 4), np.float32))


def test_exact_matches_that_name_a_relation_come_last():
    # WebQSP holds a film "Speak" and a genre "Language": the question's words for `languages_spoken`
    kg = _kg([("Greece", "location.country.languages_spoken", "Greek"), ("Greece", "location.location.contains",
                                                                          "Athens"),
              ("Speak", "film.film.language", "English"), ("Language", "media_common.genre.parent_genre", "Nonfiction"),
              ("Language", "media_common.genre.child_genres", "Linguistics"), ("Language", "film.film.genre", "Babel")])
    result = link_seeds("what language do people from greece speak", None, InMemoryLinking(kg), None, k=3)
    # "language" is the kind of thing asked for, so no entity; "speak" names a relation
    assert result.exact == ["Greece", "Speak"]
    assert result.exact_name_relations == [False, True]
    assert result.preferred(1) == ["Greece"]  # the others name relations: no seeds beside it


def test_when_every_exact_match_names_a_relation_the_fused_seeds_are_preferred():
    kg = _kg([("Sergio Agüero", "sports.pro_athlete.teams", "Manchester City"),
              ("Sergio Agüero", "sports.pro_athlete.sports_played_professionally", "Football"),
              ("Play", "type.type.properties", "Date of First Performance")])
    aguero = np.zeros(4, np.float32)
    aguero[0] = 1.0
    vectors = np.asarray([aguero if key == "Sergio Agüero" else np.ones(4, np.float32) / 2 for key in kg.node_keys])
    kg = kg.with_embeddings(vectors, np.ones((len(kg.relation_texts), 4), np.float32))
    result = link_seeds("what team did aguero play for", aguero, InMemoryLinking(kg), None, k=2)
    assert result.exact == ["Play"]  # the one name written out ("agüero" is not "aguero" to the analyzer)
    assert result.exact_name_relations == [True]  # "play" / `sports played professionally`
    assert result.preferred(1) == ["Sergio Agüero"]


def test_a_place_that_qualifies_the_match_before_it_comes_after_it():
    kg = _kg([("Brentwood", "containedby", "Tennessee"), ("Nashville", "containedby", "Tennessee"),
              ("Memphis", "containedby", "Tennessee")])
    result = link_seeds("what county is brentwood tennessee in", None, InMemoryLinking(kg), None, k=2)
    assert result.exact == ["Brentwood", "Tennessee"]  # though Tennessee has more edges


def test_a_match_right_after_another_with_no_more_edges_is_no_qualifier():
    kg = _kg([("The Late Shift", "written_by", "Bill Carter"), ("The Late Shift", "has_tags", "film"),
              ("Heat", "has_tags", "film")])
    result = link_seeds("the writers of the film the late shift", None, InMemoryLinking(kg), None, k=2)
    assert result.exact == ["The Late Shift", "film"]  # the tag "film" has as many edges as the film


def test_of_two_nodes_of_one_name_the_better_connected_comes_first():
    kg = KnowledgeGraph.from_triples([("paris-fr", "capital_of", "france"), ("paris-fr", "located_in", "europe"),
                                      ("paris-tx", "located_in", "texas")],
                                     node_texts={"paris-fr": "Paris", "paris-tx": "Paris"})
    linking = InMemoryLinking(kg)
    assert [hit.degree for hit in linking.mention_hits(["paris"], None, 5)[0]] == [2, 1]
    assert link_seeds("what is there to see in paris", None, linking, None, k=2).exact == ["paris-fr", "paris-tx"]


def test_without_an_exact_match_the_vector_hits_are_guessed_by_what_the_question_says_and_degree():
    kg = _kg([("Mitt Romney", "lived_in", "Massachusetts"), ("Mitt Romney", "born_in", "Detroit"),
              ("Lenore Romney", "spouse", "George Romney"), ("Utah", "contains", "Provo")])
    close = {"Lenore Romney": 1.0, "Mitt Romney": 0.9, "Massachusetts": 0.5}
    vectors = np.asarray([[close.get(key, 0.0), 1.0 - close.get(key, 0.0), 0, 0] for key in kg.node_keys], np.float32)
    kg = kg.with_embeddings(vectors, np.ones((len(kg.relation_texts), 4), np.float32))
    result = link_seeds("what state does romney live in", np.asarray([1, 0, 0, 0], np.float32), InMemoryLinking(kg),
                        None, k=2, vector_k=3)
    assert result.exact == []
    assert result.fused[0][0] == "Lenore Romney"  # nearest, and a fulltext hit for "romney"
    # both names half said; Mitt Romney has two edges, Lenore one: log(3) - log(2) outweighs one place down
    assert result.guessed[:2] == ["Mitt Romney", "Lenore Romney"]
    assert result.preferred(1) == ["Mitt Romney"]
    prior = MentionPrior()
    assert link_seeds("what state does romney live in", np.asarray([1, 0, 0, 0], np.float32), InMemoryLinking(kg),
                      None, k=2, vector_k=3, prior=prior).guessed == []  # trained linking keeps the fused ranking


def test_a_guess_is_a_name_the_question_says_never_an_opaque_id():
    """A Freebase record's key (`m.02t9_gm`) holds the letters of "gm" and touches the company's brands; it is no
    name. "vicksburg" does not say `Michael Vick`, though he is nearer and better connected."""
    def guessed(triples, nearest, question):
        kg = _kg(triples)
        vectors = np.asarray([[nearest.get(k, 0.0), 1.0 - nearest.get(k, 0.0), 0, 0] for k in kg.node_keys],
                             np.float32)
        kg = kg.with_embeddings(vectors, np.ones((len(kg.relation_texts), 4), np.float32))
        return link_seeds(question, np.asarray([1, 0, 0, 0], np.float32), InMemoryLinking(kg), None, k=1,
                          vector_k=2).guessed

    makes = [("m.02t9_gm", "automotive.company.make_s", "Chevrolet"),
             ("m.02t9_gm", "automotive.company.make_s", "Buick"),
             ("General Motors", "organization.organization.founders", "William C. Durant")]
    assert guessed(makes, {"m.02t9_gm": 1.0, "General Motors": 0.9}, "what does gm make") == ["General Motors"]
    battles = [("Michael Vick", "sports.pro_athlete.teams", "Atlanta Falcons"),
               ("Michael Vick", "people.person.place_of_birth", "Newport News"),
               ("Siege of Vicksburg", "time.event.locations", "Vicksburg National Military Park")]
    assert guessed(battles, {"Michael Vick": 1.0, "Siege of Vicksburg": 0.9},
                   "who fought in the battle of vicksburg")[0] == "Siege of Vicksburg"


def test_a_question_word_that_names_a_relation_says_nothing_of_the_entity():
    kg = _kg([("Benjamin Franklin", "law.inventor.inventions", "Bifocals"),
              ("Benjamin Franklin", "law.inventor.inventions", "Lightning rod"),
              ("Eli Whitney", "people.person.profession", "Inventor")])
    nearest = {"Inventor": 1.0, "Benjamin Franklin": 0.8}
    vectors = np.asarray([[nearest.get(k, 0.0), 1.0 - nearest.get(k, 0.0), 0, 0] for k in kg.node_keys], np.float32)
    kg = kg.with_embeddings(vectors, np.ones((len(kg.relation_texts), 4), np.float32))
    result = link_seeds("what else did ben franklin invent", np.asarray([1, 0, 0, 0], np.float32),
                        InMemoryLinking(kg), None, k=2, vector_k=2)
    assert result.guessed == ["Benjamin Franklin", "Inventor"]  # "invent" is the word of `inventions`


def test_link_seeds_refuses_unknown_backends():
    with pytest.raises(InputError, match="store_like"):
        link_seeds("q", None, object(), None)


class _CountingLinking(InMemoryLinking):
    """Counts the vector index queries a link makes."""

    vector_queries = 0

    def vector_hits(self, vector, graph, k):
        self.vector_queries += 1
        return super().vector_hits(vector, graph, k)


def test_the_vector_ranking_is_asked_for_only_when_no_usable_exact_match_is_found():
    kg = _kg([("Mitt Romney", "lived_in", "Massachusetts"), ("Lenore Romney", "spouse", "George Romney")])
    vectors = np.eye(len(kg.node_keys), 4, dtype=np.float32)
    kg = kg.with_embeddings(vectors, np.ones((len(kg.relation_texts), 4), np.float32))
    question = np.asarray([1, 0, 0, 0], np.float32)

    named = _CountingLinking(kg)
    result = link_seeds("where did mitt romney live", question, named, None, k=1)
    assert result.preferred(1) == ["Mitt Romney"] and result.seeds == ["Mitt Romney"]
    assert named.vector_queries == 0  # a usable exact match: the vector index is not queried

    unnamed = _CountingLinking(kg)
    result = link_seeds("what state does romney live in", question, unnamed, None, k=2)
    assert result.preferred(1) and unnamed.vector_queries == 1
    assert result.fused and result.guessed and unnamed.vector_queries == 1  # asked once, then kept


def test_a_fuller_name_the_question_says_more_of_replaces_the_shorter_exact_match_inside_it():
    kg = _kg([("William Henry Harrison", "government.us_president.vice_president", "John Tyler"),
              ("William Henry Harrison", "people.person.place_of_birth", "Charles City County"),
              ("Henry", "common.topic.notable_types", "Given name")])
    result = link_seeds("who became president when henry harrison died", None, InMemoryLinking(kg), None, k=2)
    assert result.exact == ["William Henry Harrison"]  # "henry harrison", in order; `Henry` lay inside it
    assert result.preferred() == ["William Henry Harrison"]


@pytest.mark.parametrize("question, triples, expected", [
    # the longer mention says no more content words than the exact match: "of china" is just "china"
    ("what is the primary language of china", [("China", "languages_spoken", "Mandarin"),
                                               ("China", "capital", "Beijing"),
                                               ("Government of China", "jurisdiction", "China")], "China"),
    # the question says too little of the fuller name (a long title that happens to hold the words)
    ("where president obama was born", [("Barack Obama", "place_of_birth", "Honolulu"),
                                        ("Obama", "type", "Surname"),
                                        ("Countdown of 2011: No. 2 President Obama", "subject", "Barack Obama"),
                                        ("Countdown of 2011: No. 2 President Obama", "genre", "List")], "Obama"),
    # the fuller name is less connected than the name written out whole
    ("what was queen elizabeth ii childhood nickname", [("Elizabeth II", "parents", "George VI"),
                                                        ("Elizabeth II", "spouse", "Prince Philip"),
                                                        ("Coronation of Queen Elizabeth II", "date", "1953")],
     "Elizabeth II"),
])
def test_a_fuller_name_does_not_replace_an_exact_match_when_it_is_not_what_the_question_says(question, triples,
                                                                                             expected):
    result = link_seeds(question, None, InMemoryLinking(_kg(triples)), None, k=2)
    assert result.exact[0] == expected


def test_a_sole_exact_match_gives_way_to_a_far_better_connected_node_whose_name_holds_it():
    # WebQSP holds a node "Tupac" (one edge) beside "Tupac Shakur" (73): the person asked about
    kg = _kg([("Tupac", "common.topic.notable_types", "Name")]
             + [("Tupac Shakur", "film.actor.film", f"film {i}") for i in range(6)])
    result = link_seeds("what movies did tupac star in", None, InMemoryLinking(kg), None, k=2)
    assert result.exact == ["Tupac Shakur"]


@pytest.mark.parametrize("question, triples, expected", [
    # not far better connected (4 edges against 1)
    ("what movies did tupac star in", [("Tupac", "type", "Name")]
     + [("Tupac Shakur", "film.actor.film", f"film {i}") for i in range(4)], ["Tupac"]),
    # another exact match: the short name may be a part of what the question says ("anaheim california")
    ("what time zone is anaheim california", [("Anaheim", "containedby", "California"),
                                               ("California", "contains", "Fresno")]
     + [("Los Angeles Angels of Anaheim", "plays_in", f"season {i}") for i in range(12)],
     ["Anaheim", "California"]),
    # a noun of the dictionary: the MetaQA tag "panda" is what the question is about
    ("which films are about panda", [("Kung Fu Panda", "has_tags", "panda")]
     + [("Kung Fu Panda", "starred_actors", f"actor {i}") for i in range(8)], ["panda"]),
])
def test_a_better_connected_fuller_name_replaces_nothing_else(question, triples, expected):
    assert link_seeds(question, None, InMemoryLinking(_kg(triples)), None, k=2).exact == expected


def test_the_noun_a_question_asks_for_is_no_entity_of_the_question():
    kg = _kg([("Carl Wilson", "people.deceased_person.cause_of_death", "Lung cancer"),
              ("Lung cancer", "medicine.disease.parent_disease", "Cancer"),
              ("Brain tumor", "medicine.disease.parent_disease", "Cancer")])
    result = link_seeds("what kind of cancer did carl wilson have", None, InMemoryLinking(kg), None, k=2)
    assert result.exact == ["Carl Wilson"]
    assert link_seeds("what is cancer", None, InMemoryLinking(kg), None, k=2).exact == ["Cancer"]


def _spelled_kg():
    triples = ([("National Rifle Association", "headquarters", "Fairfax")]
               + [("United Kingdom", "contains", f"county {i}") for i in range(8)]
               + [("uk", "common.topic.notable_types", "Abbreviation"), ("San Francisco", "contains", "Mission"),
                  ("San Francisco Giants", "sport", "Baseball"), ("Nuclear Regulatory Agency", "part_of", "UN")])
    kg = KnowledgeGraph.from_triples(triples)
    meaning = {"National Rifle Association": 0, "Nuclear Regulatory Agency": 0, "United Kingdom": 1, "uk": 1,
               "San Francisco": 2}
    vectors = np.asarray([np.eye(4)[meaning.get(key, 3)] for key in kg.node_keys], np.float32)
    return kg.with_embeddings(vectors, np.ones((len(kg.relation_texts), 4), np.float32))


def _embed(texts):  # the embedder places an acronym by what it stands for
    rows = {"nra": 0, "uk": 1, "sf": 2}
    return np.asarray([np.eye(4)[rows.get(text.lower(), 3)] for text in texts], np.float32)


def test_an_acronym_links_the_best_connected_nearby_node_it_spells():
    linking = InMemoryLinking(_spelled_kg())
    assert link_seeds("where is the nra headquarters", None, linking, None, k=2, embed=_embed).exact == [
        "National Rifle Association"]  # "Nuclear Regulatory Agency" spells it too, with fewer edges
    assert link_seeds("where is the nra headquarters", None, linking, None, k=2).exact == []  # nothing to embed with
    # a node named "uk" is matched exactly, but far less connected than what it stands for
    assert link_seeds("what countries are part of the uk", None, linking, None, k=2, embed=_embed).exact == [
        "United Kingdom"]


def test_a_two_letter_acronym_links_nothing_by_itself():
    # "sf giants": "sf" may stand for San Francisco, but the question means the team
    result = link_seeds("who is the coach of the sf giants", None, InMemoryLinking(_spelled_kg()), None, k=2,
                        embed=_embed)
    assert "San Francisco" not in result.exact


def test_a_possessive_typed_without_its_apostrophe_names_the_node():
    kg = _kg([("Angelina Jolie", "people.person.sibling_s", "James Haven"), ("Brother", "film.film.country", "Japan")])
    result = link_seeds("who is angelina jolies brother", None, InMemoryLinking(kg), None, k=2)
    assert result.exact[0] == "Angelina Jolie"
    assert link_seeds("who are the jolies", None, InMemoryLinking(kg), None, k=2).exact == []  # one word: no


def test_an_abbreviated_saint_names_the_node_written_out_and_is_masked():
    kg = _kg([("Saint Lucy", "people.person.place_of_birth", "Syracuse"), ("Here's Lucy", "tv.tv_program.country",
              "United States of America"), ("St. Peter", "location.location.containedby", "Minnesota")])
    assert link_seeds("where was st. lucy born", None, InMemoryLinking(kg), None, k=2).exact == ["Saint Lucy"]
    assert link_seeds("where is saint peter", None, InMemoryLinking(kg), None, k=2).exact == ["St. Peter"]
    assert link_seeds("who is lucy", None, InMemoryLinking(kg), None, k=2).exact == []  # no name is "lucy" alone
    assert mask_question("where was st. lucy born", ["Saint Lucy"]) == "where was X born"

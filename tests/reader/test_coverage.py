"""Zero-shot signature scores by coverage of the question (reader/coverage.py), with a deterministic embedder."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from gretriever_neo4j.reader import coverage, walk_shapes
from gretriever_neo4j.reader.coverage import WORD_NAMES, coverage_scores, least_named
from gretriever_neo4j.reader.signature_weights import ZERO_SHOT
from gretriever_neo4j.reader.text_vectors import TextVectors
from gretriever_neo4j.reader.walk_shapes import signature_question
from gretriever_neo4j.reader.wording import content_words
from gretriever_neo4j.retrieval.relation_paths import BACKWARD, FORWARD

from fakes import FakeEmbedder

RELATIONS = ["directed_by", "starred_actors", "in_language", "release_year"]
DIRECTED, STARRED, LANGUAGE, YEAR = range(4)


@pytest.fixture()
def vectors():
    return TextVectors(FakeEmbedder().embed)


def best(question: str, signatures, vectors) -> tuple:
    masked_vector = FakeEmbedder().embed([question])[0]
    scores = coverage_scores(question, masked_vector, signatures, RELATIONS, vectors)
    return signatures[int(np.argmax(scores))]


def test_a_signature_reads_as_a_question_from_the_anchor_outwards():
    assert signature_question(RELATIONS, [(DIRECTED, BACKWARD), (LANGUAGE, FORWARD)]) == \
        "what is the in language of the things directed by X"
    assert signature_question(RELATIONS, [(DIRECTED, FORWARD)]) == "what is the directed by of X"


def test_a_second_hop_the_question_asks_for_wins_over_stopping_short(vectors):
    one_hop = ((STARRED, BACKWARD),)
    two_hops = ((STARRED, BACKWARD), (DIRECTED, FORWARD))
    wrong_second = ((STARRED, BACKWARD), (YEAR, FORWARD))
    # (the fake embedder matches trigrams: the question says the relations as the graph names them)
    assert best("directed by of the films starred actors X", [one_hop, two_hops, wrong_second], vectors) == two_hops


def test_a_hop_the_question_does_not_mention_costs(vectors):
    one_hop = ((DIRECTED, FORWARD),)
    detour = ((DIRECTED, FORWARD), (STARRED, BACKWARD))
    assert best("who directed X", [detour, one_hop], vectors) == one_hop


def test_a_question_asking_for_a_category_goes_to_a_categorical_relation(vectors):
    actors, years = ((STARRED, FORWARD),), ((YEAR, FORWARD),)
    masked_vector = FakeEmbedder().embed(["what kind of film is X"])[0]
    scores = coverage_scores("what kind of film is X", masked_vector, [actors, years], RELATIONS, vectors,
                             categorical={(YEAR, FORWARD)})
    plain = coverage_scores("what kind of film is X", masked_vector, [actors, years], RELATIONS, vectors)
    assert scores[1] - scores[0] == pytest.approx(plain[1] - plain[0] + 0.3)
    asked = coverage_scores("who starred in X", masked_vector, [actors, years], RELATIONS, vectors,
                            categorical={(YEAR, FORWARD)})
    assert list(asked) == list(coverage_scores("who starred in X", masked_vector, [actors, years], RELATIONS,
                                               vectors))  # no category asked: no gain


def test_the_empty_signature_never_wins_and_the_shortlist_ranks_above_the_rest(vectors):
    signatures = [(), ((DIRECTED, FORWARD),), ((YEAR, FORWARD),), ((LANGUAGE, FORWARD),)]
    question = "who directed X"
    scores = coverage_scores(question, FakeEmbedder().embed([question])[0], signatures, RELATIONS, vectors,
                             shortlist=1)
    assert scores[0] == -np.inf
    assert np.argmax(scores) == 1
    assert scores[1] > scores[2:].max() + 5  # outside the shortlist: far below


def test_who_asks_for_a_relations_value_not_for_what_points_at_the_anchor(vectors):
    WHO_BACKWARD_COST = -ZERO_SHOT.who_backward

    films_of = ((STARRED, BACKWARD),)  # the films X starred in
    co_stars = ((STARRED, BACKWARD), (STARRED, FORWARD))  # their actors
    vector = FakeEmbedder().embed(["starred actors X"])[0]
    plain = coverage_scores("starred actors with X", vector, [films_of, co_stars], RELATIONS, vectors)
    who = coverage_scores("who starred actors with X", vector, [films_of, co_stars], RELATIONS, vectors)
    assert who[1] == pytest.approx(plain[1])
    assert who[0] == pytest.approx(plain[0] - WHO_BACKWARD_COST)


def test_round_trips_are_consecutive_steps_out_and_back_along_one_relation():
    from gretriever_neo4j.reader.walk_shapes import round_trips

    assert round_trips([(DIRECTED, FORWARD), (DIRECTED, BACKWARD), (LANGUAGE, FORWARD)]) == {DIRECTED}
    assert round_trips([(DIRECTED, FORWARD), (DIRECTED, FORWARD)]) == set()  # onwards, not back
    assert round_trips([(DIRECTED, FORWARD), (STARRED, BACKWARD), (DIRECTED, BACKWARD)]) == set()


def test_a_walk_goes_through_a_round_trip_when_it_goes_on_along_another_relation():
    from gretriever_neo4j.reader.walk_shapes import through_trip

    assert through_trip([(DIRECTED, FORWARD), (DIRECTED, BACKWARD), (LANGUAGE, FORWARD)])
    assert not through_trip([(LANGUAGE, FORWARD), (DIRECTED, FORWARD), (DIRECTED, BACKWARD)])  # ends on the others
    assert not through_trip([(DIRECTED, FORWARD), (DIRECTED, BACKWARD), (DIRECTED, FORWARD)])  # siblings of siblings


def test_a_round_trip_nothing_asks_for_costs_more_where_the_walk_goes_on(vectors):
    from gretriever_neo4j.reader.signature_weights import ZERO_SHOT

    THROUGH_TRIP_COST = -ZERO_SHOT.through_trip

    through = [(DIRECTED, FORWARD), (DIRECTED, BACKWARD), (LANGUAGE, FORWARD)]
    ending = [(LANGUAGE, FORWARD), (DIRECTED, FORWARD), (DIRECTED, BACKWARD)]

    def scores(question, through_trip=ZERO_SHOT.through_trip):
        weights = dataclasses.replace(ZERO_SHOT, through_trip=through_trip)
        return coverage.coverage_scores(question, None, [through, ending], RELATIONS, vectors, shortlist=0,
                                        weights=weights)

    plain, shared = scores("what language is X in"), scores("what language are the films sharing a director with X")
    free = scores("what language is X in", 0.0)
    shared_free = scores("what language are the films sharing a director with X", 0.0)
    assert free[0] - plain[0] == pytest.approx(THROUGH_TRIP_COST)
    assert free[1] == pytest.approx(plain[1])
    assert shared_free == pytest.approx(shared)  # asked for: no cost
    # a word names the trip's relation ("the director of X"): the question's own way, no cost either
    named = scores("what language are the movies of the director of X in")
    assert scores("what language are the movies of the director of X in", -1.0) == pytest.approx(named)


def test_a_relation_is_named_twice_by_two_words_for_one_of_its_words_not_by_two_of_its_words(vectors):
    from gretriever_neo4j.reader.coverage import named_twice

    humanized = ["directed by", "release year"]
    # (similarities as the question's words would have them: each word clearly names one relation)
    words = ["directed", "director", "release", "years"]
    word_relation = np.asarray([[0.8, 0.1], [0.6, 0.1], [0.1, 0.7], [0.1, 0.5]])
    assert named_twice(words, word_relation, humanized, vectors) == {0}
    vague = np.asarray([[0.8, 0.1], [0.42, 0.40], [0.1, 0.7], [0.1, 0.5]])  # "director" names neither clearly
    assert named_twice(words, vague, humanized, vectors) == set()


def test_two_words_of_one_relation_on_either_side_of_the_anchor_name_it_twice(vectors):
    from gretriever_neo4j.reader.coverage import anchor_sides, named_twice

    humanized = ["starred actors"]
    words = content_words("the films starred by X actors")
    assert words == ["films", "starred", "actors"]
    assert anchor_sides("the films starred by X actors") == [-1, -1, 1]
    assert anchor_sides("what years were the movies starring X released") == [-1, -1, -1, 0]  # a verb after X
    word_relation = np.asarray([[0.3], [0.8], [0.7]])
    naming = np.asarray([False, True, True])
    assert named_twice(words, word_relation, humanized, vectors, naming, [-1, -1, 1]) == {0}
    assert named_twice(words, word_relation, humanized, vectors, naming, [-1, 1, 1]) == set()  # both after X
    assert named_twice(words, word_relation, humanized, vectors, naming, [-1, -1, 0]) == set()  # no owner noun
    assert named_twice(words, word_relation, humanized, vectors, np.asarray([False, False, True]),
                       [-1, -1, 1]) == set()  # "starred" before X, but naming nothing clearly
    assert named_twice(words, word_relation, humanized, vectors) == set()  # "starred actors": one mention
    assert anchor_sides("who starred in it") == [-1]  # no placeholder


def test_going_out_and_back_wins_only_when_the_question_asks_what_is_shared(vectors):
    directors = ((DIRECTED, FORWARD),)
    their_films = ((DIRECTED, FORWARD), (DIRECTED, BACKWARD))
    assert best("which films share the directed by of X", [directors, their_films], vectors) == their_films
    assert best("which films have the same directed by as X", [directors, their_films], vectors) == their_films
    assert best("the directed by of X", [directors, their_films], vectors) == directors


class TableEmbedder:
    """Given vectors for some texts (relations, question words); any other text (a signature read as a
    question) gets the fake trigram vector, the same for every signature's reading to compare fairly."""

    def __init__(self, table):
        self.table = {k: np.asarray(v, np.float32) for k, v in table.items()}
        self.dim = len(next(iter(self.table.values())))

    def embed(self, texts):
        return np.stack([self.table.get(t, np.full(self.dim, 0.1, np.float32)) for t in texts])


def test_a_word_near_every_relation_names_none_and_explains_no_extra_hop():
    # "films" is near all three relations, a little nearer to `starred actors`; "wrote" names `written by`
    table = {"directed by": [1, 0, 0, 0], "starred actors": [0, 1, 0, 0], "written by": [0, 0, 1, 0],
             "films": [0.5, 0.62, 0.45, 0.4], "wrote": [0.1, 0.1, 0.95, 0.3]}
    vectors = TextVectors(TableEmbedder(table).embed)
    relations = ["directed_by", "starred_actors", "written_by"]
    films_written = ((2, BACKWARD),)
    their_actors = ((2, BACKWARD), (1, FORWARD))
    question = "which films X wrote"
    scores = coverage_scores(question, None, [films_written, their_actors], relations, vectors)
    assert np.argmax(scores) == 0


def test_a_relation_named_clearly_enough_is_named_however_much_more_sharply_another_is():

    table = {"directed by": [1, 0, 0], "written by": [0, 0, 1], "starred actors": [0, 1, 0],
             "writers": [0.3, 0.3, 0.7], "directed": [1, 0, 0], "films": [0.5, 0.62, 0.45]}
    vectors = TextVectors(TableEmbedder(table).embed)
    relations = ["directed_by", "starred_actors", "written_by"]
    films = ((0, BACKWARD),)
    their_writers = ((0, BACKWARD), (2, FORWARD))
    question = "the writers of the films directed by X"
    assert np.argmax(coverage_scores(question, None, [films, their_writers], relations, vectors)) == 1
    saved = coverage.MENTION_CAP
    try:  # uncapped, "directed" names its relation so much better that stopping at the films wins
        coverage.MENTION_CAP = 9.0
        assert np.argmax(coverage_scores(question, None, [films, their_writers], relations, vectors)) == 0
    finally:
        coverage.MENTION_CAP = saved


def test_words_of_one_family_name_a_relation_without_sharing_a_stem(vectors):
    from gretriever_neo4j.reader.wording import same_stems

    relations = ["has_tags", "directed_by", "keywords", "in_language"]
    found = same_stems(["describe", "topics", "description", "themes", "words", "language"], relations)
    assert found.tolist() == [[1, 0, 1, 0], [1, 0, 1, 0], [1, 0, 1, 0], [1, 0, 1, 0],
                              [0, 0, 1, 0],  # "words" names `keywords` by its stem, and not `has tags`
                              [0, 0, 0, 1]]
    tags, directed = ((0, FORWARD),), ((1, FORWARD),)
    assert _best_of("describe X in a few words", [directed, tags], ["has_tags", "directed_by"], vectors) == tags
    # "about", the one function word that names something: what a thing is about is its topics
    assert same_stems(["which films are about"], relations).tolist() == [[1, 0, 1, 0]]
    assert "about" in content_words("what is X about") and "are" not in content_words("which films are about X")
    assert _best_of("what is X about", [directed, tags], ["has_tags", "directed_by"], vectors) == tags
    # Two words of one family are one mention, not a relation named twice (which would ask what is shared)
    from gretriever_neo4j.reader.coverage import LEXICAL, named_twice

    words, relations = ["describing", "about"], ["has_tags", "directed_by"]
    word_relation = np.maximum(vectors(words) @ vectors(["has tags", "directed by"]).T,
                               LEXICAL * same_stems(words, relations))
    assert word_relation[:, 0].min() >= LEXICAL  # both name `has_tags` ...
    assert named_twice(words, word_relation, ["has tags", "directed by"], vectors) == set()  # ... once
    twice = ["directed", "director"]  # two words of one lemma do name a relation twice
    word_relation = np.maximum(vectors(twice) @ vectors(["has tags", "directed by"]).T,
                               LEXICAL * same_stems(twice, relations))
    assert named_twice(twice, word_relation, ["has tags", "directed by"], vectors) == {1}


def test_a_container_of_places_names_located_in_and_a_city_does_not(vectors):
    from gretriever_neo4j.reader.wording import same_stems

    assert same_stems(["country", "state", "continent", "city"], ["located in"]).tolist() == [[1], [1], [1], [0]]
    assert same_stems(["state", "located"], ["country"]).tolist() == [[0], [1]]  # a state is no country
    born, then_located = ((0, FORWARD),), ((0, FORWARD), (1, FORWARD))
    relations = ["born in", "located in"]
    assert _best_of("what country was X born in", [born, then_located], relations, vectors) == then_located
    assert _best_of("what city was X born in", [born, then_located], relations, vectors) == born


def test_a_which_noun_used_up_by_the_last_step_leaves_the_others_unnamed_not_named_badly():
    from gretriever_neo4j.reader.coverage import BARRED, least_named

    # "which league is X in": the which-noun names only the walk's last step (`team plays in league`), which the end
    # nodes' names say; the step before it (`athlete plays for team`) is then named by no word
    named = np.asarray([[BARRED, 0.4]])
    assert least_named(named, [{0}], [0], skip_barred=True) == pytest.approx(0.0)
    assert least_named(named, [{0}], [0]) == pytest.approx(BARRED)  # not used up: a walk it cannot name


def test_one_word_names_one_relation_of_a_path_at_most():
    from gretriever_neo4j.reader.coverage import least_named

    # grams: "located" (0), "map" (1), "located map" (2); relations: containedby, team location
    named = np.asarray([[0.5, 0.6], [0.0, 0.1], [0.2, 0.3]])
    grams = [{0}, {1}, {0, 1}]
    assert least_named(named, grams, [0]) == pytest.approx(0.5)
    # the team's location takes "located", containedby is left with nothing but "map"
    assert least_named(named, grams, [0, 1]) == pytest.approx(0.0)


def _best_of(question, signatures, relations, vectors, **kwargs):
    scores = coverage_scores(question, FakeEmbedder().embed([question])[0], signatures, relations, vectors, **kwargs)
    return signatures[int(np.argmax(scores))]


def test_relations_that_name_their_head_read_from_it():
    relations = ["author of", "works for"]
    assert signature_question(relations, [(0, BACKWARD)]) == "what is the author of X"
    assert signature_question(relations, [(0, FORWARD)]) == "what is the thing X is author of"
    assert signature_question(relations, [(1, BACKWARD)]) == "what is the one who works for X"
    assert signature_question(relations, [(1, FORWARD)]) == "what is the thing X works for"


def test_who_goes_back_along_a_relation_that_names_its_head(vectors):
    # a user's graph stores "A author of B": "who is the author of X" walks back to A; MetaQA's and Freebase's
    # relations name their tail, and there a "who" question's last step back still costs
    forward, backward = ((0, FORWARD),), ((0, BACKWARD),)
    assert _best_of("who is author of X", [forward, backward], ["author of"], vectors) == backward
    assert _best_of("who directed by X", [forward, backward], ["directed_by"], vectors) == forward


def test_who_and_where_are_not_answered_by_numbers_alone_and_when_is(vectors):
    relations = ["written", "written"]  # two steps the question names equally
    first, second = ((0, FORWARD),), ((1, FORWARD),)
    for question in ("who written X", "where written X"):
        assert _best_of(question, [first, second], relations, vectors, value_ends={0}) == second
        assert _best_of(question, [first, second], relations, vectors, value_ends={1}) == first
    assert _best_of("when written X", [first, second], relations, vectors, value_ends={1}) == second
    # a time is all "when" asks for: a walk that ends on none costs twice what a "who" ending on times does
    question = "when written X"
    plain = coverage_scores(question, None, [first, second], relations, vectors)
    timed = coverage_scores(question, None, [first, second], relations, vectors, value_ends={1})
    assert plain[0] - timed[0] == pytest.approx(-ZERO_SHOT.when_mismatch) == -2 * ZERO_SHOT.value_mismatch
    assert plain[1] == timed[1]
    assert _best_of("in what year written X", [first, second], relations, vectors, value_ends={0}) == first


def test_a_pair_of_words_does_not_leave_a_named_relation_unnamed():
    # rows: "spouse", "born", "spouse born"; columns: born in, married to (MiniLM, centred)
    named = np.array([[-0.09, 0.47], [0.45, -0.01], [0.47, 0.28]])
    words = [{0}, {1}, {0, 1}]
    assert least_named(named, words, [0, 1]) == pytest.approx(0.45)
    weak = named * 0.3  # no word names its relation clearly: the pair's reading stands
    assert least_named(weak, words, [0, 1]) < WORD_NAMES


def test_the_noun_a_which_question_opens_with_is_the_kind_of_answer(vectors):
    relations = ["birth place", "location city"]
    born = ((0, FORWARD),)
    born_then_back = ((0, FORWARD), (1, BACKWARD))  # the record labels located in X's birthplace
    assert _best_of("which city was X birth place", [born_then_back, born], relations, vectors) == born


def test_a_question_that_names_no_relation_takes_one_hop(vectors):
    # "what words describe X": no word names either relation, and a second hop's relation would be explained by
    # nothing (with the usual hop cost it won: its reading is as near the question and it covers more)
    relations = ["directed_by", "starred_actors"]
    one_hop, two_hops = ((DIRECTED, BACKWARD),), ((DIRECTED, BACKWARD), (STARRED, FORWARD))
    assert _best_of("what words describe X", [one_hop, two_hops], relations, vectors) == one_hop
    assert _best_of("what words describe X", [one_hop, two_hops], relations, vectors,
                    weights=dataclasses.replace(ZERO_SHOT, extra_hops_unexplained=0.0)) == two_hops


def test_who_is_not_answered_by_common_nouns_and_where_may_be(vectors):
    relations = ["written", "written"]
    first, second = ((0, FORWARD),), ((1, FORWARD),)
    assert _best_of("who written X", [first, second], relations, vectors, unnamed_ends={0}) == second
    assert _best_of("who written X", [first, second], relations, vectors, unnamed_ends={1}) == first
    # a place may be written in lower case ("where is X expressed": "liver")
    assert _best_of("where written X", [first, second], relations, vectors, unnamed_ends={0}) == first
    assert _best_of("what written X", [first, second], relations, vectors, unnamed_ends={0}) == first


def test_who_is_not_answered_by_places_and_where_is(vectors):
    relations = ["written", "written"]
    first, second = ((0, FORWARD),), ((1, FORWARD),)
    assert _best_of("who written X", [first, second], relations, vectors, place_ends={0}) == second
    assert _best_of("who written X", [first, second], relations, vectors, place_ends={1}) == first
    assert _best_of("where written X", [first, second], relations, vectors, place_ends={1}) == second
    assert _best_of("where written X", [first, second], relations, vectors, place_ends={0}) == first
    assert _best_of("what written X", [first, second], relations, vectors, place_ends={0}) == first


def test_a_relation_is_of_places_by_its_own_name():
    from gretriever_neo4j.embedding.embedder import Embedder

    try:
        embedder = Embedder(None)
    except Exception as error:  # the packaged MiniLM: the prototypes are set against its similarities
        pytest.skip(f"no packaged embedder: {error}")
    relations = ["hometown", "birthPlace", "people.person.place_of_birth", "located in", "lives in", "locationCity",
                 "spouse", "founded by", "genre", "recordLabel", "artist", "memberOf", "releaseYear"]
    places = walk_shapes.place_relations(relations, TextVectors(embedder.embed))
    assert [r for r, place in zip(relations, places) if place] == relations[:6]


def test_with_nothing_counted_categorical_a_category_is_a_word_in_lower_case(vectors):
    relations = ["written", "written"]
    first, second = ((0, FORWARD),), ((1, FORWARD),)
    for question in ("what kind of written X", "what type of written X"):
        assert _best_of(question, [first, second], relations, vectors, unnamed_ends={1}) == second
        assert _best_of(question, [first, second], relations, vectors, unnamed_ends={0}) == first
        # values are not kinds; a graph that counts its categories is not asked about lower case
        assert _best_of(question, [first, second], relations, vectors, unnamed_ends={0, 1}, value_ends={1}) == first
        assert _best_of(question, [first, second], relations, vectors, unnamed_ends={1},
                        categorical={(0, FORWARD)}) == first


def test_a_which_question_prefers_walks_ending_near_its_noun(vectors):
    relations = ["written", "written"]
    first, second = ((0, FORWARD),), ((1, FORWARD),)
    ends = vectors(["gary", "country"])  # mean end vectors of the two signatures (one node each)
    question = "which country written X"
    assert _best_of(question, [first, second], relations, vectors, end_vectors=ends) == second
    assert _best_of(question, [first, second], relations, vectors, end_vectors=ends[::-1].copy()) == first
    plain = coverage_scores(question, None, [first, second], relations, vectors)
    kinded = coverage_scores(question, None, [first, second], relations, vectors, end_vectors=ends)
    assert kinded - plain == pytest.approx(ZERO_SHOT.head_kind * (ends @ vectors(["country"])[0]))
    # no "which N": no gain
    assert list(coverage_scores("who written X", None, [first, second], relations, vectors, end_vectors=ends)) == \
        list(coverage_scores("who written X", None, [first, second], relations, vectors))


def test_a_role_word_names_the_relation_of_its_inverse_role_backwards(vectors):
    # "X's doctoral students" are those whose doctoral advisor is X; "X's children" those whose parents include X
    forward, backward = ((0, FORWARD),), ((0, BACKWARD),)
    assert _best_of("who were X doctoral students", [forward, backward], ["doctoral advisor"], vectors) == backward
    assert _best_of("who was X doctoral advisor", [forward, backward], ["doctoral advisor"], vectors) == forward
    assert _best_of("who are the children of X", [forward, backward], ["parent of"], vectors) == forward
    assert _best_of("which students did X supervise", [forward, backward, ((1, FORWARD),)],
                    ["advisor", "employer"], vectors) == backward


# An art world whose n-ary facts sit on records with opaque keys: a loan, an exhibition
LOANS = [("Heron at Dusk", "was painted by", "Ada Vell"), ("Heron at Dusk", "is held by", "Tesselby House"),
         ("LOAN-0935", "loaned work", "Heron at Dusk"), ("LOAN-0935", "lent by", "Tesselby House"),
         ("LOAN-0935", "lent to", "Palazzo Venn"),
         ("EXH-2031", "featured work", "Heron at Dusk"), ("EXH-2031", "took place at", "Palazzo Venn"),
         ("EXH-2031", "curated by", "Rena Quill"), ("EXH-2031", "opened in year", "2019"),
         ("EXH-2044", "featured work", "Mill at Dusk"), ("EXH-2044", "curated by", "Rena Quill"),
         ("EXH-2044", "took place at", "Tesselby House"),
         ("Tesselby", "is home to", "Tesselby House"), ("Corvessa", "is home to", "Palazzo Venn")]


def test_a_record_holds_one_fact_the_question_names_by_one_of_its_edges(embedder):
    from toy_kg import answers, view_of

    view = view_of(LOANS, embedder)
    at = view.node_texts.index
    assert answers(view, embedder, "who loaned out Heron at Dusk", "who loaned out X",
                   at("Heron at Dusk")) == ["Tesselby House"]  # not the loan's key, not the work
    # the step out of the exhibition to where it took place is the "where" asked
    assert sorted(answers(view, embedder, "where has Rena Quill curated exhibitions",
                          "where has X curated exhibitions", at("Rena Quill"))) == ["Palazzo Venn", "Tesselby House"]


def test_the_same_team_as_x_asks_for_the_others_who_share_it(embedder):
    from toy_kg import answers, view_of

    squads = [("Ada Vell", "club", "Rovers"), ("Ben Holt", "club", "Rovers"), ("Cai Lund", "club", "Rovers"),
              ("Dora Pike", "club", "Athletic"), ("Ada Vell", "pos", "GK"), ("Ben Holt", "pos", "winger"),
              ("Rovers", "ground", "Rovers Park"), ("Athletic", "ground", "Mill Lane")]
    view = view_of(squads, embedder)
    said = answers(view, embedder, "who plays in the same team as Ada Vell", "who plays in the same team as X",
                   view.node_texts.index("Ada Vell"))
    assert sorted(said) == ["Ben Holt", "Cai Lund"]  # not the team itself


def test_a_question_of_what_x_is_gains_the_step_to_its_class(vectors):
    CLASS_GAIN = ZERO_SHOT.class_step

    relations = ["IsA", "Eats"]
    signatures = [[(0, FORWARD)], [(1, FORWARD)], [(0, BACKWARD)]]
    asked = coverage_scores("what kind of creature is a X", None, signatures, relations, vectors, shortlist=0)
    plain = coverage_scores("what creature does a X eat", None, signatures, relations, vectors, shortlist=0)
    unasked = coverage_scores("what kind of creature eats a X", None, signatures, relations, vectors, shortlist=0)
    assert asked[0] - asked[1] > 0 and plain[0] - plain[1] < asked[0] - asked[1]
    # only forward, to X's class, and only where the question asks nothing else
    assert asked[2] - unasked[2] < CLASS_GAIN / 2


def test_a_where_question_asks_for_the_most_specific_place_a_record_holds(vectors):
    """An address (a record) holds a city, a region and a country: "where is X based" is the city; "what country
    is X based in" names the country."""
    SPECIFIC_PLACE = ZERO_SHOT.most_specific

    relations = ["organization.organization.headquarters", "location.mailing_address.citytown",
                 "location.mailing_address.state_province_region", "location.mailing_address.country"]
    signatures = [[(0, FORWARD), (r, FORWARD)] for r in (1, 2, 3)]
    through = {(0, FORWARD)}
    where = coverage_scores("where is X based", None, signatures, relations, vectors, shortlist=0, ways_through=through)
    assert where[0] == max(where)
    country = coverage_scores("what country is X based in", None, signatures, relations, vectors, shortlist=0,
                              ways_through=through)
    assert country[2] == max(country)
    alone = coverage_scores("where is X based", None, signatures[:1], relations, vectors, shortlist=0,
                            ways_through=through)
    assert where[0] == pytest.approx(alone[0] + SPECIFIC_PLACE)  # a city beside another place the record holds


"""A second entity the question names narrows the answer (reader/constraints.py), on a toy view with CVTs."""

from __future__ import annotations

import numpy as np

from gretriever_neo4j.reader import ZeroShotReader
from gretriever_neo4j.reader.constraints import (
    chosen_among,
    constraint_nodes,
    joined,
    linked_answers,
    narrowed,
    said_nodes,
)
from gretriever_neo4j.reader.paths import SubgraphView
from gretriever_neo4j.reader.wording import FUNCTION_WORDS

from fakes import FakeEmbedder
from toy_kg import view_of

# Ghost Rider -starring-> two performances (opaque CVTs), each -actor-> an actor and -character-> a character
NODES = ["Ghost Rider", "m.0p1", "m.0p2", "Eva Mendes", "Nicolas Cage", "Roxanne Simpson", "Johnny Blaze",
         "Mark Steven Johnson"]
EDGES = [(0, 0, 1), (0, 0, 2), (1, 1, 3), (2, 1, 4), (1, 2, 5), (2, 2, 6), (0, 3, 7)]  # (src, relation, dst)
RELATIONS = ["film.film.starring", "film.performance.actor", "film.performance.character", "film.film.directed_by"]


def view() -> SubgraphView:
    embedder = FakeEmbedder()
    return SubgraphView(node_keys=list(NODES), node_texts=list(NODES), node_vectors=embedder.embed(NODES),
                        src=np.asarray([e[0] for e in EDGES]), dst=np.asarray([e[2] for e in EDGES]),
                        relation=np.asarray([e[1] for e in EDGES]), relation_texts=list(RELATIONS),
                        relation_vectors=embedder.embed(RELATIONS))


OPAQUE = np.asarray([text.startswith("m.0") for text in NODES])
PROPER = ~OPAQUE


def test_a_word_left_over_names_a_constraint_and_the_answer_linked_to_it_through_a_cvt_stays():
    sub = view()
    actors = [3, 4]
    constraints = constraint_nodes("who plays roxanne in ghost rider", sub, [0], actors, FUNCTION_WORDS, PROPER)
    assert constraints == [5]
    assert linked_answers(sub, actors, constraints, OPAQUE) == [3]
    # nothing else named: no constraint; a constraint no answer is linked to narrows nothing
    assert constraint_nodes("who plays in ghost rider", sub, [0], actors, FUNCTION_WORDS, PROPER) == []
    assert linked_answers(sub, actors, [7], OPAQUE) == []
    # a word of English is no name ("blaze" of "Johnny Blaze", as "music" of "Pop music")
    assert constraint_nodes("who plays blaze in ghost rider", sub, [0], actors, FUNCTION_WORDS, PROPER) == []
    # words of the anchor's name and words to skip (relation words) name no constraint
    assert constraint_nodes("who plays ghost in ghost rider", sub, [0], actors, FUNCTION_WORDS, PROPER) == []
    assert constraint_nodes("who plays johnny in ghost rider", sub, [0], actors, FUNCTION_WORDS | {"johnny"},
                            PROPER) == []


def test_the_zero_shot_reader_answers_the_actor_of_the_character_named():
    sub = view()
    embed = FakeEmbedder().embed
    reader = ZeroShotReader(embed)
    question = "which actor plays roxanne in ghost rider"
    reading = reader.read(question, sub, [0], embed(["which actor plays roxanne in X"])[0], embed([question])[0])
    assert [sub.node_texts[n] for n in reading.answers] == ["Eva Mendes"]
    plain = reader.read("which actor plays in ghost rider", sub, [0], embed(["which actor plays in X"])[0],
                        embed(["which actor plays in ghost rider"])[0])
    assert sorted(sub.node_texts[n] for n in plain.answers) == ["Eva Mendes", "Nicolas Cage"]
    # the reading says what chose its answer (its confidence weighs it)
    assert (reading.chosen_by, plain.chosen_by) == ("narrowed", "walks")
    both = reader.read(question, sub, [0, 5], embed(["which actor plays X in X"])[0], embed([question])[0])
    assert [sub.node_texts[n] for n in both.answers] == ["Eva Mendes"] and both.chosen_by == "joined"


def test_a_performance_next_to_both_anchors_is_the_answer_however_the_walks_rate_it():
    sub = view()
    scores = np.full(len(NODES), -np.inf)
    scores[[3, 4]] = [0.1, 0.9]  # Nicolas Cage's walk rates far higher; Eva Mendes plays Roxanne in Ghost Rider
    probabilities = np.where(np.isfinite(scores), np.exp(np.minimum(scores - 0.9, 0) / 0.05), 0.0)
    chosen = joined(sub, [0, 5], scores, probabilities, OPAQUE, 0.999, margin=0.0)
    assert list(np.flatnonzero(chosen >= 0.999)) == [3]
    assert joined(sub, [0], scores, probabilities, OPAQUE, 0.999) is probabilities  # one anchor: no join


def test_a_node_linked_to_both_anchors_replaces_the_answer_within_the_margin():
    # two films of a director; one of them stars the actor named too (through a performance)
    nodes = ["Director", "Actor", "Film One", "Film Two", "m.0perf"]
    edges = [(2, 0, 0), (3, 0, 0), (2, 1, 4), (4, 2, 1)]
    relations = ["film.film.directed_by", "film.film.starring", "film.performance.actor"]
    embedder = FakeEmbedder()
    sub = SubgraphView(node_keys=nodes, node_texts=nodes, node_vectors=embedder.embed(nodes),
                       src=np.asarray([e[0] for e in edges]), dst=np.asarray([e[2] for e in edges]),
                       relation=np.asarray([e[1] for e in edges]), relation_texts=relations,
                       relation_vectors=embedder.embed(relations))
    opaque = np.asarray([text.startswith("m.0") for text in nodes])
    scores = np.asarray([-np.inf, -np.inf, 0.6, 0.7, -np.inf])  # the walks rate Film Two higher
    probabilities = np.where(np.isfinite(scores), np.exp(np.minimum(scores - 0.7, 0) / 0.05), 0.0)
    assert list(np.flatnonzero(joined(sub, [0, 1], scores, probabilities, opaque, 0.999, margin=0.2) >= 0.999)) \
        == [2]
    assert joined(sub, [0, 1], scores, probabilities, opaque, 0.999, margin=0.05) is probabilities  # too far below


def test_a_name_the_question_says_whole_is_a_constraint_though_its_words_are_english():
    """"who plays johnny in ghost rider", a film `Ghost Rider` beside the anchor (the actor): its words are English
    ones, but the question says the whole name."""
    sub = view()
    constraints = constraint_nodes("who did nicolas cage play in ghost rider", sub, [4], [5, 6], FUNCTION_WORDS,
                                   PROPER)
    assert constraints == [0]
    assert constraint_nodes("who did nicolas cage play in the rider", sub, [4], [5, 6], FUNCTION_WORDS, PROPER) == []


# A network's podcasts, their genres and sports, a player's position and draft year: nodes named by common words and
# values, and one (`Father`) named by a relation's own word.
PODCASTS = [("Wild Margin", "network", "Lumen Media"), ("Foghorn Fables", "network", "Lumen Media"),
            ("Kettle Crown", "network", "Lumen Media"), ("Wild Margin", "genre", "Drama"),
            ("Foghorn Fables", "genre", "Comedy"), ("Kettle Crown", "genre", "Drama"),
            ("Wild Margin", "sport", "Ice Hockey"), ("Kettle Crown", "sport", "Hockey"),
            ("Foghorn Fables", "father", "Father"), ("Rook Vale", "position", "Center"),
            ("Rook Vale", "drafted in", "2018")]


def _ids(sub: SubgraphView, *names: str) -> set[int]:
    return {sub.node_texts.index(name) for name in names}


def _names(sub: SubgraphView, nodes) -> list[str]:
    return [sub.node_texts[n] for n in nodes]


def test_a_node_named_by_common_words_or_a_value_is_a_constraint_where_the_question_says_it_whole():
    sub = view_of(PODCASTS, FakeEmbedder())
    opaque = np.zeros(sub.num_nodes, dtype=bool)
    skip = FUNCTION_WORDS | {"network", "genre", "sport", "father"}
    podcasts = _ids(sub, "Lumen Media", "Wild Margin", "Foghorn Fables", "Kettle Crown")
    assert _names(sub, said_nodes("which comedy podcasts does lumen media put out", sub, podcasts, skip, opaque)) \
        == ["Comedy"]
    # inflection aside; values too; the anchor and the answers are no constraint
    assert _names(sub, said_nodes("which centers were drafted in 2018", sub, set(), skip, opaque)) \
        == ["Center", "2018"]
    assert _names(sub, said_nodes("which centers were drafted in 2018", sub, _ids(sub, "2018"), skip, opaque)) \
        == ["Center"]
    # the longer name said, not the name inside it; a relation's own word names no node; nothing said, nothing
    network = _ids(sub, "Lumen Media")
    assert _names(sub, said_nodes("ice hockey podcasts of lumen media", sub, network, skip, opaque)) == ["Ice Hockey"]
    assert said_nodes("who is the father of wild margin", sub, _ids(sub, "Wild Margin"), skip, opaque) == []
    assert said_nodes("what does lumen media put out", sub, network, skip, opaque) == []


def test_the_answers_linked_to_a_genre_the_question_names_stay():
    """"which comedy podcasts does lumen media put out": the walk from the network reaches its three podcasts; the one
    of the genre named is the answer. Where the question names no genre, or one all or none of them have, all stay."""
    sub = view_of(PODCASTS, FakeEmbedder())
    opaque = np.zeros(sub.num_nodes, dtype=bool)
    proper = np.ones(sub.num_nodes, dtype=bool)
    network = sub.node_texts.index("Lumen Media")
    probabilities = np.zeros(sub.num_nodes)
    probabilities[sorted(_ids(sub, "Wild Margin", "Foghorn Fables", "Kettle Crown"))] = 1.0
    kept = narrowed("which comedy podcasts does lumen media put out", sub, [network], probabilities, {network},
                    opaque, proper, 0.999)
    assert _names(sub, np.flatnonzero(kept >= 0.999)) == ["Foghorn Fables"]
    kept = narrowed("which drama podcasts does lumen media put out", sub, [network], probabilities, {network},
                    opaque, proper, 0.999)
    assert _names(sub, np.flatnonzero(kept >= 0.999)) == ["Wild Margin", "Kettle Crown"]
    for question in ("which podcasts does lumen media put out", "which center podcasts does lumen media put out"):
        assert narrowed(question, sub, [network], probabilities, {network}, opaque, proper, 0.999) is probabilities


def test_the_best_rated_node_linked_to_both_anchors_answers_not_every_one_within_the_margin():
    """"which battles did the regiment fight in the war": two battles of the war the regiment fought in; the walks
    rate one of them higher (it is reached by the walk that reads the question best), and it alone answers."""
    sub = view_of([("Battle One", "part of war", "The War"), ("Battle Two", "part of war", "The War"),
                   ("Battle Three", "part of war", "The War"), ("The Regiment", "fought in", "Battle One"),
                   ("The Regiment", "fought in", "Battle Two")], FakeEmbedder())
    opaque = np.zeros(sub.num_nodes, dtype=bool)
    scores = np.full(sub.num_nodes, -np.inf)
    # the walks rate Battle Three best; it is not the regiment's
    for name, score in (("Battle One", 0.5), ("Battle Two", 0.4), ("Battle Three", 0.9)):
        scores[sub.node_texts.index(name)] = score
    probabilities = np.where(np.isfinite(scores), np.exp(np.minimum(scores - 0.9, 0) / 0.05), 0.0)
    anchors = [sub.node_texts.index("The War"), sub.node_texts.index("The Regiment")]
    chosen = joined(sub, anchors, scores, probabilities, opaque, 0.999, margin=1.0)
    assert _names(sub, np.flatnonzero(chosen >= 0.999)) == ["Battle One"]
    assert joined(sub, anchors, scores, probabilities, opaque, 0.999, margin=0.3) is probabilities  # 0.4 below the best


def test_a_choice_the_question_offers_is_the_best_rated_of_its_names_a_walk_reaches():
    scores = np.array([-np.inf, 0.5, 0.9, -np.inf, 1.0])  # node 4, rated best, is not offered
    probabilities = np.array([0.0, 0.1, 0.4, 0.0, 1.0])
    chosen = chosen_among([1, 2, 3], scores, probabilities, 0.999)
    assert list(np.flatnonzero(chosen >= 0.999)) == [2]
    assert chosen_among([0, 3], scores, probabilities, 0.999) is probabilities  # none reached: the walks answer
    assert chosen_among([], scores, probabilities, 0.999) is probabilities

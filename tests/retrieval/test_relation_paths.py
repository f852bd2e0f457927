"""Zero-shot relation-path retrieval over a toy movie KG (real embedder, no database): the answers of 2-hop
questions stay in the subgraph, opaque ids are passed through and never answered, bad settings are refused."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from gretriever_neo4j.errors import InputError
from gretriever_neo4j.reader import ZeroShotReader, read, reader_input
from gretriever_neo4j.retrieval.kg import KnowledgeGraph
from gretriever_neo4j.retrieval.learned import as_source
from gretriever_neo4j.retrieval.relation_paths import (
    BACKWARD,
    FORWARD,
    PathConfig,
    PathRetriever,
    asks_for_a_category,
    beam_paths,
    categorical_steps,
    kg_relation_values,
    signature_scores,
    with_sexes,
)

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "reader"))
from toy_kg import PEOPLE, PERSON_TEMPLATES, answers_for, toy_kg  # noqa: E402


@pytest.fixture(scope="module")
def kg(embedder):
    return toy_kg(embedder)


def test_two_hop_questions_keep_their_answers(kg, embedder):
    retriever = PathRetriever(kg, embedder.embed)
    checked = 0
    for person in PEOPLE:
        for template, path in PERSON_TEMPLATES.items():
            answers = answers_for(kg, person, path)
            if len(path) != 2 or not answers:
                continue
            question = template.format(person)
            result = retriever.retrieve(question, embedder.embed([question])[0])
            assert result.seed_keys == [person], question  # linked by its name
            assert set(answers) <= set(result.subgraph.node_keys), question
            checked += 1
    assert checked >= 10


def test_the_zero_shot_reader_follows_the_relation_the_question_names(kg, embedder):
    retriever = PathRetriever(kg, embedder.embed)
    question = "which movies did Ada Stone direct"
    result = retriever.retrieve(question, embedder.embed([question])[0])
    item = reader_input(question, result, embedder.embed([question])[0], hints=result.seed_keys)
    reading = read(ZeroShotReader(embedder.embed), item, embedder.embed([item.masked])[0],
                   embedder.embed([question])[0])
    said = {item.view.node_texts[n] for n in reading.answers}
    assert said == set(answers_for(kg, "Ada Stone", PERSON_TEMPLATES[question.replace("Ada Stone", "{}")]))


def test_the_zero_shot_reader_answers_two_hop_questions(kg, embedder):
    """Coverage scoring (reader/coverage.py): a second hop the question asks for ("who directed the films X
    acted in") wins over stopping at the films."""
    retriever, reader = PathRetriever(kg, embedder.embed), ZeroShotReader(embedder.embed)
    right = asked = 0
    for person in PEOPLE:
        for template, path in PERSON_TEMPLATES.items():
            answers = set(answers_for(kg, person, path))
            if len(path) != 2 or not answers:
                continue
            question = template.format(person)
            result = retriever.retrieve(question, embedder.embed([question])[0])
            item = reader_input(question, result, embedder.embed([question])[0], hints=result.seed_keys)
            reading = read(reader, item, embedder.embed([item.masked])[0], embedder.embed([question])[0])
            right += item.view.node_texts[reading.answers[0]] in answers
            asked += 1
    assert asked >= 10 and right / asked >= 0.9, f"{right} of {asked}"


def compound_kg(embedder) -> KnowledgeGraph:
    """Freebase-like: a marriage is a compound node with an id for a name."""
    triples = [("Dirk", "people.person.spouse_s", "m.0x1"), ("m.0x1", "people.marriage.spouse", "Jessica"),
               ("m.0x1", "people.marriage.spouse", "Dirk"), ("m.0x1", "people.marriage.from", "2012"),
               ("Dirk", "sports.pro_athlete.teams", "m.0x2"), ("m.0x2", "sports.sports_team_roster.team", "Mavericks"),
               ("Dirk", "people.person.place_of_birth", "Würzburg")]
    return KnowledgeGraph.from_triples(triples).embedded(embedder.embed)


def test_opaque_nodes_are_ways_through_never_answers(embedder):
    kg = compound_kg(embedder)
    retriever = PathRetriever(kg, embedder.embed)
    question = "who is dirk wife"
    result = retriever.retrieve(question, embedder.embed([question])[0])
    assert "Jessica" in result.subgraph.node_keys
    item = reader_input(question, result, embedder.embed([question])[0], hints=result.seed_keys)
    reading = read(ZeroShotReader(embedder.embed), item, embedder.embed([item.masked])[0],
                   embedder.embed([question])[0])
    said = [item.view.node_texts[n] for n in reading.answers]
    assert said == ["Jessica"]  # not the compound node, not Dirk himself


def test_scores_and_settings():
    similarity = np.asarray([0.6, 0.1])
    config = PathConfig(hop_penalty=0.0, repeat_penalty=0.05)
    scores = signature_scores([((0, 0),), ((0, 0), (1, 0)), ((0, 0), (0, 1)), ()], similarity, set(), 0.3, config)
    assert scores[0] == pytest.approx(0.3) and scores[1] == pytest.approx(0.1) and scores[2] == pytest.approx(0.25)
    assert scores[3] == -np.inf
    assert signature_scores([((0, 0), (1, 0))], similarity, {(0, 0)}, 0.3, PathConfig(hop_penalty=1.0))[0] == \
        pytest.approx(0.1)  # a step onto an opaque node is no hop: no penalty
    with pytest.raises(InputError):
        PathConfig(beam_width=0)


def test_no_seed_or_no_edge_gives_an_empty_beam(kg, embedder):
    empty = beam_paths(np.zeros(0, np.int64), kg.incident, lambda e: (kg.head[e], kg.relation[e], kg.tail[e]),
                       lambda n: np.zeros(len(n), bool), lambda r: np.zeros(len(r)))
    assert empty.final == []
    lonely = KnowledgeGraph.from_triples([], nodes=["alone"]).with_embeddings(np.ones((1, 384), np.float32),
                                                                              np.zeros((0, 384), np.float32))
    result = PathRetriever(lonely, embedder.embed).retrieve("what is alone", embedder.embed(["what is alone"])[0])
    assert result.subgraph.node_keys == ["alone"] and not result.subgraph.edges


def test_a_question_about_what_is_shared_keeps_the_way_out_and_back_in_the_beam():
    from gretriever_neo4j.retrieval.relation_paths import asks_what_is_shared

    # X and B share a director A; the question asks for the genre of B (X's director's other film)
    kg = KnowledgeGraph.from_triples([("X", "directed_by", "A"), ("B", "directed_by", "A"),
                                      ("A", "born_in", "C"), ("B", "has_genre", "D")])
    directed, born, genre = (kg.relation_texts.index(t) for t in ("directed_by", "born_in", "has_genre"))
    similarity = {directed: 0.6, born: 0.7, genre: 0.8}

    def beam(gain):
        return beam_paths(np.asarray([kg.node_keys.index("X")]), kg.incident,
                          lambda e: (kg.head[e], kg.relation[e], kg.tail[e]), lambda n: np.zeros(len(n), bool),
                          lambda r: np.asarray([similarity[int(i)] for i in r]), PathConfig(beam_width=1),
                          round_trip_gain=gain)

    shared_genre = ((directed, 0), (directed, 1), (genre, 0))
    assert shared_genre not in [beam(None).paths[p] for p in beam(None).final]  # "born in" outranked the way back
    assert shared_genre in [beam(0.1).paths[p] for p in beam(0.1).final]
    assert asks_what_is_shared("what genres are the films that share a director with X")
    assert not asks_what_is_shared("what genre is the film X")
    assert asks_what_is_shared("who are X's coauthors") and asks_what_is_shared("name the costars of X")
    assert asks_what_is_shared("what else did the author of X write")
    assert not asks_what_is_shared("which countries border X") and not asks_what_is_shared("who are X's cousins")
    for question in ("who are X's bandmates", "name X's teammates", "who are X's colleagues", "X's siblings"):
        assert asks_what_is_shared(question), question
    for question in ("estimate the climate of X", "what did X animate", "the ultimate X"):  # not mates
        assert not asks_what_is_shared(question), question


def test_categorical_steps_are_relations_whose_few_values_many_heads_share():
    triples = [(f"film {i}", "has_genre", ["Drama", "Comedy"][i % 2]) for i in range(300)]
    triples += [(f"film {i}", "starred_actors", f"actor {i}") for i in range(300)]
    kg = KnowledgeGraph.from_triples(triples)
    values = kg_relation_values(kg)
    assert values == {"has_genre": (300, 300, 2), "starred_actors": (300, 300, 300)}
    share = PathConfig().categorical_share
    assert categorical_steps(values, share) == {("has_genre", FORWARD)}
    assert categorical_steps({"genre_of": (300, 2, 300)}, share) == {("genre_of", BACKWARD)}
    assert categorical_steps({"empty": (0, 0, 0)}, share) == frozenset()
    assert asks_for_a_category("what kind of film is X") and asks_for_a_category("what types are the films by X")
    assert not asks_for_a_category("who directed X")


def test_a_retrieval_for_a_category_question_says_which_steps_are_categorical(embedder):
    triples = [(f"Film {i}", "has_genre", ["Drama", "Comedy"][i % 2]) for i in range(300)]
    triples += [(f"Film {i}", "starred_actors", f"Actor {i}") for i in range(300)]
    kg = KnowledgeGraph.from_triples(triples)
    kg = kg.with_embeddings(embedder.embed(kg.node_texts), embedder.embed(kg.relation_texts))
    retriever = PathRetriever(kg, embedder.embed)
    question = "what kind of film is Film 7"
    result = retriever.retrieve(question, embedder.embed([question])[0])
    assert result.categorical == {("has_genre", FORWARD)}
    item = reader_input(question, result, embedder.embed([question])[0], hints=result.seed_keys)
    reading = read(ZeroShotReader(embedder.embed), item, embedder.embed([item.masked])[0],
                   embedder.embed([question])[0])
    assert [item.view.node_texts[n] for n in reading.answers] == ["Comedy"]
    other = "who starred in Film 7"
    assert retriever.retrieve(other, embedder.embed([other])[0]).categorical == frozenset()


def test_a_user_graph_is_read_in_the_direction_its_relations_name(embedder):
    """Users store "A author of B" as often as "B written by A": "who …" walks back along a relation that names
    its head, and a year is never who wrote a book."""
    triples = [("Wanda Vossberg", "author of", "Ember Street"), ("Ember Street", "published in", "1983"),
               ("Ember Street", "genre", "memoir"), ("Corvin Lemaire", "author of", "Tidewater"),
               ("Tidewater", "published in", "1990"), ("Wanda Vossberg", "works for", "Bluefen Foods"),
               ("Corvin Lemaire", "works for", "Bluefen Foods"), ("Ilse Quill", "works for", "Orrery Systems")]
    kg = KnowledgeGraph.from_triples(triples).embedded(embedder.embed)
    retriever, reader = PathRetriever(kg, embedder.embed), ZeroShotReader(embedder.embed)
    asked = {"Ember Street was written by whom": ["Wanda Vossberg"],
             "who is the author of Tidewater": ["Corvin Lemaire"],
             "who works for the same company as Wanda Vossberg": ["Corvin Lemaire"]}
    for question, gold in asked.items():
        result = retriever.retrieve(question, embedder.embed([question])[0])
        item = reader_input(question, result, embedder.embed([question])[0], hints=result.seed_keys)
        reading = read(reader, item, embedder.embed([item.masked])[0], embedder.embed([question])[0])
        said = [item.view.node_texts[n] for n in reading.answers]
        assert said == gold, (question, said)


def test_who_is_not_answered_by_a_word_for_a_kind_of_thing(embedder):
    """"who is in the band X": its members, not its genre ("indie rock", written all in lower case, names a kind
    of thing, not anybody)."""
    triples = [("Glass Harbour", "genre", "indie rock"), ("Static Meadow", "genre", "dream pop"),
               ("Arlo Kovacs", "memberOf", "Glass Harbour"), ("Bex Dufresne", "memberOf", "Glass Harbour"),
               ("Hana Ingram", "memberOf", "Static Meadow")]
    kg = KnowledgeGraph.from_triples(triples).embedded(embedder.embed)
    retriever, reader = PathRetriever(kg, embedder.embed), ZeroShotReader(embedder.embed)
    question = "who is in the band Glass Harbour"
    result = retriever.retrieve(question, embedder.embed([question])[0])
    item = reader_input(question, result, embedder.embed([question])[0], hints=result.seed_keys)
    reading = read(reader, item, embedder.embed([item.masked])[0], embedder.embed([question])[0])
    assert sorted(item.view.node_texts[n] for n in reading.answers) == ["Arlo Kovacs", "Bex Dufresne"]


def test_a_relation_a_word_names_by_itself_is_followed_where_the_embedder_rates_it_low(embedder):
    """"border" names Freebase's `adjoins` by a word family, not by anything MiniLM sees (it rates `located in` or
    `currency` nearer the question): with the naming the product gives the beam (`retrievers.paths.named_by_words`),
    the neighbours are kept even when only the best path's edges make the subgraph."""
    from gretriever_neo4j.retrievers.paths import named_by_words

    triples = [("Veloria", "location.location.adjoins", "Kestrand"),
               ("Veloria", "location.location.adjoins", "Ombria"),
               ("Veloria", "location.location.containedby", "Europe"),
               ("Veloria", "location.country.currency_used", "Veloria mark"),
               ("Veloria", "location.country.capital", "Tessel"),
               ("Kestrand", "location.location.containedby", "Europe")]
    kg = KnowledgeGraph.from_triples(triples).embedded(embedder.embed)
    config = PathConfig(max_final_paths=1, max_hops=1)
    question = "which countries border Veloria"
    kept = {}
    for naming in (None, named_by_words):
        retriever = PathRetriever(kg, embedder.embed, config, relation_naming=naming)
        result = retriever.retrieve(question, embedder.embed([question])[0], seeds=["Veloria"])
        kept[naming is not None] = {"Kestrand", "Ombria"} <= set(result.subgraph.node_keys)
    assert kept == {False: False, True: True}


def test_the_subgraph_does_not_depend_on_how_the_graph_is_numbered(embedder):
    """Where caps bind (a hub past `max_frontier`, `max_edges`) and scores tie, the beam decides by node key and
    relation text: the same triples numbered in another order (a graph held in memory and the same graph read
    through Neo4j) give the same subgraph, edge for edge."""
    triples = [("Mira Vale", "member of", f"Guild {i:02d}") for i in range(12)]
    triples += [(f"Guild {i:02d}", "based in", f"Town {i % 5}") for i in range(12)]
    triples += [(f"Guild {i:02d}", "founded by", f"Founder {i}") for i in range(12)]
    triples += [("Mira Vale", "rival of", f"Guild {i:02d}") for i in range(0, 12, 3)]
    config = PathConfig(max_frontier=3, max_edges=9, max_edges_per_path=4, beam_width=2)
    question = "in which towns are the guilds that Mira Vale is a member of based"

    def subgraph(order):
        kg = KnowledgeGraph.from_triples([triples[i] for i in order]).embedded(embedder.embed)
        result = PathRetriever(kg, embedder.embed, config).retrieve(question, embedder.embed([question])[0],
                                                                    seeds=["Mira Vale"])
        return result.subgraph.node_keys, [(e.src, e.text, e.dst) for e in result.subgraph.edges]

    rng = np.random.default_rng(0)
    first = subgraph(range(len(triples)))
    assert 3 < len(first[0]) < 20 and first[1]  # the caps bind: not every guild is kept
    for _ in range(3):
        assert subgraph(rng.permutation(len(triples))) == first


def test_a_question_asking_a_sex_brings_the_sex_of_the_people_on_family_edges(embedder):
    """"what did X's dad do" walks `parents>` to both parents; only their `gender` edges tell the father, so the
    subgraph holds them (and the reader answers through the father alone)."""
    family = KnowledgeGraph.from_triples([
        ("Ada Thorne", "parents", "Hugh Thorne"), ("Ada Thorne", "parents", "Mary Vale"),
        ("Hugh Thorne", "profession", "Astronomer"), ("Mary Vale", "profession", "Jurist"),
        ("Hugh Thorne", "gender", "Male"), ("Mary Vale", "gender", "Female"),
        ("Ada Thorne", "gender", "Female"), ("Hugh Thorne", "born in", "Wenlow")]).embedded(embedder.embed)
    retriever = PathRetriever(family, embedder.embed)

    def asked(question: str):
        result = retriever.retrieve(question, embedder.embed([question])[0])
        item = reader_input(question, result, embedder.embed([question])[0], hints=result.seed_keys)
        reading = read(ZeroShotReader(embedder.embed), item, embedder.embed([item.masked])[0],
                       embedder.embed([question])[0])
        return set(result.subgraph.node_keys), [item.view.node_texts[n] for n in reading.answers]

    nodes, answers = asked("what is the profession of Ada Thorne's father")
    assert {"Male", "Female"} <= nodes and answers == ["Astronomer"]
    nodes, answers = asked("what is the profession of Ada Thorne's parents")  # no sex asked
    assert sorted(answers) == ["Astronomer", "Jurist"]
    # what the beam chose (the family and profession edges) gains the people's gender edges, not other edges
    source = as_source(family)
    ids = {family.node_keys[i]: i for i in range(family.num_nodes)}
    chosen = np.asarray([0, 1, 2, 3])
    nodes, edges = with_sexes(source, np.asarray([ids[k] for k in ("Ada Thorne", "Hugh Thorne", "Mary Vale",
                                                                     "Astronomer", "Jurist")]), chosen)
    assert sorted(edges.tolist()) == [0, 1, 2, 3, 4, 5, 6]  # not `born in`
    assert {family.node_keys[n] for n in nodes} >= {"Male", "Female"}
    assert with_sexes(source, nodes[:1], np.asarray([2]))[1].tolist() == [2]  # no family edge: nothing added


def test_what_two_named_things_share_one_step_away_keeps_the_edge_from_each(embedder):
    """"which cables do A and B both invest in": the cable both `<consortium member` edges reach is the answer,
    and only the subgraph holding both edges shows it (the reader joins on them)."""
    triples = [("Starfathom Cable", "consortium member", "Rhondel Mobile"),
               ("Starfathom Cable", "consortium member", "Tallowmere Telecom"),
               ("Silverkelp Cable", "consortium member", "Rhondel Mobile"),
               ("Ironreef Cable", "consortium member", "Rhondel Mobile"),
               ("Halcyon Link", "consortium member", "Tallowmere Telecom"),
               ("Rhondel Mobile", "headquarters", "Port Ellarin"), ("Tallowmere Telecom", "headquarters", "Velloway")]
    kg = KnowledgeGraph.from_triples(triples).embedded(embedder.embed)
    question = "which cables are Rhondel Mobile and Tallowmere Telecom both consortium members of"
    result = PathRetriever(kg, embedder.embed).retrieve(question, embedder.embed([question])[0])
    keys = result.subgraph.node_keys
    held = {(keys[e.src], keys[e.dst]) for e in result.subgraph.edges}
    assert {("Starfathom Cable", "Rhondel Mobile"), ("Starfathom Cable", "Tallowmere Telecom")} <= held
    item = reader_input(question, result, embedder.embed([question])[0], hints=result.seed_keys)
    reading = read(ZeroShotReader(embedder.embed), item, embedder.embed([item.masked])[0],
                   embedder.embed([question])[0])
    assert [item.view.node_texts[n] for n in reading.answers] == ["Starfathom Cable"]


def test_a_choice_the_question_offers_is_walked_to_from_what_it_is_about(embedder):
    """"is Ada Thorne male or female": linking finds all three names; walked from "Male" and "Female" too, the walk
    from Ada back to them would be no path, so they are no seeds, and the answer is the one her walk reaches (not
    left out for being named in the question)."""
    family = KnowledgeGraph.from_triples([
        ("Ada Thorne", "gender", "Female"), ("Hugh Thorne", "gender", "Male"), ("Mary Vale", "gender", "Female"),
        ("Ada Thorne", "parents", "Hugh Thorne"), ("Ada Thorne", "born in", "Wenlow")]).embedded(embedder.embed)
    question = "is Ada Thorne male or female"
    result = PathRetriever(family, embedder.embed).retrieve(question, embedder.embed([question])[0],
                                                            seeds=["Ada Thorne", "Male", "Female"])
    assert result.seed_keys == ["Ada Thorne"]
    item = reader_input(question, result, embedder.embed([question])[0], hints=result.seed_keys)
    reading = read(ZeroShotReader(embedder.embed), item, embedder.embed([item.masked])[0],
                   embedder.embed([question])[0])
    assert [item.view.node_texts[n] for n in reading.answers] == ["Female"] and reading.chosen_by == "narrowed"

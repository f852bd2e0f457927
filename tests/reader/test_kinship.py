"""Family words (reader/kinship.py): kinship spelled out as hops, the sexes of one role and the two directions of a
relation that holds both ways answered together; and the zero-shot reader over a small family graph."""

from __future__ import annotations

import pytest

from gretriever_neo4j.reader.kinship import kin_steps, merged_relations, sex_chain, spell_out_kinship

from toy_kg import answers, view_of

FAMILY_RELATIONS = ["is the father of", "is the mother of", "married", "was born in"]


def test_kinship_no_relation_says_is_spelled_out_as_hops():
    spell = lambda q: spell_out_kinship(q, FAMILY_RELATIONS)  # noqa: E731
    assert spell("who were X's grandparents") == "who were x's parents of parents"
    assert spell("who are X's grandchildren") == "who are x's children of children"
    assert spell("who are the brothers and sisters of X") == "who are the children of the same parents of x"
    assert spell("who was X's father-in-law") == "who was x's spouse's father"
    assert spell("who is X married to") == "who is X married to"  # nothing to spell out: the question as it was
    # a graph with a relation for the word is asked the word
    assert spell_out_kinship("who are X's siblings", ["sibling of", "parent of"]) == "who are X's siblings"
    assert spell_out_kinship("who is X's father-in-law", ["father-in-law of"]) == "who is X's father-in-law"


def test_family_words_count_the_hops_they_ask_for():
    assert kin_steps(["parents", "parents"]) == 2
    assert kin_steps(["children", "marry"]) == 2
    assert kin_steps(["father", "born"]) == 0  # one family hop: nothing to count


def test_relations_a_question_cannot_tell_apart():
    same, both = merged_relations(FAMILY_RELATIONS, ["parents"])
    assert same == [0, 0, 2, 3] and both == {2}  # father and mother are one role; married holds both ways
    same, _ = merged_relations(["sports_team_roster.team", "player_stats.team"], ["team"])
    assert same == [0, 1]  # two relations of one name stay two
    same, _ = merged_relations(FAMILY_RELATIONS, ["father"])
    assert same == [0, 1, 2, 3]  # a question that asks for the father keeps him apart
    same, both = merged_relations(["hasFather", "hasMother", "lore:rivalOf"], ["parents"])
    assert same == [0, 0, 2] and both == {2}


FAMILY = [("Enoch Scarrow", "is the father of", "Silas Scarrow"),
          ("Susannah Harrow", "is the mother of", "Silas Scarrow"),
          ("Enoch Scarrow", "is the father of", "Tabitha Scarrow"),
          ("Susannah Harrow", "is the mother of", "Tabitha Scarrow"),
          ("Ezra Scarrow", "is the father of", "Enoch Scarrow"),
          ("Eudora Mewburn", "is the mother of", "Enoch Scarrow"),
          ("Abel Harrow", "is the father of", "Susannah Harrow"),
          ("Enoch Scarrow", "married", "Susannah Harrow"),
          ("Drusilla Quell", "married", "Silas Scarrow"),
          ("Tabitha Scarrow", "married", "Jabez Odger"),
          ("Silas Scarrow", "was born in", "Wenlow"),
          ("Tabitha Scarrow", "was born in", "Caddenham"),
          ("Enoch Scarrow", "was born in", "Hemmingvale"),
          ("Susannah Harrow", "was born in", "Little Pelling"),
          ("Silas Scarrow", "was born on", "15 June 1841"),
          ("Drusilla Quell", "was born on", "2 May 1843"),
          ("Abel Quell", "is the father of", "Drusilla Quell"), ("Abel Quell", "married", "Mercy Lark"),
          ("Enoch Scarrow", "worked as", "wheelwright")]


@pytest.fixture(scope="module")
def family(embedder):
    return view_of(FAMILY, embedder)


def ask(view, embedder, question: str, person: str) -> list[str]:
    return answers(view, embedder, question, question.replace(person, "X"), view.node_texts.index(person))


def test_parents_are_both_parents_and_grandparents_two_hops_up(family, embedder):
    assert sorted(ask(family, embedder, "who were the parents of Silas Scarrow", "Silas Scarrow")) == \
        ["Enoch Scarrow", "Susannah Harrow"]
    assert sorted(ask(family, embedder, "who were Silas Scarrow's grandparents", "Silas Scarrow")) == \
        ["Abel Harrow", "Eudora Mewburn", "Ezra Scarrow"]
    assert sorted(ask(family, embedder, "who are Ezra Scarrow's grandchildren", "Ezra Scarrow")) == \
        ["Silas Scarrow", "Tabitha Scarrow"]


def test_siblings_share_a_parent(family, embedder):
    assert ask(family, embedder, "who are Silas Scarrow's siblings", "Silas Scarrow") == ["Tabitha Scarrow"]
    assert ask(family, embedder, "who are the brothers and sisters of Tabitha Scarrow", "Tabitha Scarrow") == \
        ["Silas Scarrow"]


def test_a_marriage_stored_one_way_is_asked_both_ways(family, embedder):
    assert ask(family, embedder, "who did Silas Scarrow marry", "Silas Scarrow") == ["Drusilla Quell"]
    assert ask(family, embedder, "who did Drusilla Quell marry", "Drusilla Quell") == ["Silas Scarrow"]
    assert ask(family, embedder, "who was Drusilla Quell's father-in-law", "Drusilla Quell") == ["Enoch Scarrow"]
    assert sorted(ask(family, embedder, "who did Enoch Scarrow's children marry", "Enoch Scarrow")) == \
        ["Drusilla Quell", "Jabez Odger"]


def test_what_x_owns_is_the_first_hop(family, embedder):
    assert sorted(ask(family, embedder, "where were Enoch Scarrow's children born", "Enoch Scarrow")) == \
        ["Caddenham", "Wenlow"]
    assert ask(family, embedder, "where was Silas Scarrow's father born", "Silas Scarrow") == ["Hemmingvale"]


def test_a_date_written_out_answers_when_and_an_occupation_is_what_someone_worked_as(family, embedder):
    assert ask(family, embedder, "what is Silas Scarrow's date of birth", "Silas Scarrow") == ["15 June 1841"]
    assert ask(family, embedder, "when was Silas Scarrow born", "Silas Scarrow") == ["15 June 1841"]
    assert ask(family, embedder, "what was Enoch Scarrow's occupation", "Enoch Scarrow") == ["wheelwright"]


def test_family_words_as_people_say_them(family, embedder):
    """"dad", "mum", "other half" are read as the graph's relations say them (idioms of the word lists): a question by
    sex keeps the sexes apart, where the unknown word let the mother answer for the father."""
    assert ask(family, embedder, "who is Silas Scarrow's dad", "Silas Scarrow") == ["Enoch Scarrow"]
    assert ask(family, embedder, "who was Silas Scarrow's mum", "Silas Scarrow") == ["Susannah Harrow"]
    assert ask(family, embedder, "who is Silas Scarrow's other half", "Silas Scarrow") == ["Drusilla Quell"]
    assert ask(family, embedder, "where was Silas Scarrow's dad born", "Silas Scarrow") == ["Hemmingvale"]


def test_the_sex_asked_at_each_family_step_nearest_x_first():
    assert sex_chain("where was X's mum's husband born") == "FM"
    assert sex_chain("What was the job of the dad of X's other half?") == "-M"  # X's spouse, then that one's father
    assert sex_chain("who is the father of X's father") == "MM"
    assert sex_chain("who was X's paternal grandfather") == "MM"
    assert sex_chain("maternal grandfather of X") == "FM"
    assert sex_chain("In which town was X's father-in-law born?") == "-M"
    assert sex_chain("X great grandmother") == "--F"
    assert sex_chain("X's paternal great grandfather") == "M-M"  # X's father, a parent of his, that one's father
    assert sex_chain("who were the daughters of X") == "F"
    # no sex asked, both sexes asked of one step, no X or two: nothing
    assert sex_chain("who were X's grandparents") == ""
    assert sex_chain("who did X's brothers and sisters marry") == ""
    assert sex_chain("what did X invent") == ""
    assert sex_chain("who is the father of Silas") == ""


# parents stored without their sex (`parents`); the sex is a `gender` edge
SEXLESS = [("Ada Thorne", "parents", "Hugh Thorne"), ("Ada Thorne", "parents", "Mary Vale"),
           ("Hugh Thorne", "gender", "Male"), ("Mary Vale", "gender", "Female"),
           ("Hugh Thorne", "profession", "Astronomer"), ("Mary Vale", "profession", "Jurist"),
           ("Hugh Thorne", "spouse", "Mary Vale"), ("Ada Thorne", "gender", "Female")]


def test_a_sex_asked_keeps_the_answers_reached_through_people_of_that_sex(embedder):
    from gretriever_neo4j.reader.constraints import node_sexes

    view = view_of(SEXLESS, embedder)
    sexes = node_sexes(view)
    assert sexes[view.node_texts.index("Hugh Thorne")] == "M" and sexes[view.node_texts.index("Mary Vale")] == "F"
    assert sexes[view.node_texts.index("Astronomer")] == ""
    assert sorted(ask(view, embedder, "what is the profession of Ada Thorne's parents", "Ada Thorne")) == \
        ["Astronomer", "Jurist"]
    assert ask(view, embedder, "what is the profession of Ada Thorne's dad", "Ada Thorne") == ["Astronomer"]
    assert ask(view, embedder, "what is the profession of Ada Thorne's mother", "Ada Thorne") == ["Jurist"]
    assert ask(view, embedder, "who is Ada Thorne's mum", "Ada Thorne") == ["Mary Vale"]

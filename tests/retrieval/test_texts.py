"""What node and relation texts say by themselves: ids, values, common nouns, relation names read as words."""

from __future__ import annotations

from gretriever_neo4j.retrieval.texts import humanize_relation, is_a_common_noun, is_a_value, is_opaque, own_name


def test_ids_values_and_common_nouns():
    assert is_opaque("m.08__j0t") and is_opaque("g.1224tf0c") and not is_opaque("Mobile")
    assert all(is_a_value(t) for t in ("1983", "1901-09-14", "7.5", "1,000", "2009-01-20T00:00:00Z"))
    assert all(is_a_value(t) for t in ("12 March 1841", "3rd of May 1790", "March 12, 1841", "Sept. 1901",
                                       "4 jan 1900"))
    assert not any(is_a_value(t) for t in ("2014 World Series", "Port Aldis", "m.08__j0t", "B52", "May Day",
                                           "March of the Penguins", "June Carter 1929"))
    assert all(is_a_common_noun(t) for t in ("indie rock", "bass guitar", "new york city"))
    assert not any(is_a_common_noun(t) for t in ("Port Aldis", "iPhone", "1983", "", "-"))


def test_relation_names_read_as_words():
    assert humanize_relation("people.person.spouse_s") == "person spouse s"
    assert humanize_relation("directed_by") == "directed by"
    # an RDF export's names: the prefix or namespace says nothing of the relation; kebab-case reads as words
    assert humanize_relation("lore:memberOfFaction") == "member Of Faction"
    assert humanize_relation("schema:birthPlace") == "birth Place"
    assert humanize_relation("http://dbpedia.org/ontology/birthPlace") == "birth Place"
    assert humanize_relation("http://example.org/family#hasParent") == "has Parent"
    assert humanize_relation("cooked-by-method") == "cooked by method"
    assert humanize_relation("born in: town") == "born in town"  # words, not a prefix
    # a relation's own name: a Freebase name's last part, an RDF name's local name
    assert own_name("people.person.place_of_birth") == "place of birth"
    assert own_name("schema:birthPlace") == "birth Place"


def test_a_column_headers_abbreviations_are_spelled_out_where_they_are_no_word():
    assert humanize_relation("pob") == "place of birth" and own_name("mgr") == "manager"
    assert humanize_relation("prev_club") == "previous club" and humanize_relation("developed_by_org").endswith(
        "organization")
    assert humanize_relation("cap.") == own_name("cap.") == "capacity"  # written with a dot: an abbreviation
    assert humanize_relation("cap") == "cap" and humanize_relation("pop") == "pop"  # words of their own


def test_a_dot_that_ends_a_word_is_no_freebase_domain():
    assert own_name("Population (approx.)") == "Population (approx )"
    assert own_name("Jr.,people.person.children") == "children"  # a name's comma, then a Freebase name
    assert own_name("he was baptized there, and died.") == ""  # a sentence (a misparsed line) names no relation


def test_a_users_record_keys_are_ways_through_and_names_with_numbers_are_not():
    assert all(is_opaque(t) for t in ("EXH-2031", "LOAN-0447", "ORD-2024-0193", "evt_0042"))
    assert not any(is_opaque(t) for t in ("B52", "TRANQ2", "COVID-19", "Boeing 747", "F-16", "A380", "Apollo 11"))


def test_a_name_run_together_as_one_word_is_written_apart():
    # NELL's relation names; ConceptNet's, lowered
    assert humanize_relation("athleteplaysforteam") == "athlete plays for team"
    assert humanize_relation("teamcoach") == "team coach"
    assert humanize_relation("stadiumlocatedincity") == "stadium located in city"
    assert humanize_relation("usedfor") == "used for"
    # a word the dictionary knows, a split into no words, a part of a name with separators: as they are
    assert humanize_relation("birthplace") == "birthplace"
    assert humanize_relation("usnris") == "usnris"
    assert humanize_relation("honouriam") == "honouriam"
    assert own_name("location.location.containedby") == "containedby"

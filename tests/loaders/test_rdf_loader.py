"""The "rdf" loader on committed and generated files: labels in a chosen language, readable names where there are
none, values the reader recognises, blank nodes as opaque records, streaming N-Triples, bad input located."""

from __future__ import annotations

from pathlib import Path

import pytest

from gretriever_neo4j.errors import InputError
from gretriever_neo4j.loaders import get_loader
from gretriever_neo4j.loaders.rdf import literal_text, readable_local_name, relation_text
from gretriever_neo4j.retrieval.texts import is_a_value, is_opaque

FIXTURES = Path(__file__).parent / "fixtures" / "rdf"
WIKIDATA = FIXTURES / "wikidata_germany.ttl"


def _facts(records) -> tuple[dict[str, str], set[tuple[str, str, str]]]:
    """node key -> text, and (head text, relation, tail text) of every edge."""
    records = list(records)
    texts = {node.key: node.text for record in records for node in record.nodes}
    edges = {(texts[e.src], e.text, texts[e.dst]) for record in records for e in record.edges}
    return texts, edges


def test_turtle_slice_in_english_names_nodes_by_labels_and_never_by_iris():
    texts, edges = _facts(get_loader("rdf").read(WIKIDATA))
    assert ("Germany", "capital", "Berlin") in edges
    assert ("Cologne", "located in or next to body of water", "Rhine") in edges
    assert not [text for text in texts.values() if "://" in text]
    assert not [edge for edge in edges if "same as" in edge[1] or edge[1] in ("label", "name")]  # no such edges
    assert ("Germany", "description", "country in Central Europe") in edges
    assert not [edge for edge in edges if edge[2] == "Staat in Mitteleuropa"]  # another language: left out
    assert ("Germany", "inception", "1949-05-23") in edges and is_a_value("1949-05-23")


def test_turtle_slice_in_german_and_a_blank_node_record_walked_through():
    texts, edges = _facts(get_loader("rdf").read(WIKIDATA, lang="de"))
    assert ("Deutschland", "Hauptstadt", "Berlin") in edges and ("Köln", "liegt an Gewässer", "Rhein") in edges
    records = [(head, tail) for head, relation, tail in edges if relation == "Einwohnerzahl"]
    (record,) = [tail for head, tail in records if head == "Berlin"]
    assert is_opaque(record)
    assert (record, "Einwohnerzahl", "3644826") in edges and (record, "Zeitpunkt", "2018-12-31") in edges
    assert is_a_value("3644826") and is_a_value("2018-12-31")


NT = """\
<http://ex.org/Tom_Hanks> <http://ex.org/actedIn> <http://ex.org/Apollo_13> .
<http://ex.org/Tom_Hanks> <http://ex.org/birth_date> "1956-07-09"^^<http://www.w3.org/2001/XMLSchema#date> .
<http://ex.org/Tom_Hanks> <http://ex.org/heightInMetres> "1.83E0"^^<http://www.w3.org/2001/XMLSchema#double> .
<http://ex.org/Tom_Hanks> <http://ex.org/award> _:a1 .
_:a1 <http://ex.org/awardName> "Academy Award for Best Actor" .
_:a1 <http://ex.org/year> "1994"^^<http://www.w3.org/2001/XMLSchema#gYear> .
# a comment
<http://ex.org/Apollo_13> <http://www.w3.org/2000/01/rdf-schema#label> "Apollo 13"@en .
<http://ex.org/Apollo_13> <http://www.w3.org/2002/07/owl#sameAs> <http://other.org/A13> .
"""


def test_ntriples_labels_after_use_readable_local_names_and_typed_values(tmp_path):
    path = tmp_path / "films.nt"
    path.write_text(NT)
    records = list(get_loader("rdf").read(path, graph="films"))
    texts, edges = _facts(records)
    assert {record.graph_id for record in records} == {"films"}
    assert ("Tom Hanks", "acted in", "Apollo 13") in edges  # label given after the edge; local name made readable
    assert ("Tom Hanks", "birth date", "1956-07-09") in edges
    assert ("Tom Hanks", "height in metres", "1.83") in edges
    (record,) = [tail for head, relation, tail in edges if relation == "award"]
    assert is_opaque(record) and (record, "year", "1994") in edges
    assert len(edges) == 6  # the label and owl:sameAs are no edges
    again = list(get_loader("rdf").read(path, graph="films"))
    assert [r.nodes for r in again] == [r.nodes for r in records]  # blank nodes keyed the same on every read


def test_limit_caps_edges_and_batch_splits_records(tmp_path):
    path = tmp_path / "chain.nt"
    path.write_text("".join(f"<http://ex.org/e{i}> <http://ex.org/next> <http://ex.org/e{i + 1}> .\n"
                            for i in range(25)))
    records = list(get_loader("rdf").read(path, batch=10))
    assert [len(record.edges) for record in records] == [10, 10, 5]
    assert records[0].line == 1 and records[1].line == 11
    assert sum(len(r.edges) for r in get_loader("rdf").read(path, limit=7, batch=5)) == 7
    assert list(get_loader("rdf").read(path, limit=0)) == []


def test_folder_reads_labels_from_any_file_and_scopes_blank_nodes_per_file(tmp_path):
    (tmp_path / "a_edges.nt").write_text('<http://ex.org/Q1> <http://ex.org/rec> _:b .\n_:b <http://ex.org/v> "1" .\n')
    (tmp_path / "b_edges.nt").write_text('<http://ex.org/Q1> <http://ex.org/rec> _:b .\n')
    (tmp_path / "labels.ttl").write_text('<http://ex.org/Q1> <http://www.w3.org/2004/02/skos/core#prefLabel> '
                                         '"Douglas Adams" .\n')
    (tmp_path / "README.md").write_text("not RDF")
    records = list(get_loader("rdf").read(tmp_path, graph="g"))
    texts, edges = _facts(records)
    assert texts["http://ex.org/Q1"] == "Douglas Adams"
    assert {key for key in texts if key.startswith("_:")} == {"_:a_edges.nt/b", "_:b_edges.nt/b"}


def test_malformed_ntriples_line_names_file_and_line_and_can_be_skipped(tmp_path):
    path = tmp_path / "bad.nt"
    path.write_text('<http://ex.org/a> <http://ex.org/r> <http://ex.org/b> .\n'
                    '<http://ex.org/a> <http://ex.org/r> "x .\n')
    with pytest.raises(InputError) as caught:
        list(get_loader("rdf").read(path))
    assert caught.value.source == str(path) and caught.value.line == 2
    assert "malformed N-Triples" in str(caught.value) and "\n" not in str(caught.value)
    skipped: list[InputError] = []
    records = list(get_loader("rdf").read(path, on_bad_row=skipped.append))
    assert sum(len(r.edges) for r in records) == 1 and [e.line for e in skipped] == [2]


def test_malformed_turtle_names_file_and_line(tmp_path):
    path = tmp_path / "bad.ttl"
    path.write_text('@prefix ex: <http://ex.org/> .\nex:a ex:r ex:b .\nex:a ex:r "unterminated .\nex:c ex:r ex:d .\n')
    with pytest.raises(InputError) as caught:
        list(get_loader("rdf").read(path))
    assert caught.value.source == str(path) and caught.value.line == 3, str(caught.value)
    assert "\n" not in str(caught.value)


def test_not_an_rdf_source(tmp_path):
    (tmp_path / "notes.txt").write_text("hello")
    with pytest.raises(InputError, match="not an RDF file"):
        get_loader("rdf").read(tmp_path / "notes.txt")
    with pytest.raises(InputError, match="no RDF file"):
        get_loader("rdf").read(tmp_path)


def test_names_and_values_made_readable():
    from rdflib import Literal, URIRef
    from rdflib.namespace import XSD

    assert readable_local_name("http://dbpedia.org/resource/Tom_Hanks") == "Tom Hanks"
    assert readable_local_name("http://ex.org/FilmDirector") == "Film Director"
    assert relation_text("http://dbpedia.org/ontology/birthPlace") == "birth place"
    assert relation_text("http://ex.org/has_ISBN") == "has ISBN"
    assert literal_text(Literal("1999-03-31T00:00:00Z", datatype=XSD.dateTime)) == "1999-03-31"
    assert literal_text(Literal("+42", datatype=XSD.integer)) == "42"
    assert literal_text(Literal("2.5E1", datatype=XSD.double)) == "25"
    assert all(is_a_value(literal_text(Literal(text, datatype=URIRef(XSD + kind)))) for text, kind in
               (("1999-03-31T12:30:00+02:00", "dateTime"), ("1.5e-3", "double"), ("136.50", "decimal")))

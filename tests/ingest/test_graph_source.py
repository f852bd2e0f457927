"""Where an ingest read its graph from, in words (`GraphSource`): what `gqa stats` and the web page show."""

from __future__ import annotations

from types import SimpleNamespace

from gretriever_neo4j.ingest.graphs import GraphSource, describe_source
from gretriever_neo4j.ingest.neo4j_source import describe_neo4j_source


def test_each_loader_names_its_files_not_their_folders(tmp_path):
    assert describe_source("triples", "/data/kin/kb.tsv", {}) == GraphSource("triples file kb.tsv")
    assert describe_source("csv", "/data/g1", {}).text == "CSV files nodes.csv, edges.csv"
    named = {"nodes": tmp_path / "n.csv", "edges": "e.csv"}
    assert describe_source("csv", None, named).text == "CSV files n.csv, e.csv"
    assert describe_source("rdf", "/data/slice.ttl", {}).text == "RDF file slice.ttl"
    assert describe_source("rdf", str(tmp_path), {}).text == f"RDF folder {tmp_path.name}"
    assert describe_source("webqsp", None, {}).text == "benchmark webqsp"
    assert describe_source("metaqa", "/data/metaqa", {}).text == "benchmark metaqa"


def test_a_neo4j_source_keeps_element_ids_only_from_gqas_own_database_without_a_query():
    other = SimpleNamespace(describe="Neo4j at bolt://films:7687", database="films")
    own = SimpleNamespace(describe="Neo4j at bolt://127.0.0.1:7687", database="neo4j")
    assert describe_neo4j_source(own, None, True) == GraphSource("Neo4j: same database", element_ids=True)
    query = "MATCH (p)-[:DIRECTED]->(m) RETURN p.name, 'directed', m.title"
    assert describe_neo4j_source(own, query, True) == GraphSource("Neo4j: same database (query)", query=query)
    assert describe_neo4j_source(other, None, False) == GraphSource("Neo4j at bolt://films:7687, database films")
    assert GraphSource("x", element_ids=True).fields() == {"source": "x", "source_query": None,
                                                           "source_element_ids": True}
    assert GraphSource("x").fields()["source_element_ids"] is None  # absent on the record, not false

"""`gqa ingest rdf` and `gqa ingest neo4j` against the real Neo4j server: committed RDF files parsed by rdflib, and a
subset of Neo4j's Movies graph written beside gqa's own nodes (labels Person/Movie) and removed afterwards."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli_helpers import gqa, invoke

pytestmark = pytest.mark.neo4j
HERE = Path(__file__).parent
WIKIDATA = HERE.parent / "loaders" / "fixtures" / "rdf" / "wikidata_germany.ttl"
MOVIES = HERE / "fixtures" / "movies.cypher"


@pytest.fixture()
def cli_env(neo4j_settings, monkeypatch):
    monkeypatch.setenv("NEO4J_URI", neo4j_settings.uri)
    monkeypatch.setenv("NEO4J_PASSWORD", neo4j_settings.password)


def _source_state(driver) -> tuple[list, list]:
    nodes, _, _ = driver.execute_query("MATCH (n) WHERE n:Person OR n:Movie "
                                       "RETURN elementId(n) AS id, labels(n) AS labels, properties(n) AS p ORDER BY id")
    rels, _, _ = driver.execute_query("MATCH (a)-[r]->(b) WHERE (a:Person OR a:Movie) AND (b:Person OR b:Movie) "
                                      "RETURN elementId(r) AS id, type(r) AS t, properties(r) AS p ORDER BY id")
    return [tuple(r.values()) for r in nodes], [tuple(r.values()) for r in rels]


@pytest.fixture()
def movies(neo4j_driver):
    """The Movies subset in gqa's own database, and only what this test created removed afterwards."""
    if _source_state(neo4j_driver)[0]:
        pytest.skip("the database already holds Person/Movie nodes; this test does not touch them")
    script = "\n".join(line for line in MOVIES.read_text().splitlines() if not line.startswith("//"))
    neo4j_driver.execute_query(script)
    created = [row[0] for row in _source_state(neo4j_driver)[0]]
    yield created
    neo4j_driver.execute_query("MATCH (n) WHERE elementId(n) IN $ids DETACH DELETE n", ids=created)


def _answers(graph: str, question: str) -> set[str]:
    result = invoke("ask", "--graph", graph, "--reader-only", "--json", question)
    assert result.exit_code == 0, result.output[-2000:]
    return {node["text"] for node in json.loads(result.stdout)["answer"]["nodes"]}


def _ingest(*args: str) -> dict:
    result = invoke("ingest", *args, "--json")
    assert result.exit_code == 0, result.output[-2000:]
    return json.loads(result.stdout)


def _stored(store, graph: str):
    texts = {row["key"]: row["text"] for row in store.kg_nodes(graph, with_embeddings=False)}
    return texts, {(texts[row["src"]], row["text"], texts[row["dst"]]) for row in store.kg_triples(graph)}


def test_movies_graph_from_neo4j_answers_zero_shot_and_leaves_the_source_alone(store, movies, neo4j_driver, cli_env):
    graph = f"{store.test_prefix}-movies"
    before = _source_state(neo4j_driver)
    report = _ingest("neo4j", "--graph", graph)
    texts, edges = _stored(store, graph)
    assert set(movies) <= set(texts)  # gqa's nodes keep the source's element ids as their keys
    assert ("Lana Wachowski", "directed", "The Matrix") in edges and ("The Matrix", "released", "1999") in edges
    roles = [tail for head, relation, tail in edges if head == "Keanu Reeves" and relation == "acted in"]
    assert "The Matrix" in roles and any((record, "roles", "Neo") in edges for record in roles)
    assert report["nodes_written"] == len(texts) and report["edges_written"] == len(edges)
    assert store.statistics()["graphs"][graph]["source"] == "Neo4j: same database"
    _browser_shows_the_source_nodes(store, neo4j_driver, graph, set(movies))

    assert _answers(graph, "who directed The Matrix?") == {"Lana Wachowski", "Lilly Wachowski"}
    assert _answers(graph, "which movies did Tom Hanks act in?") == {
        "You've Got Mail", "Sleepless in Seattle", "Apollo 13", "The Da Vinci Code", "Cast Away"}
    assert _answers(graph, "who acted in a movie directed by Ron Howard?") == {
        "Tom Hanks", "Kevin Bacon", "Ed Harris", "Bill Paxton", "Gary Sinise", "Ian McKellen", "Audrey Tautou",
        "Paul Bettany", "Frank Langella", "Michael Sheen", "Oliver Platt", "Sam Rockwell"}
    assert _source_state(neo4j_driver) == before  # read-only: nothing in the source changed

    again = _ingest("neo4j", "--graph", graph)
    assert again["nodes_written"] == again["edges_written"] == again["texts_embedded"] == 0

    neo4j_driver.execute_query("MATCH (:Person {name: 'Robert Zemeckis'})-[r:DIRECTED]->() DELETE r")
    neo4j_driver.execute_query("MATCH (m:Movie {title: 'Cast Away'}) SET m.title = 'Cast Away (2000)'")
    synced = _ingest("neo4j", "--graph", graph, "--sync")
    texts, edges = _stored(store, graph)
    assert ("Robert Zemeckis", "directed", "Cast Away (2000)") not in edges and "Cast Away" not in texts.values()
    assert ("Tom Hanks", "acted in", "Cast Away (2000)") in edges and synced["edges_deleted"] >= 1

    directors = f"{store.test_prefix}-directors"
    _ingest("neo4j", "--graph", directors, "--query",
            "MATCH (p:Person)-[:DIRECTED]->(m:Movie) RETURN p.name, 'directed', m.title")
    assert ("Ron Howard", "directed", "Apollo 13") in _stored(store, directors)[1]
    assert len(_stored(store, directors)[1]) == 8
    recorded = store.statistics()["graphs"][directors]
    assert recorded["source"] == "Neo4j: same database (query)" and recorded["source_query"].startswith("MATCH (p")
    assert not _browser_statement_rows(neo4j_driver, _retrieved(directors, "who directed Apollo 13?"))[1]
    limited = f"{store.test_prefix}-limited"
    assert _ingest("neo4j", "--graph", limited, "--limit", "5")["graphs"] == 1
    assert len(_stored(store, limited)[0]) >= 5


def _retrieved(graph: str, question: str) -> dict:
    result = invoke("ask", "--graph", graph, "--retrieve-only", "--json", question)
    assert result.exit_code == 0, result.output[-2000:]
    return json.loads(result.stdout)


def _browser_statement_rows(driver, retrieval: dict) -> tuple[dict[str, str], dict[str, str]]:
    """What the answer's Browser statement returns: gqa's nodes (element id -> key) and the source nodes beside
    them (element id -> their gqa node's key)."""
    records, _, _ = driver.execute_query(retrieval["browser_statement"])
    ours = {r["n"].element_id: r["n"]["key"] for r in records}
    ours |= {r["m"].element_id: r["m"]["key"] for r in records if r["m"] is not None}
    return ours, {r["s"].element_id: r["n"]["key"] for r in records if r["s"] is not None}


def _browser_shows_the_source_nodes(store, driver, graph: str, source_ids: set[str]) -> None:
    """The Browser statement of a retrieval over a graph read from this database also returns, for each retrieved
    node made from a source node, that source node (found by the element id kept as the node's key)."""
    retrieval = _retrieved(graph, "who directed The Matrix?")
    ours, sources = _browser_statement_rows(driver, retrieval)
    behind = {key for key in ours.values() if key in source_ids}
    assert behind and all(element_id == key for element_id, key in sources.items())
    assert set(sources) == behind and not set(sources) & set(ours)
    assert store.retrieval_subgraph(retrieval["id"])[0] == set(ours) | set(sources)
    assert "MATCH (r:Retrieval" in retrieval["browser_statement"] and "cmd=edit" in retrieval["browser_url"]


@pytest.mark.slow  # spawns `gqa` processes: exit code and stderr as a user sees them
def test_neo4j_source_bad_input_is_one_line_exit_1_and_writes_nothing(store, movies, neo4j_driver, cli_env):
    graph = f"{store.test_prefix}-bad"
    before = _source_state(neo4j_driver)
    for args, says in ((("--text-property", "Actor=name"), "no label 'Actor'"),
                       (("--uri", "bolt://127.0.0.1:1"), "source database at bolt://127.0.0.1:1 is not reachable"),
                       (("--query", "CREATE (n:Person {name: 'x'}) RETURN 'a', 'b', 'c'"), "refused the query")):
        result = gqa("ingest", "neo4j", "--graph", graph, *args, env={"COLUMNS": "500"})
        assert result.returncode == 1, result.stderr
        assert says in result.stderr and len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert store.graph_counts(graph)["nodes"] == 0 and _source_state(neo4j_driver) == before


def test_rdf_turtle_slice_answers_with_labels_of_the_chosen_language(store, cli_env):
    english, german = f"{store.test_prefix}-wd-en", f"{store.test_prefix}-wd-de"
    _ingest("rdf", "--source", str(WIKIDATA), "--graph", english)
    assert store.statistics()["graphs"][english]["source"] == "RDF file wikidata_germany.ttl"
    assert _ingest("rdf", "--source", str(WIKIDATA), "--graph", english)["nodes_written"] == 0  # idempotent
    assert _answers(english, "what is the capital of Germany?") == {"Berlin"}
    assert _answers(english, "what is the population of Berlin?") == {"3644826"}  # through the blank-node record
    assert _answers(english, "which river is Cologne on?") == {"Rhine"}
    _ingest("rdf", "--source", str(WIKIDATA), "--graph", german, "--lang", "de")
    texts, edges = _stored(store, german)
    assert {"Deutschland", "München", "Köln", "Rhein"} <= set(texts.values())
    assert not [text for text in texts.values() if "://" in text]
    assert ("Köln", "liegt an Gewässer", "Rhein") in edges


@pytest.mark.slow  # spawns `gqa` processes: exit code and stderr as a user sees them
def test_malformed_turtle_exits_1_naming_file_and_line_and_writes_nothing(store, cli_env, tmp_path):
    bad = tmp_path / "bad.ttl"
    bad.write_text('@prefix ex: <http://ex.org/> .\nex:a ex:r ex:b .\nex:a ex:r "unterminated .\n')
    graph = f"{store.test_prefix}-badrdf"
    result = gqa("ingest", "rdf", "--source", str(bad), "--graph", graph, env={"COLUMNS": "500"})
    assert result.returncode == 1 and f"{bad}:3: malformed RDF" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert store.graph_counts(graph)["nodes"] == 0

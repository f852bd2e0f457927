"""Statements that look nodes up by (graph, key) seek the unique index, whatever the planner's statistics say.

On a new, empty store the planner estimates every index at zero rows and may pick the index on `graph` alone,
then filter each graph node by key: the first ingest of a new user then slowed with every batch (the edges of a
MetaQA load took 21 s instead of 3 s). The statements name the index (`USING INDEX`)."""

from __future__ import annotations

import re

import pytest

from gretriever_neo4j import cypher

pytestmark = pytest.mark.neo4j

BY_KEY = re.compile(r":Node \{graph: [^,}]+, key: ")


def _operators(plan) -> list[tuple[str, str]]:
    found = [(plan["operatorType"].split("@")[0], plan.get("args", {}).get("Details", ""))]
    for child in plan.get("children", []):
        found += _operators(child)
    return found


def test_lookups_by_graph_and_key_seek_the_unique_index(store, neo4j_driver):
    names = [name for name in cypher.names() if BY_KEY.search(cypher.load(name).text)]
    assert len(names) >= 10
    for name in names:
        query = cypher.load(name)
        with neo4j_driver.session(database=store.database) as session:
            plan = session.run("EXPLAIN " + query.text, {p: None for p in query.params}).consume().plan
        operators = _operators(plan)
        assert not [op for op in operators if "Node(graph) WHERE" in op[1]], (name, operators)
        assert any("Node(graph, key)" in op[1] for op in operators), (name, operators)

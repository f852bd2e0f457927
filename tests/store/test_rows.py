"""Records read back from the real server as plain dicts (store/rows.py: `record_dict`)."""

from __future__ import annotations

import pytest

from gretriever_neo4j.store.rows import record_dict

pytestmark = pytest.mark.neo4j


def test_plain_values_pass_through_and_graph_entities_become_property_maps(neo4j_driver):
    records, _, _ = neo4j_driver.execute_query(
        "RETURN [0.5, 1.5] AS vector, {a: [1, 2], b: 'x'} AS map, [{k: 1}] AS rows, null AS nothing")
    assert record_dict(records[0]) == {"vector": [0.5, 1.5], "map": {"a": [1, 2], "b": "x"}, "rows": [{"k": 1}],
                                       "nothing": None}
    records, _, _ = neo4j_driver.execute_query(
        "CREATE (n:RecordDictProbe {name: 'p'}) WITH n RETURN n, [n] AS nodes, {n: n} AS wrapped, 1 AS one")
    try:
        node = {"name": "p"}
        assert record_dict(records[0]) == {"n": node, "nodes": [node], "wrapped": {"n": node}, "one": 1}
    finally:
        neo4j_driver.execute_query("MATCH (n:RecordDictProbe) DELETE n")

"""Parameters sent to and records read back from the real server (store/rows.py: `driver_params`, `record_dict`)."""

from __future__ import annotations

import pytest

from gretriever_neo4j.store.rows import driver_params, record_dict

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


def test_large_parameters_travel_whole_but_print_as_their_size(neo4j_driver, caplog):
    """The driver formats every statement's parameters for its debug log even when the log is off; a vector batch
    took longer to format than to send. `driver_params` keeps what is sent and shortens only what is printed."""
    import logging

    vectors = [[i + j / 1000 for j in range(384)] for i in range(40)]
    scores = {f"relation {i}": i / 100 for i in range(40)}
    params = driver_params({"vectors": vectors, "scores": scores, "small": [1, 2], "graph": "g"})
    assert repr(params["vectors"]) == "<list of 40>" and repr(params["scores"]) == "<map of 40>"
    assert params["small"] == [1, 2] and type(params["small"]) is list  # a few items still print in full
    with caplog.at_level(logging.DEBUG, logger="neo4j.io"):  # `gqa` quiets it; Bolt messages log here
        records, _, _ = neo4j_driver.execute_query(
            "RETURN $vectors AS vectors, $scores AS scores, $small AS small, $graph AS graph", params)
    assert record_dict(records[0]) == {"vectors": vectors, "scores": scores, "small": [1, 2], "graph": "g"}
    logged = [r.getMessage() for r in caplog.records if "RUN" in r.getMessage()]
    assert any("<list of 40>" in line for line in logged), logged
    assert not any("383.0" in line or "39.383" in line for line in logged)

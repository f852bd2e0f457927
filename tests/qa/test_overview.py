"""Per-graph overview: knowledge graphs one by one with their models, per-sample datasets as one row."""

from types import SimpleNamespace

from gretriever_neo4j.qa.overview import graph_rows

STATS = {
    "kin": {"dataset": "triples", "kind": "kg", "nodes": 10, "edges": 12, "embedded_nodes": 10,
            "embedded_edges": 12, "questions": {"train": 30, "val": 5}, "source": "triples file kin.tsv",
            "source_query": None},
    "pq2h": {"dataset": "triples", "kind": "kg", "nodes": 7, "edges": 6, "embedded_nodes": 7, "embedded_edges": 6,
             "questions": {}},
    "eg-1": {"dataset": "explagraphs", "kind": "per-sample", "nodes": 4, "edges": 3, "embedded_nodes": 4,
             "embedded_edges": 3, "questions": {"train": 1}},
    "eg-2": {"dataset": "explagraphs", "kind": "per-sample", "nodes": 6, "edges": 5, "embedded_nodes": 6,
             "embedded_edges": 5, "questions": {"test": 1}, "source": "benchmark explagraphs"},
}


def trained(name):
    if name == "kin":
        return SimpleNamespace(retriever="retriever.pt", reader="reader.pt", generator=None,
                               created="2026-11-23T20:00:00+0000")
    return None


def test_each_kg_is_a_row_and_per_sample_graphs_are_grouped():
    rows = graph_rows(STATS, trained)
    assert [(r["dataset"], r["graph"]) for r in rows] == [("explagraphs", None), ("triples", "kin"),
                                                           ("triples", "pq2h")]
    group = rows[0]
    assert group["graphs"] == 2 and group["nodes"] == 10 and group["questions"] == {"train": 1, "test": 1}
    kin = rows[1]
    assert kin["questions"] == {"train": 30, "val": 5}
    assert kin["models"] == {"parts": ["retriever", "reader"], "trained_at": "2026-11-23T20:00:00+0000"}
    assert rows[2]["models"] == {} and rows[2]["edges"] == 6


def test_each_row_says_where_its_graph_was_read_from():
    rows = {row["graph"]: row for row in graph_rows(STATS, trained)}
    assert rows["kin"]["source"] == "triples file kin.tsv" and rows["kin"]["source_query"] is None
    assert rows["pq2h"]["source"] is None  # stored before sources were recorded
    assert rows[None]["source"] == "benchmark explagraphs"  # a group: its first graph that has one

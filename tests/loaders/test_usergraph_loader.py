from __future__ import annotations

import pytest

from gretriever_neo4j.errors import ConfigError, InputError
from gretriever_neo4j.loaders import get_loader
from gretriever_neo4j.loaders.usergraph import detect_separator, read_csv_graph, read_triples
from gretriever_neo4j.records import Edge, GraphRecord, Node


def _write(path, text):
    path.write_text(text, encoding="utf-8")
    return path


# --- csv -----------------------------------------------------------------------------------------------

def test_csv_graph_with_quoted_fields(fixtures_dir):
    folder = fixtures_dir / "usergraph"
    [graph] = list(get_loader("csv").read(None, nodes=folder / "nodes.csv", edges=folder / "edges.csv", graph="paris"))
    assert graph == GraphRecord(
        graph_id="paris", dataset="csv", kind="per-sample",
        nodes=[Node("0", "Paris, France"), Node("1", 'the "City of Light"'), Node("2", "Eiffel Tower"),
               Node("3", "a tower\nover two lines")],
        edges=[Edge("2", "located in, famously", "0"), Edge("0", "nickname", "1"), Edge("3", "same as", "2"),
               Edge("2", "located in", "0")],
        source=str(folder / "nodes.csv"), line=None)


def test_csv_graph_from_a_folder(fixtures_dir):
    [graph] = list(read_csv_graph(fixtures_dir / "usergraph", graph="  paris "))
    assert graph.graph_id == "paris" and len(graph.nodes) == 4 and len(graph.edges) == 4


def test_header_only_files_give_an_empty_graph(tmp_path):
    nodes = _write(tmp_path / "nodes.csv", "node_id,node_attr\n")
    edges = _write(tmp_path / "edges.csv", "src,edge_attr,dst\n")
    [graph] = list(read_csv_graph(nodes=nodes, edges=edges, graph="empty"))
    assert (graph.graph_id, graph.nodes, graph.edges) == ("empty", [], [])


@pytest.mark.parametrize(("which", "header", "reason"), [
    ("nodes", "node_id\n", "lacks column(s) node_attr"),
    ("nodes", "node_id,node_attr,colour\n", "unexpected column(s) colour"),
    ("edges", "src,relation,dst\n", "lacks column(s) edge_attr"),
    ("nodes", "", "lacks column(s) node_id, node_attr"),
])
def test_header_problems_always_raise_at_line_1(tmp_path, which, header, reason):
    files = {"nodes": "node_id,node_attr\n0,a\n", "edges": "src,edge_attr,dst\n0,r,0\n"}
    files[which] = header
    for name, text in files.items():
        _write(tmp_path / f"{name}.csv", text)
    with pytest.raises(InputError) as caught:
        list(read_csv_graph(tmp_path, graph="g", on_bad_row=lambda error: None))
    assert f"{tmp_path / f'{which}.csv'}:1" in str(caught.value)
    assert reason in str(caught.value)


CSV_CASES = {
    "empty node_id": ("node_id,node_attr\n0,a\n ,b\n1,c\n", "src,edge_attr,dst\n0,r,1\n", "nodes.csv:3"),
    "duplicate node_id": ("node_id,node_attr\n0,a\n1,b\n0,c\n", "src,edge_attr,dst\n0,r,1\n", "nodes.csv:4"),
    "short row": ("node_id,node_attr\n0,a\n1\n1,b\n", "src,edge_attr,dst\n0,r,1\n", "nodes.csv:3"),
    "unknown dst": ("node_id,node_attr\n0,a\n1,b\n", "src,edge_attr,dst\n0,r,1\n1,r,7\n", "edges.csv:3"),
    "unknown src": ("node_id,node_attr\n0,a\n1,b\n", "src,edge_attr,dst\n0,r,1\n9,r,1\n", "edges.csv:3"),
}


@pytest.mark.parametrize("case", sorted(CSV_CASES))
def test_bad_csv_rows_raise_with_file_and_line_or_are_skipped(tmp_path, case):
    nodes_text, edges_text, where = CSV_CASES[case]
    _write(tmp_path / "nodes.csv", nodes_text)
    _write(tmp_path / "edges.csv", edges_text)
    with pytest.raises(InputError) as caught:
        list(read_csv_graph(tmp_path, graph="g"))
    assert f"{tmp_path}/{where}" in str(caught.value)
    skipped = []
    [graph] = list(read_csv_graph(tmp_path, graph="g", on_bad_row=skipped.append))
    assert len(skipped) == 1 and f"{tmp_path}/{where}" in str(skipped[0])
    assert [node.key for node in graph.nodes] == ["0", "1"]
    assert [(edge.src, edge.dst) for edge in graph.edges] == [("0", "1")]


def test_csv_loader_configuration_errors(tmp_path, fixtures_dir):
    folder = fixtures_dir / "usergraph"
    with pytest.raises(ConfigError, match="graph="):
        read_csv_graph(folder)
    with pytest.raises(ConfigError, match="nodes="):
        read_csv_graph(None, graph="g")
    with pytest.raises(InputError, match="edges CSV not found"):
        read_csv_graph(None, nodes=folder / "nodes.csv", edges=tmp_path / "edges.csv", graph="g")
    assert list(read_csv_graph(folder, graph="g", limit=0)) == []


# --- triples -----------------------------------------------------------------------------------------

def _triples(records):
    return [(edge.src, edge.text, edge.dst) for record in records for edge in record.edges]


def test_tab_separated_triples_with_header_and_blank_line(fixtures_dir):
    path = fixtures_dir / "usergraph" / "capitals.tsv"
    records = list(get_loader("triples").read(path))
    assert _triples(records) == [("Paris", "capital of", "France"), ("Berlin", "capital of", "Germany"),
                                 ("France", "borders", "Germany")]
    assert [(r.graph_id, r.dataset, r.kind, r.line) for r in records] == [("capitals", "triples", "kg", 2)]
    assert [node.key for node in records[0].nodes] == ["Paris", "France", "Berlin", "Germany"]


def test_pipe_separated_triples_are_stripped_and_named_by_option(fixtures_dir):
    records = list(read_triples(fixtures_dir / "usergraph" / "capitals_pipe.txt", graph="europe"))
    assert _triples(records) == [("Paris", "capital of", "France"), ("Berlin", "capital of", "Germany"),
                                 ("Paris", "twinned with", "Rome")]
    assert records[0].graph_id == "europe"


def test_comma_separated_triples_honour_csv_quoting(fixtures_dir):
    records = list(read_triples(fixtures_dir / "usergraph" / "places.csv"))
    assert _triples(records) == [("Paris, Texas", "located in", "USA"), ("Paris", "capital of", "France"),
                                 ('The "Big" Apple', "nickname of", "New York City")]


def test_limit_and_batches_count_triples(fixtures_dir):
    path = fixtures_dir / "usergraph" / "capitals.tsv"
    records = list(read_triples(path, limit=2, batch=1))
    assert [len(record.edges) for record in records] == [1, 1]
    assert [record.line for record in records] == [2, 4]
    assert list(read_triples(path, limit=0)) == []


@pytest.mark.parametrize(("lines", "separator"), [
    (["a\tb\tc", "d\te\tf"], "\t"),
    (["a|b|c", "x, y|r|z"], "|"),
    (["a,b,c", '"x|y",r,z'], ","),
    (["Paris, France\tcapital\tFrance"], "\t"),
    (["one field only"], None),
])
def test_separator_detection(lines, separator):
    assert detect_separator(lines) == separator


def test_bad_triple_lines_raise_with_file_and_line_or_are_skipped(tmp_path):
    path = _write(tmp_path / "kg.tsv", "a\tr\tb\n\na\tr\nc\tr\td\te\nc\t\td\nc\tr\td\n")
    with pytest.raises(InputError) as caught:
        list(read_triples(path))
    assert f"{path}:3" in str(caught.value) and "found 2 field(s)" in str(caught.value)
    skipped = []
    assert _triples(read_triples(path, on_bad_row=skipped.append)) == [("a", "r", "b"), ("c", "r", "d")]
    assert [error.line for error in skipped] == [3, 4, 5]


def test_undetectable_separator_and_empty_and_missing_files(tmp_path):
    with pytest.raises(InputError, match="separator") as caught:
        list(read_triples(_write(tmp_path / "words.txt", "\nhello world\n")))
    assert caught.value.line == 2
    assert list(read_triples(_write(tmp_path / "empty.tsv", "\n\n"))) == []
    with pytest.raises(InputError, match="not found"):
        read_triples(tmp_path / "missing.tsv")
    with pytest.raises(ConfigError):
        read_triples(None)

from __future__ import annotations

import json
import sys

import pytest

from gretriever_neo4j.errors import ConfigError, InputError
from gretriever_neo4j.loaders import webqsp
from gretriever_neo4j.records import Edge, GraphRecord, Node, QuestionRecord


def _row(qid, question="who?", graph=(), answer=("x",), q_entity=("a",)):
    return {"id": qid, "question": question, "answer": list(answer), "q_entity": list(q_entity),
            "a_entity": list(answer), "graph": [list(triple) for triple in graph]}


def _write_jsonl(path, lines):
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def test_shared_file_counts_match_an_independent_count(shared_path):
    path = shared_path("webqsp", "webqsp_evidence_test.jsonl")
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    for row in rows:  # names cut at their comma, made whole: the rest stands before the relation's last comma
        row["graph"] = [[f"{h}, {rest}", relation, t] if rest and "." in relation and " " not in relation else [h, r, t]
                        for h, r, t in row["graph"] for rest, _, relation in [r.rpartition(",")]]
    expected_entities = {entity for row in rows for head, _, tail in row["graph"] for entity in (head, tail)}
    expected_triples = {tuple(triple) for row in rows for triple in row["graph"]}
    expected_empty = sum(1 for row in rows if not row["graph"])

    records = list(webqsp.read(path))
    graphs = [record for record in records if isinstance(record, GraphRecord)]
    questions = [record for record in records if isinstance(record, QuestionRecord)]

    assert len(questions) == len(graphs) == 1628
    assert len({question.qid for question in questions}) == 1628
    assert {question.split for question in questions} == {"test"}
    assert {node.key for graph in graphs for node in graph.nodes} == expected_entities
    assert len(expected_entities) == 19634
    assert {(edge.src, edge.text, edge.dst) for graph in graphs for edge in graph.edges} == expected_triples
    assert len(expected_triples) == 37673
    assert sum(len(graph.edges) for graph in graphs) == 45065
    assert sum(1 for graph in graphs if not graph.edges and not graph.nodes) == expected_empty == 1
    assert all(graph.graph_id == "webqsp" and graph.kind == "kg" for graph in graphs)
    assert all(len({node.key for node in graph.nodes}) == len(graph.nodes) for graph in graphs)
    by_id = {question.qid: question for question in questions}
    assert by_id["WebQTest-8"].text == "what else did ben franklin invent"
    assert by_id["WebQTest-0"].answers == ["Jamaican English", "Jamaican Creole English Language"]
    assert by_id["WebQTest-0"].topic_entities == ["Jamaica"]
    assert by_id["WebQTest-0"].line == 1


def test_a_name_rog_cut_at_its_comma_is_made_whole():
    assert webqsp.rejoined("Blethen Maine Newspapers", "Inc.,book.newspaper_owner.newspapers_owned", "X") == (
        "Blethen Maine Newspapers, Inc.", "book.newspaper_owner.newspapers_owned", "X")
    assert webqsp.rejoined("Aoyama", "Minato, Tokyo,location.location.containedby", "Tokyo") == (
        "Aoyama, Minato, Tokyo", "location.location.containedby", "Tokyo")
    assert webqsp.rejoined("Jamaica", "location.country.languages_spoken", "Jamaican English") == (
        "Jamaica", "location.country.languages_spoken", "Jamaican English")


def test_each_row_yields_its_graph_then_its_question_with_nodes_as_written(tmp_path):
    path = _write_jsonl(tmp_path / "tiny_test.jsonl", [json.dumps(_row(
        "q1", "what does jamaican people speak",
        graph=[("Jamaica", "location.country.languages_spoken", "Jamaican English"),
               ("Jamaican English", "language.human_language.countries_spoken_in", "Jamaica"),
               ("Jamaica", "location.country.languages_spoken", "Jamaican English")],
        answer=["Jamaican English"], q_entity=["Jamaica"]))])
    graph, question = list(webqsp.read(path))
    assert graph.nodes == [Node("Jamaica", "Jamaica"), Node("Jamaican English", "Jamaican English")]
    assert graph.edges[1] == Edge("Jamaican English", "language.human_language.countries_spoken_in", "Jamaica")
    assert len(graph.edges) == 3  # duplicates are kept; the store merges them
    assert (graph.source, graph.line) == (str(path), 1)
    assert question == QuestionRecord(qid="q1", dataset="webqsp", text="what does jamaican people speak",
                                      answers=["Jamaican English"], split="test", graph_id="webqsp",
                                      topic_entities=["Jamaica"], source=str(path), line=1)


def test_limit_caps_rows_and_keeps_file_order(shared_path):
    path = shared_path("webqsp", "webqsp_evidence_test.jsonl")
    records = list(webqsp.read(path, limit=3))
    assert [type(record).__name__ for record in records] == ["GraphRecord", "QuestionRecord"] * 3
    # the file has no WebQTest-2
    assert [record.qid for record in records[1::2]] == ["WebQTest-0", "WebQTest-1", "WebQTest-3"]
    assert list(webqsp.read(path, limit=0)) == []


def test_records_are_produced_lazily(shared_path):
    path = shared_path("webqsp", "webqsp_evidence_test.jsonl")
    stream = webqsp.read(path)
    assert not isinstance(stream, list)
    assert isinstance(next(iter(stream)), GraphRecord)


@pytest.mark.parametrize(("file_name", "option", "expected"), [
    ("webqsp_train.jsonl", None, "train"),
    ("webqsp_validation.jsonl", None, "val"),
    ("rows.jsonl", None, "test"),
    ("webqsp_train.jsonl", "validation", "val"),
])
def test_split_from_option_or_file_name(tmp_path, file_name, option, expected):
    path = _write_jsonl(tmp_path / file_name, [json.dumps(_row("q1"))])
    question = list(webqsp.read(path, split=option))[1]
    assert question.split == expected


def test_unknown_split_option_is_a_config_error(tmp_path):
    path = _write_jsonl(tmp_path / "rows.jsonl", [json.dumps(_row("q1"))])
    with pytest.raises(ConfigError, match="split"):
        webqsp.read(path, split="holdout")


def test_empty_graph_is_legal(tmp_path):
    path = _write_jsonl(tmp_path / "rows.jsonl", [json.dumps(_row("q1", graph=[], q_entity=["Sarah Dessen"]))])
    graph, question = list(webqsp.read(path))
    assert (graph.nodes, graph.edges) == ([], [])
    assert question.topic_entities == ["Sarah Dessen"]


BAD_LINES = [
    ('{"id": "q2", "question": "truncated', "bad JSON"),
    (json.dumps({k: v for k, v in _row("q2").items() if k != "graph"}), "missing field(s) graph"),
    (json.dumps(_row("q2", graph=[("a", "r")])), "triple 0"),
    (json.dumps({**_row("q2"), "answer": "x"}), "'answer' must be a list"),
    (json.dumps(_row("", question="who?")), "'id' must be a non-empty string"),
    ("[1, 2, 3]", "expected a JSON object"),
]


@pytest.mark.parametrize(("bad_line", "reason"), BAD_LINES)
def test_bad_row_raises_with_file_and_line(tmp_path, bad_line, reason):
    path = _write_jsonl(tmp_path / "rows.jsonl", [json.dumps(_row("q1")), bad_line, json.dumps(_row("q3"))])
    with pytest.raises(InputError) as caught:
        list(webqsp.read(path))
    assert caught.value.line == 2
    assert f"{path}:2" in str(caught.value)
    assert reason in str(caught.value)


def test_on_bad_row_skips_bad_rows_and_counts_towards_nothing(tmp_path):
    lines = [json.dumps(_row("q1"))] + [bad for bad, _ in BAD_LINES] + [json.dumps(_row("q3"))]
    path = _write_jsonl(tmp_path / "rows.jsonl", lines)
    skipped = []
    records = list(webqsp.read(path, on_bad_row=skipped.append, limit=2))
    assert [record.qid for record in records if isinstance(record, QuestionRecord)] == ["q1", "q3"]
    assert [error.line for error in skipped] == list(range(2, 2 + len(BAD_LINES)))


def test_missing_file_raises_even_when_skipping(tmp_path):
    with pytest.raises(InputError, match="not found"):
        webqsp.read(tmp_path / "missing.jsonl", on_bad_row=lambda error: None)


def test_folder_of_parquet_files_reads_every_split_with_row_index_errors(tmp_path):
    pyarrow = pytest.importorskip("pyarrow")
    parquet = pytest.importorskip("pyarrow.parquet")
    data = tmp_path / "data"
    data.mkdir()
    parquet.write_table(pyarrow.Table.from_pylist([_row("WebQTest-0", graph=[("a", "r", "b")])]),
                        data / "test-00000-of-00001.parquet")
    parquet.write_table(pyarrow.Table.from_pylist([_row("WebQTrn-0", graph=[("c", "r", "d")]), _row("WebQTrn-1")]),
                        data / "train-00000-of-00001.parquet")
    parquet.write_table(pyarrow.Table.from_pylist([_row("WebQTrn-9", question="")]),
                        data / "validation-00000-of-00001.parquet")
    skipped = []
    records = list(webqsp.read(tmp_path, on_bad_row=skipped.append))
    questions = [record for record in records if isinstance(record, QuestionRecord)]
    assert [(question.qid, question.split) for question in questions] == \
        [("WebQTrn-0", "train"), ("WebQTrn-1", "train"), ("WebQTest-0", "test")]
    assert records[0].edges == [Edge("c", "r", "d")]
    assert len(skipped) == 1
    assert "validation-00000-of-00001.parquet" in str(skipped[0]) and "row 0" in str(skipped[0])


def test_parquet_file_missing_a_column_raises(tmp_path):
    pyarrow = pytest.importorskip("pyarrow")
    parquet = pytest.importorskip("pyarrow.parquet")
    row = _row("q1")
    del row["q_entity"]
    parquet.write_table(pyarrow.Table.from_pylist([row]), tmp_path / "test-00000-of-00001.parquet")
    with pytest.raises(InputError, match="q_entity"):
        list(webqsp.read(tmp_path))


def test_folder_without_data_files_raises(tmp_path):
    with pytest.raises(InputError, match="no .parquet or .jsonl"):
        webqsp.read(tmp_path)


def test_hub_source_without_datasets_package_is_a_config_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "datasets", None)  # makes `import datasets` fail as if not installed
    with pytest.raises(ConfigError, match="datasets"):
        webqsp.read("rmanluo/RoG-webqsp")
    with pytest.raises(ConfigError, match="rmanluo/RoG-webqsp"):
        webqsp.read(None)


def test_relative_path_with_extension_is_not_taken_for_a_hub_id():
    with pytest.raises(InputError, match="not found"):
        webqsp.read("no_such_folder/rows.jsonl")


def test_seeded_split_fractions_over_all_rows(tmp_path):
    """`--split train=0.6,val=0.2,test=0.2 --seed S`: WebQSP's evidence file holds test questions only."""
    import json as _json

    from gretriever_neo4j.loaders import webqsp as _webqsp
    from gretriever_neo4j.loaders._common import seeded_split
    from gretriever_neo4j.records import QuestionRecord as _Question

    path = tmp_path / "webqsp_evidence_test.jsonl"
    path.write_text("".join(_json.dumps({"id": f"q{i}", "question": f"q {i}", "answer": ["a"], "q_entity": ["e"],
                                         "graph": [["e", "r", "a"]]}) + "\n" for i in range(50)))
    fractions = {"train": 0.6, "val": 0.2, "test": 0.2}
    splits = [r.split for r in _webqsp.read(path, split="train=0.6,val=0.2,test=0.2", seed=7)
              if isinstance(r, _Question)]
    assert splits == seeded_split(50, fractions, 7) and set(splits) == {"train", "val", "test"}
    limited = [r.split for r in _webqsp.read(path, split="train=0.6,val=0.2,test=0.2", seed=7, limit=5)
               if isinstance(r, _Question)]
    assert limited == splits[:5]
    assert {r.split for r in _webqsp.read(path) if isinstance(r, _Question)} == {"test"}

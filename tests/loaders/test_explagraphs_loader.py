from __future__ import annotations

import csv

import numpy as np
import pytest

from gretriever_neo4j.errors import ConfigError, InputError
from gretriever_neo4j.loaders import explagraphs
from gretriever_neo4j.records import Edge, GraphRecord, Node, QuestionRecord

HEADER = "arg1\targ2\tlabel\tgraph\n"


def _questions(records):
    return [record for record in records if isinstance(record, QuestionRecord)]


def _graphs(records):
    return [record for record in records if isinstance(record, GraphRecord)]


def test_shared_file_yields_2766_graph_question_pairs_in_order(shared_path):
    path = shared_path("explagraphs", "train_dev.tsv")
    records = list(explagraphs.read(path))
    assert len(records) == 2 * 2766
    assert [type(record).__name__ for record in records[:4]] == ["GraphRecord", "QuestionRecord"] * 2
    questions, graphs = _questions(records), _graphs(records)
    assert [question.qid for question in questions] == [str(i) for i in range(2766)]
    assert [graph.graph_id for graph in graphs] == [f"explagraphs/{i}" for i in range(2766)]
    assert all(question.graph_id == graph.graph_id for question, graph in zip(questions, graphs))
    assert sum(question.answers == ["support"] for question in questions) == 1534
    assert sum(question.answers == ["counter"] for question in questions) == 1232
    with open(path, encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t"))
    assert sum(len(graph.edges) for graph in graphs) == sum(row["graph"].count(")(") + 1 for row in rows) == 11745
    assert sum(len(graph.nodes) for graph in graphs) == 14294  # 5.17 nodes per graph, as in the paper's table


def test_first_row_graph_and_question_text_exactly_as_g_retriever_builds_them(shared_path):
    path = shared_path("explagraphs", "train_dev.tsv")
    graph, question = list(explagraphs.read(path, limit=1))
    assert graph.nodes == [Node("0", "cannabis"), Node("1", "marijuana"), Node("2", "legal"),
                           Node("3", "more available"), Node("4", "good thing")]
    assert graph.edges == [Edge("0", "synonym of", "1"), Edge("2", "causes", "3"), Edge("1", "capable of", "4"),
                           Edge("4", "desires", "2")]
    assert question.text == (
        "Argument 1: Cannabis should be legal.\n"
        "Argument 2: It's not a bad thing to make marijuana more available.\n"
        "Question: Do argument 1 and argument 2 support or counter each other? "
        "Answer in one word in the form of 'support' or 'counter'.\n\nAnswer:")
    assert (question.answers, question.line, graph.line) == (["support"], 2, 2)


def test_quoted_fields_are_unquoted_like_pandas(shared_path):
    path = shared_path("explagraphs", "train_dev.tsv")
    question = _questions(explagraphs.read(path, limit=803))[802]
    assert question.text.startswith('Argument 1: The "three strikes" law could lead to people')
    assert question.line == 804


def test_split_sizes_and_equality_with_sklearn(shared_path):
    path = shared_path("explagraphs", "train_dev.tsv")
    questions = _questions(explagraphs.read(path))
    by_split = {name: [int(q.qid) for q in questions if q.split == name] for name in ("train", "val", "test")}
    assert {name: len(ids) for name, ids in by_split.items()} == {"train": 1659, "val": 553, "test": 554}
    model_selection = pytest.importorskip("sklearn.model_selection")
    train, rest = model_selection.train_test_split(np.arange(2766), test_size=0.4, random_state=42)
    val, test = model_selection.train_test_split(rest, test_size=0.5, random_state=42)
    assert by_split == {"train": sorted(train.tolist()), "val": sorted(val.tolist()), "test": sorted(test.tolist())}


def test_limit_takes_the_first_rows_without_changing_their_split(shared_path):
    path = shared_path("explagraphs", "train_dev.tsv")
    full = {q.qid: q.split for q in _questions(explagraphs.read(path))}
    limited = _questions(explagraphs.read(path, limit=25))
    assert [q.qid for q in limited] == [str(i) for i in range(25)]
    assert all(q.split == full[q.qid] for q in limited)


def test_parse_graph_lowercases_strips_and_numbers_nodes_by_first_appearance():
    nodes, edges = explagraphs.parse_graph("(Women ; Is A;  citizens)(citizens; causes; WOMEN)(x;y;x)")
    assert nodes == [("0", "women"), ("1", "citizens"), ("2", "x")]
    assert edges == [("0", "is a", "1"), ("1", "causes", "0"), ("2", "y", "2")]
    assert explagraphs.parse_graph("") == ([], [])


def test_empty_graph_is_legal(tmp_path):
    path = tmp_path / "rows.tsv"
    path.write_text(HEADER + "A.\tB.\tcounter\t\n", encoding="utf-8")
    graph, question = list(explagraphs.read(path))
    assert (graph.nodes, graph.edges, question.answers) == ([], [], ["counter"])


BAD_ROWS = [
    ("A.\tB.\tsupport\t(a; b)\n", "graph triple 0 '(a; b)'"),
    ("A.\tB.\tsupport\t(a; b; c; d)\n", "is not of the form"),
    ("A.\tB.\tsupport\t( ; b; c)\n", "empty head"),
    ("A.\tB.\tmaybe\t(a; b; c)\n", "label must be"),
    ("A.\tB.\tsupport\n", "expected 4 tab-separated fields, found 3"),
]


@pytest.mark.parametrize(("bad_row", "reason"), BAD_ROWS)
def test_bad_row_raises_with_file_and_line(tmp_path, bad_row, reason):
    path = tmp_path / "rows.tsv"
    path.write_text(HEADER + "A.\tB.\tsupport\t(a; r; b)\n" + bad_row, encoding="utf-8")
    with pytest.raises(InputError) as caught:
        list(explagraphs.read(path))
    assert f"{path}:3" in str(caught.value)
    assert reason in str(caught.value)


def test_on_bad_row_skips_rows_but_keeps_row_indices(tmp_path):
    path = tmp_path / "rows.tsv"
    good = "A.\tB.\tsupport\t(a; r; b)\n"
    path.write_text(HEADER + good + "".join(bad for bad, _ in BAD_ROWS) + good, encoding="utf-8")
    skipped = []
    questions = _questions(explagraphs.read(path, on_bad_row=skipped.append))
    assert [q.qid for q in questions] == ["0", str(len(BAD_ROWS) + 1)]
    assert [error.line for error in skipped] == list(range(3, 3 + len(BAD_ROWS)))


def test_header_without_required_columns_raises_even_when_skipping(tmp_path):
    path = tmp_path / "rows.tsv"
    path.write_text("arg1\targ2\tstance\tgraph\nA.\tB.\tsupport\t(a; r; b)\n", encoding="utf-8")
    with pytest.raises(InputError, match="label") as caught:
        list(explagraphs.read(path, on_bad_row=lambda error: None))
    assert f"{path}:1" in str(caught.value)


def test_folder_source_and_missing_sources(tmp_path):
    (tmp_path / "train_dev.tsv").write_text(HEADER + "A.\tB.\tsupport\t(a; r; b)\n", encoding="utf-8")
    assert len(list(explagraphs.read(tmp_path))) == 2
    with pytest.raises(InputError, match="not found"):
        explagraphs.read(tmp_path / "missing.tsv")
    with pytest.raises(ConfigError):
        explagraphs.read(None)

from __future__ import annotations

import json

import numpy as np
import pytest

from gretriever_neo4j.errors import ConfigError, InputError
from gretriever_neo4j.loaders import scenegraphs
from gretriever_neo4j.records import Edge, GraphRecord, Node, QuestionRecord


def _questions(records):
    return [record for record in records if isinstance(record, QuestionRecord)]


def _graphs(records):
    return [record for record in records if isinstance(record, GraphRecord)]


def test_folder_yields_each_image_graph_before_its_first_question(fixtures_dir):
    records = list(scenegraphs.read(fixtures_dir / "scenegraphs"))
    assert [(type(r).__name__, r.graph_id) for r in records] == [
        ("GraphRecord", "scenegraphs/2354786"), ("QuestionRecord", "scenegraphs/2354786"),
        ("QuestionRecord", "scenegraphs/2354786"),
        ("GraphRecord", "scenegraphs/2354787"), ("QuestionRecord", "scenegraphs/2354787"),
        ("GraphRecord", "scenegraphs/2400002"), ("QuestionRecord", "scenegraphs/2400002"),
        ("QuestionRecord", "scenegraphs/2354787"),
    ]
    questions = _questions(records)
    assert [q.qid for q in questions] == ["0", "1", "2", "3", "4"]
    assert questions[1].text == "Is the chair to the left or to the right of the table?"
    assert questions[3].text == "Is there a car, a bus or a bike in the picture?"
    assert [q.answers for q in questions] == [["table"], ["right"], ["black"], ["no"], ["short"]]
    assert questions[4].line == 6


def test_node_text_and_edges_follow_g_retriever_textualisation(fixtures_dir):
    graph = _graphs(scenegraphs.read(fixtures_dir / "scenegraphs", limit=1))[0]
    raw = json.loads((fixtures_dir / "scenegraphs" / "train_sceneGraphs.json").read_text())["2354786"]["objects"]
    expected_texts = []
    for scene_object in raw.values():
        text = f"name: {scene_object['name']}"
        if scene_object["attributes"]:
            text += "; attribute: " + ", ".join(scene_object["attributes"])
        expected_texts.append(text + "; (x,y,w,h): " + str(tuple(scene_object[k] for k in "xywh")))
    assert [node.text for node in graph.nodes] == expected_texts
    assert graph.nodes == [
        Node("0", "name: table; attribute: wooden, brown; (x,y,w,h): (10, 20, 100, 50)"),
        Node("1", "name: chair; (x,y,w,h): (120, 25, 40, 80)"),
        Node("2", "name: cup; attribute: white; (x,y,w,h): (30, 15, 8, 9)"),
    ]
    assert graph.edges == [Edge("0", "to the left of", "1"), Edge("1", "to the right of", "0"),
                           Edge("2", "on", "0"), Edge("2", "to the left of", "1")]
    assert graph.kind == "per-sample"


def test_float_coordinates_are_written_as_python_writes_them():
    assert scenegraphs.node_text("kite", ["red"], 1.5, 2.0, 3, 4) == \
        "name: kite; attribute: red; (x,y,w,h): (1.5, 2.0, 3, 4)"


def test_image_without_objects_is_an_empty_graph(fixtures_dir):
    graph = next(r for r in scenegraphs.read(fixtures_dir / "scenegraphs") if r.graph_id == "scenegraphs/2400002")
    assert (graph.nodes, graph.edges) == ([], [])


def test_split_is_g_retrievers_image_split(fixtures_dir):
    model_selection = pytest.importorskip("sklearn.model_selection")
    questions = _questions(scenegraphs.read(fixtures_dir / "scenegraphs"))
    image_ids = list(dict.fromkeys(q.graph_id.split("/")[1] for q in questions))
    np.random.seed(42)
    shuffled = np.random.permutation(np.array(image_ids, dtype=object))
    train, rest = model_selection.train_test_split(shuffled, test_size=0.4, random_state=42)
    val, test = model_selection.train_test_split(rest, test_size=0.5, random_state=42)
    expected = {**{i: "train" for i in train}, **{i: "val" for i in val}, **{i: "test" for i in test}}
    assert [q.split for q in questions] == [expected[q.graph_id.split("/")[1]] for q in questions]
    assert sorted(set(expected.values())) == ["test", "train", "val"]


def test_split_is_independent_of_limit(fixtures_dir):
    full = [q.split for q in _questions(scenegraphs.read(fixtures_dir / "scenegraphs"))]
    assert [q.split for q in _questions(scenegraphs.read(fixtures_dir / "scenegraphs", limit=3))] == full[:3]


def test_split_column_and_explicit_paths(fixtures_dir):
    folder = fixtures_dir / "scenegraphs"
    records = list(scenegraphs.read(scene_graphs=[folder / "train_sceneGraphs.json"],
                                     questions=folder / "questions_with_split.csv"))
    assert [q.split for q in _questions(records)] == ["train", "val", "test"]
    assert len(_graphs(records)) == 2


def test_limit_caps_questions(fixtures_dir):
    records = list(scenegraphs.read(fixtures_dir / "scenegraphs", limit=3))
    assert len(_questions(records)) == 3 and len(_graphs(records)) == 2
    assert list(scenegraphs.read(fixtures_dir / "scenegraphs", limit=0)) == []


def test_relation_to_unknown_object_raises_naming_file_and_field(fixtures_dir):
    folder = fixtures_dir / "scenegraphs"
    with pytest.raises(InputError) as caught:
        list(scenegraphs.read(folder, questions=folder / "questions_with_bad_images.csv"))
    message = str(caught.value)
    assert "train_sceneGraphs.json" in message
    assert "2400001.objects.3001.relations[0].object" in message
    assert "'9999'" in message


def test_on_bad_row_skips_bad_images_and_unknown_images(fixtures_dir):
    folder = fixtures_dir / "scenegraphs"
    skipped = []
    records = list(scenegraphs.read(folder, questions=folder / "questions_with_bad_images.csv",
                                    on_bad_row=skipped.append))
    assert [q.qid for q in _questions(records)] == ["0", "4"]
    assert [g.graph_id for g in _graphs(records)] == ["scenegraphs/2354786", "scenegraphs/2354787"]
    assert [(error.field, error.line) for error in skipped] == [
        ("2400001.objects.3001.relations[0].object", None),  # the graph, once
        (None, 3), (None, 4),  # both questions about it
        ("image_id", 5),  # the image that is not in the scene graphs
    ]
    assert "questions_with_bad_images.csv:5" in str(skipped[-1])


def test_bad_question_rows_raise_with_file_and_line(tmp_path, fixtures_dir):
    questions = tmp_path / "questions.csv"
    questions.write_text("image_id,question,answer\n2354786,What?,table\n2354786,What?\n", encoding="utf-8")
    graphs = fixtures_dir / "scenegraphs" / "train_sceneGraphs.json"
    with pytest.raises(InputError, match="expected 3 comma-separated fields") as caught:
        list(scenegraphs.read(scene_graphs=graphs, questions=questions))
    assert f"{questions}:3" in str(caught.value)


def test_malformed_objects_and_json(tmp_path):
    graphs = tmp_path / "val_sceneGraphs.json"
    graphs.write_text(json.dumps({"7": {"objects": {"1": {"name": "cat", "x": "left", "y": 0, "w": 1, "h": 1}}}}))
    (tmp_path / "questions.csv").write_text("image_id,question,answer\n7,Where?,mat\n")
    with pytest.raises(InputError, match="'x' must be a number") as caught:
        list(scenegraphs.read(tmp_path))
    assert caught.value.field == "7.objects.1.x"
    graphs.write_text('{"7": {"objects": ')
    with pytest.raises(InputError, match="bad JSON"):
        list(scenegraphs.read(tmp_path))


def test_missing_inputs(tmp_path, fixtures_dir):
    with pytest.raises(ConfigError):
        scenegraphs.read(None)
    with pytest.raises(InputError, match="not found"):
        scenegraphs.read(tmp_path / "nowhere")
    with pytest.raises(InputError, match="sceneGraphs.json"):
        scenegraphs.read(tmp_path)
    with pytest.raises(InputError, match="questions CSV not found"):
        scenegraphs.read(tmp_path, scene_graphs=fixtures_dir / "scenegraphs" / "train_sceneGraphs.json")

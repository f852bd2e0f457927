from __future__ import annotations

import numpy as np
import pytest

from gretriever_neo4j.errors import ConfigError, InputError
from gretriever_neo4j.loaders import metaqa
from gretriever_neo4j.records import Edge, GraphRecord, Node, QuestionRecord

QUESTION_COUNTS = {1: 9992, 2: 14872, 3: 14274}


def _split_records(records):
    records = list(records)
    graphs = [r for r in records if isinstance(r, GraphRecord)]
    questions = [r for r in records if isinstance(r, QuestionRecord)]
    return graphs, questions


@pytest.fixture(scope="module")
def shared_records(shared_path):
    return _split_records(list(metaqa.read(shared_path("metaqa"))))


def test_kb_is_read_whole_in_batches(shared_path, shared_records):
    graphs, _ = shared_records
    kb_lines = shared_path("metaqa", "kb.txt").read_text(encoding="utf-8").splitlines()
    expected_triples = [tuple(line.split("|")) for line in kb_lines if line.strip()]
    assert len(expected_triples) == 133582
    assert [(e.src, e.text, e.dst) for g in graphs for e in g.edges] == expected_triples
    assert len(graphs) == 27 and all(len(g.edges) == 5000 for g in graphs[:-1])
    assert all(g.graph_id == "metaqa" and g.kind == "kg" for g in graphs)
    entities = {node.key for g in graphs for node in g.nodes}
    assert len(entities) == len({name for h, _, t in expected_triples for name in (h, t)}) == 43234
    assert {e.text for g in graphs for e in g.edges} == {
        "directed_by", "written_by", "starred_actors", "release_year", "in_language", "has_tags", "has_genre",
        "has_imdb_votes", "has_imdb_rating"}
    assert all(len({n.key for n in g.nodes}) == len(g.nodes) for g in graphs)
    assert graphs[0].nodes[0] == Node("The Prowler", "The Prowler")
    assert graphs[0].edges[0] == Edge("The Prowler", "starred_actors", "Evelyn Keyes")
    assert [g.line for g in graphs[:2]] == [1, 5001]


def test_dev_questions_per_hop_with_topic_entities(shared_path, shared_records):
    _, questions = shared_records
    for hop, count in QUESTION_COUNTS.items():
        assert sum(q.qid.startswith(f"{hop}hop/dev/") for q in questions) == count
    first = questions[0]
    assert first == QuestionRecord(
        qid="1hop/dev/1", dataset="metaqa", text="what movies did [Temuera Morrison] act in",
        answers=["Once Were Warriors", "Tracker", "River Queen"], split=first.split, graph_id="metaqa",
        topic_entities=["Temuera Morrison"], source=str(shared_path("metaqa", "qa_dev_1hop.txt")), line=1)
    assert len({q.qid for q in questions}) == len(questions)


def test_dev_files_are_split_80_20_exactly_like_sklearn(shared_records):
    _, questions = shared_records
    for hop, count in QUESTION_COUNTS.items():
        val_lines = sorted(int(q.qid.rsplit("/", 1)[1]) - 1 for q in questions
                           if q.qid.startswith(f"{hop}hop/") and q.split == "val")
        assert len(val_lines) == int(np.ceil(0.2 * count))
        assert {q.split for q in questions if q.qid.startswith(f"{hop}hop/")} == {"train", "val"}
        model_selection = pytest.importorskip("sklearn.model_selection")
        _, expected_val = model_selection.train_test_split(np.arange(count), test_size=0.2, random_state=42)
        assert val_lines == sorted(expected_val.tolist())


def test_limit_caps_questions_per_hop_without_changing_splits(shared_path, shared_records):
    _, full_questions = shared_records
    full = {q.qid: q.split for q in full_questions}
    graphs, questions = _split_records(metaqa.read(shared_path("metaqa"), limit=40, hops=(3, 1), kb_limit=7))
    assert [q.qid for q in questions] == [f"{hop}hop/dev/{line}" for hop in (1, 3) for line in range(1, 41)]
    assert all(q.split == full[q.qid] for q in questions)
    assert [len(g.edges) for g in graphs] == [7]


def _write_metaqa(folder, kb, files):
    folder.mkdir(exist_ok=True)
    (folder / "kb.txt").write_text(kb, encoding="utf-8")
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


def test_train_and_test_files_keep_their_split_and_dev_becomes_val(tmp_path):
    folder = _write_metaqa(tmp_path / "m", "A|directed_by|B\n", {
        "qa_train_1hop.txt": "who directed [A]\tB\n",
        "qa_dev_1hop.txt": "who made [A]\tB\n",
        "qa_test_1hop.txt": "director of [A]\tB|C\n",
    })
    _, questions = _split_records(metaqa.read(folder, hops=[1]))
    assert [(q.qid, q.split, q.answers) for q in questions] == [
        ("1hop/train/1", "train", ["B"]), ("1hop/dev/1", "val", ["B"]), ("1hop/test/1", "test", ["B", "C"])]


BAD_QUESTION_LINES = [
    ("what did [X] do", "found 1 tab-separated field(s)"),
    ("what did [X] do\tY\textra", "found 3 tab-separated field(s)"),
    ("what did X do\tY", "no [topic entity]"),
    ("what did [X] do\tY||Z", "empty answer"),
]


@pytest.mark.parametrize(("bad_line", "reason"), BAD_QUESTION_LINES)
def test_bad_question_line_raises_with_file_and_line(tmp_path, bad_line, reason):
    folder = _write_metaqa(tmp_path / "m", "X|directed_by|Y\n", {"qa_dev_1hop.txt": f"who is [X]\tY\n{bad_line}\n"})
    with pytest.raises(InputError) as caught:
        list(metaqa.read(folder, hops=(1,)))
    assert "qa_dev_1hop.txt:2" in str(caught.value)
    assert reason in str(caught.value)


def test_bad_kb_lines_and_on_bad_row(tmp_path):
    kb = "X|directed_by|Y\nX|directed_by\n\nX||Y\nZ|written_by|Y|W\nZ|written_by|Y\n"
    questions = "who is [X]\tY\n" + "".join(line + "\n" for line, _ in BAD_QUESTION_LINES) + "who is [Z]\tY\n"
    folder = _write_metaqa(tmp_path / "m", kb, {"qa_dev_2hop.txt": questions})
    with pytest.raises(InputError, match="kb.txt:2"):
        list(metaqa.read(folder, hops=(2,)))
    skipped = []
    graphs, kept = _split_records(metaqa.read(folder, hops=(2,), on_bad_row=skipped.append))
    assert [(e.src, e.dst) for g in graphs for e in g.edges] == [("X", "Y"), ("Z", "Y")]
    assert [q.qid for q in kept] == ["2hop/dev/1", "2hop/dev/6"]
    assert [(error.source.rsplit("/", 1)[1], error.line) for error in skipped] == [
        ("kb.txt", 2), ("kb.txt", 4), ("kb.txt", 5),
        ("qa_dev_2hop.txt", 2), ("qa_dev_2hop.txt", 3), ("qa_dev_2hop.txt", 4), ("qa_dev_2hop.txt", 5)]


def test_missing_inputs(tmp_path):
    with pytest.raises(ConfigError):
        metaqa.read(None)
    with pytest.raises(InputError, match="MetaQA folder not found"):
        metaqa.read(tmp_path / "nowhere")
    with pytest.raises(InputError, match="kb.txt") as caught:
        metaqa.read(tmp_path)
    assert "not found" in str(caught.value)
    folder = _write_metaqa(tmp_path / "m", "X|directed_by|Y\n", {"qa_dev_1hop.txt": "who is [X]\tY\n"})
    with pytest.raises(InputError, match="no 2-hop question file"):
        metaqa.read(folder, on_bad_row=lambda error: None)
    with pytest.raises(ConfigError, match="hops"):
        metaqa.read(folder, hops=(0,))

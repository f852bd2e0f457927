"""The questions loader (`gqa ingest questions`) and the seeded split helpers, without a database."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from gretriever_neo4j.errors import ConfigError, InputError
from gretriever_neo4j.loaders import questions
from gretriever_neo4j.loaders._common import parse_split_option, seeded_split


def _write(path, text):
    path.write_text(text, encoding="utf-8")
    return path


def _read(path, **options):
    return list(questions.read(path, graph="g", **options))


def test_tsv_without_header_like_metaqa_files(tmp_path):
    path = _write(tmp_path / "q.tsv", "who directed [Alien]\tRidley Scott\n\nwhat did X write\ta|b\tX\ttrain\n")
    first, second = _read(path)
    assert (first.text, first.answers, first.topic_entities) == ("who directed [Alien]", ["Ridley Scott"], [])
    assert (first.qid, first.dataset, first.graph_id, first.line) == ("q.tsv:1", "g", "g", 1)
    assert (second.answers, second.topic_entities, second.split, second.qid) == (["a", "b"], ["X"], "train", "q.tsv:3")


def test_tsv_and_csv_headers_in_any_order_with_aliases(tmp_path):
    tsv = _write(tmp_path / "q.tsv", "split\tanswer\tquestion\ttopics\tid\nvalidation\tA | B \tq one\tT1|T2\tx1\n")
    [record] = _read(tsv)
    assert (record.qid, record.text, record.answers, record.topic_entities, record.split) == (
        "x1", "q one", ["A", "B"], ["T1", "T2"], "val")
    csv_file = _write(tmp_path / "q.csv", 'question,answers,topic_entities\n"who wrote ""Paris, Texas""?",Sam Shepard,'
                                          '"Paris, Texas"\n')
    [record] = _read(csv_file)
    assert (record.text, record.answers, record.topic_entities) == ('who wrote "Paris, Texas"?', ["Sam Shepard"],
                                                                    ["Paris, Texas"])


def test_jsonl_lists_or_pipes(tmp_path):
    rows = [{"id": 7, "question": "q1", "answers": ["a", "b"], "topic_entities": "t"},
            {"question": "q2", "answer": "c|d", "q_entity": ["u"], "split": "test"}]
    path = _write(tmp_path / "q.jsonl", "\n".join(json.dumps(r) for r in rows) + "\n")
    first, second = _read(path)
    assert (first.qid, first.answers, first.topic_entities) == ("7", ["a", "b"], ["t"])
    assert (second.qid, second.answers, second.topic_entities, second.split) == ("q.jsonl:2", ["c", "d"], ["u"], "test")


@pytest.mark.parametrize(("name", "text", "line", "reason"), [
    ("q.tsv", "ok\ta\n\tb\n", 2, "question is empty"),
    ("q.tsv", "ok\ta\nno answer\t \n", 2, "no answer"),
    ("q.tsv", "ok\ta\njust a question\n", 2, "found 1 tab-separated field"),
    ("q.tsv", "ok\ta\nq\ta\tt\tnext-year\n", 2, "not train, val"),
    ("q.csv", "question,answers\nq,a\nq2,a,extra\n", 3, "expected 2 fields"),
    ("q.jsonl", '{"question": "q", "answers": ["a"]}\n{"question": "q",\n', 2, "bad JSON"),
    ("q.jsonl", '{"question": "q", "answers": ["a"]}\n["q", "a"]\n', 2, "expected a JSON object"),
    ("q.jsonl", '{"question": "q", "answers": [1]}\n', 1, "list of strings"),
    ("q.jsonl", '{"id": "x", "question": "q", "answers": "a"}\n{"id": "x", "question": "r", "answers": "a"}\n', 2,
     "repeats"),
])
def test_bad_rows_name_file_and_line_or_are_skipped(tmp_path, name, text, line, reason):
    path = _write(tmp_path / name, text)
    with pytest.raises(InputError) as caught:
        _read(path)
    assert f"{path}:{line}" in str(caught.value) and reason in str(caught.value)
    skipped = []
    kept = _read(path, on_bad_row=skipped.append)
    assert [error.line for error in skipped] == [line]
    assert all(record.line != line for record in kept) and len(kept) == (0 if line == 1 else 1)


@pytest.mark.parametrize(("name", "text", "reason"), [
    ("q.csv", "question,answer,colour\nq,a,red\n", "unknown column(s) colour"),
    ("q.csv", "question,topics\nq,t\n", "lacks column(s) answers"),
    ("q.csv", "q,a\n", "must be a header"),
    ("q.tsv", "question\tanswers\tanswer\nq\ta\tb\n", "repeats column(s) answers"),
])
def test_header_problems_always_raise(tmp_path, name, text, reason):
    path = _write(tmp_path / name, text)
    with pytest.raises(InputError) as caught:
        _read(path, on_bad_row=lambda error: None)
    assert f"{path}:1" in str(caught.value) and reason in str(caught.value)


def test_split_column_default_seeded_split_and_overrides(tmp_path):
    lines = [f"q{i}\ta{i}" + ("\t\ttest" if i < 5 else "") for i in range(100)]
    path = _write(tmp_path / "q.tsv", "\n".join(lines) + "\n")
    records = _read(path)
    assert all(r.split == "test" for r in records[:5])
    assert Counter(r.split for r in records[5:]) == Counter(
        seeded_split(100, {"train": .6, "val": .2, "test": .2}, 42)[5:])
    forced = _read(path, split="train=0.5,val=0.5", seed=3)
    assert [r.split for r in forced] == seeded_split(100, {"train": 0.5, "val": 0.5}, 3)
    assert {r.split for r in _read(path, split="val")} == {"val"}
    # The seeded assignment is over all rows, whatever the limit.
    assert [r.split for r in _read(path, split="train=0.5,val=0.5", seed=3, limit=10)] == [r.split for r in forced[:10]]
    with pytest.raises(ConfigError, match="--seed applies"):
        _read(path, split="val", seed=1)


def test_seeded_split_is_deterministic_and_exact():
    fractions = {"train": 0.6, "val": 0.2, "test": 0.2}
    labels = seeded_split(1628, fractions, 42)
    assert labels == seeded_split(1628, fractions, 42) != seeded_split(1628, fractions, 43)
    assert Counter(labels) == {"train": 977, "val": 325, "test": 326}
    assert seeded_split(0, fractions, 1) == [] and set(seeded_split(3, {"test": 1.0}, 0)) == {"test"}


@pytest.mark.parametrize(("text", "message"), [
    ("train=0.6,val=0.3", "sum to 0.9"), ("train=0.6,dev=0.4,val=0", "given twice"), ("train=x,val=1", "not a number"),
    ("holdout", "unknown split"), ("train=1.5,val=-0.5", "lie in [0, 1]"),
])
def test_split_option_errors(text, message):
    with pytest.raises(ConfigError, match=message.replace("[", r"\[").replace("]", r"\]")):
        parse_split_option(text)


def test_split_option_forms():
    assert parse_split_option(None) is None and parse_split_option("validation") == "val"
    assert parse_split_option("train=0.6, val=0.2,test=0.2") == {"train": 0.6, "val": 0.2, "test": 0.2}


def test_needs_graph_and_source(tmp_path):
    path = _write(tmp_path / "q.tsv", "q\ta\n")
    with pytest.raises(ConfigError, match="graph"):
        list(questions.read(path))
    with pytest.raises(InputError, match="not found"):
        _read(tmp_path / "missing.tsv")

from __future__ import annotations

import numpy as np
import pytest

from gretriever_neo4j.errors import InputError
from gretriever_neo4j.loaders._common import (
    batched_kg_records,
    normalise_split,
    numbered_lines,
    paper_split,
    reject,
    shuffle_split,
    split_from_filename,
)


@pytest.mark.parametrize("n_samples", [3, 5, 10, 17, 100, 1107, 2766])
@pytest.mark.parametrize("test_size", [0.2, 0.4, 0.5])
def test_shuffle_split_equals_sklearn_train_test_split(n_samples, test_size):
    model_selection = pytest.importorskip("sklearn.model_selection")
    expected_train, expected_test = model_selection.train_test_split(
        np.arange(n_samples), test_size=test_size, random_state=42)
    train, test = shuffle_split(n_samples, test_size, 42)
    assert train.tolist() == expected_train.tolist()
    assert test.tolist() == expected_test.tolist()


def test_paper_split_equals_two_sklearn_splits():
    model_selection = pytest.importorskip("sklearn.model_selection")
    n_samples = 500
    train, rest = model_selection.train_test_split(np.arange(n_samples), test_size=0.4, random_state=42)
    val, test = model_selection.train_test_split(rest, test_size=0.5, random_state=42)
    labels = paper_split(n_samples, seed=42)
    assert [i for i, label in enumerate(labels) if label == "train"] == sorted(train.tolist())
    assert [i for i, label in enumerate(labels) if label == "val"] == sorted(val.tolist())
    assert [i for i, label in enumerate(labels) if label == "test"] == sorted(test.tolist())
    assert (labels.count("train"), labels.count("val"), labels.count("test")) == (300, 100, 100)


@pytest.mark.parametrize(("name", "split"), [
    ("webqsp_evidence_test.jsonl", "test"),
    ("train-00000-of-00002.parquet", "train"),
    ("validation-00000-of-00001.parquet", "val"),
    ("qa_dev_1hop.txt", "val"),
    ("my_graph.jsonl", None),
    ("contest.jsonl", None),  # "test" inside a word is not a split
])
def test_split_from_filename(name, split):
    assert split_from_filename(name) == split


def test_normalise_split_aliases():
    assert [normalise_split(name) for name in ("Train", "validation", "VAL", "dev", "test", "holdout")] == \
        ["train", "val", "val", "val", "test", None]


def test_kg_batches_hold_at_most_batch_size_triples_and_dedupe_nodes():
    triples = [(1, "a", "r", "b"), (2, "b", "r", "a"), (3, "a", "s", "c"), (4, "c", "r", "c"), (5, "d", "r", "a")]
    records = list(batched_kg_records(triples, graph_id="g", dataset="t", source="f", batch_size=2))
    assert [len(record.edges) for record in records] == [2, 2, 1]
    assert [[node.key for node in record.nodes] for record in records] == [["a", "b"], ["a", "c"], ["d", "a"]]
    assert [record.line for record in records] == [1, 3, 5]
    assert all(record.kind == "kg" and record.graph_id == "g" for record in records)


def test_reject_raises_without_handler_and_reports_with_one():
    error = InputError("bad", source="f.txt", line=3)
    with pytest.raises(InputError):
        reject(error, None)
    seen = []
    reject(error, seen.append)
    assert seen == [error] and str(seen[0]) == "f.txt:3: bad"


def test_numbered_lines_name_the_line_of_a_bad_byte_far_into_the_file(tmp_path):
    """Each line is decoded alone: a stream decoding ahead in chunks would blame an earlier line."""
    path = tmp_path / "big.tsv"
    path.write_bytes("\ufeffa\tb\r\n".encode() + b"c\td\n" * 20_000 + b"bad \xff byte\n" + b"e\tf\n")
    with pytest.raises(InputError) as caught:
        list(numbered_lines(path))
    assert caught.value.line == 20_002 and "UTF-8" in str(caught.value)
    path.write_bytes("\ufeffa\tb\r\nc\td".encode())
    assert list(numbered_lines(path)) == [(1, "a\tb"), (2, "c\td")]

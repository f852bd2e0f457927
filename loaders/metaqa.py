"""MetaQA: a movie knowledge base (graph_id "metaqa") and 1-, 2- and 3-hop questions over it.

Source format
    A folder with
    * `kb.txt`: one triple per line, `head|relation|tail` (133,582 lines in the shared copy);
    * `qa_{split}_{k}hop.txt` for split in train / dev / test: `question<TAB>answer1|answer2|...`, the topic
      entity marked in the question with `[brackets]`;
    * optionally `qa_{split}_{k}hop_qtype.txt` (the relation path of each question). These are not read:
      question records have no field for them.

Records
    First the KB, as GraphRecords(graph_id="metaqa", kind="kg") of at most `kb_batch` (default 5,000)
    triples each, in file order; node key = text = entity name as written (surrounding spaces stripped);
    edge text = the raw relation name (`directed_by`, not "directed by"), so that relation paths such as
    the qtype files' stay recognisable. Option `kb_limit=` caps the number of KB lines read (default: all).
    Then, for each hop in `hops` (default (1, 2, 3)) and each question file of that hop (train, dev, test):
    QuestionRecord(qid=f"{k}hop/{file split}/{line number}", text=question as written (brackets kept),
    answers=the '|'-separated answers, topic_entities=the bracketed entities). `limit` caps the questions
    per hop. A hop without any question file is an error.

Split
    Train and test files keep their split. A dev file becomes "val" when the hop has a train file; when it
    has none (the shared data: dev files only) its lines are split 80/20 into "train" and "val" with
    sklearn's `train_test_split(arange(number of lines), test_size=0.2, random_state=42)` recomputed with
    numpy: one independent, seeded split per hop file, over all its lines, whatever `limit` is.

Bad rows
    A KB line without exactly three non-empty '|'-separated fields; a question line without exactly two
    tab-separated fields, without a `[topic]`, or with an empty answer. Blank lines are skipped.

Provenance
    MetaQA (Zhang et al., AAAI 2018), built on WikiMovies (Miller et al., 2016); Creative Commons licence
    (see `shared/data/README.md`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from pathlib import Path

from gretriever_neo4j.errors import ConfigError, InputError
from gretriever_neo4j.loaders._common import (
    DEFAULT_KG_BATCH,
    OnBadRow,
    batched_kg_records,
    check_limit,
    numbered_lines,
    reject,
    reject_unknown_options,
    require_dir,
    require_file,
    require_source,
    shuffle_split,
)
from gretriever_neo4j.records import QuestionRecord, Record

DATASET = "metaqa"
KIND = "kg"
GRAPH_ID = "metaqa"
KB_FILE_NAME = "kb.txt"
FILE_SPLITS = ("train", "dev", "test")
DEV_VAL_FRACTION = 0.2
DEV_SPLIT_SEED = 42
_TOPIC = re.compile(r"\[([^\[\]]+)\]")


def read(source: str | Path | None, *, limit: int | None = None, on_bad_row: OnBadRow | None = None,
         hops: Iterable[int] = (1, 2, 3), kb_limit: int | None = None, kb_batch: int = DEFAULT_KG_BATCH,
         **options: object) -> Iterator[Record]:
    """Stream the KB's GraphRecords, then the QuestionRecords hop by hop; see the module docstring."""
    reject_unknown_options(DATASET, options)
    limit = check_limit(limit)
    kb_limit = check_limit(kb_limit)
    folder = require_dir(require_source(DATASET, source, "a MetaQA folder with kb.txt and qa_*_{k}hop.txt"),
                         "MetaQA folder")
    kb_path = require_file(folder / KB_FILE_NAME, "MetaQA knowledge base")
    question_files = {hop: _question_files(folder, hop) for hop in _checked_hops(hops)}
    return _records(kb_path, question_files, limit, kb_limit, kb_batch, on_bad_row)


def question_file_name(file_split: str, hop: int) -> str:
    return f"qa_{file_split}_{hop}hop.txt"


def parse_kb_line(line: str) -> tuple[str, str, str]:
    fields = [field.strip() for field in line.split("|")]
    if len(fields) != 3 or not all(fields):
        raise ValueError(f"expected head|relation|tail, found {len(fields)} field(s): {line[:120]!r}")
    head, relation, tail = fields
    return head, relation, tail


def parse_question_line(line: str) -> tuple[str, list[str], list[str]]:
    """-> (question, answers, topic entities)."""
    fields = line.split("\t")
    if len(fields) != 2:
        raise ValueError(f"expected question<TAB>answers, found {len(fields)} tab-separated field(s)")
    question, answer_field = fields
    topics = list(dict.fromkeys(match.strip() for match in _TOPIC.findall(question)))
    if not topics:
        raise ValueError("question marks no [topic entity]")
    answers = [answer.strip() for answer in answer_field.split("|")]
    if not all(answers):
        raise ValueError(f"empty answer in {answer_field!r}")
    return question, answers, topics


def _checked_hops(hops: Iterable[int]) -> list[int]:
    checked = sorted(set(hops)) if not isinstance(hops, int) else [hops]
    if not checked or not all(isinstance(hop, int) and not isinstance(hop, bool) and hop >= 1 for hop in checked):
        raise ConfigError(f"hops must be positive integers such as (1, 2, 3), not {hops!r}")
    return checked


def _question_files(folder: Path, hop: int) -> list[tuple[str, Path]]:
    files = [(split, folder / question_file_name(split, hop)) for split in FILE_SPLITS]
    present = [(split, path) for split, path in files if path.is_file()]
    if not present:
        raise InputError(f"no {hop}-hop question file ({', '.join(path.name for _, path in files)})", source=folder)
    return present


def _records(kb_path: Path, question_files: dict[int, list[tuple[str, Path]]], limit: int | None,
             kb_limit: int | None, kb_batch: int, on_bad_row: OnBadRow | None) -> Iterator[Record]:
    yield from batched_kg_records(_kb_triples(kb_path, kb_limit, on_bad_row), graph_id=GRAPH_ID, dataset=DATASET,
                                  source=kb_path, batch_size=kb_batch)
    for hop, files in question_files.items():
        has_train_file = any(split == "train" for split, _ in files)
        remaining = limit
        for file_split, path in files:
            for record in _questions(path, hop, file_split, has_train_file, remaining, on_bad_row):
                yield record
                if remaining is not None:
                    remaining -= 1
            if remaining == 0:
                break


def _kb_triples(path: Path, kb_limit: int | None, on_bad_row: OnBadRow | None) -> Iterator[tuple[int, str, str, str]]:
    for line_no, line in numbered_lines(path):
        if kb_limit is not None and line_no > kb_limit:
            return
        if not line.strip():
            continue
        try:
            head, relation, tail = parse_kb_line(line)
        except ValueError as exc:
            reject(InputError(str(exc), source=path, line=line_no), on_bad_row)
            continue
        yield line_no, head, relation, tail


def _questions(path: Path, hop: int, file_split: str, has_train_file: bool, limit: int | None,
               on_bad_row: OnBadRow | None) -> Iterator[QuestionRecord]:
    if limit == 0:
        return
    line_splits = _dev_line_splits(path) if file_split == "dev" and not has_train_file else None
    emitted = 0
    for line_no, line in numbered_lines(path):
        if not line.strip():
            continue
        try:
            question, answers, topics = parse_question_line(line)
        except ValueError as exc:
            reject(InputError(str(exc), source=path, line=line_no), on_bad_row)
            continue
        split = line_splits[line_no - 1] if line_splits else ("val" if file_split == "dev" else file_split)
        yield QuestionRecord(qid=f"{hop}hop/{file_split}/{line_no}", dataset=DATASET, text=question,
                             answers=answers, split=split, graph_id=GRAPH_ID, topic_entities=topics,
                             source=str(path), line=line_no)
        emitted += 1
        if limit is not None and emitted >= limit:
            return


def _dev_line_splits(path: Path) -> list[str]:
    """'train' / 'val' for each line of a dev file (index = line number - 1)."""
    line_count = sum(1 for _ in numbered_lines(path))
    labels = ["train"] * line_count
    if line_count:
        _, val_positions = shuffle_split(line_count, DEV_VAL_FRACTION, DEV_SPLIT_SEED)
        for position in val_positions:
            labels[position] = "val"
    return labels

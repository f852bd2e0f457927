"""A user's questions over a stored graph (`gqa ingest questions --graph NAME --source FILE`).

Source format (by extension: .tsv/.txt TSV, .csv CSV, .jsonl/.json JSON lines)
    * TSV: `question<TAB>answers[<TAB>topic_entities[<TAB>split]]` without a header (the format of
      `gqa ask --questions`, and of MetaQA's question files), or with a header naming the columns
      `question`, `answers` and optionally `topic_entities`, `split`, `id` in any order;
    * CSV: a header with those column names (read with the csv module: quoted fields may hold commas);
    * JSONL: one object per line with `question`, `answers` and optionally `topic_entities`, `split`, `id`.
    Answers and topic entities are `|`-separated in TSV and CSV; in JSONL a list of strings or one
    `|`-separated string. `answer` and `q_entity` (the RoG schema) are accepted as aliases. Blank lines are
    skipped. Topic entities are node keys of the graph; where a row gives none they are left empty here and
    linked against the stored graph by `gretriever_neo4j.ingest.questions`.

Records
    QuestionRecord(qid=`id` when given, else "<file name>:<line>", dataset=graph_id=the graph's name,
    text=question as written, answers, topic_entities, split). `limit` caps the questions.

Split
    Option `split`: a name (every question goes there) or seeded fractions ("train=0.6,val=0.2,test=0.2",
    option `seed`, default 42), which override the file's `split` column. Without the option a row keeps its
    `split` column; rows without one are split by `seeded_split` with the default 60/20/20 fractions. The seeded
    assignment is over all data rows of the file in order, whatever `limit` is, so it never depends on it.

Bad rows
    A wrong number of fields, an empty question, no answer, a split that is not train/val/test, a repeated
    `id`, a JSON line that is not an object or has fields of the wrong type. Header problems always raise.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from pathlib import Path

from gretriever_neo4j.errors import ConfigError, InputError
from gretriever_neo4j.loaders._common import (
    DEFAULT_SPLIT_SEED,
    OnBadRow,
    check_limit,
    csv_rows,
    normalise_split,
    numbered_lines,
    parse_split_option,
    reject,
    reject_unknown_options,
    require_file,
    seeded_split,
)
from gretriever_neo4j.records import MAX_QUESTION_CHARS, QuestionRecord, question_column
from gretriever_neo4j.records import QUESTION_COLUMNS as COLUMNS
from gretriever_neo4j.records import QUESTION_REQUIRED as REQUIRED

DATASET = "questions"
DEFAULT_FRACTIONS = {"train": 0.6, "val": 0.2, "test": 0.2}


def read(source: str | Path | None, *, limit: int | None = None, on_bad_row: OnBadRow | None = None,
         graph: str | None = None, split: str | None = None, seed: int | None = None,
         **options: object) -> Iterator[QuestionRecord]:
    """QuestionRecords over `graph`; see the module docstring."""
    reject_unknown_options(DATASET, options)
    limit = check_limit(limit)
    if not isinstance(graph, str) or not graph.strip():
        raise ConfigError("questions need graph=NAME: the stored graph they are asked over")
    if source is None:
        raise ConfigError("questions need a source: a TSV, CSV or JSONL file")
    path = require_file(source, "questions file")
    option = parse_split_option(split)
    if seed is not None and not isinstance(option, dict) and option is not None:
        raise ConfigError("--seed applies to a split given as fractions (--split train=0.6,val=0.2,test=0.2)")
    rows = _rows_reader(path)
    count = sum(1 for _ in rows())  # also raises header problems before anything else
    fractions = option if isinstance(option, dict) else DEFAULT_FRACTIONS
    seeded = seeded_split(count, fractions, DEFAULT_SPLIT_SEED if seed is None else seed)
    return _records(path, rows(), graph.strip(), option if isinstance(option, str) else None,
                    isinstance(option, dict), seeded, limit, on_bad_row)


def file_format(path: Path) -> str:
    suffix = path.suffix.lower()
    if suffix in (".jsonl", ".json", ".ndjson"):
        return "jsonl"
    if suffix == ".csv":
        return "csv"
    return "tsv"


def asked_questions(path: Path) -> list[tuple[int, str, list[str] | None]]:
    """(line, question, gold answers or None) of each row of a CSV or JSON-lines questions file, the columns as
    `read` takes them but the answers optional: what `gqa ask --questions` asks from such a file. The first bad
    row raises `InputError` naming the file and line."""
    fmt = file_format(path)
    if fmt == "tsv":
        raise ConfigError("asked_questions reads CSV and JSON lines; `gqa ask` reads its TSV itself")
    rows = _jsonl_rows(path) if fmt == "jsonl" else _table_rows(path, csv_rows(path), header_required=True,
                                                                 required=("question",))
    out = []
    for line, row in rows:
        try:
            if isinstance(row, str):
                raise ValueError(row)
            answers = _names(row.get("answers"), "answers")
            out.append((line, question_text(row), answers or None))
        except ValueError as exc:
            raise InputError(str(exc), source=path, line=line) from None
    return out


# -- raw rows: (line, dict of column -> raw value, or an error message) ----------------------------------

def _rows_reader(path: Path):
    fmt = file_format(path)
    if fmt == "jsonl":
        return lambda: _jsonl_rows(path)
    if fmt == "csv":
        return lambda: _table_rows(path, csv_rows(path), header_required=True)
    return lambda: _table_rows(path, ((n, line.split("\t")) for n, line in numbered_lines(path) if line.strip()),
                               header_required=False)


def _table_rows(path: Path, rows, *, header_required: bool,
                required: tuple[str, ...] = REQUIRED) -> Iterator[tuple[int, dict | str]]:
    first = next(rows, None)
    if first is None:
        return
    line, fields = first
    names = [question_column(field) for field in fields]
    if "question" in names:
        unknown = [field for field, name in zip(fields, names) if name not in COLUMNS]
        missing = [name for name in required if name not in names]
        repeated = sorted({name for name in names if names.count(name) > 1})
        if unknown or missing or repeated:
            problem = (f"unknown column(s) {', '.join(unknown)}" if unknown else
                       f"lacks column(s) {', '.join(missing)}" if missing else
                       f"repeats column(s) {', '.join(repeated)}")
            raise InputError(f"header {problem} (columns: {', '.join(COLUMNS)}; {' and '.join(required)} required)",
                             source=path, line=line)
        header = names
    elif header_required:
        raise InputError(f"the first line must be a header naming the columns ({', '.join(COLUMNS)}; "
                         f"{' and '.join(required)} required)", source=path, line=line)
    else:
        header = None
        rows = itertools.chain([(line, fields)], rows)
    for line, fields in rows:
        columns = header or list(COLUMNS[:4])
        if header is not None and len(fields) != len(header):
            yield line, f"expected {len(header)} fields ({', '.join(header)}), found {len(fields)}"
        elif header is None and not 2 <= len(fields) <= 4:
            yield line, (f"expected question<TAB>answers[<TAB>topic_entities[<TAB>split]], found {len(fields)} "
                         f"tab-separated field(s)")
        else:
            yield line, dict(zip(columns, fields))


def _jsonl_rows(path: Path) -> Iterator[tuple[int, dict | str]]:
    for line, text in numbered_lines(path):
        if not text.strip():
            continue
        try:
            value = json.loads(text)
        except json.JSONDecodeError as exc:
            yield line, f"bad JSON ({exc.msg} at column {exc.colno})"
            continue
        if not isinstance(value, dict):
            yield line, f"expected a JSON object, found {type(value).__name__}"
            continue
        row: dict = {}
        for key, item in value.items():
            name = question_column(key)
            if name in COLUMNS and name not in row:
                row[name] = item
        yield line, row


# -- records -------------------------------------------------------------------------------------------

def _records(path: Path, rows, graph: str, forced: str | None, override: bool, seeded: list[str],
             limit: int | None, on_bad_row: OnBadRow | None) -> Iterator[QuestionRecord]:
    seen: set[str] = set()
    emitted = 0
    for position, (line, row) in enumerate(rows):
        if limit is not None and emitted >= limit:
            return
        try:
            if isinstance(row, str):
                raise ValueError(row)
            record = _record(path, line, row, graph, forced, override, seeded[position])
            if record.qid in seen:
                raise ValueError(f"id {record.qid!r} repeats an earlier row's")
        except ValueError as exc:
            reject(InputError(str(exc), source=path, line=line), on_bad_row)
            continue
        seen.add(record.qid)
        emitted += 1
        yield record


def _record(path: Path, line: int, row: dict, graph: str, forced: str | None, override: bool,
            seeded: str) -> QuestionRecord:
    question = question_text(row)
    answers = _names(row.get("answers"), "answers")
    if not answers:
        raise ValueError("no answer (give answer1|answer2)")
    topics = _names(row.get("topic_entities"), "topic_entities")
    raw_split = row.get("split")
    if raw_split is not None and not isinstance(raw_split, str):
        raise ValueError(f"'split' must be a string, found {type(raw_split).__name__}")
    split = None
    if raw_split is not None and raw_split.strip():
        split = normalise_split(raw_split)
        if split is None:
            raise ValueError(f"split {raw_split.strip()!r} is not train, val (validation) or test")
    if forced is not None:
        split = forced
    elif override or split is None:
        split = seeded
    qid = row.get("id")
    if isinstance(qid, int) and not isinstance(qid, bool):
        qid = str(qid)
    if qid is not None and (not isinstance(qid, str) or not qid.strip()):
        raise ValueError("'id' must be a non-empty string")
    qid = qid.strip() if qid else f"{path.name}:{line}"
    return QuestionRecord(qid=qid, dataset=graph, text=question, answers=answers, split=split,
                          graph_id=graph, topic_entities=topics, source=str(path), line=line)


def question_text(row: dict) -> str:
    """The row's question, stripped; ValueError where it is missing, empty, not a string or too long (stripped).
    Every reader of a questions file checks a question here: `gqa ingest questions` and `gqa ask --questions`."""
    question = row.get("question")
    if not isinstance(question, str) or not question.strip():
        raise ValueError("the question is empty" if isinstance(question, str) or question is None
                         else f"'question' must be a string, found {type(question).__name__}")
    question = question.strip()
    if len(question) > MAX_QUESTION_CHARS:
        raise ValueError(f"the question has {len(question)} characters (at most {MAX_QUESTION_CHARS})")
    return question


def _names(value, field: str) -> list[str]:
    """'a|b' or ["a", "b"] -> ["a", "b"] (stripped, empty parts and repeats dropped)."""
    if value is None:
        return []
    if isinstance(value, str):
        parts = value.split("|")
    elif isinstance(value, list) and all(isinstance(part, str) for part in value):
        parts = value
    else:
        raise ValueError(f"'{field}' must be a '|'-separated string or a list of strings")
    return list(dict.fromkeys(part.strip() for part in parts if part.strip()))

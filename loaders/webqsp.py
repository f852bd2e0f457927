"""WebQSP in the RoG schema: one knowledge graph (graph_id "webqsp") plus one question per row.

Source format
    Rows `{"id", "question", "answer": [...], "q_entity": [...], "a_entity": [...], "graph": [[h, r, t], ...]}`
    as published by `rmanluo/RoG-webqsp` on the Hugging Face hub (the schema G-Retriever's
    `src/dataset/preprocess/webqsp.py` reads). Accepted sources:

    * a JSONL file, one row per line (e.g. the shared `webqsp/webqsp_evidence_test.jsonl`); its split comes
      from the `split=` option, else from the file name (train / validation|val / test), else "test";
      `split=` may instead give seeded fractions ("train=0.6,val=0.2,test=0.2", with `seed=`, default 42):
      one `RandomState(seed).permutation` of all the source's rows, cut in that order (`_common.seeded_split`).
      The shared evidence file holds test questions only: such a split lets WebQSP train and test on disjoint
      questions, which is not the paper's protocol (it trains on WebQSP's own train split);
    * a folder holding the hub dataset's parquet files (`data/train-00000-of-00002.parquet`, `validation-...`,
      `test-...`, found recursively), read with pyarrow record batch by record batch, split from each file
      name; a folder without parquet files is read as a folder of JSONL files;
    * a hub id such as `rmanluo/RoG-webqsp` (anything that is not an existing path and contains '/'), read
      with `datasets.load_dataset`, all splits (train, validation, test); needs `pip install 'gqa[hub]'`
      and network access to the hub. This is the default source.

Records
    For every row: a GraphRecord(graph_id="webqsp", kind="kg") whose nodes are the entities of the row's
    triples (key = text = entity name exactly as written; G-Retriever lower-cases at load time, we keep
    Freebase's case; a name RoG cut at its comma, whose rest stands before the relation, is made whole:
    `rejoined`) and whose edges are the triples, then a QuestionRecord(qid=row id, text=question,
    answers=answer, split in train/val/test, topic_entities=q_entity). `a_entity` is not read: adding answer
    entities as nodes would leak gold answers into graphs that do not contain them. Topic entities are not
    added as nodes either, so a topic entity may be absent from the graph (always so for an empty graph,
    which is legal). All rows' graphs merge into one stored KG. `limit` caps the number of rows.

Provenance
    WebQuestionsSP (Yih et al., 2016), questions over Freebase; RoG schema by Luo et al. (2024). The shared
    evidence graphs combine SubgraphRAG's GPT-labelled triples (MIT) and GNN-RAG reasoning paths, see
    `shared/data/README.md`. WebQSP itself is distributed by Microsoft Research for research use.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from gretriever_neo4j.errors import ConfigError, InputError
from gretriever_neo4j.loaders._common import (
    DEFAULT_SPLIT_SEED,
    GraphBuilder,
    OnBadRow,
    check_limit,
    normalise_split,
    numbered_lines,
    parse_split_option,
    reject,
    reject_unknown_options,
    seeded_split,
    split_from_filename,
)
from gretriever_neo4j.records import GraphRecord, QuestionRecord, Record

DATASET = "webqsp"
KIND = "kg"
GRAPH_ID = "webqsp"
DEFAULT_SOURCE = "rmanluo/RoG-webqsp"
DEFAULT_SPLIT = "test"
REQUIRED_FIELDS = ("id", "question", "answer", "q_entity", "graph")
_HUB_SPLIT_ORDER = ("train", "validation", "test")
_PARQUET_BATCH_ROWS = 256
_HUB_ID = re.compile(r"[A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*")
_FILE_SUFFIXES = (".jsonl", ".json", ".parquet", ".txt", ".csv", ".tsv")
# RoG's graphs were written through a comma-separated step that cut names at their comma: the rest of the name
# stands before the relation, ["Martin Luther King", "Jr.,people.person.place_of_birth", "Atlanta"] (97 of the
# shared file's 45,065 triples: "Jr.", "Inc.", "Sr.", "2008" of an election, "Minato, Tokyo" of a place)
_CUT_NAME = re.compile(r"(.+),([a-z0-9_]+(?:\.[a-z0-9_]+)+)")


@dataclass(frozen=True, slots=True)
class _RawRow:
    """One undecoded row and where it came from, so errors can point back at it."""

    content: object
    split: str
    source: str
    line: int | None = None  # JSONL line number
    row_index: int | None = None  # 0-based row within a parquet file or hub split
    parse_error: str | None = None

    def error(self, reason: str, field: str | None = None) -> InputError:
        if self.row_index is not None:
            reason = f"row {self.row_index}: {reason}"
        return InputError(reason, source=self.source, line=self.line, field=field)


def read(source: str | Path | None = None, *, limit: int | None = None, on_bad_row: OnBadRow | None = None,
         split: str | None = None, seed: int | None = None, **options: object) -> Iterator[Record]:
    """Stream GraphRecord, QuestionRecord pairs, one pair per row; see the module docstring."""
    reject_unknown_options(DATASET, options)
    limit = check_limit(limit)
    option = parse_split_option(split)
    forced_split = option if isinstance(option, str) else None
    source = DEFAULT_SOURCE if source is None else source
    path = Path(source)

    def rows() -> Iterator[_RawRow]:
        if path.is_file():
            return _jsonl_rows(path, forced_split)
        if path.is_dir():
            return _folder_rows(path, forced_split)
        return _hub_rows(str(source), _import_datasets(str(source)))

    if not path.exists() and not _looks_like_hub_id(str(source)):
        raise InputError("WebQSP source not found (expected a JSONL file, a folder of parquet files "
                         "or a hub id like rmanluo/RoG-webqsp)", source=path)
    if isinstance(option, dict):
        # Seeded fractions over every row of the source (whatever `limit` is), in source order.
        labels = seeded_split(sum(1 for _ in rows()), option, DEFAULT_SPLIT_SEED if seed is None else seed)
        return _records(_relabelled(rows(), labels), limit, on_bad_row)
    if seed is not None:
        raise ConfigError("seed= applies to a split given as fractions (split='train=0.6,val=0.2,test=0.2')")
    return _records(rows(), limit, on_bad_row)


def _relabelled(rows: Iterator[_RawRow], labels: list[str]) -> Iterator[_RawRow]:
    for position, row in enumerate(rows):
        yield dataclasses.replace(row, split=labels[position])


def _looks_like_hub_id(source: str) -> bool:
    """`owner/name` without a file extension; anything else that does not exist is a missing path."""
    return bool(_HUB_ID.fullmatch(source)) and not source.endswith(_FILE_SUFFIXES)


def _records(rows: Iterator[_RawRow], limit: int | None, on_bad_row: OnBadRow | None) -> Iterator[Record]:
    emitted = 0
    for row in rows:
        if limit is not None and emitted >= limit:
            return
        try:
            graph, question = _row_records(row)
        except InputError as error:
            reject(error, on_bad_row)
            continue
        emitted += 1
        yield graph
        yield question


def _row_records(row: _RawRow) -> tuple[GraphRecord, QuestionRecord]:
    if row.parse_error:
        raise row.error(row.parse_error)
    content = row.content
    if not isinstance(content, Mapping):
        raise row.error(f"expected a JSON object, found {type(content).__name__}")
    missing = [name for name in REQUIRED_FIELDS if name not in content]
    if missing:
        raise row.error(f"missing field(s) {', '.join(missing)}")
    qid = _text_field(row, "id", allow_int=True)
    question = _text_field(row, "question")
    answers = _text_list(row, "answer")
    topic_entities = _text_list(row, "q_entity")
    builder = GraphBuilder()
    for position, triple in enumerate(_list_field(row, "graph")):
        if (not isinstance(triple, (list, tuple)) or len(triple) != 3
                or not all(isinstance(part, str) for part in triple)):
            raise row.error(f"triple {position} is not [head, relation, tail] of strings: {triple!r:.120}",
                            field="graph")
        builder.add_triple(*rejoined(*triple))
    graph = builder.build(graph_id=GRAPH_ID, dataset=DATASET, kind=KIND, source=row.source, line=row.line)
    record = QuestionRecord(qid=qid, dataset=DATASET, text=question, answers=answers, split=row.split,
                            graph_id=GRAPH_ID, topic_entities=topic_entities, source=row.source, line=row.line)
    return graph, record


def rejoined(head: str, relation: str, tail: str) -> tuple[str, str, str]:
    """A triple whose head name RoG cut at its comma, made whole: ("Blethen Maine Newspapers",
    "Inc.,book.newspaper_owner.newspapers_owned", X) is ("Blethen Maine Newspapers, Inc.",
    "book.newspaper_owner.newspapers_owned", X), the node the graph's other triples name."""
    cut = _CUT_NAME.fullmatch(relation)
    if cut is None:
        return head, relation, tail
    return f"{head}, {cut.group(1)}", cut.group(2), tail


def _text_field(row: _RawRow, name: str, *, allow_int: bool = False) -> str:
    value = row.content[name]
    if allow_int and isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if not isinstance(value, str) or not value.strip():
        raise row.error(f"'{name}' must be a non-empty string, found {value!r:.80}", field=name)
    return value


def _list_field(row: _RawRow, name: str) -> list:
    value = row.content[name]
    if hasattr(value, "tolist"):  # numpy arrays from some parquet readers
        value = value.tolist()
    if not isinstance(value, (list, tuple)):
        raise row.error(f"'{name}' must be a list, found {type(value).__name__}", field=name)
    return list(value)


def _text_list(row: _RawRow, name: str) -> list[str]:
    values = _list_field(row, name)
    if not all(isinstance(value, str) for value in values):
        raise row.error(f"'{name}' must be a list of strings", field=name)
    return values


# --- sources ---------------------------------------------------------------------------------------

def _jsonl_rows(path: Path, forced_split: str | None) -> Iterator[_RawRow]:
    split = forced_split or split_from_filename(path) or DEFAULT_SPLIT
    for line_no, line in numbered_lines(path):
        if not line.strip():
            continue
        yield _parsed_json_row(line, split, str(path), line_no)


def _parsed_json_row(line: str, split: str, source: str, line_no: int) -> _RawRow:
    try:
        return _RawRow(json.loads(line), split, source, line=line_no)
    except json.JSONDecodeError as exc:
        return _RawRow(None, split, source, line=line_no,
                       parse_error=f"bad JSON ({exc.msg} at column {exc.colno})")


def _folder_rows(folder: Path, forced_split: str | None) -> Iterator[_RawRow]:
    parquet_files = _ordered_by_split(folder.rglob("*.parquet"))
    if parquet_files:
        pyarrow_parquet = _import_pyarrow(folder)
        return _parquet_rows(parquet_files, forced_split, pyarrow_parquet)
    jsonl_files = _ordered_by_split(folder.rglob("*.jsonl"))
    if not jsonl_files:
        raise InputError("folder holds no .parquet or .jsonl files", source=folder)
    return (row for path in jsonl_files for row in _jsonl_rows(path, forced_split))


def _ordered_by_split(paths) -> list[Path]:
    rank = {"train": 0, "val": 1, "test": 2}
    return sorted(paths, key=lambda path: (rank.get(split_from_filename(path) or "", 3), str(path)))


def _import_pyarrow(folder: Path):
    try:
        import pyarrow.parquet
    except ImportError as exc:
        raise ConfigError(f"reading the parquet files in {folder} needs pyarrow: "
                          "pip install 'gqa[hub]' (or pass a JSONL file instead)") from exc
    return pyarrow.parquet


def _parquet_rows(files: list[Path], forced_split: str | None, pyarrow_parquet) -> Iterator[_RawRow]:
    for path in files:
        split = split_from_filename(path) or forced_split or DEFAULT_SPLIT
        try:
            parquet_file = pyarrow_parquet.ParquetFile(path)
        except Exception as exc:  # pyarrow raises several unrelated types for unreadable files
            raise InputError(f"not a readable parquet file ({exc})", source=path) from exc
        columns = set(parquet_file.schema_arrow.names)
        missing = [name for name in REQUIRED_FIELDS if name not in columns]
        if missing:
            raise InputError(f"parquet file lacks column(s) {', '.join(missing)}", source=path)
        row_index = 0
        for batch in parquet_file.iter_batches(batch_size=_PARQUET_BATCH_ROWS, columns=list(REQUIRED_FIELDS)):
            for content in batch.to_pylist():
                yield _RawRow(content, split, str(path), row_index=row_index)
                row_index += 1


def _import_datasets(hub_id: str):
    try:
        import datasets
    except ImportError as exc:
        raise ConfigError(f"loading {hub_id} from the Hugging Face hub needs the 'datasets' package "
                          "(pip install 'gqa[hub]'); without it pass a local JSONL file or a folder of the "
                          "dataset's parquet files") from exc
    return datasets


def _hub_rows(hub_id: str, datasets_module) -> Iterator[_RawRow]:
    try:
        dataset_dict = datasets_module.load_dataset(hub_id)
    except Exception as exc:  # offline hub, unknown id, auth: all configuration problems for the user
        raise ConfigError(f"cannot load {hub_id} from the Hugging Face hub ({type(exc).__name__}: {exc}); "
                          "check the id and network access, or pass a local JSONL file or parquet folder") from exc
    names = [name for name in _HUB_SPLIT_ORDER if name in dataset_dict]
    names += sorted(name for name in dataset_dict if name not in _HUB_SPLIT_ORDER)
    for name in names:
        split = normalise_split(name) or DEFAULT_SPLIT
        for row_index, content in enumerate(dataset_dict[name]):
            yield _RawRow(content, split, f"{hub_id}[{name}]", row_index=row_index)

"""ExplaGraphs: one small commonsense explanation graph and one stance question per TSV row.

Source format
    A tab-separated file with the header `arg1  arg2  label  graph` (extra columns are ignored), e.g. the
    shared `explagraphs/train_dev.tsv` (2,766 rows), or a folder containing `train_dev.tsv`. Fields follow
    CSV quoting rules with '"' as quote character (as pandas' `read_csv(sep='\\t')`, which G-Retriever
    uses, reads them): `"The ""three strikes"" law"` is `The "three strikes" law`. Blank lines are skipped
    and not counted. `graph` is a run of triples `(head; relation; tail)(head; relation; tail)...`.

Records (per-sample; row i counts data rows from 0, blank lines excluded)
    GraphRecord(graph_id=f"explagraphs/{i}"): the triples parsed as G-Retriever's
    `src/dataset/preprocess/expla_graphs.py` does: every `(...)` group (non-greedy, so a name may not
    contain ')') is split on ';' into exactly three parts; head, relation and tail are lower-cased and
    stripped; nodes get ids 0, 1, ... in order of first appearance (key = that id as a string, text = the
    node name); every triple is an edge, duplicates kept. A group that does not split into three parts
    (G-Retriever would crash) or has an empty head/tail is a bad row. An empty graph string is legal.
    QuestionRecord(qid=str(i), answers=[label]) with G-Retriever's prompt text (`src/dataset/expla_graphs.py`)
    `Argument 1: {arg1}\\nArgument 2: {arg2}\\nQuestion: Do argument 1 and argument 2 support or counter each
    other? Answer in one word in the form of 'support' or 'counter'.\\n\\nAnswer:`; label must be `support`
    or `counter`. Each row's GraphRecord is followed by its QuestionRecord.

Split
    The paper's 60/20/20 split over row indices (`generate_split.py`): sklearn
    `train_test_split(arange(N), test_size=0.4, random_state=42)`, then the 40% part again with
    `test_size=0.5, random_state=42` into val and test (1,659 / 553 / 554 for N = 2,766), computed with
    numpy over all rows of the file, whatever `limit` (the first `limit` rows) is.

Provenance
    ExplaGraphs (Saha et al., EMNLP 2021), train + dev rows merged as in G-Retriever; MIT licence.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from gretriever_neo4j.errors import InputError
from gretriever_neo4j.loaders._common import (
    GraphBuilder,
    OnBadRow,
    check_limit,
    csv_rows,
    header_positions,
    paper_split,
    reject,
    reject_unknown_options,
    require_file,
    require_source,
)
from gretriever_neo4j.records import GraphRecord, QuestionRecord, Record

DATASET = "explagraphs"
KIND = "per-sample"
DEFAULT_FILE_NAME = "train_dev.tsv"
COLUMNS = ("arg1", "arg2", "label", "graph")
LABELS = ("support", "counter")
SPLIT_SEED = 42
PROMPT = ("Question: Do argument 1 and argument 2 support or counter each other? "
          "Answer in one word in the form of 'support' or 'counter'.\n\nAnswer:")
_TRIPLE_GROUP = re.compile(r"\((.*?)\)")
_TSV = {"delimiter": "\t"}


def question_text(arg1: str, arg2: str) -> str:
    """G-Retriever's ExplaGraphs question: both arguments, then the fixed stance prompt."""
    return f"Argument 1: {arg1}\nArgument 2: {arg2}\n{PROMPT}"


def parse_graph(graph: str) -> tuple[list[tuple[str, str]], list[tuple[str, str, str]]]:
    """`(h; r; t)(h; r; t)...` -> (nodes as (key, text), edges as (src key, relation, dst key)).

    Raises ValueError naming the offending triple; callers attach file and line.
    """
    node_ids: dict[str, str] = {}
    edges = []
    for position, group in enumerate(_TRIPLE_GROUP.findall(graph)):
        parts = group.split(";")
        if len(parts) != 3:
            raise ValueError(f"graph triple {position} '({group})' is not of the form (head; relation; tail)")
        head, relation, tail = (part.lower().strip() for part in parts)
        if not head or not tail:
            raise ValueError(f"graph triple {position} '({group})' has an empty head or tail")
        for name in (head, tail):
            node_ids.setdefault(name, str(len(node_ids)))
        edges.append((node_ids[head], relation, node_ids[tail]))
    return [(key, name) for name, key in node_ids.items()], edges


def read(source: str | Path | None, *, limit: int | None = None, on_bad_row: OnBadRow | None = None,
         **options: object) -> Iterator[Record]:
    """Stream each row's GraphRecord then QuestionRecord; see the module docstring."""
    reject_unknown_options(DATASET, options)
    limit = check_limit(limit)
    path = require_source(DATASET, source, f"the path of ExplaGraphs' {DEFAULT_FILE_NAME}")
    if path.is_dir():
        path = path / DEFAULT_FILE_NAME
    require_file(path, "ExplaGraphs TSV file")
    return _records(path, limit, on_bad_row)


def _records(path: Path, limit: int | None, on_bad_row: OnBadRow | None) -> Iterator[Record]:
    rows = csv_rows(path, **_TSV)
    header_line, header = next(rows, (1, []))
    positions = header_positions(header, COLUMNS, source=path, line=header_line, allow_extra=True)
    splits = paper_split(_count_data_rows(path), seed=SPLIT_SEED)
    for row_index, (line, fields) in enumerate(rows):
        if limit is not None and row_index >= limit:
            return
        try:
            graph, question = _row_records(row_index, fields, positions, len(header), splits[row_index],
                                           path, line)
        except InputError as error:
            reject(error, on_bad_row)
            continue
        yield graph
        yield question


def _count_data_rows(path: Path) -> int:
    return sum(1 for _ in csv_rows(path, **_TSV)) - 1


def _row_records(row_index: int, fields: list[str], positions: dict[str, int], width: int, split: str,
                 path: Path, line: int) -> tuple[GraphRecord, QuestionRecord]:
    if len(fields) != width:
        raise InputError(f"expected {width} tab-separated fields, found {len(fields)}", source=path, line=line)
    arg1, arg2, label, graph_text = (fields[positions[name]] for name in COLUMNS)
    label = label.strip()
    if label not in LABELS:
        raise InputError(f"label must be 'support' or 'counter', found {label!r}", source=path, line=line,
                         field="label")
    try:
        nodes, edges = parse_graph(graph_text)
    except ValueError as exc:
        raise InputError(str(exc), source=path, line=line, field="graph") from exc
    builder = GraphBuilder()
    for key, text in nodes:
        builder.add_node(key, text)
    for src, relation, dst in edges:
        builder.add_edge(src, relation, dst)
    graph_id = f"{DATASET}/{row_index}"
    graph = builder.build(graph_id=graph_id, dataset=DATASET, kind=KIND, source=path, line=line)
    question = QuestionRecord(qid=str(row_index), dataset=DATASET, text=question_text(arg1, arg2),
                              answers=[label], split=split, graph_id=graph_id, source=str(path), line=line)
    return graph, question

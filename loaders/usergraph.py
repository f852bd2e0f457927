"""Users' own graphs, in two formats: registered as the loaders "csv" and "triples".

"csv": the textual-graph format of the G-Retriever paper (one graph as two CSV files)
    `nodes.csv` with header `node_id,node_attr` and `edges.csv` with header `src,edge_attr,dst`, read with
    the csv module so that quoted fields may hold commas, quotes and line breaks. Options: `nodes=` and
    `edges=` paths (default: `nodes.csv` / `edges.csv` in the folder `source`), `graph=` the graph's name
    (required; it becomes the graph_id). KIND "per-sample": one GraphRecord, node key = node_id (surrounding
    spaces stripped), node text = node_attr as written, edges src -> dst with text edge_attr. Errors, each
    with file and line: a header with missing or extra columns (always raised), a row with the wrong number
    of fields, an empty or duplicate node_id, an edge naming an unknown node (these are bad rows that
    `on_bad_row` may skip). A graph with zero nodes (header only) is legal. No questions.

"triples": one knowledge graph from a file of `head<sep>relation<sep>tail` lines
    The separator is detected per file among TAB, '|' and ',' from its first 50 non-blank lines: the one that
    splits most of them into exactly three fields (ties in that order). With ',' CSV quoting is honoured
    (`"Paris, Texas",located in,USA`); fields are stripped. An optional header `head,relation,tail` (in the
    detected separator) is skipped, blank lines are skipped, and a line with other than three non-empty fields
    is a bad row. KIND "kg", graph_id = option `graph=` or the file's stem; records hold at most `batch=`
    (default 5,000) triples; `limit` caps the number of triples. Entity names are both key and text.

Provenance
    The user's own data; nothing is bundled.
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import islice
from pathlib import Path

from gretriever_neo4j.errors import ConfigError, InputError
from gretriever_neo4j.loaders._common import (
    DEFAULT_KG_BATCH,
    GraphBuilder,
    NamedLoader,
    OnBadRow,
    batched_kg_records,
    check_limit,
    csv_rows,
    header_positions,
    numbered_lines,
    reject,
    reject_unknown_options,
    require_file,
)
from gretriever_neo4j.records import GraphRecord, Record

NODE_COLUMNS = ("node_id", "node_attr")
EDGE_COLUMNS = ("src", "edge_attr", "dst")
TRIPLE_HEADER = ("head", "relation", "tail")
SEPARATORS = ("\t", "|", ",")
SEPARATOR_SAMPLE_LINES = 50


# --- "csv" ---------------------------------------------------------------------------------------------

def read_csv_graph(source: str | Path | None = None, *, limit: int | None = None,
                   on_bad_row: OnBadRow | None = None, nodes: str | Path | None = None,
                   edges: str | Path | None = None, graph: str | None = None,
                   **options: object) -> Iterator[Record]:
    """One GraphRecord from nodes.csv + edges.csv; see the module docstring."""
    reject_unknown_options("csv", options)
    limit = check_limit(limit)
    if not isinstance(graph, str) or not graph.strip():
        raise ConfigError("the csv loader needs graph=NAME, the name the graph is stored under")
    nodes_path, edges_path = _csv_graph_paths(source, nodes, edges)
    return _csv_graph_records(graph.strip(), nodes_path, edges_path, limit, on_bad_row)


def _csv_graph_paths(source, nodes, edges) -> tuple[Path, Path]:
    if (nodes is None or edges is None) and source is None:
        raise ConfigError("the csv loader needs nodes= and edges= paths, or a folder holding nodes.csv and edges.csv")
    folder = Path(source) if source is not None else None
    if folder is not None and (nodes is None or edges is None) and not folder.is_dir():
        raise InputError("folder with nodes.csv and edges.csv not found", source=folder)
    nodes_path = Path(nodes) if nodes is not None else folder / "nodes.csv"
    edges_path = Path(edges) if edges is not None else folder / "edges.csv"
    return require_file(nodes_path, "nodes CSV"), require_file(edges_path, "edges CSV")


def _csv_graph_records(graph_id: str, nodes_path: Path, edges_path: Path, limit: int | None,
                       on_bad_row: OnBadRow | None) -> Iterator[GraphRecord]:
    if limit == 0:
        return
    builder = GraphBuilder()
    for line, node_id, node_attr in _csv_table(nodes_path, NODE_COLUMNS, on_bad_row):
        if not node_id:
            reject(InputError("empty node_id", source=nodes_path, line=line, field="node_id"), on_bad_row)
        elif node_id in builder:
            reject(InputError(f"duplicate node_id {node_id!r}", source=nodes_path, line=line, field="node_id"),
                   on_bad_row)
        else:
            builder.add_node(node_id, node_attr)
    for line, src, edge_attr, dst in _csv_table(edges_path, EDGE_COLUMNS, on_bad_row):
        unknown = [(name, key) for name, key in (("src", src), ("dst", dst)) if key not in builder]
        if unknown:
            name, key = unknown[0]
            reject(InputError(f"edge {name} {key!r} is not a node_id in {nodes_path}", source=edges_path, line=line,
                              field=name), on_bad_row)
            continue
        builder.add_edge(src, edge_attr, dst)
    yield builder.build(graph_id=graph_id, dataset="csv", kind="per-sample", source=nodes_path, line=None)


def _csv_table(path: Path, columns: tuple[str, ...], on_bad_row: OnBadRow | None) -> Iterator[tuple]:
    """(line, value per column in `columns` order) for each data row; ids (not attrs) are stripped."""
    rows = csv_rows(path)
    header_line, header = next(rows, (1, []))
    positions = header_positions(header, columns, source=path, line=header_line, allow_extra=False)
    for line, fields in rows:
        if len(fields) != len(header):
            reject(InputError(f"expected {len(header)} fields ({','.join(columns)}), found {len(fields)}",
                              source=path, line=line), on_bad_row)
            continue
        values = [fields[positions[name]] for name in columns]
        yield (line, *[value if name.endswith("_attr") else value.strip() for name, value in zip(columns, values)])


# --- "triples" -----------------------------------------------------------------------------------------

def read_triples(source: str | Path | None, *, limit: int | None = None, on_bad_row: OnBadRow | None = None,
                 graph: str | None = None, batch: int = DEFAULT_KG_BATCH, **options: object) -> Iterator[Record]:
    """GraphRecords of one knowledge graph from a triples file; see the module docstring."""
    reject_unknown_options("triples", options)
    limit = check_limit(limit)
    if source is None:
        raise ConfigError("the triples loader needs the path of a head<sep>relation<sep>tail file")
    path = require_file(source, "triples file")
    graph_id = graph.strip() if isinstance(graph, str) and graph.strip() else path.stem
    return _triples_records(path, graph_id, limit, batch, on_bad_row)


def detect_separator(lines: list[str]) -> str | None:
    """The separator among TAB, '|', ',' that splits most sample lines into three fields; None if none does."""
    counts = {separator: sum(len(_split_line(line, separator)) == 3 for line in lines) for separator in SEPARATORS}
    best = max(SEPARATORS, key=lambda separator: counts[separator])  # max keeps the first of equal counts
    return best if counts[best] else None


def _split_line(line: str, separator: str) -> list[str]:
    if separator == ",":
        import csv

        try:
            return next(csv.reader([line]), [])
        except csv.Error:
            return []
    return line.split(separator)


def _triples_records(path: Path, graph_id: str, limit: int | None, batch: int,
                     on_bad_row: OnBadRow | None) -> Iterator[GraphRecord]:
    sample = [line for _, line in islice((item for item in numbered_lines(path) if item[1].strip()),
                                         SEPARATOR_SAMPLE_LINES)]
    if not sample:
        return
    separator = detect_separator(sample)
    if separator is None:
        first_line = next(line_no for line_no, line in numbered_lines(path) if line.strip())
        raise InputError("cannot tell the separator: no line splits into head, relation, tail on TAB, '|' or ','",
                         source=path, line=first_line)
    triples = _triples(path, separator, on_bad_row)
    yield from batched_kg_records(islice(triples, limit), graph_id=graph_id, dataset="triples", source=path,
                                  batch_size=batch)


def _records_with_lines(path: Path, separator: str) -> Iterator[tuple[int, list[str]]]:
    if separator == ",":
        yield from csv_rows(path)
        return
    for line_no, line in numbered_lines(path):
        if line.strip():
            yield line_no, line.split(separator)


def _triples(path: Path, separator: str, on_bad_row: OnBadRow | None) -> Iterator[tuple[int, str, str, str]]:
    first = True
    for line_no, raw_fields in _records_with_lines(path, separator):
        fields = [field.strip() for field in raw_fields]
        if first and tuple(field.lower() for field in fields) == TRIPLE_HEADER:
            first = False
            continue
        first = False
        if len(fields) != 3 or not all(fields):
            reject(InputError(f"expected head{_shown(separator)}relation{_shown(separator)}tail with three "
                              f"non-empty fields, found {len(fields)} field(s)", source=path, line=line_no),
                   on_bad_row)
            continue
        yield line_no, fields[0], fields[1], fields[2]


def _shown(separator: str) -> str:
    return "<TAB>" if separator == "\t" else separator


CSV = NamedLoader(DATASET="csv", KIND="per-sample", read=read_csv_graph)
TRIPLES = NamedLoader(DATASET="triples", KIND="kg", read=read_triples)

"""`gqa ingest neo4j`: a graph that already lives in Neo4j (a `SourceGraph`) as records for `execute_plan`.

Property-graph mode (the default), each source node and relationship read once per pass, read-only:
  * a node is a gqa node keyed by its source element id (so a retrieval's nodes lead back to the source's), its
    text the first of: the property `text_properties` names for one of its labels (`--text-property
    Label=prop`), `name`, `title`; a node with none of them is an opaque record ("record-NNNNNN");
  * every other property of a node is a value edge: `(The Matrix) -released-> (1999)`, one per item of a list;
  * a relationship is an edge whose text is its type humanized (`ACTED_IN` -> "acted in");
  * a relationship with properties keeps that edge and adds an opaque record for its facts, as Freebase's
    compound nodes do: `(Keanu) -acted in-> (record) -movie-> (The Matrix)` and `(record) -roles-> (Neo)`; the
    record's way to the end node is named by the end node's first label, lower-cased.
Value nodes are keyed "value:TEXT", so one value is one node per graph.

Query mode (`query`): the user's read-only statement returns rows of (head, relation, tail); each value is text
(other values are written as text), names are both key and text as in the triples loader; a row with an empty
value is a bad row.

`limit`: the first N source nodes (element id order) and the relationships between them; in query mode the first N
rows. The source is read twice (validated, then written), as every loader's is.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from datetime import date, datetime, time
from typing import Any

from gretriever_neo4j.errors import ConfigError, InputError
from gretriever_neo4j.ingest.graphs import GraphSource, IngestPlan
from gretriever_neo4j.loaders._common import (
    DEFAULT_KG_BATCH,
    GraphBuilder,
    OnBadRow,
    check_limit,
    opaque_text,
    reject,
)
from gretriever_neo4j.records import GraphRecord, Record
from gretriever_neo4j.store.source import SourceGraph

DATASET = "neo4j"
TEXT_PROPERTIES = ("name", "title")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def parse_text_properties(items: Iterable[str]) -> dict[str, str]:
    """`["Person=name", "Movie=title"]` -> {"Person": "name", "Movie": "title"}."""
    found: dict[str, str] = {}
    for item in items:
        label, _, prop = item.partition("=")
        if not label.strip() or not prop.strip():
            raise InputError(f"expected Label=property, got {item!r}", field="--text-property")
        found[label.strip()] = prop.strip()
    return found


def plan_neo4j_ingest(source: SourceGraph, *, graph: str, text_properties: Mapping[str, str] | None = None,
                      query: str | None = None, limit: int | None = None, skip_bad: bool = False,
                      sync: bool = False, batch: int = DEFAULT_KG_BATCH, same_database: bool = False) -> IngestPlan:
    """Reads the whole source once without writing (a bad `--text-property` or `--query` fails here).
    `same_database`: the source is gqa's own database, so the graph's node keys (without `query`) are element ids
    of nodes there (`GraphSource.element_ids`)."""
    limit = check_limit(limit)
    if sync and limit is not None:
        raise ConfigError("--sync deletes what the source does not hold: it cannot be combined with --limit")
    if not graph.strip():
        raise ConfigError("ingest neo4j needs --graph NAME, the name the graph is stored under")
    graph = graph.strip()
    text_properties = dict(text_properties or {})
    if query is not None and text_properties:
        raise ConfigError("--text-property applies to the source's nodes; a --query returns texts already")
    if query is None and text_properties:
        labels = source.labels()
        unknown = sorted(set(text_properties) - set(labels))
        if unknown:
            raise InputError(f"the source has no label {', '.join(map(repr, unknown))} (its labels: "
                             f"{', '.join(labels) or 'none'})", field="--text-property")
    bad_rows: list[InputError] = []

    def records(on_bad: OnBadRow | None) -> Iterator[Record]:
        if query is not None:
            return query_records(source, query, graph, limit, batch, on_bad if skip_bad else None)
        return property_graph_records(source, graph, text_properties, limit, batch)

    total = sum(1 for _ in records(bad_rows.append))
    return IngestPlan(DATASET, lambda: records(lambda _error: None), total, bad_rows, sync,
                      (graph,) if sync else (), describe_neo4j_source(source, query, same_database))


def describe_neo4j_source(source: SourceGraph, query: str | None, same_database: bool) -> GraphSource:
    """"Neo4j: same database" or "Neo4j at URI, database DB", with "(query)" when a `--query` chose the rows."""
    text = "Neo4j: same database" if same_database else f"{source.describe}, database {source.database}"
    return GraphSource(text + (" (query)" if query is not None else ""), query=query,
                       element_ids=same_database and query is None)


# --- property-graph mode ---------------------------------------------------------------------------------------

def property_graph_records(source: SourceGraph, graph: str, text_properties: Mapping[str, str],
                           limit: int | None, batch: int) -> Iterator[GraphRecord]:
    if limit == 0:
        return
    kept: set[str] | None = set() if limit is not None else None
    builder = GraphBuilder()
    for row in source.nodes(limit):
        if kept is not None:
            kept.add(row["id"])
        text_property = node_text_property(row["labels"], row["properties"], text_properties)
        text = _text(row["properties"].get(text_property)) if text_property else ""
        builder.add_node(row["id"], text or opaque_text(row["id"]))
        for name, value in sorted(row["properties"].items()):
            if name != text_property:
                _add_values(builder, row["id"], humanized(name), value)
        if len(builder) + len(builder.edges) >= batch:
            yield _built(builder, graph, source)
            builder = GraphBuilder()
    if len(builder):
        yield _built(builder, graph, source)
    builder = GraphBuilder()
    for row in source.relationships():
        if kept is not None and (row["src"] not in kept or row["dst"] not in kept):
            continue
        relation = humanized(row["type"])
        builder.add_edge(row["src"], relation, row["dst"])
        properties = {name: value for name, value in row["properties"].items() if _values(value)}
        if properties:
            record = row["id"]
            builder.add_node(record, opaque_text(record))
            builder.add_edge(row["src"], relation, record)
            builder.add_edge(record, humanized(row["dst_labels"][0]) if row["dst_labels"] else relation, row["dst"])
            for name, value in sorted(properties.items()):
                _add_values(builder, record, humanized(name), value)
        if len(builder) + len(builder.edges) >= batch:
            yield _built(builder, graph, source)
            builder = GraphBuilder()
    if builder.edges:
        yield _built(builder, graph, source)


def node_text_property(labels: list[str], properties: Mapping[str, Any], chosen: Mapping[str, str]) -> str | None:
    """The property that names a node: one chosen for one of its labels, else `name`, else `title`."""
    for label in labels:
        if label in chosen and _text(properties.get(chosen[label])):
            return chosen[label]
    return next((name for name in TEXT_PROPERTIES if _text(properties.get(name))), None)


def _add_values(builder: GraphBuilder, key: str, relation: str, value: Any) -> None:
    for text in _values(value):
        builder.add_node(f"value:{text}", text)
        builder.add_edge(key, relation, f"value:{text}")


def _values(value: Any) -> list[str]:
    """The texts of a property value: one per item of a list, none for an empty one."""
    items = value if isinstance(value, (list, tuple)) else [value]
    return [text for text in (_text(item) for item in items) if text]


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() and abs(value) < 1e15 else repr(value)
    iso = getattr(value, "iso_format", None)  # the driver's neo4j.time types
    if callable(iso):
        return str(iso())
    if isinstance(value, (date, datetime, time)):
        return value.isoformat()
    return " ".join(str(value).split())


def humanized(name: str) -> str:
    """`ACTED_IN` -> "acted in", `releasedYear` -> "released year"."""
    words = _CAMEL.sub(" ", re.sub(r"[_\-.]+", " ", name)).split()
    return " ".join(word.lower() for word in words) or name


def _built(builder: GraphBuilder, graph: str, source: SourceGraph) -> GraphRecord:
    return builder.build(graph_id=graph, dataset=DATASET, kind="kg", source=source.describe, line=None)


# --- query mode ----------------------------------------------------------------------------------------------

def query_records(source: SourceGraph, query: str, graph: str, limit: int | None, batch: int,
                  on_bad_row: OnBadRow | None) -> Iterator[GraphRecord]:
    if limit == 0:
        return
    builder, taken = GraphBuilder(), 0
    for number, values in source.query_rows(query):
        if len(values) != 3:
            raise InputError(f"the query returns {len(values)} column(s); it must return three: head, relation, "
                             "tail", field="--query")
        texts = [_text(value) for value in values]
        if not all(texts):
            reject(InputError(f"row {number} has an empty head, relation or tail", field="--query"), on_bad_row)
            continue
        builder.add_triple(*texts)
        taken += 1
        if len(builder.edges) >= batch:
            yield _built(builder, graph, source)
            builder = GraphBuilder()
        if taken == limit:
            break
    if builder.edges:
        yield _built(builder, graph, source)

"""RDF files as one knowledge graph: the loader "rdf" (`gqa ingest rdf --source FILE|DIR --graph G`).

Source: one RDF file or a folder of them (its RDF files in name order, others ignored). N-Triples (`.nt`,
`.ntriples`, `.nt.gz`) is read line by line, so a file larger than memory loads; Turtle (`.ttl`), Notation3
(`.n3`), RDF/XML (`.rdf`, `.owl`, `.xml`) and JSON-LD (`.jsonld`) are parsed whole by rdflib, one file at a time.

What becomes what:
  * An IRI is a node keyed by the IRI. Its text is its label: the first of the label predicates (`labels=`,
    default `LABEL_PREDICATES`) in the chosen language (`lang=`, default "en"; "en-GB" counts as "en"), else an
    untagged label, else a label in another language; with none, the IRI's local name made readable
    (`Tom_Hanks` -> "Tom Hanks", `FilmDirector` -> "Film Director").
  * A predicate is the edge text: its own label where the data gives one, else its local name with camelCase
    and snake_case split and lower-cased (`birthPlace` -> "birth place").
  * A literal is a value node keyed by its lexical form and datatype, its text the lexical form: numbers
    written plainly (`1.85E0` -> "1.85"), a date-time at midnight as its date (`1999-03-31T00:00:00Z` ->
    "1999-03-31"), so the reader tells values from names. A literal tagged with another language than the chosen
    one is left out.
  * A blank node is an opaque record (text "record-NNNNNN", a way through, never an answer, as Freebase's
    compound nodes are), keyed by its label and, in a folder, its file.
  * Label triples and `owl:sameAs` are no edges.

Labels may stand anywhere in the source (a folder may keep them in a file of their own), so every read passes
over the source twice: first the labels, into a temporary SQLite file (memory stays flat in the source's size),
then the triples. `limit` caps the edges; records hold at most `batch=` (default 5,000) edges each. A malformed
N-Triples line is a bad row (file and line; `on_bad_row` may skip it); a malformed file of another format fails
whole, with the line rdflib reports.

Provenance
    The user's own data; nothing is bundled.
"""

from __future__ import annotations

import gzip
import re
import sqlite3
import tempfile
import zlib
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from gretriever_neo4j.errors import ConfigError, InputError
from gretriever_neo4j.loaders._common import (
    DEFAULT_KG_BATCH,
    GraphBuilder,
    OnBadRow,
    check_limit,
    opaque_text,
    reject,
    reject_unknown_options,
    require_dir,
)
from gretriever_neo4j.records import GraphRecord, Record

DATASET = "rdf"
KIND = "kg"

RDFS_LABEL = "http://www.w3.org/2000/01/rdf-schema#label"
LABEL_PREDICATES = (
    RDFS_LABEL,
    "http://www.w3.org/2004/02/skos/core#prefLabel",
    "http://schema.org/name",
    "https://schema.org/name",
)
SAME_AS = "http://www.w3.org/2002/07/owl#sameAs"
XSD = "http://www.w3.org/2001/XMLSchema#"
STREAMED = (".nt", ".ntriples", ".nt.gz")
PARSED_WHOLE = {".ttl": "turtle", ".turtle": "turtle", ".n3": "n3", ".rdf": "xml", ".owl": "xml", ".xml": "xml",
                ".jsonld": "json-ld", ".json-ld": "json-ld"}
_NUMBERS = {XSD + name for name in ("integer", "int", "long", "short", "byte", "decimal", "double", "float",
                                    "nonNegativeInteger", "positiveInteger", "negativeInteger",
                                    "nonPositiveInteger", "unsignedInt", "unsignedLong")}
_MIDNIGHT = re.compile(r"^(-?\d{4,}-\d\d-\d\d)T00:00:00(?:\.0+)?(?:Z|[+-]00:00)?$")
_ZONE = re.compile(r"(Z|[+-]\d\d:\d\d)$")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


def read(source: str | Path | None, *, limit: int | None = None, on_bad_row: OnBadRow | None = None,
         graph: str | None = None, lang: str | None = "en", labels: Sequence[str] | None = None,
         batch: int = DEFAULT_KG_BATCH, **options: object) -> Iterator[Record]:
    """GraphRecords of one knowledge graph from RDF files; see the module docstring."""
    reject_unknown_options(DATASET, options)
    limit = check_limit(limit)
    if source is None:
        raise ConfigError("the rdf loader needs --source: an RDF file or a folder of them")
    files = rdf_files(Path(source))
    graph_id = graph.strip() if isinstance(graph, str) and graph.strip() else Path(source).name.split(".")[0]
    predicates = tuple(labels) if labels else LABEL_PREDICATES
    if isinstance(batch, bool) or not isinstance(batch, int) or batch < 1:
        raise ConfigError(f"batch size must be a positive integer, not {batch!r}")
    return _records(files, Path(source), graph_id, (lang or "").lower() or None, predicates, limit, batch,
                    on_bad_row)


def rdf_files(source: Path) -> list[Path]:
    """The RDF files of `source` (itself, or a folder's in name order); InputError when there are none."""
    if source.is_file():
        if _format(source) is None:
            raise InputError(f"not an RDF file name (known endings: {', '.join([*STREAMED, *PARSED_WHOLE])})",
                             source=source)
        return [source]
    folder = require_dir(source, "RDF file or folder")
    files = sorted(path for path in folder.rglob("*") if path.is_file() and _format(path) is not None)
    if not files:
        raise InputError("folder holds no RDF file (.nt, .ttl, .rdf, .jsonld, …)", source=folder)
    return files


def _format(path: Path) -> str | None:
    name = path.name.lower()
    if name.endswith(STREAMED):
        return "nt"
    return PARSED_WHOLE.get(path.suffix.lower())


# --- reading triples -----------------------------------------------------------------------------------

def _triples(path: Path, on_bad_row: OnBadRow | None,
             containing: tuple[str, ...] = ()) -> Iterator[tuple[int | None, Any, Any, Any]]:
    """(line or None, subject, predicate, object) as rdflib terms, blank nodes with stable labels. `containing`:
    N-Triples lines that hold none of these strings are not parsed (the label pass's shortcut)."""
    if _format(path) == "nt":
        yield from _ntriples(path, on_bad_row, containing)
    else:
        yield from _parsed_whole(path)


def _ntriples(path: Path, on_bad_row: OnBadRow | None,
              containing: tuple[str, ...]) -> Iterator[tuple[int, Any, Any, Any]]:
    from rdflib.plugins.parsers.ntriples import ParseError, W3CNTriplesParser, r_nodeid
    from rdflib.term import BNode

    class Parser(W3CNTriplesParser):
        def nodeid(self, bnode_context=None):  # the file's own label: stable across reads
            if self.peek("_"):
                return BNode(self.eat(r_nodeid).group(1))
            return False

    found: list[tuple] = []

    class Sink:
        def triple(self, s, p, o):
            found.append((s, p, o))

    parser = Parser(sink=Sink())
    opener = gzip.open if path.name.lower().endswith(".gz") else open
    line_no = 0
    try:
        with opener(path, "rt", encoding="utf-8-sig") as handle:
            for line_no, line in enumerate(handle, start=1):
                if not line.strip() or line.lstrip().startswith("#"):
                    continue
                if containing and not any(needle in line for needle in containing):
                    continue
                try:
                    parser.parsestring(line)
                except ParseError as error:
                    reject(InputError(f"malformed N-Triples ({_first_line(str(error))})", source=path,
                                      line=line_no), on_bad_row)
                    continue
                for s, p, o in found:
                    yield line_no, s, p, o
                found.clear()
    except UnicodeDecodeError as exc:
        raise InputError(f"not valid UTF-8 text ({exc.reason})", source=path, line=line_no + 1) from exc
    except (OSError, EOFError, zlib.error) as exc:
        raise InputError(f"cannot read the file ({exc})", source=path) from exc


def _parsed_whole(path: Path) -> Iterator[tuple[None, Any, Any, Any]]:
    """A whole file through rdflib, triples in document order, blank nodes numbered by first appearance."""
    from rdflib import Graph
    from rdflib.term import BNode

    in_order: list[tuple] = []

    class Recording(Graph):
        def add(self, triple):
            in_order.append(triple)
            return self

    try:
        Recording().parse(str(path), format=_format(path))
    except Exception as error:  # rdflib's parsers raise many kinds; each is the file's fault here
        raise InputError(f"malformed RDF ({_reason(error)})", source=path, line=_error_line(error)) from None
    numbers: dict[Any, BNode] = {}

    def stable(term):
        if isinstance(term, BNode):
            return numbers.setdefault(term, BNode(f"b{len(numbers)}"))
        return term

    for s, p, o in in_order:
        yield None, stable(s), p, stable(o)


def _error_line(error: Exception) -> int | None:
    for attribute in ("lines", "_line", "line", "lineno"):
        value = getattr(error, attribute, None)
        if isinstance(value, int):
            return value + 1 if attribute == "lines" else value  # notation3's BadSyntax counts lines from 0
    getter = getattr(error, "getLineNumber", None)  # RDF/XML: SAXParseException
    if callable(getter):
        return getter()
    match = re.search(r"line (\d+)", str(error))
    return int(match.group(1)) if match else None


def _reason(error: Exception) -> str:
    why = getattr(error, "_why", None)
    return _first_line(str(why) if why else str(error) or error.__class__.__name__)


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0][:200] if text.strip() else "unreadable"


# --- labels ----------------------------------------------------------------------------------------------

class LabelIndex:
    """The best label of each labelled IRI, in a temporary SQLite file: rank 0 is the chosen language and the
    first label predicate; ties keep the first label seen."""

    def __init__(self, connection: sqlite3.Connection, lang: str | None, predicates: Sequence[str]):
        self._db = connection
        self._lang = lang
        self._predicates = {predicate: i for i, predicate in enumerate(predicates)}
        self._db.execute("CREATE TABLE labels (iri TEXT PRIMARY KEY, rank INTEGER, text TEXT)")

    def rank(self, predicate: str, language: str | None) -> int | None:
        position = self._predicates.get(predicate)
        if position is None:
            return None
        return _language_rank(language, self._lang) * len(self._predicates) + position

    def add(self, rows: list[tuple[str, int, str]]) -> None:
        self._db.executemany("INSERT INTO labels VALUES (?, ?, ?) ON CONFLICT(iri) DO UPDATE SET "
                             "rank = excluded.rank, text = excluded.text WHERE excluded.rank < labels.rank", rows)

    def lookup(self, iris: Sequence[str]) -> dict[str, str]:
        found: dict[str, str] = {}
        iris = list(iris)
        for start in range(0, len(iris), 500):
            part = iris[start:start + 500]
            found.update(self._db.execute(
                f"SELECT iri, text FROM labels WHERE iri IN ({','.join('?' * len(part))})", part).fetchall())
        return found


def _language_rank(language: str | None, chosen: str | None) -> int:
    if not language:
        return 1 if chosen else 0
    if chosen and (language.lower() == chosen or language.lower().split("-")[0] == chosen):
        return 0
    return 2


@contextmanager
def _label_index(files: list[Path], lang: str | None, predicates: Sequence[str]) -> Iterator[LabelIndex]:
    from rdflib.term import Literal, URIRef

    with tempfile.TemporaryDirectory(prefix="gqa-rdf-") as folder:
        connection = sqlite3.connect(Path(folder) / "labels.sqlite")
        try:
            connection.execute("PRAGMA journal_mode = OFF")
            connection.execute("PRAGMA synchronous = OFF")
            index = LabelIndex(connection, lang, predicates)
            rows: list[tuple[str, int, str]] = []
            needles = tuple(f"<{predicate}>" for predicate in predicates)
            for path in files:
                for _line, s, p, o in _triples(path, lambda _error: None, needles):  # bad lines: reported later
                    if isinstance(o, Literal) and isinstance(s, URIRef):
                        rank = index.rank(str(p), o.language)
                        if rank is not None and str(o).strip():
                            rows.append((str(s), rank, " ".join(str(o).split())))
                            if len(rows) >= 10_000:
                                index.add(rows)
                                rows.clear()
            index.add(rows)
            yield index
        finally:
            connection.close()


# --- records -----------------------------------------------------------------------------------------------

def _records(files: list[Path], root: Path, graph_id: str, lang: str | None, predicates: Sequence[str],
             limit: int | None, batch: int, on_bad_row: OnBadRow | None) -> Iterator[GraphRecord]:
    from rdflib.term import BNode, Literal, URIRef

    if limit == 0:
        return
    with _label_index(files, lang, predicates) as index:
        label_predicates = set(predicates)
        edges = 0
        for path in files:
            scope = "" if root.is_file() else path.relative_to(root).as_posix() + "/"
            pending: list[tuple[int | None, Any, Any, Any]] = []
            for line, s, p, o in _triples(path, on_bad_row):
                if str(p) in label_predicates or str(p) == SAME_AS:
                    continue
                if isinstance(o, Literal) and o.language and _language_rank(o.language, lang) == 2 and lang:
                    continue  # the same fact in another language
                if not isinstance(s, (URIRef, BNode)) or not isinstance(o, (URIRef, BNode, Literal)):
                    continue
                pending.append((line, s, p, o))
                edges += 1
                if len(pending) == batch or edges == limit:
                    yield _record(pending, index, graph_id, path, scope)
                    pending = []
                if edges == limit:
                    return
            if pending:
                yield _record(pending, index, graph_id, path, scope)


def _record(triples: list[tuple], index: LabelIndex, graph_id: str, path: Path, scope: str) -> GraphRecord:
    from rdflib.term import BNode, Literal

    iris = {str(term) for _line, s, p, o in triples for term in (s, p, o)
            if not isinstance(term, (BNode, Literal))}
    names = index.lookup(sorted(iris))
    builder = GraphBuilder()

    def node(term) -> str:
        if isinstance(term, BNode):
            key = f"_:{scope}{term}"
            builder.add_node(key, opaque_text(key))
        elif isinstance(term, Literal):
            key = f'"{term}"' + (f"^^<{term.datatype}>" if term.datatype is not None else "")
            builder.add_node(key, literal_text(term))
        else:
            key = str(term)
            builder.add_node(key, names.get(key) or readable_local_name(key))
        return key

    for _line, s, p, o in triples:
        builder.add_edge(node(s), names.get(str(p)) or relation_text(str(p)), node(o))
    first_line = next((line for line, *_ in triples if line is not None), None)
    return builder.build(graph_id=graph_id, dataset=DATASET, kind=KIND, source=path, line=first_line)


def local_name(iri: str) -> str:
    """The part of an IRI after its last '#', '/' or ':' (percent-escapes decoded)."""
    part = re.split(r"[#/:]", iri.rstrip("/#"))[-1]
    return unquote(part) or iri


def readable_local_name(iri: str) -> str:
    """`Tom_Hanks` -> "Tom Hanks", `FilmDirector` -> "Film Director"."""
    words = _CAMEL.sub(" ", local_name(iri).replace("_", " "))
    return " ".join(words.split()) or iri


def relation_text(iri: str) -> str:
    """`birthPlace` -> "birth place", `directed_by` -> "directed by"."""
    words = _CAMEL.sub(" ", re.sub(r"[_\-.]+", " ", local_name(iri)))
    return " ".join(word if word.isupper() and len(word) > 1 else word.lower() for word in words.split()) or iri


def literal_text(term) -> str:
    """A literal's lexical form, numbers and midnight date-times written as the reader recognises values."""
    text = " ".join(str(term).split())
    datatype = str(term.datatype) if term.datatype is not None else ""
    if datatype in _NUMBERS:
        try:
            number = float(text)
        except ValueError:
            return text
        if datatype in (XSD + "double", XSD + "float") and number == number and abs(number) != float("inf"):
            return str(int(number)) if number.is_integer() and abs(number) < 1e15 else repr(number)
        return text.lstrip("+")
    if datatype in (XSD + "dateTime", XSD + "dateTimeStamp"):
        midnight = _MIDNIGHT.match(text)
        return midnight.group(1) if midnight else _ZONE.sub("", text)
    if datatype == XSD + "date":
        return _ZONE.sub("", text)
    return text

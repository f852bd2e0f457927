"""Parsing helpers shared by the dataset loaders: bad-row policy, paths, splits, KG batching.

Nothing here knows about a particular dataset. The split helpers reproduce scikit-learn's
`train_test_split(..., shuffle=True, random_state=seed)` with numpy alone, because the papers' splits are
defined through it and we do not want scikit-learn as a runtime dependency.
"""

from __future__ import annotations

import math
import re
import zlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, TextIO

from gretriever_neo4j.errors import ConfigError, InputError
from gretriever_neo4j.records import Edge, GraphKind, GraphRecord, Node, Record

if TYPE_CHECKING:
    import numpy as np

OnBadRow = Callable[[InputError], None]

SPLITS = ("train", "val", "test")
_SPLIT_ALIASES = {
    "train": "train", "training": "train",
    "val": "val", "valid": "val", "validation": "val", "dev": "val",
    "test": "test", "testing": "test",
}
DEFAULT_KG_BATCH = 5_000


class Loader(Protocol):
    """What `get_loader` returns: a loader module, or a `NamedLoader` standing in for one."""

    DATASET: str
    KIND: GraphKind

    def read(self, source: str | Path | None, *, limit: int | None = None,
             on_bad_row: OnBadRow | None = None, **options: object) -> Iterator[Record]: ...


@dataclass(frozen=True)
class NamedLoader:
    """A loader that shares its module with another (usergraph holds both "csv" and "triples")."""

    DATASET: str
    KIND: GraphKind
    read: Callable[..., Iterator[Record]]


# --- bad input -----------------------------------------------------------------------------------

def reject(error: InputError, on_bad_row: OnBadRow | None) -> None:
    """Raise `error`, or hand it to `on_bad_row` so that the caller skips the offending row."""
    if on_bad_row is None:
        raise error
    on_bad_row(error)


def check_limit(limit: int | None) -> int | None:
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 0):
        raise ConfigError(f"limit must be a non-negative integer or None, not {limit!r}")
    return limit


def reject_unknown_options(dataset: str, options: dict[str, object]) -> None:
    """Typos in option names would otherwise be silently ignored."""
    if options:
        raise ConfigError(f"{dataset} loader: unknown option(s): {', '.join(sorted(options))}")


def require_source(dataset: str, source: str | Path | None, what: str) -> Path:
    if source is None:
        raise ConfigError(f"{dataset} loader needs a source: {what}")
    return Path(source)


def require_file(path: str | Path, what: str = "file") -> Path:
    path = Path(path)
    if not path.is_file():
        reason = f"{what} is a folder, expected a file" if path.is_dir() else f"{what} not found"
        raise InputError(reason, source=path)
    return path


def require_dir(path: str | Path, what: str = "folder") -> Path:
    path = Path(path)
    if not path.is_dir():
        reason = f"{what} is a file, expected a folder" if path.is_file() else f"{what} not found"
        raise InputError(reason, source=path)
    return path


def open_text(path: Path) -> TextIO:
    """UTF-8, tolerating the byte-order mark spreadsheet programs write; newline='' suits the csv module."""
    return open(path, encoding="utf-8-sig", newline="")


def numbered_lines(path: Path) -> Iterator[tuple[int, str]]:
    """(1-based line number, line without its line break: LF or CRLF), a byte-order mark dropped; undecodable bytes
    become an InputError naming their line (each line is decoded alone: a text stream decodes ahead, in chunks)."""
    with open(path, "rb") as handle:
        for line_no, raw in enumerate(handle, start=1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise InputError(f"not valid UTF-8 text ({exc.reason})", source=path, line=line_no) from exc
            yield line_no, (line.removeprefix("\ufeff") if line_no == 1 else line).rstrip("\r\n")


def csv_rows(path: Path, **csv_options: object) -> Iterator[tuple[int, list[str]]]:
    """(first line number of the record, fields) for each record; blank lines are skipped.

    Records may span lines (quoted fields with line breaks), hence "first line" rather than `line_num`.
    """
    import csv

    with open_text(path) as handle:
        reader = csv.reader(handle, **csv_options)
        end_of_previous = 0
        try:
            for fields in reader:
                start = end_of_previous + 1
                end_of_previous = reader.line_num
                if fields:
                    yield start, fields
        except csv.Error as exc:
            raise InputError(f"malformed CSV ({exc})", source=path, line=reader.line_num) from exc
        except UnicodeDecodeError as exc:
            raise InputError(f"not valid UTF-8 text ({exc.reason})", source=path,
                             line=end_of_previous + 1) from exc


def header_positions(header: Sequence[str], required: Sequence[str], *, source: Path, line: int,
                     allow_extra: bool) -> dict[str, int]:
    """Column name -> position, after checking the header names every required column exactly once."""
    names = [name.strip() for name in header]
    missing = [name for name in required if name not in names]
    if missing:
        raise InputError(f"header lacks column(s) {', '.join(missing)} (found: {', '.join(names)})",
                         source=source, line=line)
    duplicated = sorted({name for name in names if names.count(name) > 1})
    if duplicated:
        raise InputError(f"header repeats column(s) {', '.join(duplicated)}", source=source, line=line)
    extra = [name for name in names if name not in required]
    if extra and not allow_extra:
        raise InputError(f"header has unexpected column(s) {', '.join(extra)} "
                         f"(expected exactly: {', '.join(required)})", source=source, line=line)
    return {name: position for position, name in enumerate(names)}


# --- splits --------------------------------------------------------------------------------------

def normalise_split(name: str) -> str | None:
    """'validation' -> 'val' etc.; None for a name that is not a split."""
    return _SPLIT_ALIASES.get(name.strip().lower())


def split_from_filename(path: str | Path) -> str | None:
    """The split named by a file name such as `webqsp_evidence_test.jsonl` or `validation-00000-of-00001`."""
    words = re.split(r"[^a-z]+", Path(path).name.lower())
    found = [normalise_split(word) for word in words if normalise_split(word)]
    return found[0] if found else None


def shuffle_split(n_samples: int, test_size: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Positions (train, test) exactly as `sklearn.model_selection.train_test_split` would pick them.

    scikit-learn's ShuffleSplit takes n_test = ceil(test_size * n), n_train = n - n_test, draws one
    `RandomState(seed).permutation(n)`, and puts its first n_test entries in the test part.
    """
    if not 0.0 < test_size < 1.0:
        raise ConfigError(f"test_size must lie strictly between 0 and 1, not {test_size}")
    import numpy as np  # here: `gqa ask --questions` through a running server reads files with no numpy

    n_test = math.ceil(test_size * n_samples)
    permutation = np.random.RandomState(seed).permutation(n_samples)
    return permutation[n_test:], permutation[:n_test]


def paper_split(n_samples: int, seed: int = 42) -> list[str]:
    """G-Retriever's 60/20/20 split: 'train' / 'val' / 'test' for each of n_samples positions.

    Positions are first split 60/40 (test_size=0.4), then the 40% part 50/50 into val and test, both
    times with `random_state=seed`, as `src/dataset/preprocess/generate_split.py` does.
    """
    labels = ["train"] * n_samples
    train, rest = shuffle_split(n_samples, 0.4, seed)
    if len(rest) == 0:
        return labels
    val_of_rest, test_of_rest = shuffle_split(len(rest), 0.5, seed)
    for position in rest[val_of_rest]:
        labels[position] = "val"
    for position in rest[test_of_rest]:
        labels[position] = "test"
    return labels


def parse_split_option(text: str | None) -> str | dict[str, float] | None:
    """`--split`: None, one split name ("test": every question in it), or seeded fractions such as
    "train=0.6,val=0.2,test=0.2" (names as `normalise_split` knows them, fractions >= 0 summing to 1)."""
    if text is None:
        return None
    if "=" not in text:
        name = normalise_split(text)
        if name is None:
            raise ConfigError(f"unknown split {text!r}: use train, val (validation) or test, or fractions such as "
                              f"train=0.6,val=0.2,test=0.2")
        return name
    fractions: dict[str, float] = {}
    for part in text.split(","):
        name, _, value = part.partition("=")
        split = normalise_split(name)
        if split is None or split in fractions:
            raise ConfigError(f"--split {text!r}: {name.strip()!r} is not a split name (train, val, test) or is "
                              f"given twice")
        try:
            fraction = float(value)
        except ValueError:
            raise ConfigError(f"--split {text!r}: {value.strip()!r} is not a number") from None
        if not 0.0 <= fraction <= 1.0 or not math.isfinite(fraction):
            raise ConfigError(f"--split {text!r}: fractions lie in [0, 1], not {value.strip()}")
        fractions[split] = fraction
    if abs(sum(fractions.values()) - 1.0) > 1e-6:
        raise ConfigError(f"--split {text!r}: the fractions sum to {sum(fractions.values()):g}, not 1")
    return fractions


def seeded_split(n_samples: int, fractions: dict[str, float], seed: int) -> list[str]:
    """A split name for each of n_samples positions: one `RandomState(seed).permutation(n)`, cut into consecutive
    parts of round(cumulative fraction * n) positions in the order the fractions are given."""
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise ConfigError(f"the split seed must be an integer, not {seed!r}")
    import numpy as np

    labels = [""] * n_samples
    permutation = np.random.RandomState(seed).permutation(n_samples)
    start, cumulative = 0, 0.0
    items = list(fractions.items())
    for i, (name, fraction) in enumerate(items):
        cumulative += fraction
        end = n_samples if i == len(items) - 1 else min(n_samples, int(round(cumulative * n_samples)))
        for position in permutation[start:end]:
            labels[position] = name
        start = max(start, end)
    return labels


DEFAULT_SPLIT_SEED = 42


# --- graph building ------------------------------------------------------------------------------

class GraphBuilder:
    """Collects one GraphRecord's nodes (deduplicated by key, first text wins) and edges."""

    def __init__(self) -> None:
        self._nodes: dict[str, Node] = {}
        self.edges: list[Edge] = []

    def __contains__(self, key: str) -> bool:
        return key in self._nodes

    def __len__(self) -> int:
        return len(self._nodes)

    def add_node(self, key: str, text: str) -> None:
        self._nodes.setdefault(key, Node(key=key, text=text))

    def add_edge(self, src: str, text: str, dst: str) -> None:
        self.edges.append(Edge(src=src, text=text, dst=dst))

    def add_triple(self, head: str, relation: str, tail: str) -> None:
        """A knowledge-graph triple: entity names are both key and text."""
        self.add_node(head, head)
        self.add_node(tail, tail)
        self.add_edge(head, relation, tail)

    def build(self, *, graph_id: str, dataset: str, kind: GraphKind, source: str | Path | None,
              line: int | None) -> GraphRecord:
        return GraphRecord(graph_id=graph_id, dataset=dataset, kind=kind, nodes=list(self._nodes.values()),
                           edges=list(self.edges), source=str(source) if source is not None else None, line=line)


def opaque_text(key: str) -> str:
    """The text of a record with no name of its own (an RDF blank node, a Neo4j node without a text property):
    an id the reader takes as a way through, never as an answer, the same for the same key on every run."""
    return f"record-{zlib.crc32(key.encode()) % 1_000_000:06d}"


def batched_kg_records(triples: Iterable[tuple[int, str, str, str]], *, graph_id: str, dataset: str,
                       source: str | Path, batch_size: int = DEFAULT_KG_BATCH) -> Iterator[GraphRecord]:
    """Group (line, head, relation, tail) into GraphRecords of at most `batch_size` triples each.

    Every record repeats the nodes its own triples touch, so each record is self-contained; the store
    merges nodes with the same key across records of one graph_id.
    """
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise ConfigError(f"batch size must be a positive integer, not {batch_size!r}")
    builder, first_line = GraphBuilder(), None
    for line, head, relation, tail in triples:
        if first_line is None:
            first_line = line
        builder.add_triple(head, relation, tail)
        if len(builder.edges) == batch_size:
            yield builder.build(graph_id=graph_id, dataset=dataset, kind="kg", source=source, line=first_line)
            builder, first_line = GraphBuilder(), None
    if builder.edges:
        yield builder.build(graph_id=graph_id, dataset=dataset, kind="kg", source=source, line=first_line)

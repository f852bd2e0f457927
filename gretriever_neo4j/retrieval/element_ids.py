"""Neo4j element ids of a whole graph held compactly: `"5:<database id>:<n>"` shares everything but `n`.

A graph held in memory keeps each edge's element id (a recorded retrieval names its edges by them, for Neo4j
Browser). As Python strings they cost ~110 bytes an edge, and a dict from id to index another ~100; here they
are one int64 each, strings made on access, and the lookup a binary search.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np


class ElementIds(Sequence[str]):
    """An immutable sequence of element ids `prefix + str(number)`, equal to the list of those strings."""

    def __init__(self, prefix: str, numbers: np.ndarray):
        self.prefix = prefix
        self.numbers = np.asarray(numbers, dtype=np.int64)
        self._sorted: tuple[np.ndarray, np.ndarray] | None = None

    @classmethod
    def compact(cls, ids: Iterable[str]) -> Sequence[str]:
        """`ElementIds` when every id is one prefix plus a decimal number (Neo4j 5), else the ids as a list."""
        ids = ids if isinstance(ids, list) else list(ids)
        if not ids:
            return ids
        prefix = ids[0][:ids[0].rfind(":") + 1]
        numbers = np.empty(len(ids), dtype=np.int64)
        for i, value in enumerate(ids):
            tail = value[len(prefix):]
            if not prefix or not value.startswith(prefix) or not tail.isdigit() or str(int(tail)) != tail:
                return ids
            numbers[i] = int(tail)
        return cls(prefix, numbers)

    def __len__(self) -> int:
        return len(self.numbers)

    def take(self, indices) -> ElementIds:
        return ElementIds(self.prefix, self.numbers[np.asarray(indices, dtype=np.int64)])

    def is_unique(self) -> bool:
        return len(np.unique(self.numbers)) == len(self.numbers)

    def __getitem__(self, index):
        if isinstance(index, slice):
            return [self.prefix + str(n) for n in self.numbers[index].tolist()]
        return self.prefix + str(int(self.numbers[index]))

    def __iter__(self):
        prefix = self.prefix
        return (prefix + str(n) for n in self.numbers.tolist())

    def __eq__(self, other) -> bool:
        if isinstance(other, ElementIds):
            return self.prefix == other.prefix and np.array_equal(self.numbers, other.numbers)
        return isinstance(other, Sequence) and len(other) == len(self) and all(a == b for a, b in zip(self, other))

    __hash__ = None  # mutable-looking sequence semantics, as list

    def index_of(self, value: str) -> int | None:
        """Position of `value`, or None."""
        tail = value[len(self.prefix):] if value.startswith(self.prefix) else ""
        if not tail.isdigit():
            return None
        if self._sorted is None:
            order = np.argsort(self.numbers, kind="stable")
            self._sorted = (self.numbers[order], order)
        keys, order = self._sorted
        at = int(np.searchsorted(keys, int(tail)))
        return int(order[at]) if at < len(keys) and keys[at] == int(tail) else None

    def string_ranks(self) -> np.ndarray:
        """Rank of each id in code-point order of the strings (`candidates.string_ranks`), without making them:
        with one prefix, that is the order of the decimal tails as strings."""
        tails = self.numbers.astype(str)
        ranks = np.empty(len(tails), dtype=np.int64)
        ranks[np.argsort(tails, kind="stable")] = np.arange(len(tails))
        return ranks


class IdIndex:
    """id -> position over an `ElementIds` (`mapping[id]`, `id in mapping`, `mapping.get(id)`), as the dict
    `{id: i}` would answer."""

    def __init__(self, ids: ElementIds):
        self.ids = ids

    def __getitem__(self, value: str) -> int:
        found = self.ids.index_of(value)
        if found is None:
            raise KeyError(value)
        return found

    def __contains__(self, value: object) -> bool:
        return isinstance(value, str) and self.ids.index_of(value) is not None

    def get(self, value: str, default=None):
        found = self.ids.index_of(value) if isinstance(value, str) else None
        return default if found is None else found

    def __len__(self) -> int:
        return len(self.ids)


def as_stored(ids: Sequence[str] | None) -> Sequence[str] | None:
    """What a graph keeps of its ids: `ElementIds` as they are, anything else as a list."""
    if ids is None or isinstance(ids, ElementIds):
        return ids
    return list(ids)

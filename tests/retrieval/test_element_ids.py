"""Compact element ids behave as the list of their strings: order, ranks, lookup, equality."""

from __future__ import annotations

import numpy as np

from gretriever_neo4j.retrieval.candidates import string_ranks
from gretriever_neo4j.retrieval.element_ids import ElementIds, IdIndex, as_stored

PREFIX = "5:0f1e2d3c-aaaa-bbbb-cccc-000000000001:"


def test_neo4j_ids_compact_and_read_back_as_the_strings():
    ids = [PREFIX + str(n) for n in (12, 9, 10, 100, 0, 99, 1000000007)]
    compact = ElementIds.compact(ids)
    assert isinstance(compact, ElementIds) and compact.numbers.dtype == np.int64
    assert list(compact) == ids and compact == ids and len(compact) == len(ids)
    assert [compact[i] for i in range(len(ids))] == ids and compact[1:3] == ids[1:3]
    assert list(compact.take([3, 0])) == [ids[3], ids[0]]
    # "10" sorts before "9" as strings: ranks are the strings' ranks, not the numbers'
    assert compact.string_ranks().tolist() == string_ranks(ids).tolist()
    index = IdIndex(compact)
    assert all(index[v] == i for i, v in enumerate(ids))
    assert PREFIX + "11" not in index and index.get("4:other:9") is None and "x" not in index


def test_anything_else_stays_a_list():
    for ids in ([PREFIX + "1", "5:another-db:2"], ["e0", "e1"], [PREFIX + "007"], [PREFIX + "-1"], []):
        kept = ElementIds.compact(ids)
        assert isinstance(kept, list) and kept == ids
    assert as_stored(("a", "b")) == ["a", "b"] and as_stored(None) is None
    compact = ElementIds.compact([PREFIX + "3"])
    assert as_stored(compact) is compact and compact.is_unique()

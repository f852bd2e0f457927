"""What learned retrievals over Neo4j keep of a graph between requests (`StoredReads`): served from memory the
second time, let go when the graph's version moves, and bounded. The store here counts what it is asked; the same
reads through the real server are in tests/retrieval/test_learned_neo4j.py."""

from __future__ import annotations

import numpy as np
import pytest

from gretriever_neo4j.retrievers.learned import StoredReads


class CountingStore:
    """A star graph: node "hub" has `spokes` edges, each spoke one; every read is counted (`asked`; an incident
    read with its far ends' rows also in `inline`)."""

    def __init__(self, spokes: int = 100):
        self.spokes = spokes
        self.asked: list[tuple[str, tuple[str, ...]]] = []
        self.degree_bonus = 0  # what a write would change
        self.inline: list[tuple[str, ...]] = []  # incident reads that came with their far ends' rows

    def kg_node_vectors(self, graph, keys):
        self.asked.append(("nodes", tuple(keys)))
        return [{"key": k, "text": k.upper(), "embedding": [float(len(k)), 1.0], "degree": self._degree(k)}
                for k in keys if k == "hub" or k.startswith("s")]

    def _degree(self, key):
        return (self.spokes if key == "hub" else 1) + self.degree_bonus

    def kg_incident(self, graph, keys, limit):
        self.asked.append(("incident", tuple(keys)))
        rows = {"hub": [{"ref": f"e{i}", "src": "hub", "text": "to", "dst": f"s{i}", "neighbour": f"s{i}"}
                        for i in range(self.spokes)][:limit]}
        rows.update({k: [{"ref": f"e{k[1:]}", "src": "hub", "text": "to", "dst": k, "neighbour": "hub"}]
                     for k in keys if k.startswith("s")})
        return {k: rows[k] for k in keys if k in rows}

    def kg_incident_vectors(self, graph, keys, limit):
        rows = self.kg_incident(graph, keys, limit)
        self.inline.append(tuple(keys))
        return {key: [{**row, "neighbour_text": row["neighbour"].upper(),
                       "neighbour_embedding": [float(len(row["neighbour"])), 1.0],
                       "neighbour_degree": self._degree(row["neighbour"])} for row in listed]
                for key, listed in rows.items()}

    def kg_relation_vectors(self, graph, texts):
        self.asked.append(("relations", tuple(texts)))
        return {t: [0.5, 0.5] for t in texts}

    def kg_relation_texts(self, graph):
        self.asked.append(("relation texts", ()))
        return ["directed_by", "to"]


def test_a_first_request_reads_far_ends_with_their_triples_and_later_ones_only_what_they_lack():
    store, reads = CountingStore(spokes=3000), StoredReads(hub=10)
    hub = reads.incident(store, "g", 1, ["hub"], 10_000)["hub"]
    assert store.asked == [("incident", ("hub",))] == [("incident", k) for k in store.inline] and len(hub) == 3000
    assert set(hub[0]) == {"ref", "src", "text", "dst", "neighbour"}  # the far ends are kept apart
    assert reads.node_rows(store, "g", 1, [row["neighbour"] for row in hub])[5]["text"] == "S5"
    assert len(store.asked) == 1  # every far end came with its triple
    # Nodes asked for are held now, so triples are read as keys and far ends only where missing.
    reads.incident(store, "g", 1, ["s1", "s2"], 10_000)
    assert store.asked[-1] == ("incident", ("s1", "s2")) and len(store.inline) == 1


def test_a_second_request_reads_nothing_again_at_the_same_version():
    store, reads = CountingStore(), StoredReads(hub=10)
    first = reads.node_rows(store, "g", 1, ["hub", "s1", "nobody"])
    assert [row["key"] for row in first] == ["hub", "s1"]
    assert isinstance(first[0]["embedding"], np.ndarray) and not first[0]["embedding"].flags.writeable
    assert reads.incident(store, "g", 1, ["hub", "s1"], 1000).keys() == {"hub", "s1"}
    assert reads.relation_vectors(store, "g", 1, ["to"])["to"].tolist() == [0.5, 0.5]
    assert reads.relation_words(store, "g", 1) >= {"directed"}
    asked = len(store.asked)
    described = lambda rows: [(row["key"], row["text"], row["degree"]) for row in rows]
    assert described(reads.node_rows(store, "g", 1, ["s1", "hub"])) == described(first[::-1])
    assert len(reads.incident(store, "g", 1, ["hub"], 1000)["hub"]) == 100
    reads.relation_vectors(store, "g", 1, ["to"]) and reads.relation_words(store, "g", 1)
    assert len(store.asked) == asked
    # Only a hub's triples are kept: a spoke's single edge is read again, alone.
    reads.incident(store, "g", 1, ["hub", "s1"], 1000)
    assert store.asked[-1] == ("incident", ("s1",))
    # Another limit is another read.
    assert len(reads.incident(store, "g", 1, ["hub"], 5)["hub"]) == 5


def test_a_new_version_lets_go_of_what_was_read():
    store, reads = CountingStore(), StoredReads(hub=10)
    assert reads.node_rows(store, "g", 1, ["hub"])[0]["degree"] == 100
    reads.incident(store, "g", 1, ["hub"], 1000)
    reads.relation_words(store, "g", 1)
    store.degree_bonus = 1  # a write, which bumped the version to 2
    assert reads.node_rows(store, "g", 2, ["hub"])[0]["degree"] == 101
    asked = len(store.asked)
    reads.incident(store, "g", 2, ["hub"], 1000)
    reads.relation_words(store, "g", 2)
    assert [what for what, _ in store.asked[asked:]] == ["incident", "relation texts"]
    # Other graphs keep theirs.
    reads.node_rows(store, "other", 7, ["s2"])
    reads.node_rows(store, "g", 3, ["s3"])
    asked = len(store.asked)
    reads.node_rows(store, "other", 7, ["s2"])
    assert len(store.asked) == asked


@pytest.mark.parametrize("capacity", [1, 5])
def test_what_is_kept_stays_within_its_bounds(capacity):
    store, reads = CountingStore(spokes=30), StoredReads(capacity=capacity, incident_capacity=40, hub=10)
    for i in range(20):
        reads.node_rows(store, "g", 1, [f"s{i}"])
    assert len(reads) == capacity
    asked = len(store.asked)
    reads.node_rows(store, "g", 1, ["s19"])  # the last read stays
    assert len(store.asked) == asked
    reads.node_rows(store, "g", 1, ["s0"])  # the first went first
    assert store.asked[-1] == ("nodes", ("s0",))
    # Triples: two hubs of 30 do not fit in 40; the one used least recently goes.
    other = CountingStore(spokes=30)
    reads.incident(store, "g", 1, ["hub"], 1000)
    reads.incident(other, "h", 1, ["hub"], 1000)
    asked = len(other.asked)
    reads.incident(other, "h", 1, ["hub"], 1000)
    assert len(other.asked) == asked
    reads.incident(store, "g", 1, ["hub"], 1000)
    assert store.asked[-1] == ("incident", ("hub",))


def test_threads_asking_at_different_versions_each_get_their_version():
    import random
    import threading

    class Versioned(CountingStore):
        """Degrees that say which version they were read at (the store moves between versions meanwhile)."""

        def __init__(self):
            super().__init__(spokes=80)
            self.version = threading.local()

        def _degree(self, key):
            return (self.spokes if key == "hub" else 1) + 1000 * self.version.value

    store, reads, wrong = Versioned(), StoredReads(capacity=50, incident_capacity=200, hub=10), []

    def ask(seed):
        rng = random.Random(seed)
        for _ in range(800):
            version = rng.randrange(3)
            store.version.value = version
            keys = [f"s{rng.randrange(80)}" for _ in range(5)] + ["hub"]
            if rng.random() < 0.5:
                reads.incident(store, "g", version, ["hub"], 1000)
            for row in reads.node_rows(store, "g", version, keys):
                if row["degree"] // 1000 != version:
                    wrong.append((version, row["key"], row["degree"]))

    threads = [threading.Thread(target=ask, args=(seed,)) for seed in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert wrong == [] and len(reads) <= 50
